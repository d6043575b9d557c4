//! The packed slots (docs/expiry.md, "Design"): a bucket is its four `f`-bit fingerprints, then
//! their four 4-bit tags, packed end to end in the raw core's [`Words`]. Readers load words
//! `Relaxed` and trust them once their stripes' stamps validate; a writer holds its bucket's
//! stripe and flips exactly its fields' bits (`fetch_xor(old ^ new)`), so writers of slots under
//! other stripes that share a word lose no update.

use super::window::{Ages, TAG_BITS};
use crate::raw::{window, Lanes, Words};
use crate::sync::{table_words, AtomicU64, Ordering};

/// Slots per bucket.
pub(crate) const BUCKET_SIZE: usize = 4;

/// A bucket's tags, in the low bits.
const TAGS_MASK: u64 = (1 << (BUCKET_SIZE as u32 * TAG_BITS)) - 1;

/// A bucket's two words from its first bit: `low` its fingerprints' window, `high` the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BucketBits {
    pub(crate) low: u64,
    high: u64,
}

impl BucketBits {
    /// `b` if `second`, else `a`: two conditional moves, not a branch.
    #[inline(always)]
    pub(crate) fn pick(a: Self, b: Self, second: bool) -> Self {
        Self {
            low: if second { b.low } else { a.low },
            high: if second { b.high } else { a.high },
        }
    }
}

#[derive(Debug)]
pub(crate) struct Slots {
    words: Words,
    fingerprint_bits: u32,
    fingerprint_mask: u64,
    /// The one-window matching of a bucket's fingerprints, when they fit 64 bits.
    lanes: Option<Lanes>,
    /// Whether every bucket's tags lie in the two words from its first bit's (`f ≤ 14`): then
    /// they are a shift of the words its fingerprints were read from.
    tags_beside: bool,
    /// Where a bucket's tags start in it: `4·f`.
    tags_at: u32,
}

impl Slots {
    /// `bucket_count` empty buckets of `width`-bit slots; `None` without the memory.
    pub(crate) fn new(bucket_count: usize, width: u32) -> Option<Self> {
        debug_assert!((TAG_BITS + 1..=32).contains(&width));
        let words = table_words(Self::words_for(bucket_count, width), false)?;
        let fingerprint_bits = width - TAG_BITS;
        // Four lanes in one window, each at least 4 bits wide ([`Lanes::slots`]).
        let lanes = (4..=16)
            .contains(&fingerprint_bits)
            .then(|| Lanes::new(BUCKET_SIZE, fingerprint_bits));
        let bucket_bits = u64::from(width) * BUCKET_SIZE as u64;
        let tags_at = fingerprint_bits * BUCKET_SIZE as u32;
        Some(Self {
            words: Words::new(words, bucket_bits, bucket_count)?,
            fingerprint_bits,
            fingerprint_mask: (1u64 << fingerprint_bits) - 1,
            lanes,
            tags_beside: in_two_words(bucket_bits) && tags_at < 64,
            tags_at,
        })
    }

    /// Words of `bucket_count` buckets, and the spare one a window read needs.
    pub(crate) fn words_for(bucket_count: usize, width: u32) -> usize {
        (bucket_count * BUCKET_SIZE * width as usize).div_ceil(64) + 1
    }

