//! From a hash to its fingerprint (low 32 bits) and candidate buckets (high 32), and the words and
//! stamps a lookup reads there. For any bucket count `n`, `alt(i, fp) = (h(fp) - i) mod n` with
//! `h(fp) = fastrange(fibonacci_hash(fp), n)` is an involution: `h - (h - i) = i (mod n)`; `h`
//! takes two multiplies (docs/benchmarks.md, "Constants of the raw core").
//!
//! [`Words`] and [`StampWords`] check their bounds once, when made, and keep their fields private
//! here: the unchecked reads' proofs rest on nothing outside this file but the placement's promise
//! that every index it returns is below the bucket count.

use crate::sync::{fence, AtomicU64, Ordering, TableWords};

pub(crate) type BucketIndex = usize;

/// A stored fingerprint: `fingerprint_bits` wide and never 0 (0 marks an empty slot).
pub(crate) type Fingerprint = u32;

/// Indices are computed in 32 bits.
pub(crate) const MAX_BUCKET_COUNT: u64 = 1 << 32;

/// 2^64 divided by the golden ratio.
const FIBONACCI: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    pub(crate) fp: Fingerprint,
    pub(crate) first: BucketIndex,
    pub(crate) second: BucketIndex,
}

/// Where a table puts a hash's fingerprint. `alternate` must be an involution, the candidates a
/// bucket and its alternate, and every index below the bucket count ([`Buckets`] reads unchecked).
pub(crate) trait Place: Copy + core::fmt::Debug + Send + Sync {
    /// What a table placed this way checks before each write.
    type Gate: core::fmt::Debug + Send + Sync;

    fn candidates(&self, hash: u64) -> Candidates;
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex;

    /// Whether a writer, under its locks, may write `fp` (`None`: a move, which adds nothing).
    fn admits(&self, gate: &Self::Gate, fp: Option<Fingerprint>) -> bool;

    /// A copy of `gate`, for a copy of the table made under every stripe lock.
    fn duplicate_gate(&self, gate: &Self::Gate) -> Self::Gate;
}

/// The placement of a fixed-size filter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    bucket_count: u64,
    /// 2^fingerprint_bits - 1: how many non-zero fingerprints there are.
    fingerprints: u64,
    /// [`FIBONACCI`], read as a memory operand where the constant would take a register.
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

    #[inline]
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex {
        reflect_by(bucket, fp, self.bucket_count, self.fibonacci)
    }

    #[inline(always)]
    fn admits(&self, _: &(), _: Option<Fingerprint>) -> bool {
        true
    }

    fn duplicate_gate(&self, _: &()) {}
}

/// `alt(bucket, key)` of the module docs in a table of `bucket_count` buckets.
#[inline(always)]
pub(crate) fn reflect(bucket: BucketIndex, key: u32, bucket_count: u64) -> BucketIndex {
    reflect_by(bucket, key, bucket_count, FIBONACCI)
}

/// [`reflect`] with [`FIBONACCI`] from wherever the caller keeps it.
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

/// An item's hash in `level`: level 0's unchanged, later ones remixed (MurmurHash3's finalizer).
#[inline(always)]
pub(crate) fn level_hash(hash: u64, level: usize) -> u64 {
    if level == 0 {
        return hash;
    }
    let mut x = hash.wrapping_add((level as u64).wrapping_mul(FIBONACCI));
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// A table's words, bucket width and count, checked by [`Words::new`] and never changed.
#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct Words {
    words: TableWords,
    bucket_bits: u64,
    bucket_count: usize,
}

impl Words {
    /// `None` unless the words reach one past the last bucket's first word (a window reads two).
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

    /// Copies the words from `from` on into `out`, masked by `keep`, under every stripe lock.
    pub(crate) fn read(&self, from: usize, out: &mut [u64], keep: u64) {
        let words = &self.words[from..from + out.len()];
        for (out, word) in out.iter_mut().zip(words) {
            *out = word.load(Ordering::Relaxed) & keep;
        }
    }

