//! The slots of an expiring filter: buckets of [`BUCKET_SIZE`] slots, each a fingerprint of `f`
//! bits and a 4-bit age tag, packed end to end in atomic 64-bit words. A bucket is `4·f` bits of
//! fingerprints (slot `i`'s at bit `i·f`), then 16 bits of tags (slot `i`'s at bit `4·f + 4·i`),
//! so that a lookup reads all four fingerprints as one 64-bit window (`lanes.rs`).
//!
//! A field may straddle two words, and a word may hold fields of buckets under different
//! stripes. Readers load words `Relaxed` and trust what they read only once their stripes' stamps
//! validate it. A writer holds the stripe of the bucket it writes and knows the slot's old value,
//! so it changes exactly the fields' bits with `fetch_xor` of `old ^ new`: writers of
//! neighbouring slots under other stripes change other bits of the same word, and no update is
//! lost.

use super::lanes::Lanes;
use super::window::{Ages, TAG_BITS};
use crate::sync::{table_words, AtomicU64, Ordering, TableWords};

/// Slots per bucket.
pub(crate) const BUCKET_SIZE: usize = super::lanes::BUCKET_SIZE;

/// Bits of a bucket's tags.
const TAGS_BITS: u64 = BUCKET_SIZE as u64 * TAG_BITS as u64;

/// The packed slot array.
#[derive(Debug)]
pub(crate) struct Slots {
    words: TableWords,
    fingerprint_bits: u32,
    fingerprint_mask: u64,
    bucket_bits: u64,
    bucket_count: usize,
    /// The one-window matching of a bucket's fingerprints, when they fit 64 bits.
    lanes: Option<Lanes>,
}

impl Slots {
    /// `bucket_count` empty buckets of slots `width` bits wide (a fingerprint of `width − 4` bits
    /// and a tag; at most 32); `None` if the memory cannot be had.
    pub(crate) fn new(bucket_count: usize, width: u32) -> Option<Self> {
        debug_assert!((TAG_BITS + 1..=32).contains(&width));
        let words = Self::words_for(bucket_count, width);
        let fingerprint_bits = width - TAG_BITS;
        Some(Self {
            words: table_words(words, false)?,
            fingerprint_bits,
            fingerprint_mask: (1u64 << fingerprint_bits) - 1,
            bucket_bits: u64::from(width) * BUCKET_SIZE as u64,
            bucket_count,
            lanes: Lanes::new(fingerprint_bits),
        })
    }

    /// Words of `bucket_count` buckets, and one more so that a window read never checks.
    pub(crate) fn words_for(bucket_count: usize, width: u32) -> usize {
        (bucket_count * BUCKET_SIZE * width as usize).div_ceil(64) + 1
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.bucket_count
    }

