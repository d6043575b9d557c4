//! The table: every bucket's bits, packed end to end in atomic 64-bit words.
//!
//! Readers load words `Relaxed` and trust them only once the stripe seqlock validates them;
//! writers hold the stripe lock of every word they store to, so a `Relaxed` load and store (no
//! read-modify-write) suffice. Buckets may straddle and share words: [`Table::lock_group_shift`]
//! gives the groups of consecutive buckets that share words, one lock each.

use super::bucket::{BucketCodec, RawBucket};
use super::index::{window, Words};
use crate::sync::{prefetch, table_words, Ordering::Relaxed, TableWords};

/// Tables at least this large get their buckets prefetched by batch lookups: in smaller ones the
/// L2 cache answers quickly (docs/benchmarks.md, "Constants of the raw core").
const LOOKUP_PREFETCH_MIN_BYTES: usize = 384 << 10;

/// Tables at least this large get their buckets prefetched by bulk inserts and path searches
/// (docs/benchmarks.md, "Constants of the raw core").
pub(crate) const WRITE_PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Words after the last bucket that are never written: a limb read touches up to three words
/// from its first, and the spare words keep them all in bounds.
pub(crate) const SPARE_WORDS: usize = 2;

/// Tables at least this large go on huge pages, from a 2 MiB boundary (`TableWords`): random
/// reads of a big table miss the TLB (docs/benchmarks.md, "Constants of the raw core").
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct Table {
    /// The words and where the buckets lie in them (`index.rs`, whose unchecked reads rest on
    /// their bounds); read directly by the lookups and [`super::bucket_word`].
    pub(super) words: Words,
    limb_mask: u128,
    limb_bits: u32,
    limbs: usize,
    /// One bucket per word, with a version ([`super::bucket_word`]): the lookup's first test, a
    /// flag of its own so the compiler does not fold it into the dispatch on the other forms.
    pub(super) word: bool,
}

impl Table {
    /// A zeroed table of `bucket_count` buckets (its pages untouched: the allocator zeroes
    /// them); `None` if the memory cannot be had.
    pub(crate) fn new(bucket_count: usize, codec: &BucketCodec) -> Option<Self> {
        let len = Self::words_for(bucket_count, codec)?;
        let words = table_words(len, len >= HUGE_PAGE_MIN_BYTES / 8)?;
        Self::from_words(bucket_count, codec, words)
    }

    /// A table of `bucket_count` buckets over `words`, which the caller made exactly
    /// [`Self::words_for`] long (`None` if they are too few for the buckets).
    fn from_words(bucket_count: usize, codec: &BucketCodec, words: TableWords) -> Option<Self> {
        Some(Self {
            words: Words::new(words, codec.bucket_bits() as u64, bucket_count)?,
            limb_bits: codec.limb_bits(),
            limb_mask: low_bits(codec.limb_bits()),
            limbs: codec.limbs(),
            word: codec.is_word(),
        })
    }