    /// Zeroes the first `count` words under every stripe lock, leaving zero pages untouched.
    pub(crate) fn clear(&self, count: usize) {
        for word in &self.words[..count] {
            if word.load(Ordering::Relaxed) != 0 {
                word.store(0, Ordering::Relaxed);
            }
        }
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn share(&self) -> Option<TableWords> {
        self.words.share()
    }

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

/// A copy of a [`Words`]' fields that a lookup keeps in registers, read without bounds checks.
///
/// The bucket given must be below the bucket count, as every index the crate computes is:
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
    #[inline(always)]
    pub(crate) fn word(self, bucket: usize) -> &'a AtomicU64 {
        debug_assert_eq!(self.bucket_bits, 64);
        &self.words_of(bucket, bucket)[0]
    }

    #[inline(always)]
    pub(crate) fn narrow_pair(self, a: usize, b: usize) -> [u64; 2] {
        [a, b].map(|bucket| self.bits(bucket) as u64)
    }

    /// The two words from `bucket`'s first bit: its bits, the next buckets' above. Unvalidated.
    #[inline(always)]
    pub(crate) fn bits(self, bucket: usize) -> u128 {
        let bit = bucket as u64 * self.bucket_bits;
        let words = self.words_of(bucket, (bit / 64) as usize);
        let both = u128::from(words[0].load(Ordering::Relaxed))
            | u128::from(words[1].load(Ordering::Relaxed)) << 64;
        both >> (bit % 64)
    }

    #[inline(always)]
    pub(crate) fn prefetch_word(self, bucket: usize) {
        crate::sync::prefetch(self.word(bucket));
    }

    #[inline(always)]
    pub(crate) fn prefetch_narrow(self, bucket: usize) {
        let words = self.words_of(bucket, (bucket as u64 * self.bucket_bits / 64) as usize);
        crate::sync::prefetch(&words[0]);
        crate::sync::prefetch(&words[1]);
    }

    /// `word`, the word of `bucket`'s first bit, and the next.
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

/// The 64 bits from bit `bit % 64` of `words[word]` on.
#[inline(always)]
pub(crate) fn window(words: &[AtomicU64], word: usize, bit: u64) -> u64 {
    let both = words[word].load(Ordering::Relaxed) as u128
        | (words[word + 1].load(Ordering::Relaxed) as u128) << 64;
    (both >> (bit % 64)) as u64
}

/// The stripes' stamps (`stripe.rs`), checked by [`StampWords::new`] and never changed.
#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct StampWords {
    words: TableWords,
    mask: usize,
    group_shift: u32,
}

impl StampWords {
    pub(crate) fn new(words: TableWords, group_shift: u32) -> Option<Self> {
        let count = words.len();
        count.is_power_of_two().then_some(Self {
            words,
            mask: count - 1,
            group_shift,
        })
    }

    #[inline]
    pub(crate) fn stripe_of(&self, bucket: usize) -> usize {
        (bucket >> self.group_shift) & self.mask
    }

    pub(crate) fn group_shift(&self) -> u32 {
        self.group_shift
    }

    #[inline(always)]
    pub(crate) fn stamps(&self) -> Stamps<'_> {
        Stamps {
            stamps: &self.words,
            mask: self.mask,
            group_shift: self.group_shift,
        }
    }
}

impl core::ops::Deref for StampWords {
    type Target = [AtomicU64];

    #[inline(always)]
    fn deref(&self) -> &[AtomicU64] {
        &self.words
    }
}

/// A copy of a [`StampWords`]' fields that a lookup keeps in registers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamps<'a> {
    stamps: &'a [AtomicU64],
    mask: usize,
    group_shift: u32,
}

impl<'a> Stamps<'a> {
    /// The stamp of `bucket`'s stripe, for any `bucket`, without a bounds check.
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

