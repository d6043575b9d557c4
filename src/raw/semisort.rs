//! Semi-sorted buckets (paper Section 5.2): four fingerprints in `4·f − 4` bits instead of `4·f`.
//!
//! The order of a bucket's fingerprints does not matter, so a bucket is stored sorted. Split each
//! fingerprint into its 4 high bits (the *prefix*) and the rest (the *remainder*): sorted, the four
//! prefixes are one of the C(16 + 3, 4) = 3876 multisets of four values below 16, which a 12-bit
//! code names, instead of the 16 bits they would take side by side. The remainders follow in the
//! same order. An empty slot is fingerprint 0, so it sorts first.
//!
//! ```text
//! bit 0            12             12 + r          12 + 2r         12 + 3r        12 + 4r
//! | prefixes code  | remainder 0  | remainder 1   | remainder 2   | remainder 3   |
//! ```
//!
//! The code is the multiset's rank in the combinatorial number system: with the prefixes sorted,
//! `p0 ≤ p1 ≤ p2 ≤ p3`, the values `p_i + i` are distinct and below 19, and
//! `rank = C(p0, 1) + C(p1 + 1, 2) + C(p2 + 2, 3) + C(p3 + 3, 4)` numbers every such set once,
//! from 0 to 3875. Encoding takes four lookups in a table of binomials; decoding one lookup in
//! [`PREFIXES`], a table of 4096 `u16`s (8 KiB, one per 12-bit code, so a code indexes it without
//! a bounds check), small enough to stay in cache.

/// Multisets of four 4-bit prefixes: C(19, 4).
#[cfg(test)]
const CODES: usize = 3876;

/// Bits of the prefixes' code.
pub(crate) const CODE_BITS: u32 = 12;

/// `BINOMIAL[n][k]` = C(n, k) for the ranks above.
const BINOMIAL: [[u16; 5]; 19] = binomials();

/// The four sorted prefixes of each code, one per nibble, smallest in the low nibble. Codes past
/// the last multiset (which only a torn optimistic read can see) decode as four zero prefixes.
static PREFIXES: [u16; 1 << CODE_BITS] = prefix_table();

