//! From a key's hash to its fingerprint and its two candidate buckets, and to the table words and
//! stripe stamps a lookup reads there.
//!
//! Partial-key cuckoo hashing (paper Section 3.1) computes an item's second bucket from its
//! bucket and fingerprint alone. The paper's `i2 = i1 ⊕ hash(fp)` needs a power-of-two bucket
//! count (up to twice the memory); here `n` is any count up to 2^32 and
//!
//! ```text
//! alt(i, fp) = (h(fp) - i) mod n,    h(fp) = fastrange(fibonacci_hash(fp), n)
//! ```
//!
//! an involution for every `n`: `alt(alt(i, fp), fp) = h - (h - i) = i (mod n)`. Hashing the
//! fingerprint sends a displaced one far away. The first bucket comes from the hash's high 32
//! bits, the fingerprint from its low 32, so the two are independent. `h` takes two multiplies:
//! one clusters the table (docs/benchmarks.md, "Constants of the raw core").
//!
//! Beside the placement, what a lookup reads at its candidates, indexed without a bounds check:
//! a table's words ([`Words`], read through [`Buckets`]) and its stripes' stamps ([`StampWords`],
//! read through [`Stamps`] and [`OptimisticRead`]). Their bounds are checked once, when they are
//! made, with their fields private here, so the proofs of the unchecked reads rest on nothing
//! outside this file but the placement's promise that every index it returns is below the
//! bucket count. And [`Lanes`]: how a lookup compares the fingerprints it read with its own.

use crate::sync::{fence, AtomicU64, Ordering, TableWords};

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
/// fingerprint found in one. `alternate` must be an involution, and the candidates a bucket and
/// its alternate for the fingerprint. Every index either returns is below the table's bucket
/// count: lookups read candidates' buckets without a bounds check ([`Buckets`]).
pub(crate) trait Place: Copy + core::fmt::Debug + Send + Sync {
    /// What a table placed this way holds and checks before each write (nothing for a
    /// fixed-size filter).
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
    /// [`FIBONACCI`] as a field: a lookup loop reads it as a memory operand, where the constant
    /// would take a register (x86-64 has no 64-bit immediate multiply).
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

/// The hash an item has in level `level`: level 0 the item's hash (a one-level filter places
/// items as a fixed-size one does), later levels remixed (MurmurHash3's finalizer over the hash
/// plus a per-level odd constant), so items that collide in one level are independent in others.
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

/// The words a table's buckets live in, the bucket width and count: what [`Buckets`] needs to
/// read without a bounds check. Made only by [`Words::new`], which checks that the words reach
/// two past the last bucket's first word; never changed.
#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct Words {
    words: TableWords,
    bucket_bits: u64,
    bucket_count: usize,
}

impl Words {
    /// `words` holding `bucket_count` buckets of `bucket_bits` each; `None` unless they reach a
    /// word past the one that holds the last bucket's first bit (a window reads two words).
    pub(crate) fn new(words: TableWords, bucket_bits: u64, bucket_count: usize) -> Option<Self> {
        let needed = match (bucket_count as u64).checked_sub(1) {
            Some(last) => usize::try_from(last * bucket_bits / 64 + 2).ok()?,
            None => 0,
        };
        (words.len() >= needed).then_some(Self {
            words,
            bucket_bits,
            bucket_count,
        })
    }

    pub(crate) fn bucket_bits(&self) -> u64 {
        self.bucket_bits
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.bucket_count
    }

    /// Copies the words from `from` on into `out`, each masked by `keep`. The caller holds
    /// every stripe, or the copy may be torn.
    pub(crate) fn read(&self, from: usize, out: &mut [u64], keep: u64) {
        let words = &self.words[from..from + out.len()];
        for (out, word) in out.iter_mut().zip(words) {
            *out = word.load(Ordering::Relaxed) & keep;
        }
    }

