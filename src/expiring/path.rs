//! Making room: the raw core's breadth-first search (`raw/path.rs`) over the slots, those empty
//! or expired in the insert's generation free, then the path's moves from the free end back, each
//! under its two buckets' stripe locks and checked there, destination (with its tag) stored before
//! source, so a validated lookup finds the fingerprint throughout (docs/expiry.md, "Inserts").

use super::core::Table;
use crate::raw::{
    self, CuckooPath, Guard, PathTable, Place, SearchLimits, SearchQueue, WRITE_PREFETCH_MIN_BYTES,
};

/// The plain filter's defaults for 4-slot buckets.
const LIMITS: SearchLimits = SearchLimits {
    max_hops: 5,
    max_search_buckets: 2000,
};

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

    /// Lists an expired fingerprint too (its move is stale): free slots are in the tags.
    #[inline(always)]
    fn fingerprints(&self, bucket: usize, each: impl FnMut(u32) -> bool) -> bool {
        let fingerprints = self.table.slots.fingerprints_of(bucket);
        let _ = fingerprints.into_iter().all(each);
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
    /// The shortest path to a slot free in generation `g`; `validate` for a confirmable `None`.
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

    /// Makes the path's moves, free end first; `false` at the first no longer valid.
    pub(crate) fn move_back(&self, path: &CuckooPath) -> bool {
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
        self.store_free(&mut guard, to, free, slot);
        self.slots.set(from, i, slot, 0);
        guard.add(from, -1);
        true
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/expiring/path.rs"]
mod tests;
