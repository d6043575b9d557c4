//! The slots of an expiring filter: buckets of [`BUCKET_SIZE`] slots of `width` bits each (a
//! fingerprint and its age tag), packed end to end in atomic 64-bit words.
//!
//! A slot may straddle two words, and a word may hold slots of buckets under different stripes.
//! Readers load words `Relaxed` and trust what they read only once their stripes' stamps
//! validate it. A writer holds the stripe of the bucket it writes and knows the slot's old value,
//! so it changes exactly the slot's bits with `fetch_xor` of `old ^ new`: writers of neighbouring
//! slots under other stripes change other bits of the same word, and no update is lost.

use crate::sync::{table_words, AtomicU64, Ordering, TableWords};

/// Slots per bucket.
pub(crate) const BUCKET_SIZE: usize = 4;

/// The packed slot array.
#[derive(Debug)]
pub(crate) struct Slots {
    words: TableWords,
    width: u32,
    mask: u64,
    bucket_count: usize,
}

impl Slots {
    /// `bucket_count` empty buckets of slots `width` bits wide (at most 32); `None` if the memory
    /// cannot be had.
    pub(crate) fn new(bucket_count: usize, width: u32) -> Option<Self> {
        debug_assert!((5..=32).contains(&width));
        let words = Self::words_for(bucket_count, width);
        Some(Self {
            words: table_words(words, false)?,
            width,
            mask: (1u64 << width) - 1,
            bucket_count,
        })
    }

    /// Words of `bucket_count` buckets, and one more so that a straddling read never checks.
    pub(crate) fn words_for(bucket_count: usize, width: u32) -> usize {
        (bucket_count * BUCKET_SIZE * width as usize).div_ceil(64) + 1
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.bucket_count
    }

    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.words
    }

    /// Where slot `i` of `bucket` starts: its word and the bit in it.
    #[inline(always)]
    fn position(&self, bucket: usize, i: usize) -> (usize, u32) {
        let bit = (bucket * BUCKET_SIZE + i) * self.width as usize;
        (bit / 64, (bit % 64) as u32)
    }

    /// Slot `i` of `bucket`, loaded `Relaxed`: under the bucket's stripe lock, or validated.
    #[inline(always)]
    pub(crate) fn get(&self, bucket: usize, i: usize) -> u64 {
        let (word, shift) = self.position(bucket, i);
        let mut value = self.words[word].load(Ordering::Relaxed) >> shift;
        if shift + self.width > 64 {
            value |= self.words[word + 1].load(Ordering::Relaxed) << (64 - shift);
        }
        value & self.mask
    }

    /// The slots of `bucket`.
    #[inline(always)]
    pub(crate) fn bucket(&self, bucket: usize) -> [u64; BUCKET_SIZE] {
        core::array::from_fn(|i| self.get(bucket, i))
    }

    /// Changes slot `i` of `bucket` from `old` (its value) to `new`; the caller holds the
    /// bucket's stripe lock.
    #[inline]
    pub(crate) fn set(&self, bucket: usize, i: usize, old: u64, new: u64) {
        let flip = (old ^ new) & self.mask;
        let (word, shift) = self.position(bucket, i);
        self.words[word].fetch_xor(flip << shift, Ordering::Relaxed);
        if shift + self.width > 64 {
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
        for width in [5, 16, 17, 21, 31, 32] {
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
        }
    }
}
