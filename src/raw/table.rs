//! The table: every bucket's bits, packed end to end in atomic 64-bit words.
//!
//! Readers load words `Relaxed` and trust them only once the stripe seqlock validates them;
//! writers hold the stripe lock of every word they store to (one lock per group of buckets that
//! share words, [`Table::lock_group_shift`]), so a `Relaxed` load and store suffice.

use super::bucket::{BucketCodec, RawBucket};
use super::index::{window, Words};
use crate::sync::{prefetch, table_words, Ordering::Relaxed, TableWords};

/// From this size bulk inserts and path searches prefetch (figures: docs/benchmarks.md).
pub(crate) const WRITE_PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Words never written after the last bucket, so a limb's read of three words stays in bounds.
pub(crate) const SPARE_WORDS: usize = 2;

/// From this size tables go on huge pages (figures: docs/benchmarks.md).
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct Table {
    pub(super) words: Words,
    limb_mask: u128,
    limb_bits: u32,
    limbs: usize,
    /// One bucket per word ([`super::bucket_word`]): a flag of its own, the lookup's first test,
    /// so the compiler does not fold it into the dispatch on the other forms.
    pub(super) word: bool,
}

impl Table {
    pub(crate) fn new(bucket_count: usize, codec: &BucketCodec) -> Option<Self> {
        let len = usize::try_from(Self::words_for(bucket_count as u64, codec)?).ok()?;
        let words = table_words(len, len >= HUGE_PAGE_MIN_BYTES / 8)?;
        Self::from_words(bucket_count, codec, words)
    }

    fn from_words(bucket_count: usize, codec: &BucketCodec, words: TableWords) -> Option<Self> {
        Some(Self {
            words: Words::new(words, codec.bucket_bits() as u64, bucket_count)?,
            limb_bits: codec.limb_bits(),
            limb_mask: low_bits(codec.limb_bits()),
            limbs: codec.limbs(),
            word: codec.is_word(),
        })
    }

