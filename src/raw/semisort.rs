//! Semi-sorted buckets (paper Section 5.2): four fingerprints in `4·f − 4` bits instead of `4·f`.
//!
//! Stored sorted (an empty slot, 0, first), the four 4-bit *prefixes* (high bits) are one of
//! C(19, 4) = 3876 multisets, named by a 12-bit code, followed by the *remainders* in order:
//! `code | remainder 0 | ... | remainder 3`. The code is the rank
//! `C(p0, 1) + C(p1 + 1, 2) + C(p2 + 2, 3) + C(p3 + 3, 4)` of the sorted prefixes; decoding
//! reads [`PREFIXES`], which any 12-bit code indexes without a bounds check.

use super::index::Lanes;

#[cfg(test)]
const CODES: usize = 3876;

pub(crate) const CODE_BITS: u32 = 12;

/// The widest fingerprints whose bucket fits a `u64`, for [`NarrowLanes`].
pub(crate) const MAX_LANE_FINGERPRINT_BITS: u32 = 17;

/// `BINOMIAL[n][k]` = C(n, k).
const BINOMIAL: [[u16; 5]; 19] = binomials();

/// Each code's sorted prefixes, smallest lowest; past the last code (a torn read's) zeros.
static PREFIXES: [u16; 1 << CODE_BITS] = prefix_table();

const fn binomials() -> [[u16; 5]; 19] {
    let mut table = [[0u16; 5]; 19];
    let mut n = 0;
    while n < 19 {
        table[n][0] = 1;
        let mut k = 1;
        while k < 5 && k <= n {
            table[n][k] = table[n - 1][k - 1] + table[n - 1][k];
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
    let mut n = 0;
    while n < 1 << 16 {
        let p = [n & 0xf, n >> 4 & 0xf, n >> 8 & 0xf, n >> 12];
        if p[0] <= p[1] && p[1] <= p[2] && p[2] <= p[3] {
            table[rank(p)] = n as u16;
        }
        n += 1;
    }
    table
}

/// Packs four fingerprints of at least 5 bits.
pub(crate) fn encode(mut fps: [u32; 4], fingerprint_bits: u32) -> u128 {
    // Sorted by five branchless compare-exchanges.
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        let (low, high) = (fps[i].min(fps[j]), fps[i].max(fps[j]));
        fps[i] = low;
        fps[j] = high;
    }
    let rest = fingerprint_bits - 4;
    let code = rank(fps.map(|fp| fp >> rest));
    let mut bucket = code as u128;
    let mask = (1u32 << rest) - 1;
    for (i, fp) in fps.iter().enumerate() {
        bucket |= ((fp & mask) as u128) << (CODE_BITS + i as u32 * rest);
    }
    bucket
}

/// Lookups of the four slots of an encoded bucket of at most 64 bits at once.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct NarrowLanes {
    /// Remainder bits: 1 to 13.
    rest: u32,
    lanes: Lanes,
    /// This width's row of [`SLOTS_TO_LANES`].
    slots_to_lanes: &'static [u64; 16],
}

/// `SLOTS_TO_LANES[rest][slots]`: the top bits of the remainder lanes of a set of slots (bit `i`
/// for slot `i`); one static, so a growable filter's many tables share its lines.
static SLOTS_TO_LANES: [[u64; 16]; 17] = slots_to_lanes();

const fn slots_to_lanes() -> [[u64; 16]; 17] {
    let mut table = [[0u64; 16]; 17];
    // Row `rest` of each width from 1, column `slots` of each set.
    let mut at = 16;
    while at < 17 * 16 {
        let (rest, slots) = (at / 16, at % 16);
        let mut i = 0;
        while i < 4 {
            if slots >> i & 1 == 1 {
                table[rest][slots] |= 1 << (i * rest + rest - 1);
            }
            i += 1;
        }
        at += 1;
    }
    table
}

/// A fingerprint's prefix in every nibble and remainder in every lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NarrowProbe {
    prefixes: u32,
    remainders: u64,
}

impl NarrowLanes {
    pub(crate) fn new(fingerprint_bits: u32) -> Self {
        debug_assert!((5..=MAX_LANE_FINGERPRINT_BITS).contains(&fingerprint_bits));
        let rest = fingerprint_bits - 4;
        Self {
            rest,
            lanes: Lanes::new(4, rest),
            slots_to_lanes: &SLOTS_TO_LANES[rest as usize],
        }
    }

    #[inline(always)]
    pub(crate) fn probe(&self, fp: u32) -> NarrowProbe {
        NarrowProbe {
            prefixes: (fp >> self.rest) * 0x1111,
            remainders: self.lanes.broadcast(fp & ((1 << self.rest) - 1)),
        }
    }

    /// Whether a bucket of at most 64 bits (bits above it ignored) holds the probe's fingerprint.
    #[inline(always)]
    pub(crate) fn holds(&self, bucket: u64, probe: &NarrowProbe) -> bool {
        let (code, remainders) = (bucket, bucket >> CODE_BITS);
        let zero_lanes = self.lanes.zeros(remainders ^ probe.remainders);
        zero_lanes & self.slots_to_lanes[prefix_slots(code, probe.prefixes)] != 0
    }
}

/// The slots (bit `i` for slot `i`) whose prefix in `code`'s low 12 bits is `prefixes`' nibble.
#[inline(always)]
fn prefix_slots(code: u64, prefixes: u32) -> usize {
    // Exact per-nibble zero test: a nibble's top bit is set iff it is zero.
    let nibbles = PREFIXES[(code & 0xfff) as usize] as u32 ^ prefixes;
    let zero_nibbles = !(((nibbles & 0x7777) + 0x7777) | nibbles) & 0x8888;
    // Bits 3, 7, 11, 15 to bits 12..16: no other product reaches or carries into them.
    ((((zero_nibbles >> 3) * 0x1248) >> 12) & 0xf) as usize
}

/// Whether a bucket of any width holds `fp`, reading only the remainders whose prefix matches.
#[inline]
pub(crate) fn holds(bucket: u128, fingerprint_bits: u32, fp: u32) -> bool {
    let rest = fingerprint_bits - 4;
    let mask = (1u128 << rest) - 1;
    let remainder = fp as u128 & mask;
    let mut slots = prefix_slots(bucket as u64, (fp >> rest) * 0x1111);
    while slots != 0 {
        let slot = slots.trailing_zeros();
        if (bucket >> (CODE_BITS + slot * rest)) & mask == remainder {
            return true;
        }
        slots &= slots - 1;
    }
    false
}

/// The four fingerprints, in ascending order.
#[inline]
pub(crate) fn decode(bucket: u128, fingerprint_bits: u32) -> [u32; 4] {
    let rest = fingerprint_bits - 4;
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
#[path = "../../tests/unit/raw/semisort.rs"]
mod tests;
