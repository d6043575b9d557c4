//! rayon's parallel extend and collect for every filter kind, on the blocks of `bulk.rs`.

use core::hash::{BuildHasher, Hash};
use core::sync::atomic::{AtomicUsize, Ordering};

use rayon::iter::{FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};
use rayon::slice::ParallelSlice;

use crate::error::{ExtendError, InsertError};
use crate::filter::bulk::{collect_hashes, Pending};
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::raw::BLOCK;

impl<K: Kind + Sync, S: BuildHasher + Sync> CuckooFilter<K, S> {
    /// [`try_extend`](Self::try_extend) of a parallel iterator, on rayon's threads.
    ///
    /// # Errors
    ///
    /// [`ExtendError`] soon after the first item that finds no room: the items that went in
    /// stay, and [`ExtendError::inserted`] counts them.
    pub fn try_par_extend<I>(&self, items: I) -> Result<usize, ExtendError>
    where
        I: IntoParallelIterator,
        I::Item: Hash,
    {
        let inserted = AtomicUsize::new(0);
        let flush = |pending: &mut Pending| {
            let outcome = pending.flush(self);
            inserted.fetch_add(outcome.unwrap_or_else(|n| n), Ordering::Relaxed);
            outcome.map(drop).map_err(|_| self.core().block_error())
        };
        let result = items
            .into_par_iter()
            .try_fold(Pending::new, |mut pending, item| {
                if pending.push(self.hasher().hash_one(&item)) {
                    flush(&mut pending)?;
                }
                Ok(pending)
            })
            .try_for_each(|pending: Result<Pending, InsertError>| flush(&mut pending?));
        let inserted = inserted.into_inner();
        result
            .map(|()| inserted)
            .map_err(|error| ExtendError::new(error, inserted, None))
    }
}

/// Inserts every item on rayon's threads (see [`CuckooFilter::try_par_extend`]).
///
/// # Panics
///
/// If an item finds no room.
impl<K, T, S> ParallelExtend<T> for &CuckooFilter<K, S>
where
    K: Kind + Sync,
    T: Hash + Send,
    S: BuildHasher + Sync,
{
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, items: I) {
        if let Err(err) = self.try_par_extend(items) {
            panic!("{}::par_extend: {err}", K::NAME);
        }
    }
}

/// Inserts every item on rayon's threads; see the impl for `&CuckooFilter`.
impl<K, T, S> ParallelExtend<T> for CuckooFilter<K, S>
where
    K: Kind + Sync,
    T: Hash + Send,
    S: BuildHasher + Sync,
{
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, items: I) {
        (&*self).par_extend(items);
    }
}

/// Builds a filter from a parallel iterator on rayon's threads, as [`FromIterator`] does; a
/// growable filter starts at the iterator's length if known, else 1,024 items.
///
/// # Panics
///
/// As [`FromIterator`].
impl<K, T, S> FromParallelIterator<T> for CuckooFilter<K, S>
where
    K: Kind + Sync,
    T: Hash + Send,
    S: BuildHasher + Default + Sync,
{
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(items: I) -> Self {
        let items = items.into_par_iter();
        let hasher = S::default();
        if K::GROWS {
            let capacity = items.opt_len().unwrap_or(1024);
            let mut filter = Self::with_capacity_and_hasher(capacity, hasher);
            filter.par_extend(items);
            return filter;
        }
        let hashes: Vec<u64> = items.map(|item| hasher.hash_one(&item)).collect();
        collect_hashes(&hashes, hasher, |filter: &Self| {
            hashes
                .par_chunks(BLOCK)
                .all(|block| filter.core().insert_block(block).is_ok())
        })
    }
}
