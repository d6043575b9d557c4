//! Stripes: one seqlock per group of buckets, whose stamp also counts the group's fingerprints.
//!
//! A stamp is a version whose lowest bit is the lock; every unlock moves it on, so a reader that
//! sees the same unlocked stamp before and after reading a bucket knows no writer touched it.
//! The orderings are crossbeam-utils' `SeqLock`: the reader loads the stamp `Acquire`, the data
//! `Relaxed`, fences `Acquire` and reloads the stamp `Relaxed`; the writer locks by an `Acquire`
//! CAS and a `Release` fence, and unlocks by a `Release` store, which also changes the stripe's
//! fingerprint count in the stamp's top bits (the version keeps at least 31).
//!
//! The writers' half; the readers' ([`OptimisticRead`]) is `index.rs`'s. A live file's stripes
//! also lock through owner words (`stripe/shared_lock.rs`), only where `SHARED` is true.

#[cfg(all(target_os = "linux", not(loom)))]
mod shared_lock;

#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) use shared_lock::Seen;

use super::index::{OptimisticRead, StampWords};
use crate::sync::{
    fence, prefetch, prefetch_write, table_words, AtomicU64, Backoff, Ordering, TableWords,
    MODEL_CHECKED,
};

/// Optimistic tries a lookup makes after its first, before it locks (Consistency docs: 9 in all).
pub(super) const READ_RETRIES: usize = if MODEL_CHECKED { 2 } else { 8 };

pub(crate) type StripeIndex = usize;

#[derive(Debug)]
#[repr(C)] // What a lookup reads first.
pub(crate) struct Stripes {
    pub(super) stamps: StampWords,
    /// Where a stamp's count starts: the bits below are the version (with the lock bit).
    count_shift: u32,
    /// `(1 << count_shift) - 1`: the version bits, with the lock bit.
    versions: u64,
    /// A live file's lock records; read only by locks whose `SHARED` is true.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(super) shared: Option<Box<super::owners::SharedLocks>>,
}

impl Stripes {
    /// `count` stripes (a power of two) over lock groups of `1 << group_shift` buckets.
    pub(crate) fn new(
        count: usize,
        group_shift: u32,
        bucket_count: usize,
        bucket_size: usize,
    ) -> Option<Self> {
        Self::with_stamps(
            table_words(count, false)?,
            group_shift,
            bucket_count,
            bucket_size,
        )
    }

    /// [`Self::new`] over the caller's stamps, as they are (zero for a new table).
    pub(crate) fn with_stamps(
        stamps: TableWords,
        group_shift: u32,
        bucket_count: usize,
        bucket_size: usize,
    ) -> Option<Self> {
        let stamps = StampWords::new(stamps, group_shift)?;
        let count = stamps.len();
        // Stripe s guards lock groups s, s + count, ...: at most this many fingerprints.
        let groups = (bucket_count as u64).div_ceil(1 << group_shift);
        let most = (groups.div_ceil(count as u64) << group_shift) * bucket_size as u64;
        let count_bits = u64::BITS - most.leading_zeros();
        debug_assert!(
            count_bits <= 33,
            "the builder keeps counts to about 32 bits"
        );
        Some(Self {
            stamps,
            count_shift: u64::BITS - count_bits,
            versions: (1 << (u64::BITS - count_bits)) - 1,
            #[cfg(all(target_os = "linux", not(loom)))]
            shared: None,
        })
    }

    pub(crate) fn count(&self) -> usize {
        self.stamps.len()
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.stamps.len() * 8
    }

    #[inline]
    pub(crate) fn of(&self, bucket: usize) -> StripeIndex {
        self.stamps.stripe_of(bucket)
    }

    #[inline(always)]
    fn stamp_of(&self, bucket: usize) -> &AtomicU64 {
        self.stamps.stamps().of(bucket)
    }