    #[inline(always)]
    pub(crate) fn begin_read(self, bucket_a: usize, bucket_b: usize) -> OptimisticRead<'a> {
        let words = [self.of(bucket_a), self.of(bucket_b)];
        OptimisticRead {
            seen: words.map(|word| word.load(Ordering::Acquire) & !1),
            words,
        }
    }
}

/// An optimistic read of two stripes: the reader's half of `stripe.rs`'s seqlock.
#[derive(Debug)]
pub(crate) struct OptimisticRead<'a> {
    words: [&'a AtomicU64; 2],
    /// The stamps when the read began, lock bit cleared: a stamp seen locked is recorded as it
    /// was before the lock, a value a later load cannot read until the version wraps (every
    /// unlock moves it on), so such a read fails to validate with no test of the lock bit.
    seen: [u64; 2],
}

impl OptimisticRead<'_> {
    /// True if both stripes were unlocked and unchanged since the start: what was read is real.
    #[inline(always)]
    pub(crate) fn validate(&self) -> bool {
        fence(Ordering::Acquire);
        let moved_a = self.words[0].load(Ordering::Relaxed) ^ self.seen[0];
        let moved_b = self.words[1].load(Ordering::Relaxed) ^ self.seen[1];
        // One branch for both stripes: it is taken on every lookup.
        (moved_a | moved_b) == 0
    }
}

/// The masks of SWAR lanes of `f` bits from bit 0, matching one fingerprint in 64 bits at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// 1 at the lowest bit of every lane.
    low: u64,
    /// 1 at the highest bit of every lane.
    high: u64,
    /// Every bit of every lane but the highest.
    rest: u64,
    /// Bit `61 + i − (i + 1)·f` for each of the first four lanes ([`Self::slots`]).
    gather: u64,
}

impl Lanes {
    /// Up to `count` lanes of `f` bits, `f` in `1..=32`, as many as end within 64 bits.
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
            gather: (0..count.min(4))
                .filter_map(|i| (61 + i).checked_sub((i + 1) * f))
                .fold(0, |acc, bit| acc | 1 << bit),
        }
    }

    #[inline(always)]
    pub(crate) fn broadcast(self, fp: u32) -> u64 {
        self.low.wrapping_mul(u64::from(fp))
    }

    /// The top bit of every zero lane, exactly (`(x & rest) + rest` never leaves a lane).
    #[inline(always)]
    pub(crate) fn zeros(self, x: u64) -> u64 {
        !(((x & self.rest).wrapping_add(self.rest)) | x) & self.high
    }

    #[inline(always)]
    pub(crate) fn matches(self, window: u64, fp: u32) -> u64 {
        self.zeros(window ^ self.broadcast(fp))
    }

    /// [`Self::zeros`] in four operations instead of five: none iff no lane is zero, and the
    /// lowest reported always is (a borrow from a zero lane can only mark lanes above it).
    #[inline(always)]
    pub(crate) fn zero_lanes(self, x: u64) -> u64 {
        x.wrapping_sub(self.low) & !x & self.high
    }

    #[inline(always)]
    pub(crate) fn zero_lane_pair(self, a: u64, b: u64) -> bool {
        self.zero_lanes(a) | self.zero_lanes(b) != 0
    }

    /// The lanes whose top bits are set in `tops`, bit `i` for lane `i`, for up to four lanes of
    /// `f ≥ 4` bits ending by bit `60 + count`. Top bit `j` times gather bit `i` lands at bit
    /// `60 + i + (j − i)·f`: above 63 or below 60 unless `j = i`, and no two terms meet
    /// (`|i − i'| ≤ 3 < f`), so nothing carries.
    #[inline(always)]
    pub(crate) fn slots(self, tops: u64) -> u32 {
        (tops.wrapping_mul(self.gather) >> 60) as u32
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/index.rs"]
mod tests;