    /// Zeroes the first `count` words, storing only where one is not (a zero page stays
    /// untouched). The caller holds every stripe.
    pub(crate) fn clear(&self, count: usize) {
        for word in &self.words[..count] {
            if word.load(Ordering::Relaxed) != 0 {
                word.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Another handle on the same mapped words; `None` for words on the heap.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn share(&self) -> Option<TableWords> {
        self.words.share()
    }

    /// What a lookup reads of the table, to copy into locals.
    #[inline(always)]
    pub(crate) fn buckets(&self) -> Buckets<'_> {
        Buckets {
            words: &self.words,
            bucket_bits: self.bucket_bits,
            bucket_count: self.bucket_count,
        }
    }
}

impl core::ops::Deref for Words {
    type Target = [AtomicU64];

    #[inline(always)]
    fn deref(&self) -> &[AtomicU64] {
        &self.words
    }
}

/// A table's words and bucket width, copied out by [`Words::buckets`] for a lookup to keep in
/// registers (`lookup.rs`'s `Probe`).
///
/// Its reads index the words without a bounds check in a release build: the lookups' only
/// unchecked indexing, and the bucket words' writers' (`Table::update_word`,
/// `Table::place_in_word`, loading and storing a [`Buckets::word`] under its stripe lock). The
/// bucket given must be below the bucket count, as every index the crate computes is:
/// [`Place::candidates`] and `alternate` return only such ([`reflect`] is `(h - i) mod n` with
/// `h` and `i` below `n`; a split table's placement keeps each below its own count), and every
/// other index is a loop over `0..bucket_count`. Debug builds, and so every test, check it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buckets<'a> {
    words: &'a [AtomicU64],
    bucket_bits: u64,
    bucket_count: usize,
}

impl<'a> Buckets<'a> {
    /// The word of `bucket` in a table of one word per bucket.
    #[inline(always)]
    pub(crate) fn word(self, bucket: usize) -> &'a AtomicU64 {
        debug_assert_eq!(self.bucket_bits, 64);
        &self.words_of(bucket, bucket)[0]
    }

    /// The 64 table bits from the first of each of two buckets of at most 64 bits, with bits of
    /// the following buckets above its own: the narrow comparisons ignore them. Unvalidated.
    #[inline(always)]
    pub(crate) fn narrow_pair(self, a: usize, b: usize) -> [u64; 2] {
        [a, b].map(|bucket| self.bits(bucket) as u64)
    }

    /// The bits of the two words from the one that holds `bucket`'s first bit, shifted down to
    /// it: the bucket's bits, with the following buckets' above them. Unvalidated.
    #[inline(always)]
    pub(crate) fn bits(self, bucket: usize) -> u128 {
        let bit = bucket as u64 * self.bucket_bits;
        let words = self.words_of(bucket, (bit / 64) as usize);
        let both = u128::from(words[0].load(Ordering::Relaxed))
            | u128::from(words[1].load(Ordering::Relaxed)) << 64;
        both >> (bit % 64)
    }

    /// Starts bringing a bucket word into cache.
    #[inline(always)]
    pub(crate) fn prefetch_word(self, bucket: usize) {
        crate::sync::prefetch(self.word(bucket));
    }

    /// Starts bringing a narrow bucket into cache: both words its window reads.
    #[inline(always)]
    pub(crate) fn prefetch_narrow(self, bucket: usize) {
        let words = self.words_of(bucket, (bucket as u64 * self.bucket_bits / 64) as usize);
        crate::sync::prefetch(&words[0]);
        crate::sync::prefetch(&words[1]);
    }

    /// `word`, the word that holds the first bit of `bucket`, and the word after it.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn words_of(self, bucket: usize, word: usize) -> &'a [AtomicU64; 2] {
        debug_assert!(
            bucket < self.bucket_count,
            "bucket {bucket} of {}",
            self.bucket_count
        );
        debug_assert_eq!(word as u64, bucket as u64 * self.bucket_bits / 64);
        debug_assert!(word + 2 <= self.words.len());
        // SAFETY: `bucket < bucket_count` (the caller's, see above), so `word`, the word of its
        // first bit, is at most the word of the last bucket's first bit. The fields are copies
        // of a `Words`' (private to this file, set only by `Words::new` and never changed),
        // which refuses words that do not reach one past that word: `word..word + 2` lies inside
        // the slice. Two contiguous words are an `[AtomicU64; 2]`, borrowed for as long as the
        // slice is.
        unsafe { &*self.words.as_ptr().add(word).cast::<[AtomicU64; 2]>() }
    }
}

/// The 64 bits from `bit % 64` into `words[word]`, running on into `words[word + 1]`.
#[inline(always)]
pub(crate) fn window(words: &[AtomicU64], word: usize, bit: u64) -> u64 {
    let both = words[word].load(Ordering::Relaxed) as u128
        | (words[word + 1].load(Ordering::Relaxed) as u128) << 64;
    (both >> (bit % 64)) as u64
}