    #[inline(always)]
    pub(crate) fn begin_read(&self, bucket_a: usize, bucket_b: usize) -> OptimisticRead<'_> {
        self.stamps.stamps().begin_read(bucket_a, bucket_b)
    }

    /// `look` at two buckets in a state they really had; retried out of line.
    #[inline(always)]
    pub(crate) fn read_pair<R>(&self, a: usize, b: usize, look: impl Fn() -> R) -> R {
        self.try_read_pair(a, b, &look)
            .unwrap_or_else(|| self.read_pair_contended(a, b, look))
    }

    /// `look`'s answer if no writer touched either stripe meanwhile.
    #[inline(always)]
    pub(crate) fn try_read_pair<R>(&self, a: usize, b: usize, look: &impl Fn() -> R) -> Option<R> {
        let read = self.stamps.stamps().begin_read(a, b);
        let answer = look();
        read.validate().then_some(answer)
    }

    /// [`Self::read_pair`] after a writer got in the way: a few more tries, then the locks.
    #[cold]
    #[inline(never)]
    pub(crate) fn read_pair_contended<R>(&self, a: usize, b: usize, look: impl Fn() -> R) -> R {
        let backoff = Backoff::new();
        for _ in 0..READ_RETRIES {
            backoff.snooze();
            if let Some(answer) = self.try_read_pair(a, b, &look) {
                return answer;
            }
        }
        let _guard = self.lock_pair::<true>(a, b);
        look()
    }

    /// The stamp of the bucket's stripe, loaded before a read that [`Self::unchanged`] validates.
    #[inline]
    pub(crate) fn stamp(&self, bucket: usize) -> u64 {
        self.stamp_of(bucket).load(Ordering::Acquire)
    }

    /// Ends a read of many buckets begun by [`Self::stamp`]: no stripe was locked or changed since.
    pub(crate) fn unchanged(&self, mut seen: impl Iterator<Item = (usize, u64)>) -> bool {
        fence(Ordering::Acquire);
        seen.all(|(bucket, stamp)| {
            stamp & 1 == 0 && self.stamp_of(bucket).load(Ordering::Relaxed) == stamp
        })
    }

    /// Fetches the stamp of the bucket's stripe for writing, ahead of its lock.
    #[inline]
    pub(crate) fn prefetch_for_write(&self, bucket: usize) {
        prefetch_write(self.stamp_of(bucket));
    }

    #[inline]
    pub(crate) fn prefetch_for_read(&self, bucket: usize) {
        prefetch(self.stamp_of(bucket));
    }

    /// The live file's lock records if `SHARED` and the stripes have them.
    #[cfg(all(target_os = "linux", not(loom)))]
    #[inline(always)]
    fn shared_locks<const SHARED: bool>(&self) -> Option<&super::owners::SharedLocks> {
        debug_assert!(
            SHARED || self.shared.is_none(),
            "a live file's stripes locked as in memory"
        );
        self.shared.as_deref().filter(|_| SHARED)
    }

    /// Unlocks the stripe whose stamp is `stamp`, its count changed by `delta` while held.
    #[inline]
    fn unlock_stamp<const SHARED: bool>(&self, stamp: &AtomicU64, delta: i32) {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.shared_locks::<SHARED>() {
            let stripe = (stamp as *const AtomicU64 as usize - self.stamps.as_ptr() as usize) / 8;
            return self.unlock_shared(shared, &[stripe], &[delta]);
        }
        self.store_unlocked(stamp, delta);
    }

    /// Unlocks `stamp`, its version moved on (wrapping within its bits) and its count by `delta`.
    #[inline]
    pub(super) fn store_unlocked(&self, stamp: &AtomicU64, delta: i32) {
        let locked = stamp.load(Ordering::Relaxed);
        let version = locked.wrapping_add(1) & self.versions;
        let count = (locked >> self.count_shift).wrapping_add_signed(i64::from(delta));
        stamp.store(count << self.count_shift | version, Ordering::Release);
    }

    /// The stamps and `count_shift`, for a test that plays a dead writer.
    #[cfg(all(test, target_os = "linux", not(loom)))]
    pub(super) fn stamp_words(&self) -> (&[AtomicU64], u32) {
        (&self.stamps, self.count_shift)
    }

    /// A live file's locks of `buckets`' stripes if `SHARED` and the stripes have them; else
    /// `None`, nothing locked.
    #[inline(always)]
    fn lock_if_shared<const SHARED: bool>(&self, buckets: [usize; 3]) -> Option<Held> {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.shared_locks::<SHARED>() {
            return Some(self.lock_shared_buckets(shared, buckets));
        }
        let _ = buckets;
        None
    }

    /// Locks the stripe of one bucket: the common insert's lock, whose guard keeps the stamp.
    #[inline]
    pub(crate) fn lock_one<const SHARED: bool>(&self, bucket: usize) -> OneStripeGuard<'_, SHARED> {
        let stamp = self.stamp_of(bucket);
        if self.lock_if_shared::<SHARED>([bucket; 3]).is_none() {
            lock_stamp(stamp);
        }
        OneStripeGuard {
            stripes: self,
            stamp,
            delta: 0,
        }
    }

    /// Locks the stripes of two buckets as [`Self::lock_buckets`] does, without its sort.
    #[inline]
    pub(crate) fn lock_pair<const SHARED: bool>(
        &self,
        bucket_a: usize,
        bucket_b: usize,
    ) -> StripeGuard<'_, SHARED> {
        if let Some(held) = self.lock_if_shared::<SHARED>([bucket_a, bucket_b, bucket_b]) {
            return StripeGuard::new(self, held);
        }
        let (a, b) = (self.of(bucket_a), self.of(bucket_b));
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        lock_stamp(&self.stamps[low]);
        let len = if high != low {
            lock_stamp(&self.stamps[high]);
            2
        } else {
            1
        };
        let held = Held {
            stripes: [low, high, high],
            len,
        };
        StripeGuard::new(self, held)
    }

    /// Locks the stripes of up to three buckets (repeat one to lock fewer), in index order and
    /// each once, as every writer takes them, so no two writers can wait on each other.
    pub(crate) fn lock_buckets<const SHARED: bool>(
        &self,
        buckets: [usize; 3],
    ) -> StripeGuard<'_, SHARED> {
        if let Some(held) = self.lock_if_shared::<SHARED>(buckets) {
            return StripeGuard::new(self, held);
        }
        let held = self.held(buckets);
        for &stripe in held.as_slice() {
            lock_stamp(&self.stamps[stripe]);
        }
        StripeGuard::new(self, held)
    }

    /// The stripes of up to three buckets, each once, in the order they are locked.
    pub(super) fn held(&self, buckets: [usize; 3]) -> Held {
        let mut stripes = buckets.map(|bucket| self.of(bucket));
        stripes.sort_unstable();
        let mut len = 0;
        for i in 0..3 {
            if i == 0 || stripes[i] != stripes[len - 1] {
                stripes[len] = stripes[i];
                len += 1;
            }
        }
        Held { stripes, len }
    }

    /// Locks every stripe, in order (shared ones through their owner words, whatever `SHARED`).
    pub(crate) fn lock_all(&self) -> AllStripesGuard<'_> {
        for stripe in 0..self.count() {
            #[cfg(all(target_os = "linux", not(loom)))]
            if let Some(shared) = self.shared_locks::<true>() {
                self.lock_shared(shared, stripe);
                continue;
            }
            lock_stamp(&self.stamps[stripe]);
        }
        AllStripesGuard { stripes: self }
    }

    /// New unlocked stripes with these stripes' counts. The caller holds every stripe.
    pub(crate) fn duplicate(&self) -> Option<Self> {
        let stamps = table_words(self.count(), false)?;
        for (to, from) in stamps.iter().zip(self.stamps.iter()) {
            let count = from.load(Ordering::Relaxed) >> self.count_shift;
            to.store(count << self.count_shift, Ordering::Relaxed);
        }
        Some(Self {
            stamps: StampWords::new(stamps, self.stamps.group_shift())?,
            #[cfg(all(target_os = "linux", not(loom)))]
            shared: None,
            ..*self
        })
    }

    /// Adds `used` fingerprints to the count of `bucket`'s stripe, in a table no other thread sees.
    pub(crate) fn add_count(&mut self, bucket: usize, used: u64) {
        let stamp = &self.stamps[self.of(bucket)];
        let count = stamp.load(Ordering::Relaxed) >> self.count_shift;
        stamp.store((count + used) << self.count_shift, Ordering::Relaxed);
    }

    /// Fingerprints in the table: exact when no write is in flight.
    pub(crate) fn len(&self) -> usize {
        self.stamps
            .iter()
            .map(|stamp| (stamp.load(Ordering::Relaxed) >> self.count_shift) as usize)
            .sum()
    }
}

