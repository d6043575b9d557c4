//! Operations on keys hashed elsewhere, as the fixed filter has them: the 64-bit hash stands in
//! for the key, hashed by this filter's hasher or by the same function in another program.

use super::levels::Levels;
use super::{insert_into, insert_unique_into, remove_from, GrowableCuckooFilter, PROBE_WINDOW};
use crate::error::{ExtendError, InsertError};
use crate::raw::{level_hash, Insertion};

impl<S> GrowableCuckooFilter<S> {
    /// [`insert`](Self::insert) of the item whose hash is `hash`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    /// use core::hash::BuildHasher;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(1000);
    /// let hash = filter.hasher().hash_one("key");
    /// filter.insert_hash(hash)?;
    /// assert!(filter.contains("key") && filter.contains_hash(hash));
    /// assert_eq!(filter.count_hash(hash), 1);
    /// assert!(filter.remove_hash(hash));
    /// assert!(!filter.contains("key"));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        insert_into(&self.levels, hash)
    }

    /// [`insert_unique`](Self::insert_unique) of the item whose hash is `hash`.
    ///
    /// # Errors
    ///
    /// As [`insert_unique`](Self::insert_unique).
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        loop {
            // Held while the levels are counted, checked and the item inserted: a racing unique
            // insert of the item then sees this one's copy, in whatever level it went.
            let guard = self.item_locks.lock(hash);
            let newest = self.levels.count() - 1;
            match insert_unique_into(&self.levels, hash, newest) {
                Insertion::Inserted => return Ok(true),
                Insertion::Present => return Ok(false),
                Insertion::Full => {
                    // Others waiting for the item's lock should not wait for the growth too.
                    drop(guard);
                    let level_hash = level_hash(hash, newest);
                    if self.levels.level(newest).copies_fill_buckets(level_hash)
                        || !self.levels.grow(newest)
                    {
                        return Err(InsertError::Full);
                    }
                }
            }
        }
    }

    /// [`contains`](Self::contains) of the item whose hash is `hash`.
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        match self.levels.count() {
            // Until the filter has grown past its first level (64× with the default split
            // depth), one directory pointer and one chunk; `level_hash` of level 0 is the hash.
            1 => self.levels.first().contains(hash),
            count => Self::contains_in_levels(&self.levels, hash, count),
        }
    }

    /// Out of line, so that the one-level lookup inlined in the caller keeps its registers.
    #[inline(never)]
    fn contains_in_levels(levels: &Levels, hash: u64, count: usize) -> bool {
        // Newest first: it is the largest, and holds the most items. Every level of a window is
        // located once, its buckets' loads started, before any is probed: the probes then find
        // their buckets arriving together instead of missing one after another. A window of
        // eight levels already keeps more loads in flight than a core can track, and keeps the
        // array each lookup fills small.
        let mut newest = count;
        while newest > 0 {
            let oldest = newest.saturating_sub(PROBE_WINDOW);
            let mut located = [None; PROBE_WINDOW];
            for (level, slot) in (oldest..newest).rev().zip(&mut located) {
                let kind = levels.level(level);
                *slot = Some((kind, kind.locate_and_prefetch(level_hash(hash, level))));
            }
            if located
                .iter()
                .flatten()
                .any(|&(kind, at)| kind.contains_located(at))
            {
                return true;
            }
            newest = oldest;
        }
        false
    }

    /// [`count`](Self::count) of the item whose hash is `hash`.
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> usize {
        let levels = &self.levels;
        (0..levels.count())
            .map(|level| levels.level(level).count(level_hash(hash, level)))
            .sum()
    }

    /// [`remove`](Self::remove) of the item whose hash is `hash`.
    pub fn remove_hash(&self, hash: u64) -> bool {
        remove_from(&self.levels, hash)
    }

    /// [`contains_batch_into`](Self::contains_batch_into) of items by their hashes:
    /// `answers[i] == contains_hash(hashes[i])`.
    ///
    /// # Panics
    ///
    /// If `answers` and `hashes` differ in length.
    pub fn contains_hash_batch_into(&self, hashes: &[u64], answers: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            answers.len(),
            "contains_hash_batch_into: one answer per hash"
        );
        self.contains_hashes(hashes, answers);
    }

    /// [`try_extend`](Self::try_extend) of items by their hashes, in order.
    ///
    /// # Errors
    ///
    /// As [`try_extend`](Self::try_extend).
    pub fn try_extend_hashes(&self, hashes: &[u64]) -> Result<usize, ExtendError> {
        let mut inserted = 0;
        for block in hashes.chunks(crate::raw::BLOCK) {
            inserted += self
                .insert_block(block)
                .map_err(|n| ExtendError::full(inserted + n, Some(inserted + n)))?;
        }
        Ok(inserted)
    }

    /// [`insert_unique_hash`](Self::insert_unique_hash) of each hash in order: `new[i]` says
    /// whether `hashes[i]` was inserted (`false`: its fingerprint was there, or an earlier
    /// equal hash put it there). Returns how many were inserted.
    ///
    /// # Errors
    ///
    /// [`ExtendError`] at the first hash that finds no room; [`ExtendError::position`] says
    /// which, and the flags before it stand.
    ///
    /// # Panics
    ///
    /// If `new` and `hashes` differ in length.
    pub fn insert_unique_hash_batch_into(
        &self,
        hashes: &[u64],
        new: &mut [bool],
    ) -> Result<usize, ExtendError> {
        assert_eq!(
            hashes.len(),
            new.len(),
            "insert_unique_hash_batch_into: one flag per hash"
        );
        new.fill(false);
        let mut inserted = 0;
        for (at, (&hash, flag)) in hashes.iter().zip(new.iter_mut()).enumerate() {
            *flag = self
                .insert_unique_hash(hash)
                .map_err(|_| ExtendError::full(inserted, Some(at)))?;
            inserted += usize::from(*flag);
        }
        Ok(inserted)
    }
}
