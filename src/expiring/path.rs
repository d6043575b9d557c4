//! Making room: a random walk of at most [`MAX_HOPS`] hops from a full bucket, read without
//! locks, to a bucket with a free slot; then its moves from the free end back, each under the
//! stripes of its two buckets, checked still valid, the destination stored before the source is
//! cleared. A fingerprint only ever moves between its own two buckets with its tag, under both
//! their locks, so a validated lookup finds it in one of them throughout; a move changes no
//! item's presence, so a failed insert changed nothing.

use super::core::{SlotAt, Table};
use super::slots::BUCKET_SIZE;
use crate::raw::{Guard, Place};

/// The longest walk.
const MAX_HOPS: usize = 256;

/// One hop: the slot moved, and what it held when the walk read it.
#[derive(Clone, Copy, Debug)]
struct Hop {
    from: SlotAt,
    slot: u64,
    to: usize,
}

impl Table {
    /// Frees a slot in `start` by moving fingerprints along a path; `false` if no path was
    /// found within the walk, or a racing writer spoiled it (the caller tries again).
    pub(crate) fn make_room(&self, start: usize) -> bool {
        let g = self.clock.current();
        let mut path: Vec<Hop> = Vec::with_capacity(16);
        let mut bucket = start;
        // A cheap generator per walk: which slot each hop evicts.
        let mut pick = (start as u64 ^ g).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for _ in 0..MAX_HOPS {
            if self.find_free(bucket, g).is_some() {
                return self.move_back(&path);
            }
            pick ^= pick << 13;
            pick ^= pick >> 7;
            pick ^= pick << 17;
            let index = (pick % BUCKET_SIZE as u64) as usize;
            let slot = self.slots.get(bucket, index);
            let fp = super::window::Ages::fingerprint(slot) as u32;
            if fp == 0 {
                return false; // Changed under the walk.
            }
            let to = self.placement.alternate(bucket, fp);
            path.push(Hop {
                from: SlotAt { bucket, index },
                slot,
                to,
            });
            bucket = to;
        }
        false
    }

    /// Performs `path`'s moves from the last back; `false` at the first that is no longer valid
    /// (the moves before it stay: each is a valid move of a live fingerprint).
    fn move_back(&self, path: &[Hop]) -> bool {
        for hop in path.iter().rev() {
            let mut guard = self.stripes.lock_pair::<false>(hop.from.bucket, hop.to);
            let g = self.clock.current();
            let now = self.slots.get(hop.from.bucket, hop.from.index);
            if now != hop.slot || !self.ages.is_live(now, g, 0) {
                return false;
            }
            let Some((i, free)) = self.find_free(hop.to, g) else {
                return false;
            };
            self.slots.set(hop.to, i, free, now);
            if free == 0 {
                guard.add(hop.to, 1);
            }
            self.slots.set(hop.from.bucket, hop.from.index, now, 0);
            guard.add(hop.from.bucket, -1);
        }
        true
    }
}