#[inline]
pub(super) fn lock_stamp(stamp: &AtomicU64) {
    if !try_lock(stamp) {
        lock_contended(stamp);
    }
}

#[inline]
fn try_lock(stamp: &AtomicU64) -> bool {
    let current = stamp.load(Ordering::Relaxed);
    let locked = current & 1 == 0
        && stamp
            .compare_exchange_weak(current, current | 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    if locked {
        // Orders the data stores that follow after the odd stamp, for readers that fence.
        fence(Ordering::Release);
    }
    locked
}

#[cold]
#[inline(never)]
fn lock_contended(stamp: &AtomicU64) {
    let backoff = Backoff::new();
    loop {
        backoff.snooze();
        if try_lock(stamp) {
            return;
        }
    }
}

/// Stripe locks a writer holds, which record how each guarded bucket's count changes.
pub(crate) trait Guard {
    /// Records that the guarded bucket's stripe gained (`+1`) or lost (`-1`) a fingerprint.
    fn add(&mut self, bucket: usize, delta: i32);
}

/// The up to three stripes a [`StripeGuard`] holds, each once, ascending (but a live file's).
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    stripes: [StripeIndex; 3],
    len: usize,
}

impl Held {
    pub(super) fn as_slice(&self) -> &[StripeIndex] {
        &self.stripes[..self.len]
    }
}

