//! Many keys at once: hash a block, start loading every bucket it needs, then probe.
//!
//! A lookup in a table far larger than the caches waits most of its time for two cache misses.
//! One key at a time, the CPU overlaps only the few misses its reorder window reaches; a block
//! whose buckets are all prefetched before the first probe keeps a whole block's misses in
//! flight. In a table that fits in cache the prefetches only cost instructions, so they are
//! skipped there.

use super::index::{Candidates, Place};
use super::path::SearchQueue;
use super::{Insertion, RawFilter};

/// Keys a bulk insert hashes and hands to [`RawFilter::insert_block`] at a time. The prefetch
/// pipeline restarts with each block, so a block is several times [`INSERT_AHEAD`] long.
pub(crate) const BLOCK: usize = 64;

/// How far ahead of its probe [`RawFilter::contains_hashes`] prefetches a key's buckets: enough
/// keys to keep the core's dozen or so outstanding misses busy.
const AHEAD: usize = 8;

/// How far ahead of its insert [`RawFilter::insert_block`] prefetches a key's buckets and stripes.
const INSERT_AHEAD: usize = 8;

impl<P: Place> RawFilter<P> {
    /// `answers[i] = contains(hashes[i])`. The keys go in blocks of [`AHEAD`]: while one block
    /// is probed, the buckets of the next are already on their way from memory.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        debug_assert_eq!(hashes.len(), answers.len());
        let prefetch = self.table.worth_prefetching();
        if !prefetch {
            // Nothing to overlap: each key's lookup as one `contains`, with no candidates
            // stored between passes.
            for (answer, &hash) in answers.iter_mut().zip(hashes) {
                *answer = self.contains(hash);
            }
            return;
        }
        let mut blocks = hashes.chunks(AHEAD).zip(answers.chunks_mut(AHEAD));
        let Some((first, mut answers)) = blocks.next() else {
            return;
        };
        let mut buffers = [[Candidates::default(); AHEAD]; 2];
        let (located, next) = buffers.split_at_mut(1);
        let (mut located, mut next) = (&mut located[0], &mut next[0]);
        self.locate(first, located, prefetch);
        for (hashes, next_answers) in blocks {
            self.locate(hashes, next, prefetch);
            self.probe(located, answers);
            core::mem::swap(&mut located, &mut next);
            answers = next_answers;
        }
        self.probe(located, answers);
    }

    /// Each hash's candidates, with their buckets prefetched if `prefetch`.
    #[inline(always)]
    fn locate(&self, hashes: &[u64], out: &mut [Candidates; AHEAD], prefetch: bool) {
        for (c, &hash) in out.iter_mut().zip(hashes) {
            *c = self.placement.candidates(hash);
            if prefetch {
                self.table.prefetch(c.first);
                self.table.prefetch(c.second);
            }
        }
    }

    /// `answers[i] = contains` for `located[i]`, for as many as there are answers.
    #[inline(always)]
    fn probe(&self, located: &[Candidates; AHEAD], answers: &mut [bool]) {
        for (answer, c) in answers.iter_mut().zip(located) {
            *answer = self.contains_located(*c);
        }
    }

    /// Inserts a block of at most [`BLOCK`] hashes in order. `Err(i)`: `hashes[i]` found no
    /// room; the ones before it went in, the ones after were not tried.
    ///
    /// While one key is inserted, the key [`INSERT_AHEAD`] places later has its buckets and its
    /// stripes' lines on their way: one insert at a time waits for a memory load its locked
    /// instructions keep from overlapping with the next insert's, and with several writers for
    /// the stripe lines the other cores wrote last.
    pub(crate) fn insert_block(&self, hashes: &[u64]) -> Result<(), usize> {
        self.insert_block_with(hashes, false, |_, _| {})
    }

    /// [`Self::insert_block`], unique inserts if `unique`, telling `done` each hash's index and
    /// what its insert did (all but `Full`, which ends the block as `Err`).
    pub(crate) fn insert_block_with(
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
        let buckets = self.table.worth_prefetching();
        let prefetch = |c: &Candidates| {
            if buckets {
                self.table.prefetch(c.first);
                self.table.prefetch(c.second);
            }
            self.stripes.prefetch_for_write(c.first);
            self.stripes.prefetch_for_write(c.second);
        };
        candidates.iter().take(INSERT_AHEAD).for_each(prefetch);
        let mut queue = SearchQueue::default();
        for (i, &c) in candidates.iter().enumerate() {
            if let Some(later) = candidates.get(i + INSERT_AHEAD) {
                prefetch(later);
            }
            match self.insert_candidates(c, unique, &mut queue) {
                Insertion::Full => return Err(i),
                done_here => done(i, done_here),
            }
        }
        Ok(())
    }
}
