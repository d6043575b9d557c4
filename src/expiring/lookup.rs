//! Lookups: two buckets read between two reads of their stripes' stamps, with no lock, and the
//! generation (only on a fingerprint match) read after the first stamps, so a refreshed slot never
//! looks older than it is (docs/expiry.md, guarantee 1).

use super::core::Table;
use super::slots::BucketBits;
use super::window::{Ages, TAG_BITS};
use crate::raw::{contains_blocks, Candidates, Lanes, Place};

impl Table {
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.contains_located(move || self.placement.candidates(hash))
    }

    /// [`Self::contains`] of `locate`'s candidates (recomputed past the inline read, or kept by
    /// a batch), inline where [`Table::inline_lanes`] allows.
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

    /// [`Self::contains`] of other tables and clocks, or after a writer spoiled the first read.
    #[inline(never)]
    fn contains_out_of_line(&self, locate: impl Fn() -> Candidates) -> bool {
        let c = locate();
        self.read(&c, |g, lag| self.live_in_either(&c, g, lag))
    }

    /// Whether `c`'s fingerprint is live in either bucket, by the first matching lane (the
    /// others only if it is not). Unvalidated.
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

    /// For a lookup whose first match was not live. Unvalidated.
    #[cold]
    #[inline(never)]
    fn other_live_copy(&self, locate: impl Fn() -> Candidates, g: u64) -> bool {
        self.live_in_either(&locate(), g, 0)
    }

    /// Unvalidated.
    fn live_in_either(&self, c: &Candidates, g: u64, lag: u64) -> bool {
        self.find_live(c.first, c.fp, g, lag).is_some()
            || self.find_live(c.second, c.fp, g, lag).is_some()
    }

    /// `answers[i] = contains(hashes[i])`, each key's buckets prefetched ahead
    /// ([`contains_blocks`]).
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        let prefetch = |bucket| self.slots.prefetch(bucket);
        contains_blocks(hashes, answers, self.placement, prefetch, |&c| {
            self.contains_located(move || c)
        });
    }

    /// Live copies of `hash`'s fingerprint in its buckets (in one if they are one).
    pub(crate) fn count(&self, hash: u64) -> usize {
        let c = self.placement.candidates(hash);
        self.read(&c, |g, lag| {
            let live = |bucket| self.masks(bucket, c.fp, g, lag).live().count_ones() as usize;
            let second = (c.first != c.second).then(|| live(c.second));
            live(c.first) + second.unwrap_or(0)
        })
    }

    /// `look` of the generation and its lag, validated against `c`'s stripes.
    #[inline(always)]
    fn read<T>(&self, c: &Candidates, look: impl Fn(u64, u64) -> T) -> T {
        self.stripes.read_pair(c.first, c.second, || {
            let g = self.clock.current();
            look(g, self.clock.lag(g))
        })
    }
}

#[cfg(test)]
#[path = "../../tests/unit/expiring/lookup.rs"]
mod tests;
