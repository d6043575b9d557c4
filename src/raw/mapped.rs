//! A raw filter whose table, stamps and lock records are words of a file mapping that other
//! processes share (docs/shared.md).

use std::time::Instant;

use super::bucket::RawBucket;
use super::index::{BucketIndex, Place};
use super::owners::{Registry, SharedLocks, STRIDE};
use super::stripe::{Seen, StripeIndex};
use super::table::Table;
use super::{Geometry, RawFilter};
use crate::sync::{fence, Backoff, Ordering, TableWords};

/// The mapped words a shared raw filter is made of, and its registration.
#[derive(Debug)]
pub(crate) struct MappedParts {
    pub(crate) table: TableWords,
    pub(crate) stamps: TableWords,
    /// [`super::owners::STRIDE`] words per stripe.
    pub(crate) records: TableWords,
    pub(crate) registry: Registry,
}

/// What [`RawFilter::check_whole`] found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Damage {
    /// A bucket not in the form the encoder writes.
    Bucket(usize),
    /// No memory for the copy a read-only opener checks.
    NoMemory { bytes: usize },
    /// The stripes' counts sum to `counted`, the buckets hold `held` fingerprints.
    Count { counted: u64, held: u64 },
}

impl RawFilter {
    /// A filter over mapped words as they are; `None` unless each part is the length it needs.
    pub(crate) fn in_mapping(geometry: &Geometry, parts: MappedParts) -> Option<Self> {
        let codec = geometry.shape.codec();
        let stripe_count = geometry.stripe_count();
        if parts.stamps.len() != stripe_count || parts.records.len() != stripe_count * STRIDE {
            return None;
        }
        let table = Table::mapped(geometry.shape.bucket_count, &codec, parts.table)?;
        let mut registry = parts.registry;
        if !registry.is_read_only() {
            let records = &parts.records;
            let owner = |stripe: usize| records[stripe * STRIDE].load(Ordering::Acquire);
            registry.take_unused_id((0..stripe_count).map(owner));
        }
        let locks = SharedLocks {
            records: parts.records,
            registry,
            table: table.share(&codec)?,
            codec: codec.clone(),
        };
        let placement = Self::placement_for(geometry);
        let mut filter = Self::with_table(geometry, codec, table, parts.stamps, placement, ())?;
        filter.stripes.shared = Some(Box::new(locks));
        Some(filter)
    }

    /// Checks every bucket and the stripes' counts under every stripe lock (a read-only
    /// opener's, which cannot lock, in [`Self::copy_unlocked`]).
    pub(crate) fn check_whole(&self) -> Result<(), Damage> {
        if let Some(shared) = self.stripes.read_only_locks() {
            let bytes = self.table.memory_usage();
            let copy = self
                .copy_unlocked(shared)
                .ok_or(Damage::NoMemory { bytes })?;
            return copy.filter.check_buckets(copy.counted);
        }
        let locked = self.lock_table();
        self.check_buckets(locked.items() as u64)
    }

    /// Checks every bucket, and that they hold `counted` fingerprints, in a table no writer is in.
    fn check_buckets(&self, counted: u64) -> Result<(), Damage> {
        // Only a live bucket word's fingerprints: its version bits are its own.
        let bad = (0..self.bucket_count())
            .find(|&bucket| !self.codec.is_canonical(&self.table.load(bucket)));
        if let Some(bucket) = bad {
            return Err(Damage::Bucket(bucket));
        }
        let size = self.bucket_size();
        let held: u64 = (0..self.bucket_count())
            .map(|bucket| (size - self.codec.count(&self.table.load(bucket), 0)) as u64)
            .sum();
        if held != counted {
            return Err(Damage::Count { counted, held });
        }
        Ok(())
    }

    /// A copy of a state the table really had, for a reader that cannot lock: each stripe's
    /// words copied under its stamp (a dead holder's with its journal put back, as recovery
    /// would), copied again while any stripe changed, until one pass over every stamp after
    /// the last copy finds each as copied: then every stripe is as copied at that copy's end.
    /// A live writer that never stops changing the file keeps it waiting (docs/shared.md).
    pub(super) fn copy_unlocked(&self, shared: &SharedLocks) -> Option<UnlockedCopy> {
        let mut words = Vec::new();
        words.try_reserve_exact(self.table.data_words()).ok()?;
        words.resize(self.table.data_words(), 0);
        let mut seen: Vec<Option<Seen>> = vec![None; self.stripe_count()];
        let (backoff, mut since) = (Backoff::new(), Instant::now());
        loop {
            fence(Ordering::Acquire);
            let mut copied = false;
            for (stripe, last) in seen.iter_mut().enumerate() {
                let now = self.stripes.seen(shared, stripe, &mut since);
                if now.is_none() || now != *last {
                    copied = true;
                    *last = now.filter(|&now| self.copy_stripe(shared, stripe, now, &mut words));
                }
            }
            if !copied {
                break;
            }
            backoff.snooze();
        }
        let filter = RawFilter::from_data_words(&self.geometry, words.into_iter())?;
        // A dead holder's stripe counts what its recovery will: its buckets as copied.
        let counted = (seen.iter().enumerate())
            .map(|(stripe, seen)| match seen {
                Some(seen) if !seen.abandoned() => self.stripes.count_in(seen.stamp),
                _ => filter
                    .stripes
                    .count_in(filter.stripes.stamps[stripe].load(Ordering::Relaxed)),
            })
            .sum();
        Some(UnlockedCopy { filter, counted })
    }

