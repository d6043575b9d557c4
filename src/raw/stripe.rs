//! Stripes: one seqlock per group of buckets, and a count of the fingerprints each group holds.
//!
//! A stripe's stamp is a version counter whose lowest bit is the lock: even means unlocked, and
//! every unlock adds 2, so a reader that sees the same even stamp before and after reading a
//! bucket knows no writer touched it meanwhile. The stamp protocol is crossbeam-utils' `SeqLock`:
//! the reader loads the stamp `Acquire`, reads the data `Relaxed`, issues an `Acquire` fence and
//! re-loads the stamp `Relaxed`; the writer takes the lock with an `Acquire` CAS followed by a
//! `Release` fence, and releases it with a `Release` store.
//!
//! Stamps are packed densely, eight to a cache line, not one per line. Lookups read two stamps
//! each, and a dense array of a few thousand stamps stays in L1/L2 where a padded one would not;
//! the price is that two writers on neighbouring stripes share a line, which at the default stripe
//! count is rare.
//!
//! Counts live in a separate array, touched only by lock holders: a stripe's count is the number
//! of fingerprints in its buckets (at most 2^32 buckets · 8 slots / stripes, so 32 bits do), changed by plain `Relaxed` load and store under its lock, and
//! [`Stripes::len`] sums them, so no single counter is hot.

use crate::sync::{fence, prefetch_write, AtomicU32, AtomicU64, Backoff, Ordering};

/// Stripes a filter gets unless it has fewer lock groups than this. 4096 stamps are 32 KiB, about
/// an L1 cache; with that many, two threads pick the same stripe once in 4096 operations.
pub(crate) const DEFAULT_STRIPES: usize = 4096;

/// An optimistic read of two stripes in progress: their stamps when it began.
#[derive(Debug)]
pub(crate) struct OptimisticRead<'a> {
    words: [&'a AtomicU64; 2],
    seen: [u64; 2],
}

impl OptimisticRead<'_> {
    /// Ends the read: true if neither stripe was locked when it began nor has changed since, so
    /// that everything read in between is a state the buckets really had.
    #[inline(always)]
    pub(crate) fn validate(&self) -> bool {
        fence(Ordering::Acquire);
        let moved_a = self.words[0].load(Ordering::Relaxed) ^ self.seen[0];
        let moved_b = self.words[1].load(Ordering::Relaxed) ^ self.seen[1];
        // One branch for all three conditions: it is taken on every lookup.
        (moved_a | moved_b | ((self.seen[0] | self.seen[1]) & 1)) == 0
    }
}

/// Index of a stripe.
pub(crate) type StripeIndex = usize;

#[derive(Debug)]
pub(crate) struct Stripes {
    stamps: Box<[AtomicU64]>,
    counts: Box<[AtomicU32]>,
    group_shift: u32,
    mask: usize,
}

impl Stripes {
    /// `count` stripes (a power of two) over lock groups of `1 << group_shift` buckets.
    pub(crate) fn new(count: usize, group_shift: u32) -> Self {
        debug_assert!(count.is_power_of_two());
        Self {
            stamps: (0..count).map(|_| AtomicU64::new(0)).collect(),
            counts: (0..count).map(|_| AtomicU32::new(0)).collect(),
            group_shift,
            mask: count - 1,
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.stamps.len()
    }

    /// Bytes of the stamps and counts.
    pub(crate) fn memory_usage(&self) -> usize {
        self.stamps.len() * 8 + self.counts.len() * 4
    }

    /// The stripe that guards `bucket`. Neighbouring lock groups get different stripes.
    #[inline]
    pub(crate) fn of(&self, bucket: usize) -> StripeIndex {
        (bucket >> self.group_shift) & self.mask
    }

    /// Starts an optimistic read of two buckets: the stamps of their stripes, which
    /// [`OptimisticRead::validate`] checks again once the buckets are read.
    #[inline(always)]
    pub(crate) fn begin_read(&self, bucket_a: usize, bucket_b: usize) -> OptimisticRead<'_> {
        let words = [
            &self.stamps[self.of(bucket_a)],
            &self.stamps[self.of(bucket_b)],
        ];
        OptimisticRead {
            seen: words.map(|word| word.load(Ordering::Acquire)),
            words,
        }
    }