    /// A table over words in a file mapping; `None` unless they are as many as the geometry
    /// needs.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn mapped(
        bucket_count: usize,
        codec: &BucketCodec,
        words: TableWords,
    ) -> Option<Self> {
        if Self::words_for(bucket_count, codec)? != words.len() {
            return None;
        }
        Self::from_words(bucket_count, codec, words)
    }

    /// The words of the table and the first and last word of `bucket`'s bits, for a shared
    /// table's journal.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn bucket_words(&self, bucket: usize) -> (&[crate::sync::AtomicU64], usize, usize) {
        let bit = bucket as u64 * self.words.bucket_bits();
        let last = (bit + self.words.bucket_bits() - 1) / 64;
        (&self.words[..], (bit / 64) as usize, last as usize)
    }

    /// Another handle on the same mapped words; `None` for a table on the heap.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn share(&self, codec: &BucketCodec) -> Option<Self> {
        Self::from_words(self.bucket_count(), codec, self.words.share()?)
    }

    /// Words a table of `bucket_count` buckets needs, spare words included; `None` if that is not
    /// a `usize`.
    pub(crate) fn words_for(bucket_count: usize, codec: &BucketCodec) -> Option<usize> {
        usize::try_from(Self::words_for_u64(bucket_count as u64, codec)?).ok()
    }

    /// [`Self::words_for`] in 64 bits, whatever the target's `usize`; `None` on overflow.
    pub(crate) fn words_for_u64(bucket_count: u64, codec: &BucketCodec) -> Option<u64> {
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

    /// Words that hold bucket bits (the table without its spare words).
    pub(crate) fn data_words(&self) -> usize {
        self.words.len() - SPARE_WORDS
    }

    /// [`Self::read_words`] of every data word.
    pub(crate) fn copy_words(&self) -> Vec<u64> {
        let mut words = vec![0; self.data_words()];
        self.read_words(0, &mut words);
        words
    }

    /// Copies the data words from `from` on into `out`, without the versions of a table of one
    /// word per bucket. The caller holds every stripe, or the copy may be torn.
    pub(crate) fn read_words(&self, from: usize, out: &mut [u64]) {
        let keep = if self.word {
            self.limb_mask as u64
        } else {
            u64::MAX
        };
        debug_assert!(from + out.len() <= self.data_words());
        self.words.read(from, out, keep);
    }

    /// Empties every bucket. The caller holds every stripe. A bucket word is stored as its
    /// writer stores it, version moved on, so a lookup's second load sees the change.
    pub(crate) fn clear(&self) {
        if self.word {
            for bucket in 0..self.words.bucket_count() {
                self.update_word(bucket, |fingerprints| (fingerprints != 0).then_some(0));
            }
            return;
        }
        self.words.clear(self.data_words());
    }

    /// A new table holding this one's words, versions included; `None` if the memory cannot
    /// be had. The caller holds every stripe, or the copy may be torn.
    pub(crate) fn duplicate(&self, codec: &BucketCodec) -> Option<Self> {
        let copy = Self::new(self.words.bucket_count(), codec)?;
        for (to, from) in copy.words.iter().zip(self.words.iter()) {
            let word = from.load(Relaxed);
            // The copy's pages stay untouched where the table is empty.
            if word != 0 {
                to.store(word, Relaxed);
            }
        }
        Some(copy)
    }

    /// A table whose data words are `bytes`, little-endian, read straight into the table;
    /// `None` unless there are exactly as many as the geometry needs and the memory can be had.
    /// The caller checks that the bits after the last bucket are zero.
    pub(crate) fn from_le_bytes(
        bucket_count: usize,
        codec: &BucketCodec,
        bytes: &[u8],
    ) -> Option<Self> {
        let table = Self::new(bucket_count, codec)?;
        if bytes.len() / 8 != table.data_words() || bytes.len() % 8 != 0 {
            return None;
        }
        for (slot, word) in table.words.iter().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            slot.store(u64::from_le_bytes(le), Relaxed);
        }
        Some(table)
    }

    /// log2 of the number of consecutive buckets that together fill whole words. No word holds
    /// bits of two such groups, so one lock per group covers every word exactly once.
    pub(crate) fn lock_group_shift(codec: &BucketCodec) -> u32 {
        let bits = codec.bucket_bits() as u64;
        // 64 / gcd(bits, 64): the smallest count of buckets whose bits are a multiple of 64.
        (64u64 >> bits.trailing_zeros().min(6)).trailing_zeros()
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.words.bucket_count()
    }

    /// Bytes of the table's words.
    pub(crate) fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }

    /// Whether batch lookups prefetch its buckets: at least [`LOOKUP_PREFETCH_MIN_BYTES`].
    #[inline]
    pub(crate) fn lookups_worth_prefetching(&self) -> bool {
        self.memory_usage() >= LOOKUP_PREFETCH_MIN_BYTES
    }

    /// Whether bulk inserts and path searches prefetch its buckets: at least
    /// [`WRITE_PREFETCH_MIN_BYTES`].
    #[inline]
    pub(crate) fn writes_worth_prefetching(&self) -> bool {
        self.memory_usage() >= WRITE_PREFETCH_MIN_BYTES
    }

    /// Loads the bucket's bits. Unvalidated: a racing writer can make this a mix of old and new.
    /// Inline for a bucket of at most 64 bits; wider ones in a call.
    #[inline(always)]
    pub(crate) fn load(&self, bucket: usize) -> RawBucket {
        if self.word || self.words.bucket_bits() <= 64 {
            return [u128::from(self.load_bits(bucket)), 0];
        }
        self.load_wide(bucket)
    }

    /// The bits of a bucket of at most 64 bits, without a bucket word's version or a packed
    /// bucket's neighbours. Unvalidated, as [`Self::load`].
    #[inline(always)]
    pub(crate) fn load_bits(&self, bucket: usize) -> u64 {
        if self.word {
            self.load_word_fingerprints(bucket)
        } else {
            self.load_narrow(bucket) & self.limb_mask as u64
        }
    }

    /// Stores the bits of a bucket of at most 64 bits, as [`Self::store`].
    #[inline(always)]
    pub(crate) fn store_bits(&self, bucket: usize, bits: u64) {
        self.update_bits(bucket, |_| Some(bits));
    }

    /// Replaces the bits of a bucket of at most 64 bits by what `change` makes of them, if it
    /// makes anything; whether it did. The caller holds the stripe lock of the bucket, as for
    /// [`Self::store`]. A bucket word is loaded once, its version with its fingerprints.
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

    /// Loads a bucket of at most 64 bits, with bits of the following buckets above its own (the
    /// narrow comparisons ignore them; the second word may be a spare one). Unvalidated.
    #[inline(always)]
    pub(crate) fn load_narrow(&self, bucket: usize) -> u64 {
        let bit = bucket as u64 * self.words.bucket_bits();
        let word = (bit / 64) as usize;
        window(&self.words[word..word + 2], 0, bit)
    }

    /// Starts bringing the bucket into cache for a later load: the lines of its first word and
    /// of the last word its load reads (one past the bucket's last, as loads read one word more
    /// rather than branch), which differ for one 48-bit bucket in eight.
    #[inline]
    pub(crate) fn prefetch(&self, bucket: usize) {
        if self.word {
            // A bucket word is read alone, and never crosses a line.
            prefetch(&self.words[bucket]);
            return;
        }
        let bit = bucket as u64 * self.words.bucket_bits();
        prefetch(&self.words[(bit / 64) as usize]);
        // In bounds: the spare words follow the last bucket's last word.
        prefetch(&self.words[((bit + self.words.bucket_bits() - 1) / 64 + 1) as usize]);
    }

    /// Stores the bucket's bits. The caller holds the stripe lock of the bucket's lock group.
    /// Inline for a bucket of at most 64 bits, as [`Self::load`].
    #[inline(always)]
    pub(crate) fn store(&self, bucket: usize, raw: &RawBucket) {
        if self.word || self.words.bucket_bits() <= 64 {
            return self.store_bits(bucket, raw[0] as u64);
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

    /// The `limb_bits` bits starting at table bit `bit`.
    #[inline]
    fn read(&self, bit: u64) -> u128 {
        let word = (bit / 64) as usize;
        let offset = (bit % 64) as u32;
        // The spare words make `word + 2` always in bounds.
        let words = &self.words[word..word + 3];
        // The second word even when not needed: cheaper than a branch, and nearly always on the
        // same line.
        let low = words[0].load(Relaxed) as u128 | (words[1].load(Relaxed) as u128) << 64;
        let mut value = low >> offset;
        if offset + self.limb_bits > 128 {
            value |= (words[2].load(Relaxed) as u128) << (128 - offset);
        }
        value & self.limb_mask
    }

    /// [`Self::write`] of a bucket of at most 64 bits: its word, and the next only if the bucket
    /// reaches into it (a word it does not reach may belong to a lock group not held).
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

    /// Replaces the `limb_bits` bits starting at table bit `bit` with `value`.
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
