//! Bucket encoding: `b` fingerprints of `f` bits are `b·f` contiguous table bits, in registers one
//! or two `u128` *limbs* (two only for 8 slots over 16 bits) searched by SWAR; 0 is an empty
//! slot. A semi-sorted codec decodes [`super::semisort`]'s buckets and encodes them again.

use super::index::Lanes;
use super::semisort;

/// Bits of a bucket word's version (`bucket_word.rs`), its top bits.
pub(crate) const WORD_VERSION_BITS: u32 = 16;

pub(crate) const WORD_VERSION_SHIFT: u32 = u64::BITS - WORD_VERSION_BITS;

pub(crate) const WORD_FINGERPRINTS: u64 = (1 << WORD_VERSION_SHIFT) - 1;

/// Whether the fingerprints fit a bucket word beside its version.
pub(crate) fn fits_bucket_word(bucket_size: usize, fingerprint_bits: u32) -> bool {
    bucket_size as u64 * u64::from(fingerprint_bits) <= u64::from(WORD_VERSION_SHIFT)
}

pub(crate) const MAX_BUCKET_SIZE: usize = 8;

pub(crate) type RawBucket = [u128; 2];

/// How a table's buckets are read, each form by its own lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum BucketForm {
    /// One bucket per table word, with a version ([`super::bucket_word`]).
    Word,
    /// Plain fingerprints packed in at most 64 bits.
    Narrow,
    Other,
}

#[derive(Clone, Debug)]
#[repr(C)] // What a lookup reads first: the form, then what each form compares with.
pub(crate) struct BucketCodec {
    pub(super) form: BucketForm,
    /// The lanes of a bucket of at most 64 bits.
    pub(super) narrow: Lanes,
    semi_sorted: bool,
    fingerprint_bits: u32,
    /// For semi-sorted buckets of at most 64 bits, compared encoded.
    semi_sorted_lanes: Option<semisort::NarrowLanes>,
    /// A limb's [`Lanes`] masks: `low`, `high` and `rest`.
    lane_low: u128,
    lane_high: u128,
    lane_rest: u128,
    bucket_size: usize,
    limbs: usize,
    lanes: usize,
}

impl BucketCodec {
    /// The builder checks the arguments, as the assertions state.
    pub(crate) fn new(bucket_size: usize, fingerprint_bits: u32, semi_sorted: bool) -> Self {
        debug_assert!(matches!(bucket_size, 2 | 4 | 8) && (4..=32).contains(&fingerprint_bits));
        debug_assert!(!semi_sorted || (bucket_size == 4 && fingerprint_bits >= 5));
        let limbs = (bucket_size as u32 * fingerprint_bits).div_ceil(128) as usize;
        let lanes = bucket_size / limbs;
        let lane_low = (0..lanes).fold(0u128, |acc, lane| {
            acc | 1 << (lane as u32 * fingerprint_bits)
        });
        let form = if !semi_sorted && bucket_size as u32 * fingerprint_bits <= 64 {
            BucketForm::Narrow
        } else {
            BucketForm::Other
        };
        let narrow_lanes = semi_sorted && fingerprint_bits <= semisort::MAX_LANE_FINGERPRINT_BITS;
        Self {
            form,
            narrow: Lanes::new(lanes, fingerprint_bits),
            semi_sorted,
            fingerprint_bits,
            bucket_size,
            limbs,
            lanes,
            semi_sorted_lanes: narrow_lanes.then(|| semisort::NarrowLanes::new(fingerprint_bits)),
            lane_low,
            lane_high: lane_low << (fingerprint_bits - 1),
            lane_rest: lane_low * ((1u128 << (fingerprint_bits - 1)) - 1),
        }
    }

    /// The codec of a table of one word per bucket.
    pub(crate) fn word(bucket_size: usize, fingerprint_bits: u32) -> Self {
        debug_assert!(fits_bucket_word(bucket_size, fingerprint_bits));
        Self {
            form: BucketForm::Word,
            ..Self::new(bucket_size, fingerprint_bits, false)
        }
    }

    #[inline]
    pub(crate) fn is_word(&self) -> bool {
        self.form == BucketForm::Word
    }

