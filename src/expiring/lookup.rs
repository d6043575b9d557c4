//! Lookups: two buckets read between two reads of their stripes' stamps, with no lock, as the
//! plain filter's; the generation is read after the first stamps and before the validation
//! (a lookup with no matching lane needs none: it reads none).
//!
//! Why after the first stamps: a writer reads the generation under its stripe lock and stores
//! a tag no newer than it. A lookup whose first stamp load sees that writer's unlock also sees,
//! by the unlock's `Release` and the load's `Acquire`, a generation at least as new as the tag,
//! so a refreshed slot never looks older than it is (a tag newer than the lookup's generation
//! would read as age `2^t − 1`, expired). A lookup that read the stamps before the unlock and
//! the slot after fails to validate and tries again. Why anywhere before the validation: a read
//! that validates saw its buckets unchanged from the first stamps to the validation, so they and
//! a generation read in between are one state the table had.

use super::core::Table;
use super::slots::BucketBits;
use super::window::{Ages, TAG_BITS};
use crate::raw::{contains_blocks, Candidates, Lanes};

impl Table {
    /// Whether `hash`'s fingerprint is live in one of its buckets: read inline where
    /// [`Table::inline_lanes`] allows, else out of line.
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.contains_located(move || self.candidates(hash))
    }

    /// [`Self::contains`] of the candidates `locate` gives (computed from the hash, or located
    /// ahead by a batch). Past the inline read, only what `locate` keeps stays live.
    #[inline(always)]
    fn contains_located(&self, locate: impl Fn() -> Candidates + Copy) -> bool {
        // In place: each mask is read where it is used, not all up front into registers.
        if let Some(lanes) = self.inline_lanes.as_ref() {
            let c = locate();
            let generation = || self.clock.current();
            let look = || self.first_match_live(lanes, &c, locate, generation);
            if let Some(answer) = self.stripes.try_read_pair(c.first, c.second, &look) {
                return answer;
            }
        }
        self.contains_out_of_line(locate)
    }

    /// [`Self::contains`] of other tables, on the monotonic clock (whose read costs more than
    /// the call), or after a writer got in the way of the first read: every lane that matches.
    #[inline(never)]
    fn contains_out_of_line(&self, locate: impl Fn() -> Candidates) -> bool {
        let c = locate();
        let generation = || self.clock.current();
        self.read(&c, || {
            let g = generation();
            let lag = self.clock.lag(g);
            match self.slots.lanes() {
                Some(lanes) => self
                    .ages
                    .generations
                    .checked_sub(lag)
                    .is_some_and(|limit| self.live_copy(lanes, &c, g, limit)),
                None => {
                    self.find_live(c.first, c.fp, g, lag).is_some()
                        || self.find_live(c.second, c.fp, g, lag).is_some()
                }
            }
        })
    }

    /// Whether `c`'s fingerprint is live in either bucket, by the first lane that may hold it
    /// (and the others only if it is not live), in the `generation` read after the buckets.
    /// Unvalidated.
    #[inline(always)]
    fn first_match_live(
        &self,
        lanes: &Lanes,
        c: &Candidates,
        locate: impl Fn() -> Candidates,
        generation: impl Fn() -> u64,
    ) -> bool {
        // Both buckets loaded before either is compared: two cache misses overlap.
        let first = self.slots.bucket_bits(c.first);
        let second = self.slots.bucket_bits(c.second);
        let pattern = lanes.broadcast(c.fp);
        let zeros = [
            lanes.zero_lanes(first.low ^ pattern),
            lanes.zero_lanes(second.low ^ pattern),
        ];
        if zeros[0] | zeros[1] == 0 {
            return false;
        }
        // Only a lookup with a match needs the generation (module comment: why here).
        let g = generation();
        // The bucket with a match, the first if both, picked without a branch: a member is in
        // either at random, and a branch on which mispredicts half the time.
        let in_second = zeros[0] == 0;
        let bits = BucketBits::pick(first, second, in_second);
        let zero = if in_second { zeros[1] } else { zeros[0] };
        // The lowest lane `zero_lanes` reports holds the fingerprint.
        let i = lanes.slots(zero).trailing_zeros();
        let tag = self.slots.tags_window(bits) >> (i * TAG_BITS);
        Ages::age(tag, g) <= self.ages.generations || self.other_live_copy(locate, g)
    }

    /// [`Self::live_copy`] of `locate`'s candidates, for a lookup whose first match was not
    /// live, out of line. Unvalidated.
    #[cold]
    #[inline(never)]
    fn other_live_copy(&self, locate: impl Fn() -> Candidates, g: u64) -> bool {
        let c = locate();
        self.slots
            .lanes()
            .is_some_and(|lanes| self.live_copy(lanes, &c, g, self.ages.generations))
    }

    /// Whether a lane of either of `c`'s buckets holding its fingerprint has a tag at most
    /// `limit` generations old in generation `g`. Unvalidated.
    #[inline(always)]
    fn live_copy(&self, lanes: Lanes, c: &Candidates, g: u64, limit: u64) -> bool {
        [c.first, c.second].into_iter().any(|bucket| {
            let bits = self.slots.bucket_bits(bucket);
            let tags = self.slots.tags_of(bucket, bits);
            let mut hits = lanes.matches(bits.low, c.fp);
            while hits != 0 {
                let i = lanes.lane(hits.trailing_zeros());
                if Ages::age(tags >> (i as u32 * TAG_BITS), g) <= limit {
                    return true;
                }
                hits &= hits - 1;
            }
            false
        })
    }

    /// `answers[i] = contains(hashes[i])`, each key's buckets prefetched [`AHEAD`](crate::raw::AHEAD) keys before
    /// its probe ([`contains_blocks`]), so that their cache misses overlap.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        let prefetch = |bucket| self.slots.prefetch(bucket);
        contains_blocks(hashes, answers, self.placement, prefetch, |&c| {
            self.contains_located(move || c)
        });
    }

    /// Live copies of `hash`'s fingerprint in its buckets (in one if they are one).
    pub(crate) fn count(&self, hash: u64) -> usize {
        let c = self.candidates(hash);
        self.read(&c, || {
            let g = self.clock.current();
            let lag = self.clock.lag(g);
            let first = self.count_live(c.first, c.fp, g, lag);
            if c.first == c.second {
                first
            } else {
                first + self.count_live(c.second, c.fp, g, lag)
            }
        })
    }

    /// `look` at the two buckets (and the generation) in a state they really had.
    #[inline(always)]
    fn read<T>(&self, c: &Candidates, look: impl Fn() -> T) -> T {
        self.stripes.read_pair(c.first, c.second, look)
    }
}

#[cfg(test)]
#[path = "../../tests/unit/expiring/lookup.rs"]
mod tests;
