//! From a key's hash to its fingerprint and its two candidate buckets.
//!
//! Partial-key cuckoo hashing (paper Section 3.1) stores only a fingerprint, so an item's second
//! bucket must be computable from the bucket it is in and its fingerprint alone. The paper uses
//! `i2 = i1 ⊕ hash(fp)`, which needs a power-of-two bucket count and so up to doubles the memory
//! of a filter sized just above a power of two. Here the bucket count `n` is any number up to
//! 2^32 and the alternate bucket is
//!
//! ```text
//! alt(i, fp) = (h(fp) - i) mod n,    h(fp) = fastrange(fibonacci_hash(fp), n)
//! ```
//!
//! which is an involution for every `n`: `alt(alt(i, fp), fp) = h - (h - i) = i (mod n)`. Hashing
//! the fingerprint (not using it raw) sends a displaced fingerprint to a bucket far away. The first
//! bucket comes from the hash's high 32 bits and the fingerprint from its low 32 bits, so the two
//! are independent.
//!
//! `h` costs two multiplies: one multiply gives alternates on an evenly spaced grid, which clusters
//! the table (docs/benchmarks.md, "Constants of the raw core").

/// A bucket's position in the table.
pub(crate) type BucketIndex = usize;

/// A stored fingerprint: `fingerprint_bits` wide and never 0 (0 marks an empty slot).
pub(crate) type Fingerprint = u32;

/// The most buckets a table can have: indices are computed in 32 bits.
pub(crate) const MAX_BUCKET_COUNT: u64 = 1 << 32;

/// Multiplier of Fibonacci hashing, 2^64 divided by the golden ratio.
const FIBONACCI: u64 = 0x9e37_79b9_7f4a_7c15;

/// An item's fingerprint and the two buckets it may live in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    pub(crate) fp: Fingerprint,
    pub(crate) first: BucketIndex,
    pub(crate) second: BucketIndex,
}

/// Where a table puts a hash's fingerprint: its two candidate buckets, and the other bucket of a
/// fingerprint found in one. `alternate` must be an involution, and the candidates of a hash must
/// be a bucket and that bucket's alternate for its fingerprint. Every index either returns is
/// below the bucket count the placement was made with, which is its table's: lookups read the
/// buckets of candidates without a bounds check (`Buckets` in `table.rs`).
pub(crate) trait Place: Copy + core::fmt::Debug + Send + Sync {
    /// What a table placed this way checks before each write, held by the table: nothing for a
    /// fixed-size filter.
    type Gate: core::fmt::Debug + Send + Sync;

    fn candidates(&self, hash: u64) -> Candidates;
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex;

    /// Whether a writer holding stripes may write `fp` (`None`: a move, which adds nothing new),
    /// read under the writer's locks.
    fn admits(&self, gate: &Self::Gate, fp: Option<Fingerprint>) -> bool;

    /// A gate holding what `gate` holds, for a copy of the table made under every stripe lock.
    fn duplicate_gate(&self, gate: &Self::Gate) -> Self::Gate;
}

/// The placement of a fixed-size filter: any bucket count, the whole fingerprint hashed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    bucket_count: u64,
    /// 2^fingerprint_bits - 1: how many non-zero fingerprints there are.
    fingerprints: u64,
    /// [`FIBONACCI`], as a field: a lookup loop reads it as a memory operand, where the constant
    /// would hold a register (x86-64 multiplies by no 64-bit immediate) that the loop spills.
    fibonacci: u64,
}

impl Placement {
    pub(crate) fn new(bucket_count: usize, fingerprint_bits: u32) -> Self {
        debug_assert!(bucket_count >= 1 && bucket_count as u64 <= MAX_BUCKET_COUNT);
        Self {
            bucket_count: bucket_count as u64,
            fingerprints: (1u64 << fingerprint_bits) - 1,
            fibonacci: FIBONACCI,
        }
    }
}

impl Place for Placement {
    type Gate = ();

