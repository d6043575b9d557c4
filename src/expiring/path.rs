//! Making room in the expiring table: the raw core's breadth-first search (`raw/path.rs`) over
//! its slots, of which those empty or expired in the insert's generation are free, then the
//! path's moves from the free end back, each under the stripes of its two buckets and checked
//! again there, the destination stored (fingerprint and tag) before the source is cleared. A
//! fingerprint only ever moves between its own two buckets with its tag, under both their
//! locks, so a validated lookup finds it in one of them throughout; a move changes no item's
//! presence, so a failed insert changed nothing.
//!
//! The moves are not the plain filter's (`raw/insert.rs`): a slot carries its tag, a source no
//! longer live is no move, a destination may be an expired slot (reused: its count stays),
//! and the last move places nothing: the insert tries its buckets again under their locks, where
//! it also looks for a live copy to refresh.

use super::core::Table;
use super::slots::BUCKET_SIZE;
use crate::raw::{
    self, CuckooPath, Guard, PathTable, Place, SearchLimits, SearchQueue, WRITE_PREFETCH_MIN_BYTES,
};

/// How far a search goes: the plain filter's defaults for 4-slot buckets.
const LIMITS: SearchLimits = SearchLimits {
    max_hops: 5,
    max_search_buckets: 2000,
};

/// The table as a search in generation `g` reads it.
struct InGeneration<'a> {
    table: &'a Table,
    g: u64,
}

impl PathTable for InGeneration<'_> {
    /// The insert that searches has just read the roots' tags under its locks.
    const SKIPS_FULL_ROOTS: bool = true;

    #[inline(always)]
    fn has_room(&self, bucket: usize) -> bool {
        self.table.free_lanes(bucket, self.g) != 0
    }

    /// Its free slots are in its tags: the fingerprints alone are listed, an expired one too (its
    /// move is stale).
    #[inline(always)]
    fn fingerprints(&self, bucket: usize, each: impl FnMut(u32) -> bool) -> bool {
        let _ = self.table.fingerprints_of(bucket).into_iter().all(each);
        false
    }

    #[inline(always)]
    fn alternate(&self, bucket: usize, fp: u32) -> usize {
        self.table.placement.alternate(bucket, fp)
    }

    #[inline(always)]
    fn prefetch(&self, bucket: usize) {
        self.table.slots.prefetch(bucket);
    }

    #[inline(always)]
    fn prefetch_rings(&self) -> bool {
        self.table.slots.memory_usage() >= WRITE_PREFETCH_MIN_BYTES
    }
}

impl Table {
    /// The shortest path from `roots` to a bucket with a slot free in generation `g`, within
    /// [`LIMITS`]. With `validate`, each bucket's stripe stamp is recorded before it is read, so
    /// that [`SearchQueue::unchanged`] can confirm a `None`.
    pub(crate) fn search(
        &self,
        roots: [usize; 2],
        g: u64,
        queue: &mut SearchQueue,
        validate: bool,
    ) -> Option<CuckooPath> {
        let stripes = validate.then_some(&self.stripes);
        raw::search(
            &InGeneration { table: self, g },
            stripes,
            roots,
            LIMITS,
            queue,
        )
    }

    /// Makes the path's moves from the free end back; `false` at the first that is no longer
    /// valid (the moves before it stay: each is a valid move of a live fingerprint between its
    /// buckets).
    pub(crate) fn move_back(&self, path: &CuckooPath) -> bool {
        // Every stripe the moves lock travels at once, rather than one pair per move.
        for &bucket in path.buckets() {
            self.stripes.prefetch_for_write(bucket);
        }
        path.moves_backwards()
            .all(|(from, to, fp)| self.move_one(from, to, fp))
    }

    /// Moves the live copy of `fp` in `from` to a free slot of `to`, its alternate bucket, with
    /// its tag; `false` if `from` no longer holds one or `to` has no free slot.
    fn move_one(&self, from: usize, to: usize, fp: u32) -> bool {
        let mut guard = self.stripes.lock_pair::<false>(from, to);
        let g = self.clock.current();
        let Some((i, slot)) = self.find_live(from, fp, g, 0) else {
            return false;
        };
        let free = self.free_lanes(to, g);
        if free == 0 {
            return false;
        }
        let j = free.trailing_zeros() as usize;
        debug_assert!(j < BUCKET_SIZE);
        let old = self.slots.get(to, j);
        self.slots.set(to, j, old, slot);
        if old == 0 {
            guard.add(to, 1);
        }
        self.slots.set(from, i, slot, 0);
        guard.add(from, -1);
        true
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/expiring/path.rs"]
mod tests;