    pub(crate) fn bucket_size(&self) -> usize {
        self.bucket_size
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    pub(crate) fn limbs(&self) -> usize {
        self.limbs
    }

    pub(crate) fn is_semi_sorted(&self) -> bool {
        self.semi_sorted
    }

    pub(crate) fn limb_bits(&self) -> u32 {
        if self.semi_sorted {
            semisort::CODE_BITS + 4 * (self.fingerprint_bits - 4)
        } else {
            self.lanes as u32 * self.fingerprint_bits
        }
    }

    pub(crate) fn bucket_bits(&self) -> u32 {
        if self.is_word() {
            return u64::BITS;
        }
        self.limbs as u32 * self.limb_bits()
    }

    /// `fp` in every lane of a limb, for [`Self::matches`] (semi-sorted: `fp` itself).
    #[inline]
    pub(crate) fn broadcast(&self, fp: u32) -> u128 {
        if self.semi_sorted {
            fp as u128
        } else {
            self.lane_low * fp as u128
        }
    }

    /// [`Lanes::zeros`] of a limb.
    #[inline]
    fn zero_lanes(&self, limb: u128) -> u128 {
        !(((limb & self.lane_rest) + self.lane_rest) | limb) & self.lane_high
    }

    /// Whether the bucket's plain fingerprints fit a `u64` ([`super::table::Table::load_bits`]).
    #[inline]
    pub(crate) fn is_plain_narrow(&self) -> bool {
        matches!(self.form, BucketForm::Word | BucketForm::Narrow)
    }

    /// The shift of the first empty slot of a plain narrow bucket, which [`Self::insert`] fills.
    #[inline(always)]
    pub(crate) fn first_free_narrow(&self, bits: u64) -> Option<u32> {
        self.slot_of_narrow(bits, 0)
    }

    #[inline(always)]
    pub(crate) fn free_lanes_narrow(&self, bits: u64) -> u64 {
        self.narrow.zeros(bits)
    }

    /// The shift of the first slot holding `fp` in a plain narrow bucket.
    #[inline(always)]
    pub(crate) fn slot_of_narrow(&self, bits: u64, fp: u32) -> Option<u32> {
        let hits = self.narrow.matches(bits, fp);
        (hits != 0).then(|| hits.trailing_zeros() + 1 - self.fingerprint_bits)
    }

    #[inline(always)]
    pub(crate) fn semi_sorted_lanes(&self) -> Option<&semisort::NarrowLanes> {
        self.semi_sorted_lanes.as_ref()
    }

    /// Whether any slot of `bucket` holds the fingerprint whose [`Self::broadcast`] is `pattern`.
    #[inline]
    pub(crate) fn matches(&self, bucket: &RawBucket, pattern: u128) -> bool {
        if self.semi_sorted {
            return semisort::holds(bucket[0], self.fingerprint_bits, pattern as u32);
        }
        if self.is_plain_narrow() {
            return self.narrow.zeros((bucket[0] ^ pattern) as u64) != 0;
        }
        let mut hit = self.zero_lanes(bucket[0] ^ pattern);
        if self.limbs == 2 {
            hit |= self.zero_lanes(bucket[1] ^ pattern);
        }
        hit != 0
    }

    pub(crate) fn count(&self, bucket: &RawBucket, fp: u32) -> usize {
        if self.semi_sorted {
            return self.decode(bucket).iter().filter(|&&x| x == fp).count();
        }
        let pattern = self.broadcast(fp);
        bucket[..self.limbs]
            .iter()
            .map(|limb| self.zero_lanes(limb ^ pattern).count_ones() as usize)
            .sum()
    }

    #[inline]
    pub(crate) fn has_free(&self, bucket: &RawBucket) -> bool {
        if self.semi_sorted {
            // Empty slots sort first.
            return self.decode(bucket)[0] == 0;
        }
        self.matches(bucket, 0)
    }

    #[inline]
    pub(crate) fn insert(&self, bucket: &mut RawBucket, fp: u32) -> bool {
        self.replace_first(bucket, 0, fp)
    }

    #[inline]
    pub(crate) fn remove(&self, bucket: &mut RawBucket, fp: u32) -> bool {
        self.replace_first(bucket, fp, 0)
    }

    /// Replaces the first `from` by `to`; false if there is none. Plain narrow buckets inline.
    #[inline]
    fn replace_first(&self, bucket: &mut RawBucket, from: u32, to: u32) -> bool {
        if !self.is_plain_narrow() {
            return self.replace_first_wide(bucket, from, to);
        }
        let Some(shift) = self.slot_of_narrow(bucket[0] as u64, from) else {
            return false;
        };
        bucket[0] ^= u128::from(u64::from(from ^ to) << shift);
        true
    }

    /// [`Self::replace_first`] of semi-sorted buckets and of plain ones over 64 bits.
    #[inline(never)]
    fn replace_first_wide(&self, bucket: &mut RawBucket, from: u32, to: u32) -> bool {
        if self.semi_sorted {
            let mut fps = self.decode(bucket);
            let Some(slot) = fps.iter().position(|&fp| fp == from) else {
                return false;
            };
            fps[slot] = to;
            bucket[0] = semisort::encode(fps, self.fingerprint_bits);
            return true;
        }
        let pattern = self.broadcast(from);
        for limb in &mut bucket[..self.limbs] {
            let hits = self.zero_lanes(*limb ^ pattern);
            if hits != 0 {
                // `zero_lanes` is exact, so its lowest bit marks the first matching slot.
                let shift = hits.trailing_zeros() + 1 - self.fingerprint_bits;
                *limb ^= ((from ^ to) as u128) << shift;
                return true;
            }
        }
        false
    }

    /// Whether `bucket` is in the form the encoder writes (only semi-sorted ones can fail).
    pub(crate) fn is_canonical(&self, bucket: &RawBucket) -> bool {
        !self.semi_sorted
            || semisort::encode(self.decode(bucket), self.fingerprint_bits) == bucket[0]
    }

    /// The bucket holding `fps` (at most a bucket's worth; 0 for an empty slot).
    pub(crate) fn encode(&self, fps: &[u32]) -> RawBucket {
        debug_assert!(fps.len() <= self.bucket_size);
        if self.semi_sorted {
            let mut four = [0; 4];
            four[..fps.len()].copy_from_slice(fps);
            return [semisort::encode(four, self.fingerprint_bits), 0];
        }
        let mut bucket = [0u128; 2];
        for (slot, &fp) in fps.iter().enumerate() {
            let (limb, lane) = (slot / self.lanes, (slot % self.lanes) as u32);
            bucket[limb] |= u128::from(fp) << (lane * self.fingerprint_bits);
        }
        bucket
    }

    #[inline]
    fn decode(&self, bucket: &RawBucket) -> [u32; 4] {
        semisort::decode(bucket[0], self.fingerprint_bits)
    }

    /// The fingerprints of a plain narrow bucket, in slot order, 0 for an empty slot.
    #[inline(always)]
    pub(crate) fn lane_fingerprints(&self, bits: u64) -> impl Iterator<Item = u32> {
        let (width, mask) = (self.fingerprint_bits, (1u64 << self.fingerprint_bits) - 1);
        (0..self.bucket_size as u32).map(move |lane| ((bits >> (lane * width)) & mask) as u32)
    }

    /// The fingerprints in `bucket`'s slots, in slot order, 0 for an empty slot.
    pub(crate) fn fingerprints(&self, bucket: &RawBucket) -> Fingerprints {
        let mut out = Fingerprints {
            fps: [0; MAX_BUCKET_SIZE],
            len: self.bucket_size as u8,
        };
        if self.semi_sorted {
            out.fps[..4].copy_from_slice(&self.decode(bucket));
            return out;
        }
        // No division by the run-time lane count: the path search reads wide buckets so.
        let mask = (1u128 << self.fingerprint_bits) - 1;
        let mut slots = out.fps[..self.bucket_size].iter_mut();
        for &limb in &bucket[..self.limbs] {
            let mut lanes = limb;
            for fp in slots.by_ref().take(self.lanes) {
                *fp = (lanes & mask) as u32;
                lanes >>= self.fingerprint_bits;
            }
        }
        out
    }
}

/// A bucket's fingerprints, or up to a bucket's worth collected by `push`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fingerprints {
    fps: [u32; MAX_BUCKET_SIZE],
    len: u8,
}

impl Fingerprints {
    pub(crate) fn as_slice(&self) -> &[u32] {
        &self.fps[..self.len as usize]
    }

    pub(crate) fn push(&mut self, fp: u32) {
        self.fps[self.len as usize] = fp;
        self.len += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
#[path = "../../tests/unit/raw/bucket.rs"]
mod tests;