    #[inline]
    fn candidates(&self, hash: u64) -> Candidates {
        // Maps the low half onto 1..=2^f-1 evenly, with a multiply instead of a division.
        let fp = (((hash & 0xffff_ffff) * self.fingerprints) >> 32) as u32 + 1;
        let first = (((hash >> 32) * self.bucket_count) >> 32) as BucketIndex;
        Candidates {
            fp,
            first,
            second: self.alternate(first, fp),
        }
    }

    /// The other bucket a fingerprint in `bucket` may live in.
    #[inline]
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex {
        reflect_by(bucket, fp, self.bucket_count, self.fibonacci)
    }

    /// A fixed-size filter takes every write.
    #[inline(always)]
    fn admits(&self, _: &(), _: Option<Fingerprint>) -> bool {
        true
    }

    fn duplicate_gate(&self, _: &()) {}
}

/// `alt(bucket, key)` of the module docs for a table of `bucket_count` buckets: `key` is what
/// the alternate depends on, the whole fingerprint of a fixed-size filter.
#[inline(always)]
pub(crate) fn reflect(bucket: BucketIndex, key: u32, bucket_count: u64) -> BucketIndex {
    reflect_by(bucket, key, bucket_count, FIBONACCI)
}

/// [`reflect`] with the multiplier passed in: [`FIBONACCI`], from wherever the caller keeps it.
#[inline(always)]
fn reflect_by(bucket: BucketIndex, key: u32, bucket_count: u64, fibonacci: u64) -> BucketIndex {
    let mixed = (key as u64).wrapping_mul(fibonacci) >> 32;
    let h = ((mixed * bucket_count) >> 32) as BucketIndex;
    if h >= bucket {
        h - bucket
    } else {
        h + bucket_count as BucketIndex - bucket
    }
}

/// The hash an item has in level `level`: level 0 uses the item's hash as it is, so that a
/// one-level filter places items exactly as a fixed-size one; every later level remixes it
/// (the finalizer of MurmurHash3 over the hash plus a per-level odd constant), so that two items
/// that share a fingerprint and buckets in one level are independent in every other.
#[inline(always)]
pub(crate) fn level_hash(hash: u64, level: usize) -> u64 {
    if level == 0 {
        return hash;
    }
    let mut x = hash.wrapping_add((level as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_is_an_involution_for_every_bucket() {
        for bucket_count in [1usize, 2, 3, 7, 64, 1000, 4099] {
            let placement = Placement::new(bucket_count, 12);
            for bucket in 0..bucket_count {
                for fp in [1u32, 2, 3, 100, 4095] {
                    let other = placement.alternate(bucket, fp);
                    assert!(other < bucket_count);
                    assert_eq!(
                        placement.alternate(other, fp),
                        bucket,
                        "n={bucket_count} i={bucket} fp={fp}"
                    );
                }
            }
        }
    }

    #[test]
    fn fingerprints_are_nonzero_and_in_range() {
        for fingerprint_bits in [4u32, 8, 12, 16, 32] {
            let placement = Placement::new(1000, fingerprint_bits);
            for hash in [0u64, u64::MAX, 0xffff_ffff, 1 << 32, 12345] {
                let c = placement.candidates(hash);
                assert!(c.fp >= 1 && (c.fp as u64) < (1u64 << fingerprint_bits));
                assert!(c.first < 1000 && c.second < 1000);
            }
        }
    }

    #[test]
    fn largest_table_stays_in_range() {
        let placement = Placement::new(MAX_BUCKET_COUNT as usize, 32);
        let c = placement.candidates(u64::MAX);
        assert!((c.first as u64) < MAX_BUCKET_COUNT && (c.second as u64) < MAX_BUCKET_COUNT);
        assert_eq!(placement.alternate(c.second, c.fp), c.first);
    }

    #[test]
    fn level_zero_keeps_the_hash_and_later_levels_remix_it() {
        assert_eq!(level_hash(12345, 0), 12345);
        let remixed: Vec<u64> = (1..8).map(|level| level_hash(12345, level)).collect();
        for (i, a) in remixed.iter().enumerate() {
            assert_ne!(*a, 12345);
            assert!(remixed[i + 1..].iter().all(|b| b != a));
        }
    }
}