    /// A table over a file mapping's words; `None` unless they are as many as it needs.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn mapped(
        bucket_count: usize,
        codec: &BucketCodec,
        words: TableWords,
    ) -> Option<Self> {
        if Self::words_for(bucket_count as u64, codec)? != words.len() as u64 {
            return None;
        }
        Self::from_words(bucket_count, codec, words)
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn share(&self, codec: &BucketCodec) -> Option<Self> {
        Self::from_words(self.bucket_count(), codec, self.words.share()?)
    }

    /// Words a table needs, spare words included, in 64 bits whatever the target's `usize`.
    pub(crate) fn words_for(bucket_count: u64, codec: &BucketCodec) -> Option<u64> {
        let data = (u128::from(bucket_count) * codec.bucket_bits() as u128).div_ceil(64);
        u64::try_from(data + SPARE_WORDS as u128).ok()
    }

    /// The most buckets whose table takes at most `bytes` bytes.
    pub(crate) fn max_bucket_count_in(bytes: u64, codec: &BucketCodec) -> u64 {
        let data_words = (bytes / 8).saturating_sub(SPARE_WORDS as u64);
        (u128::from(data_words) * 64 / codec.bucket_bits() as u128)
            .try_into()
            .unwrap_or(u64::MAX)
    }

    pub(crate) fn data_words(&self) -> usize {
        self.words.len() - SPARE_WORDS
    }

    /// Copies the data words from `from` on, without bucket words' versions, under every lock.
    pub(crate) fn read_words(&self, from: usize, out: &mut [u64]) {
        let keep = if self.word {
            self.limb_mask as u64
        } else {
            u64::MAX
        };
        debug_assert!(from + out.len() <= self.data_words());
        self.words.read(from, out, keep);
    }

    /// Empties every bucket under every lock; a bucket word's version moves on, as a writer's.
    pub(crate) fn clear(&self) {
        if self.word {
            for bucket in 0..self.words.bucket_count() {
                self.update_word(bucket, |fingerprints| (fingerprints != 0).then_some(0));
            }
            return;
        }
        self.words.clear(self.data_words());
    }

    /// A copy, versions included, under every lock; `None` if the memory cannot be had.
    pub(crate) fn duplicate(&self, codec: &BucketCodec) -> Option<Self> {
        let copy = Self::new(self.words.bucket_count(), codec)?;
        for (to, from) in copy.words.iter().zip(self.words.iter()) {
            let word = from.load(Relaxed);
            // Zero pages stay untouched.
            if word != 0 {
                to.store(word, Relaxed);
            }
        }
        Some(copy)
    }

    /// A table of these data words; `None` unless exactly as many as it needs.
    pub(crate) fn from_data_words(
        bucket_count: usize,
        codec: &BucketCodec,
        words: impl ExactSizeIterator<Item = u64>,
    ) -> Option<Self> {
        let table = Self::new(bucket_count, codec)?;
        if words.len() != table.data_words() {
            return None;
        }
        for (slot, word) in table.words.iter().zip(words) {
            slot.store(word, Relaxed);
        }
        Some(table)
    }

    /// The words that hold bits of `buckets` buckets from `first` (a lock group's fill them
    /// whole; a live file's journal copies one bucket's): `[from, to)`.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn word_range(&self, first: usize, buckets: usize) -> core::ops::Range<usize> {
        let bits = self.words.bucket_bits();
        let from = first as u64 * bits / 64;
        let to = ((first + buckets) as u64 * bits).div_ceil(64);
        from as usize..to as usize
    }

    /// log2 of the fewest consecutive buckets that fill whole words: no word holds bits of two
    /// such groups, so one lock per group covers every word once.
    pub(crate) fn lock_group_shift(codec: &BucketCodec) -> u32 {
        let bits = codec.bucket_bits() as u64;
        // 64 / gcd(bits, 64).
        (64u64 >> bits.trailing_zeros().min(6)).trailing_zeros()
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.words.bucket_count()
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }

    #[inline]
    pub(crate) fn writes_worth_prefetching(&self) -> bool {
        self.memory_usage() >= WRITE_PREFETCH_MIN_BYTES
    }

    /// Loads the bucket's bits, unvalidated; inline for a bucket of at most 64 bits.
    #[inline(always)]
    pub(crate) fn load(&self, bucket: usize) -> RawBucket {
        if self.word || self.words.bucket_bits() <= 64 {
            return [u128::from(self.load_bits(bucket)), 0];
        }
        self.load_wide(bucket)
    }

    /// A bucket of at most 64 bits, without version or neighbours. Unvalidated.
    #[inline(always)]
    pub(crate) fn load_bits(&self, bucket: usize) -> u64 {
        if self.word {
            self.load_word_fingerprints(bucket)
        } else {
            self.load_narrow(bucket) & self.limb_mask as u64
        }
    }

    /// Stores what `change` makes of a bucket of at most 64 bits, if anything, under its lock.
    #[inline(always)]
    pub(crate) fn update_bits(
        &self,
        bucket: usize,
        change: impl FnOnce(u64) -> Option<u64>,
    ) -> bool {
        if self.word {
            return self.update_word(bucket, change);
        }
        let Some(bits) = change(self.load_bits(bucket)) else {
            return false;
        };
        self.write_narrow(bucket as u64 * self.words.bucket_bits(), bits);
        true
    }

    #[inline(never)]
    fn load_wide(&self, bucket: usize) -> RawBucket {
        let first = bucket as u64 * self.words.bucket_bits();
        let mut raw = [self.read(first), 0];
        if self.limbs == 2 {
            raw[1] = self.read(first + self.limb_bits as u64);
        }
        raw
    }

    /// A bucket of at most 64 bits, the next buckets' bits above its own. Unvalidated.
    #[inline(always)]
    pub(crate) fn load_narrow(&self, bucket: usize) -> u64 {
        let bit = bucket as u64 * self.words.bucket_bits();
        let word = (bit / 64) as usize;
        window(&self.words[word..word + 2], 0, bit)
    }

    /// Prefetches the bucket's first word and the last its load reads (one past its own last).
    #[inline]
    pub(crate) fn prefetch(&self, bucket: usize) {
        if self.word {
            prefetch(&self.words[bucket]);
            return;
        }
        let bit = bucket as u64 * self.words.bucket_bits();
        prefetch(&self.words[(bit / 64) as usize]);
        prefetch(&self.words[((bit + self.words.bucket_bits() - 1) / 64 + 1) as usize]);
    }

    /// Stores the bucket's bits under its lock; inline for a bucket of at most 64 bits.
    #[inline(always)]
    pub(crate) fn store(&self, bucket: usize, raw: &RawBucket) {
        if self.word || self.words.bucket_bits() <= 64 {
            self.update_bits(bucket, |_| Some(raw[0] as u64));
            return;
        }
        self.store_wide(bucket, raw);
    }

    #[inline(never)]
    fn store_wide(&self, bucket: usize, raw: &RawBucket) {
        let first = bucket as u64 * self.words.bucket_bits();
        self.write(first, raw[0]);
        if self.limbs == 2 {
            self.write(first + self.limb_bits as u64, raw[1]);
        }
    }

    #[inline]
    fn read(&self, bit: u64) -> u128 {
        let word = (bit / 64) as usize;
        let offset = (bit % 64) as u32;
        // The second word even when not needed: cheaper than a branch.
        let words = &self.words[word..word + 3];
        let low = words[0].load(Relaxed) as u128 | (words[1].load(Relaxed) as u128) << 64;
        let mut value = low >> offset;
        if offset + self.limb_bits > 128 {
            value |= (words[2].load(Relaxed) as u128) << (128 - offset);
        }
        value & self.limb_mask
    }

    /// [`Self::write`] of at most 64 bits, storing the next word only if the bucket reaches it
    /// (else it may belong to a lock group not held).
    #[inline(always)]
    fn write_narrow(&self, bit: u64, value: u64) {
        let word = (bit / 64) as usize;
        let offset = (bit % 64) as u32;
        let mask = low_bits(self.limb_bits) as u64;
        let slot = &self.words[word];
        #[cfg(all(test, not(loom)))]
        super::stall::point();
        slot.store(
            (slot.load(Relaxed) & !(mask << offset)) | value << offset,
            Relaxed,
        );
        if offset + self.limb_bits > 64 {
            let slot = &self.words[word + 1];
            let rest = 64 - offset;
            #[cfg(all(test, not(loom)))]
            super::stall::point();
            slot.store(
                (slot.load(Relaxed) & !(mask >> rest)) | value >> rest,
                Relaxed,
            );
        }
    }

    fn write(&self, bit: u64, value: u128) {
        let word = (bit / 64) as usize;
        let offset = (bit % 64) as u32;
        let value = spread(value, offset);
        let mask = spread(low_bits(self.limb_bits), offset);
        for i in 0..3 {
            if mask[i] != 0 {
                let slot = &self.words[word + i];
                #[cfg(all(test, not(loom)))]
                super::stall::point();
                slot.store((slot.load(Relaxed) & !mask[i]) | value[i], Relaxed);
            }
        }
    }
}

fn low_bits(bits: u32) -> u128 {
    if bits == 128 {
        u128::MAX
    } else {
        (1 << bits) - 1
    }
}

/// `value << offset` as a 192-bit number, split into three words, lowest first.
fn spread(value: u128, offset: u32) -> [u64; 3] {
    let shifted = value << offset;
    let top = if offset == 0 {
        0
    } else {
        (value >> (128 - offset)) as u64
    };
    [shifted as u64, (shifted >> 64) as u64, top]
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/table.rs"]
mod tests;
