//! Calls by precomputed hash: the 64-bit hash stands in for the key.

use crate::error::{ExtendError, InsertError};
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::raw::BLOCK;

/// Calls by precomputed hash, for keys hashed by another program, or hashed once and used many
/// times. Each `*_hash` call is its key-level call, with the same guarantees and errors, given
/// the key's 64-bit hash (the low 32 bits pick the fingerprint, the high 32 the first bucket).
///
/// # The hash must come from one function
///
/// A filter finds an item only under the hash it was inserted with, so every hash given to one
/// filter must come from one well-mixed function of the key (as XXH3-64, wyhash or SipHash; a
/// key's own integer value crowds keys into a few buckets), and nothing records which. Mix these
/// calls with the key-level ones only with the filter's own hashes,
/// `filter.hasher().hash_one(&key)` (or [`hash_stream`](crate::DefaultHashBuilder::hash_stream)).
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
/// use core::hash::BuildHasher;
///
/// let filter = ConcurrentCuckooFilter::with_capacity(1000);
/// filter.insert_hash(0x9e37_79b9_7f4a_7c15)?;
/// assert!(filter.contains_hash(0x9e37_79b9_7f4a_7c15));
/// // A hash equal to the filter's own is the key itself.
/// filter.insert_hash(filter.hasher().hash_one("key"))?;
/// assert!(filter.contains("key"));
/// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
/// ```
impl<K: Kind, S> CuckooFilter<K, S> {
    /// [`insert`](Self::insert) by hash.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.core().insert(hash, false).map(drop)
    }

    /// [`insert_unique`](Self::insert_unique) by hash.
    ///
    /// # Errors
    ///
    /// As [`insert_unique`](Self::insert_unique).
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        self.core().insert(hash, true)
    }

    /// [`contains`](Self::contains) by hash.
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.core().contains(hash)
    }

    /// [`contains_batch_into`](Self::contains_batch_into) by hash: `answers[i] =
    /// contains_hash(hashes[i])`.
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
        self.core().contains_hashes(hashes, answers);
    }

    /// [`count`](Self::count) by hash.
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.core().count(hash)
    }

    /// [`remove`](Self::remove) by hash.
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.core().remove(hash)
    }

    /// [`insert_unique_hash`](Self::insert_unique_hash) of many hashes in order: `new[i]` says
    /// whether `hashes[i]` went in (false: its fingerprint was there, perhaps from an earlier
    /// hash of the slice). Returns how many went in.
    ///
    /// # Errors
    ///
    /// On the first hash that finds no room, at [`ExtendError::position`], after
    /// [`ExtendError::inserted`] went in; it and those after it were not tried (`new` false).
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
        for (at, (block, flags)) in hashes.chunks(BLOCK).zip(new.chunks_mut(BLOCK)).enumerate() {
            let outcome = self.core().insert_unique_block(block, flags);
            inserted += flags.iter().filter(|&&flag| flag).count();
            if let Err(i) = outcome {
                return Err(self.stopped(inserted, Some(at * BLOCK + i)));
            }
        }
        Ok(inserted)
    }

    /// [`try_extend`](Self::try_extend) by hash. `Ok(n)`: all `n` went in.
    ///
    /// # Errors
    ///
    /// As [`try_extend`](Self::try_extend).
    pub fn try_extend_hashes(&self, hashes: &[u64]) -> Result<usize, ExtendError> {
        let mut inserted = 0;
        for block in hashes.chunks(BLOCK) {
            match self.core().insert_block(block) {
                Ok(()) => inserted += block.len(),
                Err(n) => return Err(self.stopped(inserted + n, Some(inserted + n))),
            }
        }
        Ok(inserted)
    }
}