    /// Bits of every bucket together: the words' bits past them are zero.
    pub(crate) fn used_bits(&self) -> usize {
        self.bucket_count * self.bucket_bits as usize
    }

    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.words
    }

    /// The one-window matching, if a bucket's fingerprints fit 64 bits.
    #[inline(always)]
    pub(crate) fn lanes(&self) -> Option<Lanes> {
        self.lanes
    }

    /// The 64 bits from `bit`: two words, of which the second may be the spare one.
    #[inline(always)]
    fn window(&self, bit: u64) -> u64 {
        let word = (bit / 64) as usize;
        let pair = &self.words[word..word + 2];
        let both = u128::from(pair[0].load(Ordering::Relaxed))
            | u128::from(pair[1].load(Ordering::Relaxed)) << 64;
        (both >> (bit % 64)) as u64
    }

    /// Where slot `i` of `bucket` keeps its fingerprint and its tag.
    #[inline(always)]
    fn fields(&self, bucket: usize, i: usize) -> [u64; 2] {
        let first = bucket as u64 * self.bucket_bits;
        let fingerprints = u64::from(self.fingerprint_bits) * BUCKET_SIZE as u64;
        [
            first + i as u64 * u64::from(self.fingerprint_bits),
            first + fingerprints + i as u64 * u64::from(TAG_BITS),
        ]
    }

    /// The window of `bucket`'s fingerprints (slot `i`'s at bit `i·f`; bits above `4·f` belong
    /// to its tags and the next bucket). Only for a table with [`Self::lanes`].
    #[inline(always)]
    pub(crate) fn fingerprints(&self, bucket: usize) -> u64 {
        self.window(bucket as u64 * self.bucket_bits)
    }

    /// Fingerprint `i` of a [`Self::fingerprints`] window.
    #[inline(always)]
    pub(crate) fn lane_fingerprint(&self, window: u64, i: usize) -> u32 {
        (window >> (i as u32 * self.fingerprint_bits) & self.fingerprint_mask) as u32
    }

    /// Asks for the words a read of `bucket` loads: the first and the last of them (its tags'
    /// window may end two words on), which may lie in another cache line.
    #[inline(always)]
    pub(crate) fn prefetch(&self, bucket: usize) {
        let first = (bucket as u64 * self.bucket_bits / 64) as usize;
        for word in [first, first + 2] {
            if let Some(word) = self.words.get(word) {
                crate::sync::prefetch(word);
            }
        }
    }

    /// `bucket`'s tags, slot `i`'s at bit `4·i`.
    #[inline(always)]
    pub(crate) fn tags(&self, bucket: usize) -> u64 {
        self.window(self.fields(bucket, 0)[1]) & ((1 << TAGS_BITS) - 1)
    }

    /// Slot `i` of `bucket` as [`Ages::slot`] makes it, loaded `Relaxed`: under the bucket's
    /// stripe lock, or validated.
    #[inline(always)]
    pub(crate) fn get(&self, bucket: usize, i: usize) -> u64 {
        let [fingerprint, tag] = self.fields(bucket, i);
        let fp = self.window(fingerprint) & self.fingerprint_mask;
        fp << TAG_BITS | self.window(tag) & Ages::TAG_MASK
    }

    /// The slots of `bucket`.
    #[inline(always)]
    pub(crate) fn bucket(&self, bucket: usize) -> [u64; BUCKET_SIZE] {
        if self.lanes.is_none() {
            return core::array::from_fn(|i| self.get(bucket, i));
        }
        let fingerprints = self.fingerprints(bucket);
        let tags = self.tags(bucket);
        core::array::from_fn(|i| {
            let fp = fingerprints >> (i as u32 * self.fingerprint_bits) & self.fingerprint_mask;
            fp << TAG_BITS | tags >> (i as u32 * TAG_BITS) & Ages::TAG_MASK
        })
    }

    /// Changes slot `i` of `bucket` from `old` (its value) to `new`; the caller holds the
    /// bucket's stripe lock.
    #[inline]
    pub(crate) fn set(&self, bucket: usize, i: usize, old: u64, new: u64) {
        let flip = old ^ new;
        let [fingerprint, tag] = self.fields(bucket, i);
        self.flip(
            fingerprint,
            self.fingerprint_bits,
            flip >> TAG_BITS & self.fingerprint_mask,
        );
        self.flip(tag, TAG_BITS, flip & Ages::TAG_MASK);
    }

    /// XORs `flip` into the `width` bits from `bit`.
    #[inline(always)]
    fn flip(&self, bit: u64, width: u32, flip: u64) {
        if flip == 0 {
            return;
        }
        let (word, shift) = ((bit / 64) as usize, (bit % 64) as u32);
        self.words[word].fetch_xor(flip << shift, Ordering::Relaxed);
        if shift + width > 64 {
            self.words[word + 1].fetch_xor(flip >> (64 - shift), Ordering::Relaxed);
        }
    }

    /// Every word, for a copy taken under every stripe lock.
    pub(crate) fn copy_words(&self) -> Vec<u64> {
        self.words
            .iter()
            .map(|word| word.load(Ordering::Relaxed))
            .collect()
    }

    /// Empties every slot; the caller holds every stripe lock.
    pub(crate) fn clear(&self) {
        for word in self.words.iter() {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// Bytes of the words.
    pub(crate) fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_of_every_width_keep_their_neighbours() {
        for width in [5, 8, 16, 17, 20, 21, 31, 32] {
            let slots = Slots::new(9, width).unwrap();
            let value = |b: usize, i: usize| ((b * 7 + i * 3 + 1) as u64) & ((1 << width) - 1);
            for b in 0..9 {
                for i in 0..BUCKET_SIZE {
                    slots.set(b, i, 0, value(b, i));
                }
            }
            for b in 0..9 {
                assert_eq!(
                    slots.bucket(b),
                    core::array::from_fn(|i| value(b, i)),
                    "{width}"
                );
            }
            slots.set(4, 2, value(4, 2), 0);
            assert_eq!(slots.get(4, 2), 0);
            assert_eq!(slots.get(4, 1), value(4, 1));
            assert_eq!(slots.get(4, 3), value(4, 3));
            assert_eq!(slots.bucket(4)[2], 0);
        }
    }

    #[test]
    fn a_bucket_is_its_fingerprints_then_its_tags() {
        // f = 13: slot i's fingerprint at bit 68·b + 13·i, its tag at 68·b + 52 + 4·i.
        let slots = Slots::new(3, 17).unwrap();
        slots.set(1, 1, 0, Ages::slot(0x1abc, 9));
        let words = slots.copy_words();
        let bits = u128::from(words[1]) << 64 | u128::from(words[0]);
        assert_eq!(bits >> (68 + 13) & 0x1fff, 0x1abc);
        assert_eq!(bits >> (68 + 52 + 4) & 0xf, 9);
        assert_eq!(
            bits.count_ones() + words[2].count_ones(),
            0x1abcu32.count_ones() + 9u32.count_ones()
        );
        let lanes = slots.lanes().unwrap();
        let hits = lanes.matches(slots.fingerprints(1), 0x1abc);
        assert_eq!(lanes.lane(hits.trailing_zeros()), 1);
        assert_eq!(hits.count_ones(), 1);
        assert_eq!(slots.tags(1), 9 << 4);
    }
}