/// The lock on up to three stripes; unlocks them when dropped.
#[derive(Debug)]
pub(crate) struct StripeGuard<'a, const SHARED: bool> {
    stripes: &'a Stripes,
    held: Held,
    deltas: [i32; 3],
}

impl<'a, const SHARED: bool> StripeGuard<'a, SHARED> {
    #[inline]
    fn new(stripes: &'a Stripes, held: Held) -> Self {
        Self {
            stripes,
            held,
            deltas: [0; 3],
        }
    }
}

impl<const SHARED: bool> Guard for StripeGuard<'_, SHARED> {
    fn add(&mut self, bucket: usize, delta: i32) {
        let stripe = self.stripes.of(bucket);
        let at = self.held.as_slice().iter().position(|&held| held == stripe);
        debug_assert!(at.is_some(), "bucket {bucket} is not guarded");
        if let Some(at) = at {
            self.deltas[at] += delta;
        }
    }
}

impl<const SHARED: bool> Drop for StripeGuard<'_, SHARED> {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.stripes.shared_locks::<SHARED>() {
            return self
                .stripes
                .unlock_shared(shared, self.held.as_slice(), &self.deltas);
        }
        for (&stripe, &delta) in self.held.as_slice().iter().zip(&self.deltas).rev() {
            self.stripes
                .store_unlocked(&self.stripes.stamps[stripe], delta);
        }
    }
}

/// The lock on one stripe; unlocks it when dropped.
#[derive(Debug)]
pub(crate) struct OneStripeGuard<'a, const SHARED: bool> {
    stripes: &'a Stripes,
    stamp: &'a AtomicU64,
    delta: i32,
}

impl<const SHARED: bool> Guard for OneStripeGuard<'_, SHARED> {
    #[inline]
    fn add(&mut self, bucket: usize, delta: i32) {
        debug_assert!(
            core::ptr::eq(self.stripes.stamp_of(bucket), self.stamp),
            "bucket {bucket} is not guarded"
        );
        self.delta += delta;
    }
}

impl<const SHARED: bool> Drop for OneStripeGuard<'_, SHARED> {
    #[inline]
    fn drop(&mut self) {
        self.stripes.unlock_stamp::<SHARED>(self.stamp, self.delta);
    }
}

/// The lock on every stripe; unlocks them when dropped.
#[derive(Debug)]
pub(crate) struct AllStripesGuard<'a> {
    stripes: &'a Stripes,
}

impl Guard for AllStripesGuard<'_> {
    /// Changes the count in the locked stamp at once: a delta per stripe would not fit the stack.
    fn add(&mut self, bucket: usize, delta: i32) {
        let stamp = &self.stripes.stamps[self.stripes.of(bucket)];
        let locked = stamp.load(Ordering::Relaxed);
        debug_assert!(locked & 1 == 1, "bucket {bucket} is not guarded");
        let change = i64::from(delta) << self.stripes.count_shift;
        stamp.store(locked.wrapping_add_signed(change), Ordering::Relaxed);
    }
}

impl AllStripesGuard<'_> {
    /// Journals both buckets in their stripes' records before the holder writes them, in a
    /// live file's table (in memory, nothing): a kill before [`Self::settle`] is undone whole.
    #[inline]
    pub(crate) fn journal(&self, buckets: [usize; 2]) {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.stripes.shared.as_deref() {
            for bucket in buckets {
                shared.journal(self.stripes.of(bucket), bucket);
            }
        }
        let _ = buckets;
    }

    /// Empties the journals [`Self::journal`] wrote, the last-named's stripe first: a kill within
    /// a move `[from, to]` leaves a second copy, never a fingerprint in neither bucket.
    #[inline]
    pub(crate) fn settle(&self, buckets: [usize; 2]) {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.stripes.shared.as_deref() {
            for bucket in buckets.into_iter().rev() {
                shared.clear_journal(self.stripes.of(bucket));
            }
        }
        let _ = buckets;
    }

    /// Sets every stripe's count to 0, for a table the holder emptied.
    pub(crate) fn clear_counts(&mut self) {
        for stamp in self.stripes.stamps.iter() {
            let locked = stamp.load(Ordering::Relaxed);
            debug_assert!(locked & 1 == 1, "every stripe is held");
            stamp.store(locked & self.stripes.versions, Ordering::Relaxed);
        }
    }
}

impl Drop for AllStripesGuard<'_> {
    fn drop(&mut self) {
        for stamp in self.stripes.stamps.iter().rev() {
            self.stripes.unlock_stamp::<true>(stamp, 0);
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/stripe.rs"]
mod tests;