const fn binomials() -> [[u16; 5]; 19] {
    let mut table = [[0u16; 5]; 19];
    let mut n = 0;
    while n < 19 {
        table[n][0] = 1;
        let mut k = 1;
        while k < 5 && k <= n {
            table[n][k] = table[n - 1][k - 1] + if k < n { table[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    table
}

const fn rank(p: [u32; 4]) -> usize {
    BINOMIAL[p[0] as usize][1] as usize
        + BINOMIAL[p[1] as usize + 1][2] as usize
        + BINOMIAL[p[2] as usize + 2][3] as usize
        + BINOMIAL[p[3] as usize + 3][4] as usize
}

const fn prefix_table() -> [u16; 1 << CODE_BITS] {
    let mut table = [0u16; 1 << CODE_BITS];
    let mut p0 = 0;
    while p0 < 16 {
        let mut p1 = p0;
        while p1 < 16 {
            let mut p2 = p1;
            while p2 < 16 {
                let mut p3 = p2;
                while p3 < 16 {
                    table[rank([p0, p1, p2, p3])] = (p0 | p1 << 4 | p2 << 8 | p3 << 12) as u16;
                    p3 += 1;
                }
                p2 += 1;
            }
            p1 += 1;
        }
        p0 += 1;
    }
    table
}

/// Packs four fingerprints of `fp_bits` bits (≥ 5) into a semi-sorted bucket.
pub(crate) fn encode(mut fps: [u32; 4], fp_bits: u32) -> u128 {
    fps.sort_unstable();
    let rest = fp_bits - 4;
    let code = rank(fps.map(|fp| fp >> rest));
    let mut bucket = code as u128;
    let mask = (1u32 << rest) - 1;
    for (i, fp) in fps.iter().enumerate() {
        bucket |= ((fp & mask) as u128) << (CODE_BITS + i as u32 * rest);
    }
    bucket
}

/// Whether a semi-sorted bucket of at most 64 bits holds the fingerprint whose prefix (4 high
/// bits) is `prefix` and whose remainder (the `fp_bits − 4` low bits) is `remainder`. Compares
/// in the encoded form, without building the fingerprints: the lookup's hot path.
#[inline]
pub(crate) fn holds_narrow(bucket: u64, fp_bits: u32, prefix: u32, remainder: u64) -> bool {
    let rest = fp_bits - 4;
    let prefixes = PREFIXES[(bucket & 0xfff) as usize] as u32;
    let remainders = bucket >> CODE_BITS;
    let mask = (1u64 << rest) - 1;
    let mut found = false;
    for slot in 0..4 {
        // `&`, not `&&`: no branch per slot.
        found |= ((prefixes >> (4 * slot)) & 0xf == prefix)
            & ((remainders >> (slot * rest)) & mask == remainder);
    }
    found
}

/// The four fingerprints of a semi-sorted bucket, in ascending order. A code past the last
/// multiset (only a torn optimistic read can produce one) decodes as if its prefixes were 0.
#[inline]
pub(crate) fn decode(bucket: u128, fp_bits: u32) -> [u32; 4] {
    let rest = fp_bits - 4;
    let prefixes = PREFIXES[(bucket as usize) & 0xfff] as u32;
    let remainders = bucket >> CODE_BITS;
    let mask = (1u128 << rest) - 1;
    let mut fps = [0u32; 4];
    for (i, fp) in fps.iter_mut().enumerate() {
        let prefix = (prefixes >> (4 * i)) & 0xf;
        let remainder = ((remainders >> (i as u32 * rest)) & mask) as u32;
        *fp = prefix << rest | remainder;
    }
    fps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_used_once() {
        let mut seen = vec![false; CODES];
        for &packed in PREFIXES[..CODES].iter() {
            let p = [0, 4, 8, 12].map(|shift| (packed as u32 >> shift) & 0xf);
            assert!(p[0] <= p[1] && p[1] <= p[2] && p[2] <= p[3]);
            let code = rank(p);
            assert!(!seen[code]);
            seen[code] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(PREFIXES[CODES..].iter().all(|&p| p == 0));
    }

    #[test]
    fn round_trip_any_four_fingerprints() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for fp_bits in 5..=32u32 {
            for _ in 0..2000 {
                let mut fps = [0u32; 4];
                for fp in &mut fps {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // A quarter of the slots empty, the rest any fingerprint.
                    *fp = if state % 4 == 0 {
                        0
                    } else {
                        (state >> 8) as u32 & ((1u64 << fp_bits) - 1) as u32
                    };
                }
                let bucket = encode(fps, fp_bits);
                assert!(bucket < 1u128 << (4 * fp_bits - 4), "f={fp_bits}");
                let mut sorted = fps;
                sorted.sort_unstable();
                assert_eq!(decode(bucket, fp_bits), sorted, "f={fp_bits}");
                if fp_bits <= 17 {
                    let rest = fp_bits - 4;
                    let probes = fps.iter().map(|fp| fp ^ (state as u32 & 3));
                    for probe in fps.into_iter().chain(probes) {
                        let remainder = (probe & ((1 << rest) - 1)) as u64;
                        let held = holds_narrow(bucket as u64, fp_bits, probe >> rest, remainder);
                        assert_eq!(held, sorted.contains(&probe), "f={fp_bits} {probe}");
                    }
                }
            }
        }
    }

    #[test]
    fn only_the_encoder_output_round_trips() {
        // A code past the last multiset, and remainders out of order under equal prefixes.
        let bad_code = 4000u128;
        assert_ne!(encode(decode(bad_code, 13), 13), bad_code);
        let good = encode([1, 2, 0, 0], 13);
        let swapped =
            (good & 0xfff) | (2 << 12) | (1 << (12 + 9)) | (good >> (12 + 18)) << (12 + 18);
        assert_eq!(encode(decode(good, 13), 13), good);
        assert_ne!(encode(decode(swapped, 13), 13), swapped);
    }

    #[test]
    fn an_empty_bucket_is_all_zero_bits() {
        assert_eq!(encode([0; 4], 13), 0);
    }
}
