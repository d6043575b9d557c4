//! Inserts, refreshes and removes, each under the stripe locks of both of the item's buckets.
//!
//! An insert first looks for a live copy of its fingerprint in either bucket and, if it finds
//! one, refreshes its tag to the current generation (no second copy); otherwise it takes a free
//! slot (empty, or expired: a reuse). Both looks and the write happen under both stripes, which
//! every move of the fingerprint between its buckets also holds, so two racing unique inserts of
//! one key are ordered: exactly one finds it absent. When both buckets are full of live slots,
//! the locks are released and a cuckoo path makes room (`path.rs`); then the insert starts again.

use super::core::Table;
use super::window::{Ages, Overflow, Window};
use crate::error::InsertError;
use crate::raw::{Candidates, Guard};

/// Rounds of "make room, try again" before an insert is `Full`.
const ROOM_TRIES: usize = 32;

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// A new copy went in.
    Inserted,
    /// A live copy was found and its age refreshed.
    Refreshed,
}

impl Table {
    /// Counts the insert, moves the generation on if it is due, and sweeps this insert's share.
    fn tick(&self) {
        let due = self.clock.tick();
        self.advance(due);
        self.sweep(self.sweep_per_insert);
    }

    /// Inserts or refreshes `hash`.
    pub(crate) fn insert(&self, hash: u64) -> Result<Stored, InsertError> {
        self.tick();
        let c = self.candidates(hash);
        loop {
            let mut g = 0;
            for attempt in 0..ROOM_TRIES {
                if let Some(stored) = self.try_store(&c) {
                    return Ok(stored);
                }
                g = self.clock.current();
                // Both buckets full of live slots: make room from one of them, then try again.
                let from = if attempt % 2 == 0 { c.first } else { c.second };
                // A walk spoiled by its own cycle may still have made room: try again anyway.
                self.make_room(from);
            }
            // A count window's live items fit its table, so this is a pathological key set;
            // expiring the oldest generation keeps the promise of never answering `Full`.
            let expire = matches!(self.settings.window, Window::Items(_))
                || self.settings.overflow == Overflow::ExpireEarly;
            if !expire {
                return Err(InsertError::Full);
            }
            self.expire_early(g);
        }
    }

    /// One look and write under both stripes: `None` if both buckets are full of live slots.
    fn try_store(&self, c: &Candidates) -> Option<Stored> {
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
        let fresh = Ages::slot(c.fp, g);
        for bucket in [c.first, c.second] {
            if let Some((i, slot)) = self.find_live(bucket, c.fp, g, 0) {
                self.slots.set(bucket, i, slot, fresh);
                return Some(Stored::Refreshed);
            }
        }
        for bucket in [c.first, c.second] {
            if let Some((i, slot)) = self.find_free(bucket, g) {
                self.slots.set(bucket, i, slot, fresh);
                if slot == 0 {
                    guard.add(bucket, 1);
                }
                return Some(Stored::Inserted);
            }
        }
        None
    }

    /// Removes one live copy of `hash`'s fingerprint; `false` if neither bucket holds one.
    pub(crate) fn remove(&self, hash: u64) -> bool {
        let c = self.candidates(hash);
        let mut guard = self.stripes.lock_pair::<false>(c.first, c.second);
        let g = self.clock.current();
        for bucket in [c.first, c.second] {
            if let Some((i, slot)) = self.find_live(bucket, c.fp, g, 0) {
                self.slots.set(bucket, i, slot, 0);
                guard.add(bucket, -1);
                return true;
            }
        }
        false
    }
}