/// The stamps of a table's stripes (`stripe.rs`), and which guards which bucket: lock groups of
/// `1 << group_shift` buckets, dealt round the stripes. Made only by [`StampWords::new`], which
/// refuses a count that is not a power of two; never changed.
#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct StampWords {
    words: TableWords,
    mask: usize,
    group_shift: u32,
}

impl StampWords {
    /// `words.len()` stamps, as they are; `None` unless that is a power of two.
    pub(crate) fn new(words: TableWords, group_shift: u32) -> Option<Self> {
        let count = words.len();
        count.is_power_of_two().then_some(Self {
            words,
            mask: count - 1,
            group_shift,
        })
    }

    /// The stripe that guards `bucket`. Neighbouring lock groups get different stripes.
    #[inline]
    pub(crate) fn stripe_of(&self, bucket: usize) -> usize {
        (bucket >> self.group_shift) & self.mask
    }

    pub(crate) fn group_shift(&self) -> u32 {
        self.group_shift
    }

    /// What a lookup reads of the stamps, to copy into locals.
    #[inline(always)]
    pub(crate) fn stamps(&self) -> Stamps<'_> {
        Stamps {
            stamps: &self.words,
            mask: self.mask,
            group_shift: self.group_shift,
        }
    }

    /// Starts an optimistic read of two buckets: the stamps of their stripes, which
    /// [`OptimisticRead::validate`] checks again once the buckets are read.
    #[inline(always)]
    pub(crate) fn begin_read(&self, bucket_a: usize, bucket_b: usize) -> OptimisticRead<'_> {
        self.stamps().begin_read(bucket_a, bucket_b)
    }
}

impl core::ops::Deref for StampWords {
    type Target = [AtomicU64];

    #[inline(always)]
    fn deref(&self) -> &[AtomicU64] {
        &self.words
    }
}

/// The stamps and how buckets map to them, copied out by [`StampWords::stamps`] for a lookup to
/// keep in registers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamps<'a> {
    stamps: &'a [AtomicU64],
    mask: usize,
    group_shift: u32,
}

impl<'a> Stamps<'a> {
    /// The stamp of the stripe that guards `bucket`, any `bucket`, without a bounds check.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn of(self, bucket: usize) -> &'a AtomicU64 {
        let stripe = (bucket >> self.group_shift) & self.mask;
        debug_assert!(stripe < self.stamps.len());
        // SAFETY: `stripe <= mask`. The fields are copies of a `StampWords`' (private to this
        // file, set only by `StampWords::new` and never changed), which makes `stamps` a power
        // of two `count` long, at least 1 (it refuses any other count), and `mask` `count - 1`:
        // `stripe < stamps.len()`.
        unsafe { self.stamps.get_unchecked(stripe) }
    }

    /// [`StampWords::begin_read`].
    #[inline(always)]
    pub(crate) fn begin_read(self, bucket_a: usize, bucket_b: usize) -> OptimisticRead<'a> {
        let words = [self.of(bucket_a), self.of(bucket_b)];
        OptimisticRead {
            seen: words.map(|word| word.load(Ordering::Acquire) & !1),
            words,
        }
    }
}

/// An optimistic read of two stripes in progress: their stamps when it began. The orderings are
/// the reader's half of `stripe.rs`'s seqlock.
#[derive(Debug)]
pub(crate) struct OptimisticRead<'a> {
    words: [&'a AtomicU64; 2],
    /// The stamps when the read began, lock bit cleared: a stamp seen locked is recorded as it
    /// was before the lock, a value a later load cannot read until the version wraps (every
    /// unlock moves it on), so such a read fails to validate with no test of the lock bit.
    seen: [u64; 2],
}

impl OptimisticRead<'_> {
    /// Ends the read: true if neither stripe was locked when it began nor has changed since, so
    /// that everything read in between is a state the buckets really had.
    #[inline(always)]
    pub(crate) fn validate(&self) -> bool {
        fence(Ordering::Acquire);
        let moved_a = self.words[0].load(Ordering::Relaxed) ^ self.seen[0];
        let moved_b = self.words[1].load(Ordering::Relaxed) ^ self.seen[1];
        // One branch for both stripes: it is taken on every lookup.
        (moved_a | moved_b) == 0
    }
}