    /// Copies `stripe`'s lock groups into `words` as `seen` (a dead holder's journal put back);
    /// whether the stripe is still as seen after the copy.
    fn copy_stripe(
        &self,
        shared: &SharedLocks,
        stripe: StripeIndex,
        seen: Seen,
        words: &mut [u64],
    ) -> bool {
        let groups = self
            .bucket_count()
            .div_ceil(1 << self.stripes.group_shift());
        for group in (stripe..groups).step_by(self.stripe_count()) {
            let range = self.lock_group(group).words;
            self.table
                .read_words(range.start, &mut words[range.clone()]);
            if seen.abandoned() {
                shared.put_back_journal(stripe, range.start, &mut words[range]);
            }
        }
        fence(Ordering::Acquire);
        self.stripes.still(shared, stripe, seen)
    }
}

/// A read-only opener's copy of its table ([`RawFilter::copy_unlocked`]).
pub(super) struct UnlockedCopy {
    pub(super) filter: RawFilter,
    /// The fingerprints the copied stripes' stamps count.
    counted: u64,
}

impl<P: Place> RawFilter<P> {
    /// `look` at two buckets in a state they really had, for a reader that cannot lock: read
    /// again while a live holder has either stripe; a dead holder's stripe read as its recovery
    /// would leave it, with its journal put back.
    #[cold]
    #[inline(never)]
    pub(super) fn read_unlocked<R>(
        &self,
        shared: &SharedLocks,
        a: BucketIndex,
        b: BucketIndex,
        look: impl Fn(&RawBucket, &RawBucket) -> R,
    ) -> R {
        let (backoff, mut since) = (Backoff::new(), Instant::now());
        let stripes = [a, b].map(|bucket| self.stripes.of(bucket));
        loop {
            backoff.snooze();
            let seen = stripes.map(|stripe| self.stripes.seen(shared, stripe, &mut since));
            let [Some(seen_a), Some(seen_b)] = seen else {
                continue;
            };
            let load = |bucket, seen: Seen| match seen.abandoned() {
                false => Some(self.table.load(bucket)),
                true => self.load_recovered(shared, bucket),
            };
            let (raw_a, raw_b) = (load(a, seen_a), load(b, seen_b));
            fence(Ordering::Acquire);
            let still = self.stripes.still(shared, stripes[0], seen_a)
                && self.stripes.still(shared, stripes[1], seen_b);
            // `None` only without memory for a lock group's few words: read again.
            if let (true, Some(raw_a), Some(raw_b)) = (still, raw_a, raw_b) {
                return look(&raw_a, &raw_b);
            }
        }
    }

    /// `bucket` as recovering its stripe's dead holder would leave it: its lock group's words
    /// with the journal put back, read as a table of that one group.
    fn load_recovered(&self, shared: &SharedLocks, bucket: BucketIndex) -> Option<RawBucket> {
        let group = self.lock_group(bucket >> self.stripes.group_shift());
        let mut words = vec![0; group.words.len()];
        self.table.read_words(group.words.start, &mut words);
        shared.put_back_journal(self.stripes.of(bucket), group.words.start, &mut words);
        let table = Table::from_data_words(group.buckets, &self.codec, words.into_iter())?;
        Some(table.load(bucket - group.first))
    }

    /// Lock group `group`: its buckets, and the data words they fill whole (a stripe's unit).
    fn lock_group(&self, group: usize) -> LockGroup {
        let first = group << self.stripes.group_shift();
        let buckets = (1 << self.stripes.group_shift()).min(self.bucket_count() - first);
        LockGroup {
            first,
            buckets,
            words: self.table.word_range(first, buckets),
        }
    }
}

/// A lock group's buckets and words ([`RawFilter::lock_group`]).
struct LockGroup {
    first: BucketIndex,
    buckets: usize,
    words: core::ops::Range<usize>,
}

#[cfg(test)]
#[path = "../../tests/unit/raw/mapped.rs"]
mod tests;
