//! Bulk operations of the growable filter: batched lookups and inserts, each starting the
//! memory loads of a group of items before it probes or writes any, and parallel inserts.

use core::hash::{BuildHasher, Hash};

use super::chunks::Located;
use super::{insert_into, GrowableCuckooFilter};
use crate::error::ExtendError;
use crate::raw::{level_hash, BLOCK};

/// Items a batched lookup hashes at a time.
const HASHED: usize = 512;
/// Items whose buckets are requested before the first of them is probed: enough to keep the
/// loads a core can track in flight, few enough that the first lines are still in cache when
/// their probe comes.
const IN_FLIGHT: usize = 16;

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    /// Looks up many items at once: `answers[i] == contains(&items[i])`, with the same
    /// guarantees, overlapping the memory loads of many items in every level.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(10);
    /// filter.try_extend(0..100u32)?;
    /// assert_eq!(filter.contains_batch(&[1u32, 99, 1 << 30]), [true, true, false]);
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    #[must_use]
    pub fn contains_batch<T: Hash>(&self, items: &[T]) -> Vec<bool> {
        let mut answers = vec![false; items.len()];
        self.contains_batch_into(items, &mut answers);
        answers
    }

    /// [`contains_batch`](Self::contains_batch) into a buffer of the caller's, allocating
    /// nothing.
    ///
    /// # Panics
    ///
    /// If `answers` and `items` differ in length.
    pub fn contains_batch_into<T: Hash>(&self, items: &[T], answers: &mut [bool]) {
        assert_eq!(
            items.len(),
            answers.len(),
            "contains_batch_into: one answer per item"
        );
        let mut hashes = [0u64; HASHED];
        for (items, answers) in items.chunks(HASHED).zip(answers.chunks_mut(HASHED)) {
            let hashes = &mut hashes[..items.len()];
            for (hash, item) in hashes.iter_mut().zip(items) {
                *hash = self.hasher.hash_one(item);
            }
            self.contains_hashes(hashes, answers);
        }
    }

    /// Inserts every item in order, a block at a time into the newest level, adding levels as
    /// they fill; stops at the first item that cannot be inserted.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert); the items before the failed one stay inserted and
    /// [`ExtendError::inserted`] says how many.
    pub fn try_extend<I>(&self, items: I) -> Result<usize, ExtendError>
    where
        I: IntoIterator,
        I::Item: Hash,
    {
        let mut block = [0u64; BLOCK];
        let mut len = 0;
        let mut inserted = 0;
        for item in items {
            block[len] = self.hasher.hash_one(&item);
            len += 1;
            if len == BLOCK {
                inserted += self
                    .insert_block(&block)
                    .map_err(|n| ExtendError::full(inserted + n, Some(inserted + n)))?;
                len = 0;
            }
        }
        inserted += self
            .insert_block(&block[..len])
            .map_err(|n| ExtendError::full(inserted + n, Some(inserted + n)))?;
        Ok(inserted)
    }
}

impl<S> GrowableCuckooFilter<S> {
    /// `answers[i] = contains_hash(hashes[i])`, a level at a time, newest first: the buckets of
    /// a group of hashes are requested before the first of them is probed.
    pub(super) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        answers.fill(false);
        for level in (0..self.levels.count()).rev() {
            let chunks = self.levels.level(level);
            for (hashes, answers) in hashes.chunks(IN_FLIGHT).zip(answers.chunks_mut(IN_FLIGHT)) {
                let mut located: [Option<Located<'_>>; IN_FLIGHT] = [None; IN_FLIGHT];
                for (at, &hash) in located.iter_mut().zip(hashes) {
                    *at = Some(chunks.locate_and_prefetch(level_hash(hash, level)));
                }
                for (answer, at) in answers.iter_mut().zip(located.into_iter().flatten()) {
                    *answer = *answer || chunks.contains_located(at);
                }
            }
        }
    }

    /// Inserts a block of at most [`BLOCK`] hashes: `Ok(len)`, or `Err(n)` when only the first
    /// `n` went in. The buckets of a group of hashes are requested before the first is written.
    pub(crate) fn insert_block(&self, hashes: &[u64]) -> Result<usize, usize> {
        for (group, hashes) in hashes.chunks(IN_FLIGHT).enumerate() {
            let newest = self.levels.count() - 1;
            let chunks = self.levels.level(newest);
            for &hash in hashes {
                chunks.locate_and_prefetch(level_hash(hash, newest));
            }
            for (i, &hash) in hashes.iter().enumerate() {
                insert_into(&self.levels, hash).map_err(|_| group * IN_FLIGHT + i)?;
            }
        }
        Ok(hashes.len())
    }
}

/// Builds a filter whose first level is sized for the iterator's lower size bound (at least 1)
/// and inserts every item as [`try_extend`] does, growing as they come: the items are hashed
/// one at a time, none held.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
///
/// let filter: GrowableCuckooFilter = (0..10_000u32).filter(|key| key % 3 == 0).collect();
/// assert_eq!(filter.len(), 3_334);
/// assert!((0..10_000u32).step_by(3).all(|key| filter.contains(&key)));
/// ```
///
/// # Panics
///
/// If an item cannot be inserted: only copies of one item that fill its buckets (more than
/// `2 · bucket_size` of them, or than `bucket_size` where its two buckets are one) or a failed allocation, since the filter has no limit. Use
/// [`try_extend`] to handle that.
///
/// [`try_extend`]: GrowableCuckooFilter::try_extend
impl<T: Hash, S: BuildHasher + Default> FromIterator<T> for GrowableCuckooFilter<S> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let items = items.into_iter();
        let filter = Self::with_capacity_and_hasher(items.size_hint().0.max(1), S::default());
        (&filter).extend(items);
        filter
    }
}

/// Inserts every item (see [`GrowableCuckooFilter::try_extend`]).
///
/// # Panics
///
/// If an item cannot be inserted (see [`GrowableCuckooFilter::insert`]): dropping it silently
/// would break the no-false-negative guarantee. Use `try_extend` to handle that.
impl<T: Hash, S: BuildHasher> Extend<T> for &GrowableCuckooFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        if let Err(err) = self.try_extend(items) {
            panic!("GrowableCuckooFilter::extend: {err}");
        }
    }
}

/// Inserts every item; see the impl for `&GrowableCuckooFilter`.
impl<T: Hash, S: BuildHasher> Extend<T> for GrowableCuckooFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        (&*self).extend(items);
    }
}
