//! Bulk operations of the growable kind: batched lookups and inserts, each starting the memory
//! loads of a group of items before it probes or writes any.

use super::chunks::Located;
use super::{insert_into, Growable};
use crate::raw::{level_hash, AHEAD};

impl Growable {
    /// `answers[i] = contains(hashes[i])`, a level at a time, newest first: the buckets of a
    /// group of hashes are requested before the first of them is probed.
    pub(super) fn contains_hashes_by_level(&self, hashes: &[u64], answers: &mut [bool]) {
        answers.fill(false);
        for level in (0..self.levels.count()).rev() {
            let chunks = self.levels.level(level);
            for (hashes, answers) in hashes.chunks(AHEAD).zip(answers.chunks_mut(AHEAD)) {
                let mut located: [Option<Located<'_>>; AHEAD] = [None; AHEAD];
                for (at, &hash) in located.iter_mut().zip(hashes) {
                    *at = Some(chunks.locate_and_prefetch(level_hash(hash, level)));
                }
                for (answer, at) in answers.iter_mut().zip(located.into_iter().flatten()) {
                    *answer = *answer || chunks.contains_located(at);
                }
            }
        }
    }

    /// Inserts a block of hashes in order: `Err(n)` when only the first `n` went in. The
    /// buckets of a group of hashes are requested before the first is written.
    pub(super) fn insert_hashes(&self, hashes: &[u64]) -> Result<(), usize> {
        for (group, hashes) in hashes.chunks(AHEAD).enumerate() {
            let newest = self.levels.count() - 1;
            let chunks = self.levels.level(newest);
            for &hash in hashes {
                chunks.locate_and_prefetch(level_hash(hash, newest));
            }
            for (i, &hash) in hashes.iter().enumerate() {
                insert_into(&self.levels, hash).map_err(|_| group * AHEAD + i)?;
            }
        }
        Ok(())
    }
}
