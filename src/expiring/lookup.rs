//! Lookups: two buckets read between two reads of their stripes' stamps, with no lock, as the
//! plain filter's; the generation is read after the first stamps.
//!
//! Why after: a writer reads the generation under its stripe lock and stores a tag no newer
//! than it. A lookup whose first stamp load sees that writer's unlock also sees, by the
//! unlock's `Release` and the load's `Acquire`, a generation at least as new as the tag, so a
//! refreshed slot never looks older than it is (a tag newer than the lookup's generation would
//! read as age `2^t − 1`, expired). A lookup that read the stamps before the unlock and the slot
//! after fails to validate and tries again.

use super::core::Table;
use crate::raw::{Candidates, AHEAD};

/// Optimistic tries before a lookup locks.
const READ_TRIES: usize = if crate::sync::MODEL_CHECKED { 2 } else { 8 };

impl Table {
    /// Whether `hash`'s fingerprint is live in one of its buckets.
    pub(crate) fn contains(&self, hash: u64) -> bool {
        let c = self.candidates(hash);
        if let Some(lanes) = self.slots.lanes() {
            // Both windows loaded before either is compared: two cache misses overlap.
            return self.read(&c, |g, lag| {
                let first = self.slots.fingerprints(c.first);
                let second = self.slots.fingerprints(c.second);
                let (hits_first, hits_second) =
                    (lanes.matches(first, c.fp), lanes.matches(second, c.fp));
                self.live_among(lanes, c.first, c.fp, hits_first, g, lag)
                    .is_some()
                    || self
                        .live_among(lanes, c.second, c.fp, hits_second, g, lag)
                        .is_some()
            });
        }
        self.read(&c, |g, lag| {
            self.find_live(c.first, c.fp, g, lag).is_some()
                || self.find_live(c.second, c.fp, g, lag).is_some()
        })
    }

    /// `answers[i] = contains(hashes[i])`, each group's buckets asked for before the first of
    /// them is read, so that their cache misses overlap.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        for (hashes, answers) in hashes.chunks(AHEAD).zip(answers.chunks_mut(AHEAD)) {
            for &hash in hashes {
                let c = self.candidates(hash);
                self.slots.prefetch(c.first);
                self.slots.prefetch(c.second);
            }
            for (answer, &hash) in answers.iter_mut().zip(hashes) {
                *answer = self.contains(hash);
            }
        }
    }

    /// Live copies of `hash`'s fingerprint in its buckets (in one if they are one).
    pub(crate) fn count(&self, hash: u64) -> usize {
        let c = self.candidates(hash);
        self.read(&c, |g, lag| {
            let first = self.count_live(c.first, c.fp, g, lag);
            if c.first == c.second {
                first
            } else {
                first + self.count_live(c.second, c.fp, g, lag)
            }
        })
    }

    /// `look` at the two buckets with the generation and lag, in a state they really had:
    /// optimistically [`READ_TRIES`] times, then under both stripe locks. One call site of
    /// `look`, so that it is inlined.
    #[inline(always)]
    fn read<T>(&self, c: &Candidates, look: impl Fn(u64, u64) -> T) -> T {
        let mut tries = 0;
        loop {
            let guard =
                (tries == READ_TRIES).then(|| self.stripes.lock_pair::<false>(c.first, c.second));
            let read = self.stripes.begin_read(c.first, c.second);
            let g = self.clock.current();
            let answer = look(g, self.clock.lag(g));
            if guard.is_some() || read.validate() {
                return answer;
            }
            tries += 1;
        }
    }
}
