//! The four fingerprints of a bucket read as one 64-bit window (fingerprints of at most 16 bits)
//! and matched at once: an exact zero-lane test, so each lane it reports really holds the
//! fingerprint and only those lanes' tags need reading.

/// Fingerprints per bucket (`slots.rs` names it `BUCKET_SIZE`).
pub(crate) const BUCKET_SIZE: usize = 4;

/// The widest fingerprint whose bucket's four fingerprints fit 64 bits.
pub(crate) const MAX_LANE_BITS: u32 = 64 / BUCKET_SIZE as u32;

/// The lane masks of a bucket's four fingerprints, kept in registers by a lookup.
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
    /// Bit `61 + i − (i + 1)·f` for every lane `i`: a multiply takes lane `i`'s top bit to bit
    /// `60 + i` ([`Self::slots`]).
    gather: u64,
}

impl Lanes {
    /// The lanes of four `fingerprint_bits`-bit fingerprints; `None` if they exceed 64 bits
    /// or are narrower than 4 (which [`Self::slots`] needs; no table has them).
    pub(crate) fn new(fingerprint_bits: u32) -> Option<Self> {
        if !(4..=MAX_LANE_BITS).contains(&fingerprint_bits) {
            return None;
        }
        let f = fingerprint_bits;
        let low = (0..BUCKET_SIZE as u32).fold(0u64, |acc, lane| acc | 1 << (lane * f));
        let high = low << (f - 1);
        Some(Self {
            low,
            high,
            // Lane by lane `2^(f-1) − 1`: no lane borrows from the next.
            rest: high - low,
            reciprocal: (1u32 << 16).div_ceil(f),
            gather: (0..BUCKET_SIZE as u32).fold(0, |acc, i| acc | 1 << (61 + i - (i + 1) * f)),
        })
    }

    /// The top bit of every lane of `window` (its low `4·f` bits; the bits above are ignored)
    /// that equals `fp`, and no other bit. Exact: within a lane, `(x & rest) + rest` cannot carry
    /// out of it, so one lane never disturbs another.
    #[inline(always)]
    pub(crate) fn matches(self, window: u64, fp: u32) -> u64 {
        let x = window ^ self.broadcast(fp);
        !(((x & self.rest).wrapping_add(self.rest)) | x | self.rest) & self.high
    }

    /// `fp` in every lane.
    #[inline(always)]
    pub(crate) fn broadcast(self, fp: u32) -> u64 {
        self.low.wrapping_mul(u64::from(fp))
    }

    /// The top bits of lanes of `x` (a window XOR [`Self::broadcast`]) that may be zero, in
    /// four operations where [`Self::matches`] takes six: none iff no lane is zero, and the
    /// lowest one reported always is. (A lane above a zero one reads as zero too if it is 1: the
    /// zero lane's borrow reaches it.)
    #[inline(always)]
    pub(crate) fn zero_lanes(self, x: u64) -> u64 {
        x.wrapping_sub(self.low) & !x & self.high
    }

    /// The lanes whose top bits are set in `tops`, bit `i` for lane `i`, by one multiply. Exact
    /// for `f ≥ 4`: the term of top bit `j` times the gather's bit `i` lands at bit
    /// `60 + i + (j − i)·f`, past bit 63 for `j > i` and below 60 for `j < i`; two terms' bits
    /// differ by `(i − i') + k·f` with `|i − i'| ≤ 3 < f`, zero only for the same term, so no
    /// two add and nothing carries.
    #[inline(always)]
    pub(crate) fn slots(self, tops: u64) -> u32 {
        (tops.wrapping_mul(self.gather) >> 60) as u32
    }

    /// The slot index of the lane whose top bit is bit `top`.
    #[inline(always)]
    pub(crate) fn lane(self, top: u32) -> usize {
        // `top + 1` is `(i + 1)·f` with `(i + 1)·f ≤ 64`: the rounding of the reciprocal adds
        // less than 64 / 2^16, so the quotient is exact.
        (((top + 1) * self.reciprocal) >> 16) as usize - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lane_matches_exactly_its_own_fingerprint() {
        for f in 4..=MAX_LANE_BITS {
            let lanes = Lanes::new(f).unwrap();
            let mask = (1u64 << f) - 1;
            // Neighbouring lanes that differ from the key by one bit, a borrow's worth, or not.
            let key = (0x5a5a_5a5a & mask as u32).max(1);
            for fill in [0, 1, mask, u64::from(key) ^ 1, (u64::from(key) + 1) & mask] {
                for target in 0..BUCKET_SIZE {
                    // Ones above the lanes: the test must ignore them.
                    let mut window = u64::MAX.checked_shl(4 * f).unwrap_or(0);
                    for i in 0..BUCKET_SIZE {
                        let value = if i == target { u64::from(key) } else { fill };
                        window |= value << (i as u32 * f);
                    }
                    let hits = lanes.matches(window, key);
                    let expected: Vec<usize> = (0..BUCKET_SIZE)
                        .filter(|&i| i == target || fill == u64::from(key))
                        .collect();
                    let mut found = Vec::new();
                    let mut rest = hits;
                    while rest != 0 {
                        found.push(lanes.lane(rest.trailing_zeros()));
                        rest &= rest - 1;
                    }
                    assert_eq!(found, expected, "f {f} fill {fill:#x} target {target}");
                }
            }
        }
    }

    #[test]
    fn zero_lanes_finds_a_zero_lane_exactly_when_there_is_one_and_its_lowest_is_one() {
        for f in 4..=6 {
            let lanes = Lanes::new(f).unwrap();
            let values = 1u64 << f;
            // Every bucket of four lanes, with the bits above them set or not.
            for bucket in 0..values.pow(4) {
                let mut window = 0;
                for i in 0..4 {
                    window |= (bucket / values.pow(i) % values) << (i * f);
                }
                for above in [0, u64::MAX.checked_shl(4 * f).unwrap_or(0)] {
                    let x = window | above;
                    let zeros = lanes.zero_lanes(x);
                    let exact = lanes.matches(x, 0);
                    assert_eq!(zeros == 0, exact == 0, "f {f} window {window:#x}");
                    if zeros != 0 {
                        assert_eq!(zeros & zeros.wrapping_neg(), exact & exact.wrapping_neg());
                    }
                    // What it reports past the lowest are lanes of 1 above a zero one.
                    let mut rest = zeros & !exact;
                    while rest != 0 {
                        let lane = lanes.lane(rest.trailing_zeros());
                        assert_eq!(x >> (lane as u32 * f) & (values - 1), 1);
                        assert!(exact & ((1 << (lane as u32 * f)) - 1) != 0);
                        rest &= rest - 1;
                    }
                }
            }
        }
    }

    #[test]
    fn slots_gathers_every_set_of_lane_tops() {
        for f in 4..=MAX_LANE_BITS {
            let lanes = Lanes::new(f).unwrap();
            for set in 0..1u32 << BUCKET_SIZE {
                let tops = (0..BUCKET_SIZE as u32)
                    .filter(|i| set >> i & 1 == 1)
                    .fold(0u64, |acc, i| acc | 1 << ((i + 1) * f - 1));
                assert_eq!(lanes.slots(tops), set, "f {f}");
            }
        }
    }

    #[test]
    fn wider_fingerprints_have_no_lanes() {
        assert!(Lanes::new(3).is_none());
        assert!(Lanes::new(MAX_LANE_BITS + 1).is_none());
        assert!(Lanes::new(28).is_none());
    }
}
