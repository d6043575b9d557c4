//! Operations on keys hashed elsewhere: the 64-bit hash stands in for the key.
//!
//! The filter only ever needs a key's 64-bit hash: the low 32 bits pick its fingerprint, the
//! high 32 bits its first bucket. These methods take that hash directly, for keys hashed by
//! another program or in another language, or hashed once and used many times.

use crate::error::{ExtendError, InsertError};
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::raw::BLOCK;

/// Operations by precomputed hash.
///
/// # The hash must come from one function
///
/// A filter finds an item only under the hash it was inserted with. Every hash given to one
/// filter must come from the same function of the key, and a well-mixed one (every bit of the
/// 64 depending on every bit of the key, as XXH3-64, wyhash or SipHash give): a weak hash such
/// as a key's own integer value crowds keys into a few buckets and raises the false positive
/// rate. Mixing `insert_hash` with [`insert`](CuckooFilter::insert) is only right if
/// the hashes equal the filter's own, `filter.hasher().hash_one(&key)`: for the default hasher
/// that is XXH3-64 with the filter's seed over the bytes the key's `Hash` impl writes, integers
/// in little-endian, a `str` as its bytes followed by one `0xff` byte. A filter filled only
/// through these methods can use any such function; nothing records which one it was.
impl<K: Kind, S> CuckooFilter<K, S> {
    /// [`insert`](Self::insert) of the key whose hash is `hash` (see the [caveat](#the-hash-must-come-from-one-function)).
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
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
    ///
    /// let filter = concurrent_cuckoo_filter::GrowableCuckooFilter::with_capacity(1000);
    /// let hash = filter.hasher().hash_one("key");
    /// filter.insert_hash(hash)?;
    /// assert!(filter.contains("key") && filter.contains_hash(hash));
    /// assert_eq!(filter.count_hash(hash), 1);
    /// assert!(filter.remove_hash(hash));
    /// assert!(!filter.contains("key"));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.core().insert(hash, false).map(drop)
    }

    /// [`insert_unique`](Self::insert_unique) by hash: `Ok(true)` if inserted, `Ok(false)` if
    /// the fingerprint was already in one of its buckets.
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] if it was not there and there is no room; nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let seen = ConcurrentCuckooFilter::with_capacity(1000);
    /// assert_eq!(seen.insert_unique_hash(42), Ok(true));
    /// assert_eq!(seen.insert_unique_hash(42), Ok(false));
    /// assert_eq!(seen.count_hash(42), 1);
    /// ```
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        self.core().insert(hash, true)
    }

    /// [`contains`](Self::contains) by hash.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.insert_hash(7)?;
    /// assert!(filter.contains_hash(7));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.core().contains(hash)
    }

    /// [`contains_batch_into`](Self::contains_batch_into) by hash: `answers[i] =
    /// contains_hash(hashes[i])`, with the memory loads of consecutive keys overlapped.
    ///
    /// # Panics
    ///
    /// If `answers` and `hashes` differ in length.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// use core::hash::BuildHasher;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// let hashes = ["in", "out"].map(|key| filter.hasher().hash_one(key));
    /// filter.insert_hash(hashes[0])?;
    /// let mut answers = [false; 2];
    /// filter.contains_hash_batch_into(&hashes, &mut answers);
    /// assert_eq!(answers, [true, false]);
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
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

    /// [`remove`](Self::remove) by hash: removes one copy; `false` if none was found (or, in a
    /// growable filter, several levels show it). Only remove hashes that were inserted.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.insert_hash(7)?;
    /// assert!(filter.remove_hash(7));
    /// assert!(!filter.contains_hash(7));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.core().remove(hash)
    }

    /// [`insert_unique_hash`](Self::insert_unique_hash) of many hashes in order, overlapping
    /// their memory loads as [`try_extend_hashes`](Self::try_extend_hashes) does: `new[i]` says
    /// whether `hashes[i]` went in (false: its fingerprint was already in one of its buckets,
    /// perhaps from an earlier hash of the same slice). Returns how many went in.
    ///
    /// # Errors
    ///
    /// On the first hash that finds no room: [`ExtendError::position`] is its index and
    /// [`ExtendError::inserted`] counts the hashes before it that went in (as `new` says; the
    /// others were found present). It and the ones after it were not tried, and their `new`
    /// entries are false.
    ///
    /// # Panics
    ///
    /// If `new` and `hashes` differ in length.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    /// use core::hash::BuildHasher;
    ///
    /// let seen = ConcurrentCuckooFilter::with_capacity(1000);
    /// let hashes = ["a", "b", "a", "c", "b"].map(|key| seen.hasher().hash_one(key));
    /// let mut new = [false; 5];
    /// assert_eq!(seen.insert_unique_hash_batch_into(&hashes, &mut new), Ok(3));
    /// assert_eq!(new, [true, true, false, true, false]);
    /// ```
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
                return Err(ExtendError::full(inserted, Some(at * BLOCK + i)));
            }
        }
        Ok(inserted)
    }

    /// Inserts many hashes in order, overlapping their memory loads as
    /// [`try_extend`](Self::try_extend) does. `Ok(n)`: all `n` went in.
    ///
    /// # Errors
    ///
    /// On the first hash that finds no room: the ones before it stay inserted, and
    /// [`ExtendError::inserted`] says how many.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// let hashes: Vec<u64> = (0..500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    /// assert_eq!(filter.try_extend_hashes(&hashes), Ok(500));
    /// assert!(hashes.iter().all(|&h| filter.contains_hash(h)));
    /// ```
    pub fn try_extend_hashes(&self, hashes: &[u64]) -> Result<usize, ExtendError> {
        let mut inserted = 0;
        for block in hashes.chunks(BLOCK) {
            match self.core().insert_block(block) {
                Ok(()) => inserted += block.len(),
                Err(n) => return Err(ExtendError::full(inserted + n, Some(inserted + n))),
            }
        }
        Ok(inserted)
    }
}
