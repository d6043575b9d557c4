//! Inserts, refreshes and removes, each under the stripe locks of both of the item's buckets,
//! which every move of its fingerprint also holds: of two racing unique inserts of one key,
//! exactly one finds it absent. With both buckets full of live slots, the insert makes room by a
//! path (`path.rs`) and tries again.

use super::core::Table;
use super::slots::BUCKET_SIZE;
use super::window::{Ages, Overflow, Window};
use crate::error::InsertError;
use crate::raw::{with_queue, Candidates, Guard, Place};
use crate::sync::MODEL_CHECKED;

/// Paths an insert tries, racing writers spoiling them, before it treats the table as full.
const PATH_ATTEMPTS: usize = if MODEL_CHECKED { 3 } else { 32 };

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    Inserted,
    Refreshed,
}

impl Table {
    /// Counts the insert, publishes the generation it needs, and sweeps its share of buckets.
    #[inline(always)]
    fn tick(&self) -> Result<(), InsertError> {
        let tick = self.clock.tick().ok_or(InsertError::CountExhausted)?;
        self.advance(tick.generation);
        match tick.sweep_from {
            Some(first) => self.sweep_claimed(first, self.sweep_per_insert),
            None => self.sweep(self.sweep_per_insert),
        }
        Ok(())
    }

    pub(crate) fn insert(&self, hash: u64) -> Result<Stored, InsertError> {
        let c = self.placement.candidates(hash);
        // The buckets and their stripes travel while the insert counts itself and sweeps.
        self.slots.prefetch(c.first);
        self.slots.prefetch(c.second);
        self.stripes.prefetch_for_write(c.first);
        self.stripes.prefetch_for_write(c.second);
        self.tick()?;
        match self.try_store(&c) {
            Some(stored) => Ok(stored),
            None => self.insert_by_path(&c),
        }
    }

    /// Makes room by paths with the thread's queue and tries again, after [`Self::try_store`]
    /// found none; out of line, so that the common insert's frame does not hold the queue.
    #[inline(never)]
    fn insert_by_path(&self, c: &Candidates) -> Result<Stored, InsertError> {
        with_queue(|queue| {
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
                    // "No path" is confirmed by a search that validates what it read.
                    let path = match self.search([c.first, c.second], g, queue, false) {
                        Some(path) => path,
                        None => match self.search([c.first, c.second], g, queue, true) {
                            Some(path) => path,
                            None if queue.unchanged(&self.stripes) => break,
                            None => continue,
                        },
                    };
                    // A path spoiled by a racing writer may still have made room.
                    self.move_back(&path);
                }
                // No room, or racing writers spoiled every path. A count window never answers
                // `Full`: its live items fit its table, so expiring the oldest generation is its
                // answer to a pathological key set.
                let expire = matches!(self.settings.window, Window::Items(_))
                    || self.settings.overflow == Overflow::ExpireEarly;
                if !expire || !self.expire_early(g) {
                    return Err(InsertError::Full);
                }
            }
        })
    }

    /// One read of both buckets and a write under both stripes: `None` if both are full of
    /// live slots.
    fn try_store(&self, c: &Candidates) -> Option<Stored> {
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
        let fresh = Ages::slot(c.fp, g);
        let buckets = [c.first, c.second];
        // Both buckets read before either is looked at: their loads overlap.
        let read = buckets.map(|bucket| self.masks(bucket, c.fp, g, 0));
        for (k, read) in read.iter().enumerate() {
            if let Some((i, slot)) = read.first_live(c.fp) {
                self.slots.set(buckets[k], i, slot, fresh);
                return Some(Stored::Refreshed);
            }
        }
        let free = read.map(|read| read.free());
        // The roomier bucket: fewer inserts need a path.
        let k = usize::from(free[1].count_ones() > free[0].count_ones());
        if free[k] == 0 {
            return None;
        }
        self.store_free(&mut guard, buckets[k], free[k], fresh);
        Some(Stored::Inserted)
    }

    /// Stores `value` in the first of `bucket`'s `free` slots, under its stripe lock.
    pub(crate) fn store_free(&self, guard: &mut impl Guard, bucket: usize, free: u32, value: u64) {
        let i = free.trailing_zeros() as usize;
        debug_assert!(i < BUCKET_SIZE);
        let old = self.slots.get(bucket, i);
        self.slots.set(bucket, i, old, value);
        if old == 0 {
            guard.add(bucket, 1);
        }
    }

    /// Removes one copy of `hash`'s fingerprint live as [`Self::contains`] reads it.
    pub(crate) fn remove(&self, hash: u64) -> bool {
        let c = self.placement.candidates(hash);
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
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
