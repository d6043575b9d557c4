//! Inserting a block of keys, each key's buckets and stripes fetched a few keys ahead of its
//! insert so that the cache misses of consecutive inserts overlap.

use super::index::{Candidates, Place};
use super::path;
use super::{Insertion, RawFilter};

/// Keys a bulk insert hands to [`RawFilter::insert_block`] at a time: several [`INSERT_AHEAD`]s.
pub(crate) const BLOCK: usize = 64;

/// How many keys ahead of its insert a key's lines are fetched.
const INSERT_AHEAD: usize = 8;

impl<P: Place> RawFilter<P> {
    /// Inserts a block of at most [`BLOCK`] hashes in order. `Err(i)`: `hashes[i]` found no
    /// room; the ones before it went in, the ones after were not tried.
    pub(crate) fn insert_block<const SHARED: bool>(&self, hashes: &[u64]) -> Result<(), usize> {
        self.insert_block_with::<SHARED>(hashes, false, |_, _| {})
    }

    /// [`Self::insert_block`], telling `done` each hash's index and what its insert did.
    pub(crate) fn insert_block_with<const SHARED: bool>(
        &self,
        hashes: &[u64],
        unique: bool,
        mut done: impl FnMut(usize, Insertion),
    ) -> Result<(), usize> {
        let mut candidates = [Candidates::default(); BLOCK];
        let candidates = &mut candidates[..hashes.len()];
        for (c, &hash) in candidates.iter_mut().zip(hashes) {
            *c = self.placement.candidates(hash);
        }
        let buckets = self.table.writes_worth_prefetching();
        // A plain narrow insert fetches its second stripe only if it picks it (`try_place_narrow`).
        let second_stripe = unique || !self.codec.is_plain_narrow();
        let prefetch = |c: &Candidates| {
            if buckets {
                self.table.prefetch(c.first);
                self.table.prefetch(c.second);
            }
            self.stripes.prefetch_for_write(c.first);
            if second_stripe {
                self.stripes.prefetch_for_write(c.second);
            }
        };
        candidates.iter().take(INSERT_AHEAD).for_each(prefetch);
        path::with_queue(|queue| {
            for (i, &c) in candidates.iter().enumerate() {
                if let Some(later) = candidates.get(i + INSERT_AHEAD) {
                    prefetch(later);
                }
                match self.insert_candidates::<SHARED>(c, unique, queue) {
                    Insertion::Full => return Err(i),
                    done_here => done(i, done_here),
                }
            }
            Ok(())
        })
    }
}