    /// Starts fetching, for writing, the stamp and count of the bucket's stripe: a writer that
    /// knows which stripes it will lock next takes the cache misses of locking them (lines
    /// another core wrote last, when several threads insert) ahead, many at once.
    #[inline]
    pub(crate) fn prefetch_for_write(&self, bucket: usize) {
        let stripe = self.of(bucket);
        prefetch_write(&self.stamps[stripe]);
        prefetch_write(&self.counts[stripe]);
    }

    fn lock(&self, stripe: StripeIndex) {
        let stamp = &self.stamps[stripe];
        let backoff = Backoff::new();
        loop {
            let current = stamp.load(Ordering::Relaxed);
            if current & 1 == 0
                && stamp
                    .compare_exchange_weak(
                        current,
                        current | 1,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                // Orders the data stores that follow after the odd stamp, for readers that fence.
                fence(Ordering::Release);
                return;
            }
            backoff.snooze();
        }
    }

    fn unlock(&self, stripe: StripeIndex) {
        let stamp = &self.stamps[stripe];
        // Only the holder changes a locked stamp, so a load and a store suffice.
        let locked = stamp.load(Ordering::Relaxed);
        stamp.store(locked.wrapping_add(1), Ordering::Release);
    }

    /// Locks the stripes of two buckets, lower index first (once if they are the same).
    pub(crate) fn lock_pair(&self, bucket_a: usize, bucket_b: usize) -> StripeGuard<'_> {
        self.lock_buckets([bucket_a, bucket_b, bucket_b])
    }

    /// Locks the stripes of up to three buckets (repeat one to lock fewer), in index order and
    /// each once, as every writer takes them, so no two writers can wait on each other.
    pub(crate) fn lock_buckets(&self, buckets: [usize; 3]) -> StripeGuard<'_> {
        let mut held = buckets.map(|bucket| self.of(bucket));
        held.sort_unstable();
        let mut len = 0;
        for i in 0..3 {
            if i == 0 || held[i] != held[len - 1] {
                held[len] = held[i];
                len += 1;
            }
        }
        for &stripe in &held[..len] {
            self.lock(stripe);
        }
        StripeGuard {
            stripes: self,
            held,
            len,
        }
    }

    /// Locks every stripe, in order: while the guard lives, no writer is anywhere in the table.
    pub(crate) fn lock_all(&self) -> AllStripesGuard<'_> {
        for stripe in 0..self.count() {
            self.lock(stripe);
        }
        AllStripesGuard { stripes: self }
    }

    /// Sets every stripe's count from a freshly filled table, before the filter is shared.
    pub(crate) fn set_counts(&mut self, counts: impl IntoIterator<Item = u32>) {
        for (slot, count) in self.counts.iter().zip(counts) {
            slot.store(count, Ordering::Relaxed);
        }
    }

    /// Fingerprints in the table, summed over the stripes. Exact when no write is in flight.
    pub(crate) fn len(&self) -> usize {
        self.counts
            .iter()
            .map(|count| count.load(Ordering::Relaxed) as usize)
            .sum()
    }
}

/// The lock on one or two stripes; unlocks them when dropped.
#[derive(Debug)]
pub(crate) struct StripeGuard<'a> {
    stripes: &'a Stripes,
    /// The stripes held, ascending, in `held[..len]`.
    held: [StripeIndex; 3],
    len: usize,
}

impl StripeGuard<'_> {
    /// Records that the bucket's stripe gained (`+1`) or lost (`-1`) a fingerprint. The bucket
    /// must be guarded by this guard.
    pub(crate) fn add(&self, bucket: usize, delta: i32) {
        let stripe = self.stripes.of(bucket);
        debug_assert!(self.held[..self.len].contains(&stripe));
        let count = &self.stripes.counts[stripe];
        count.store(
            count.load(Ordering::Relaxed).wrapping_add_signed(delta),
            Ordering::Relaxed,
        );
    }
}

impl Drop for StripeGuard<'_> {
    fn drop(&mut self) {
        for &stripe in self.held[..self.len].iter().rev() {
            self.stripes.unlock(stripe);
        }
    }
}

/// The lock on every stripe; unlocks them when dropped.
#[derive(Debug)]
pub(crate) struct AllStripesGuard<'a> {
    stripes: &'a Stripes,
}

impl Drop for AllStripesGuard<'_> {
    fn drop(&mut self) {
        for stripe in (0..self.stripes.count()).rev() {
            self.stripes.unlock(stripe);
        }
    }
}
