//! Bulk operations: each hashes a block of keys first, so the kind can overlap its cache misses.

use core::hash::{BuildHasher, Hash};

use crate::error::ExtendError;
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::raw::BLOCK;

/// A block of hashes waiting to be inserted.
pub(crate) struct Pending {
    hashes: [u64; BLOCK],
    len: usize,
}

impl Pending {
    pub(crate) fn new() -> Self {
        Self {
            hashes: [0; BLOCK],
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, hash: u64) -> bool {
        self.hashes[self.len] = hash;
        self.len += 1;
        self.len == BLOCK
    }

    /// Inserts the block: how many went in, as `Err` on failure.
    pub(crate) fn flush<K: Kind, S>(
        &mut self,
        filter: &CuckooFilter<K, S>,
    ) -> Result<usize, usize> {
        let len = core::mem::take(&mut self.len);
        filter
            .core()
            .insert_block(&self.hashes[..len])
            .map(|()| len)
    }
}

impl<K: Kind, S> CuckooFilter<K, S> {
    /// Why a bulk insert stopped after `inserted` items, at `position` of an ordered input.
    pub(crate) fn stopped(&self, inserted: usize, position: Option<usize>) -> ExtendError {
        ExtendError::new(self.core().block_error(), inserted, position)
    }
}

impl<K: Kind, S: BuildHasher> CuckooFilter<K, S> {
    /// `answers[i] == contains(&items[i])`, several times faster than one at a time in a filter
    /// larger than the CPU caches.
    #[must_use]
    pub fn contains_batch<T: Hash>(&self, items: &[T]) -> Vec<bool> {
        let mut answers = vec![false; items.len()];
        self.contains_batch_into(items, &mut answers);
        answers
    }

    /// [`contains_batch`](Self::contains_batch) into the caller's buffer, allocating nothing.
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
        // Hashing a run of keys first keeps user code (the `Hash` impls) apart from the probe loop.
        const HASHED_AT_ONCE: usize = 512;
        let mut hashes = [0u64; HASHED_AT_ONCE];
        for (items, answers) in items
            .chunks(HASHED_AT_ONCE)
            .zip(answers.chunks_mut(HASHED_AT_ONCE))
        {
            for (hash, item) in hashes.iter_mut().zip(items) {
                *hash = self.hasher().hash_one(item);
            }
            self.core().contains_hashes(&hashes[..items.len()], answers);
        }
    }

    /// Inserts every item in order, their memory loads overlapped, until one finds no room
    /// (see [`insert`](Self::insert)). `Ok(n)`: all `n` went in.
    ///
    /// # Errors
    ///
    /// [`ExtendError`] when an item finds no room (or the filter is read-only: see its
    /// [`error`](ExtendError::error)); the items before it stay, [`ExtendError::inserted`] of them.
    pub fn try_extend<I>(&self, items: I) -> Result<usize, ExtendError>
    where
        I: IntoIterator,
        I::Item: Hash,
    {
        let mut pending = Pending::new();
        let mut inserted = 0;
        let mut items = items.into_iter().peekable();
        while let Some(item) = items.next() {
            if pending.push(self.hasher().hash_one(&item)) || items.peek().is_none() {
                match pending.flush(self) {
                    Ok(n) => inserted += n,
                    Err(n) => return Err(self.stopped(inserted + n, Some(inserted + n))),
                }
            }
        }
        Ok(inserted)
    }
}

/// A filter sized for `hashes`, which `insert_all` inserts: how a kind that does not grow collects.
pub(crate) fn collect_hashes<K: Kind, S>(
    hashes: &[u64],
    hasher: S,
    insert_all: impl FnOnce(&CuckooFilter<K, S>) -> bool,
) -> CuckooFilter<K, S> {
    let filter = CuckooFilter::with_capacity_and_hasher(hashes.len(), hasher);
    // A table sized for n items takes any n distinct ones; only copies of one item can fail.
    assert!(
        insert_all(&filter),
        "collecting into a {}: an item occurs more than 2 · bucket_size times",
        K::NAME
    );
    filter
}

/// Builds a filter holding every item, inserted as [`try_extend`] does: a fixed filter sized for
/// them (their hashes held until it is), a growable one from the iterator's lower size bound.
///
/// # Panics
///
/// If an item cannot be inserted: distinct items always fit, but one occurring more than
/// `2 · bucket_size` times overflows its buckets, and a growable filter may fail to allocate.
/// Collect into a set first, or [`try_extend`] a filter of your own.
///
/// [`try_extend`]: CuckooFilter::try_extend
impl<K: Kind, T: Hash, S: BuildHasher + Default> FromIterator<T> for CuckooFilter<K, S> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let items = items.into_iter();
        let hasher = S::default();
        if K::GROWS {
            let filter = Self::with_capacity_and_hasher(items.size_hint().0, hasher);
            (&filter).extend(items);
            return filter;
        }
        let hashes: Vec<u64> = items.map(|item| hasher.hash_one(&item)).collect();
        collect_hashes(&hashes, hasher, |filter: &Self| {
            hashes
                .chunks(BLOCK)
                .all(|block| filter.core().insert_block(block).is_ok())
        })
    }
}

/// Inserts every item (see [`CuckooFilter::try_extend`]).
///
/// # Panics
///
/// If an item cannot be inserted, as [`try_extend`](CuckooFilter::try_extend) fails: it finds no
/// room (dropping it would make a false negative), the filter is a live file opened read-only,
/// or a count window is at its end.
impl<K: Kind, T: Hash, S: BuildHasher> Extend<T> for &CuckooFilter<K, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        if let Err(err) = self.try_extend(items) {
            panic!("{}::extend: {err}", K::NAME);
        }
    }
}

/// Inserts every item; see the impl for `&CuckooFilter`.
impl<K: Kind, T: Hash, S: BuildHasher> Extend<T> for CuckooFilter<K, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        (&*self).extend(items);
    }
}