    /// Bits of every bucket together: the words' bits past them are zero.
    pub(crate) fn used_bits(&self) -> usize {
        self.words.bucket_count() * self.words.bucket_bits() as usize
    }

    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.words[..]
    }

    #[inline(always)]
    pub(crate) fn lanes(&self) -> Option<Lanes> {
        self.lanes
    }

    /// [`Self::lanes`] if the tags lie beside the fingerprints: what the inline lookup needs.
    pub(crate) fn lanes_with_tags_beside(&self) -> Option<Lanes> {
        self.lanes.filter(|_| self.tags_beside)
    }

    #[inline(always)]
    fn window(&self, bit: u64) -> u64 {
        window(&self.words, (bit / 64) as usize, bit)
    }

    /// The first bits of slot `i`'s fingerprint and of its tag.
    #[inline(always)]
    fn fields(&self, bucket: usize, i: usize) -> [u64; 2] {
        let first = bucket as u64 * self.words.bucket_bits();
        [
            first + i as u64 * u64::from(self.fingerprint_bits),
            first + u64::from(self.tags_at) + i as u64 * u64::from(TAG_BITS),
        ]
    }

    /// `bucket`'s fingerprints' window, for a table with [`Self::lanes`].
    #[inline(always)]
    pub(crate) fn fingerprints(&self, bucket: usize) -> u64 {
        self.bucket_bits(bucket).low
    }

    #[inline(always)]
    pub(crate) fn bucket_bits(&self, bucket: usize) -> BucketBits {
        let bits = self.words.buckets().bits(bucket);
        BucketBits {
            low: bits as u64,
            high: (bits >> 64) as u64,
        }
    }

    /// The fingerprints of `bucket`'s slots (0: empty).
    #[inline(always)]
    pub(crate) fn fingerprints_of(&self, bucket: usize) -> [u32; BUCKET_SIZE] {
        let fingerprint = |bits: u64| (bits & self.fingerprint_mask) as u32;
        if self.lanes.is_some() {
            let window = self.fingerprints(bucket);
            return core::array::from_fn(|i| {
                fingerprint(window >> (i as u32 * self.fingerprint_bits))
            });
        }
        core::array::from_fn(|i| fingerprint(self.window(self.fields(bucket, i)[0])))
    }

    /// `bucket`'s tags, slot `i`'s at bit `4·i`: from its `bits` if they hold them.
    #[inline(always)]
    pub(crate) fn tags(&self, bucket: usize, bits: Option<BucketBits>) -> u64 {
        let window = match bits {
            Some(bits) if self.tags_beside => self.tags_window(bits),
            _ => self.window(self.fields(bucket, 0)[1]),
        };
        window & TAGS_MASK
    }

    /// A bucket's tags from its `bits`, with the next bucket's above them: one double-word shift.
    #[inline(always)]
    pub(crate) fn tags_window(&self, bits: BucketBits) -> u64 {
        debug_assert!(self.tags_beside && self.tags_at < 64);
        let both = u128::from(bits.high) << 64 | u128::from(bits.low);
        (both >> (self.tags_at % 64)) as u64
    }

    /// Asks for the words a read of `bucket` loads, a third if its tags may end there.
    #[inline(always)]
    pub(crate) fn prefetch(&self, bucket: usize) {
        self.words.buckets().prefetch_narrow(bucket);
        if !self.tags_beside {
            let third = (bucket as u64 * self.words.bucket_bits() / 64) as usize + 2;
            if let Some(word) = self.words.get(third) {
                crate::sync::prefetch(word);
            }
        }
    }

    /// Slot `i` of `bucket` as [`Ages::slot`] makes it, loaded `Relaxed`.
    #[inline(always)]
    pub(crate) fn get(&self, bucket: usize, i: usize) -> u64 {
        let [fingerprint, tag] = self.fields(bucket, i);
        let fp = self.window(fingerprint) & self.fingerprint_mask;
        fp << TAG_BITS | self.window(tag) & Ages::TAG_MASK
    }

    pub(crate) fn bucket(&self, bucket: usize) -> [u64; BUCKET_SIZE] {
        core::array::from_fn(|i| self.get(bucket, i))
    }

    /// Changes slot `i` of `bucket` from `old` to `new`, under the bucket's stripe lock.
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

    /// The words from `from` on into `out`; the caller holds every stripe lock.
    pub(crate) fn read_words(&self, from: usize, out: &mut [u64]) {
        self.words.read(from, out, u64::MAX);
    }

    /// Words of the table.
    pub(crate) fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Empties every slot; the caller holds every stripe lock.
    pub(crate) fn clear(&self) {
        self.words.clear(self.words.len());
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }
}

/// Whether every bucket of `bucket_bits` bits lies within the two words from its first bit's:
/// buckets start at multiples of `gcd(bucket_bits, 64)` within their first word.
fn in_two_words(bucket_bits: u64) -> bool {
    let step = 1 << bucket_bits.trailing_zeros().min(6);
    64 - step + bucket_bits <= 128
}

#[cfg(test)]
#[path = "../../tests/unit/expiring/slots.rs"]
mod tests;