/// The masks of `count` SWAR lanes of `f` bits from bit 0, kept in registers by a lookup: the
/// fingerprints of a plain narrow bucket, a bucket word, a narrow semi-sorted bucket's
/// remainders or an expiring bucket's window, compared with one fingerprint at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// 1 at the lowest bit of every lane.
    low: u64,
    /// 1 at the highest bit of every lane.
    high: u64,
    /// Every bit of every lane but the highest.
    rest: u64,
    /// `ceil(2^16 / f)`: a lane's index from its top bit by a multiply, not a division.
    reciprocal: u32,
    /// Bit `61 + i − (i + 1)·f` for every lane `i` of at most four: a multiply takes lane `i`'s
    /// top bit to bit `60 + i` ([`Self::slots`]).
    gather: u64,
}

impl Lanes {
    /// The masks of the first `count` lanes of `f` bits, `f` in `1..=32`, as many of them as
    /// end within 64 bits.
    pub(crate) fn new(count: usize, f: u32) -> Self {
        debug_assert!((1..=32).contains(&f));
        let count = (count as u32).min(64 / f);
        let low = (0..count).fold(0u64, |acc, lane| acc | 1 << (lane * f));
        let high = low << (f - 1);
        Self {
            low,
            high,
            // Lane by lane `2^(f-1) − 1`: no lane borrows from the next.
            rest: high - low,
            reciprocal: (1u32 << 16).div_ceil(f),
            gather: (0..count.min(4))
                .filter_map(|i| (61 + i).checked_sub((i + 1) * f))
                .fold(0, |acc, bit| acc | 1 << bit),
        }
    }

    /// `fp` in every lane.
    #[inline(always)]
    pub(crate) fn broadcast(self, fp: u32) -> u64 {
        self.low.wrapping_mul(u64::from(fp))
    }

    /// The top bit of every lane of `x` (its lanes; the bits above them are ignored) that is
    /// zero, and no other bit. Exact: within a lane, `(x & rest) + rest` cannot carry out of it,
    /// so one lane never disturbs another.
    #[inline(always)]
    pub(crate) fn zeros(self, x: u64) -> u64 {
        !(((x & self.rest).wrapping_add(self.rest)) | x) & self.high
    }

    /// The top bit of every lane of `window` that equals `fp`, exactly ([`Self::zeros`]).
    #[inline(always)]
    pub(crate) fn matches(self, window: u64, fp: u32) -> u64 {
        self.zeros(window ^ self.broadcast(fp))
    }

    /// The top bits of lanes of `x` (a window XOR [`Self::broadcast`]) that may be zero, in
    /// four operations where [`Self::zeros`] takes five: none iff no lane is zero, and the lowest
    /// one reported always is. (A lane above a zero one reads as zero too if it is 1: the zero
    /// lane's borrow reaches it; borrows only run upwards, so bits above the lanes never do.)
    #[inline(always)]
    pub(crate) fn zero_lanes(self, x: u64) -> u64 {
        x.wrapping_sub(self.low) & !x & self.high
    }

    /// Whether either of two windows, each XORed with a [`Self::broadcast`], has a zero lane:
    /// [`Self::zero_lanes`] of both under one mask.
    #[inline(always)]
    pub(crate) fn zero_lane_pair(self, a: u64, b: u64) -> bool {
        let zero_a = a.wrapping_sub(self.low) & !a;
        let zero_b = b.wrapping_sub(self.low) & !b;
        (zero_a | zero_b) & self.high != 0
    }

    /// The lanes whose top bits are set in `tops`, bit `i` for lane `i`, by one multiply. Exact
    /// for at most four lanes of `f ≥ 4` bits that end by bit `60 + count` (four of up to 16
    /// bits: every gather bit is then at least 0): top bit `j` times the gather's bit `i` lands
    /// at bit `60 + i + (j − i)·f`, past bit 63 for `j > i` and below 60 for `j < i`; two terms'
    /// bits differ by `(i − i') + k·f` with `|i − i'| ≤ 3 < f`, zero only for the same term, so
    /// no two add and nothing carries.
    #[inline(always)]
    pub(crate) fn slots(self, tops: u64) -> u32 {
        (tops.wrapping_mul(self.gather) >> 60) as u32
    }

    /// The index of the lane whose top bit is bit `top`.
    #[inline(always)]
    pub(crate) fn lane(self, top: u32) -> usize {
        // `top + 1` is `(i + 1)·f` with `(i + 1)·f ≤ 64`: the rounding of the reciprocal adds
        // less than 64 / 2^16, so the quotient is exact.
        (((top + 1) * self.reciprocal) >> 16) as usize - 1
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/index.rs"]
mod tests;
