//! Inserts, refreshes and removes, each under the stripe locks of both of the item's buckets.
//!
//! An insert reads its two buckets once, under both stripes: a live copy of its fingerprint in
//! either is refreshed to the current generation (no second copy); otherwise the fingerprint
//! takes a free slot (empty, or expired: a reuse) of the bucket with more of them. Both looks
//! and the write happen under both stripes, which every move of the fingerprint between its
//! buckets also holds, so two racing unique inserts of one key are ordered: exactly one finds it
//! absent. When both buckets are full of live slots, the locks are released, a breadth-first
//! search finds a path to a free slot and its moves make room (`path.rs`); then the insert
//! tries again.

use super::core::Table;
use super::slots::BUCKET_SIZE;
use super::window::{Ages, Overflow, Window};
use crate::error::InsertError;
use crate::raw::{with_queue, Candidates, Guard, SearchQueue};
use crate::sync::MODEL_CHECKED;

/// Paths an insert tries, racing writers spoiling them, before it treats the table as full.
const PATH_ATTEMPTS: usize = if MODEL_CHECKED { 3 } else { 32 };

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// A new copy went in.
    Inserted,
    /// A live copy was found and its age refreshed.
    Refreshed,
}

impl Table {
    /// Counts the insert, moves the generation on if it is due, and sweeps this insert's share:
    /// a count window's position claims it, a time window's insert from the sweep's cursor.
    #[inline(always)]
    fn tick(&self) {
        let tick = self.clock.tick();
        self.advance(tick.generation);
        match tick.sweep_from {
            Some(first) => self.sweep_claimed(first, self.sweep_per_insert),
            None => self.sweep(self.sweep_per_insert),
        }
    }

    /// Inserts or refreshes `hash`.
    pub(crate) fn insert(&self, hash: u64) -> Result<Stored, InsertError> {
        let c = self.candidates(hash);
        // The buckets and their stripes travel while the insert counts itself and sweeps.
        self.slots.prefetch(c.first);
        self.slots.prefetch(c.second);
        self.stripes.prefetch_for_write(c.first);
        self.stripes.prefetch_for_write(c.second);
        self.tick();
        match self.try_store(&c) {
            Some(stored) => Ok(stored),
            None => self.insert_searching(&c),
        }
    }

    /// [`Self::insert_by_path`] with the thread's queue, out of line: only an insert whose
    /// buckets are both full of live slots needs it.
    #[inline(never)]
    fn insert_searching(&self, c: &Candidates) -> Result<Stored, InsertError> {
        with_queue(|queue| self.insert_by_path(c, queue))
    }

    /// Makes room by paths and tries again, after [`Self::try_store`] found none.
    fn insert_by_path(
        &self,
        c: &Candidates,
        queue: &mut SearchQueue,
    ) -> Result<Stored, InsertError> {
        let mut tried = true;
        loop {
            let mut g = self.clock.current();
            for _ in 0..PATH_ATTEMPTS {
                if !tried {
                    if let Some(stored) = self.try_store(c) {
                        return Ok(stored);
                    }
                }
                tried = false;
                g = self.clock.current();
                // A path's moves are checked as they are made; "no path" by a second search
                // that validates what it read, which a racing writer sends round again.
                let path = match self.search([c.first, c.second], g, queue, false) {
                    Some(path) => path,
                    None => match self.search([c.first, c.second], g, queue, true) {
                        Some(path) => path,
                        None if queue.unchanged(&self.stripes) => break,
                        None => continue,
                    },
                };
                // A path spoiled by a racing writer may still have made room: try again anyway.
                self.move_back(&path);
            }
            // No room, or racing writers spoiled every path. A count window's live items fit its
            // table, so this is a pathological key set; expiring the oldest generation keeps
            // the promise of never answering `Full`.
            let expire = matches!(self.settings.window, Window::Items(_))
                || self.settings.overflow == Overflow::ExpireEarly;
            if !expire || !self.expire_early(g) {
                return Err(InsertError::Full);
            }
        }
    }

    /// One read of both buckets and a write under both stripes: `None` if both are full of
    /// live slots.
    fn try_store(&self, c: &Candidates) -> Option<Stored> {
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
        let fresh = Ages::slot(c.fp, g);
        let buckets = [c.first, c.second];
        // Both buckets read before either is looked at: their loads overlap.
        let read = [
            self.read_bucket(c.first, c.fp, g),
            self.read_bucket(c.second, c.fp, g),
        ];
        for (k, read) in read.iter().enumerate() {
            if let Some((i, slot)) = read.live_copy {
                self.slots.set(buckets[k], i, slot, fresh);
                return Some(Stored::Refreshed);
            }
        }
        let free = read.map(|read| read.free);
        // The roomier bucket: loads stay even, and fewer inserts need a path.
        let k = usize::from(free[1].count_ones() > free[0].count_ones());
        if free[k] == 0 {
            return None;
        }
        let i = free[k].trailing_zeros() as usize;
        debug_assert!(i < BUCKET_SIZE);
        let old = self.slots.get(buckets[k], i);
        self.slots.set(buckets[k], i, old, fresh);
        if old == 0 {
            guard.add(buckets[k], 1);
        }
        Some(Stored::Inserted)
    }

    /// Removes one live copy of `hash`'s fingerprint (live as [`Self::contains`] reads it); `false`
    /// if neither bucket holds one.
    pub(crate) fn remove(&self, hash: u64) -> bool {
        let c = self.candidates(hash);
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
        // Live as a lookup counts it: a monotonic clock's lag makes some published slots expired.
        let lag = self.clock.lag(g);
        for bucket in [c.first, c.second] {
            if let Some((i, slot)) = self.find_live(bucket, c.fp, g, lag) {
                self.slots.set(bucket, i, slot, 0);
                guard.add(bucket, -1);
                return true;
            }
        }
        false
    }
}
