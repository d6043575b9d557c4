//! rayon's parallel extend and collect for [`GrowableCuckooFilter`], a block at a time.

use core::hash::{BuildHasher, Hash};

use crate::error::ExtendError;
use crate::error::InsertError;
use crate::growable::GrowableCuckooFilter;
use crate::raw::BLOCK;
use core::sync::atomic::{AtomicUsize, Ordering};
use rayon::iter::{FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};

impl<S: BuildHasher + Sync> GrowableCuckooFilter<S> {
    /// Inserts every item of a parallel iterator on rayon's threads, each a block at a
    /// time as [`try_extend`](Self::try_extend) does, adding levels as they fill.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    /// use rayon::prelude::*;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(1000);
    /// assert_eq!(filter.try_par_extend((0..100_000u64).into_par_iter()), Ok(100_000));
    /// assert_eq!(filter.len(), 100_000);
    /// ```
    ///
    /// # Errors
    ///
    /// Stops soon after the first item that cannot be inserted; the items that went in
    /// stay, and [`ExtendError::inserted`] counts them.
    pub fn try_par_extend<I>(&self, items: I) -> Result<usize, ExtendError>
    where
        I: IntoParallelIterator,
        I::Item: Hash,
    {
        let inserted = AtomicUsize::new(0);
        let flush = |block: &mut Vec<u64>| {
            let result = self.insert_block(block);
            let n = result.unwrap_or_else(|n| n);
            inserted.fetch_add(n, Ordering::Relaxed);
            block.clear();
            result.map(drop).map_err(|_| InsertError::Full)
        };
        let result = items
            .into_par_iter()
            .try_fold(
                || Vec::with_capacity(BLOCK),
                |mut block, item| {
                    block.push(self.hasher().hash_one(&item));
                    if block.len() == BLOCK {
                        flush(&mut block)?;
                    }
                    Ok(block)
                },
            )
            .try_for_each(|block: Result<Vec<u64>, InsertError>| flush(&mut block?));
        let inserted = inserted.into_inner();
        result
            .map(|()| inserted)
            .map_err(|_| ExtendError::full(inserted, None))
    }
}

/// Inserts every item on rayon's threads (see [`GrowableCuckooFilter::try_par_extend`]).
///
/// # Panics
///
/// If an item cannot be inserted. Use `try_par_extend` to handle that.
impl<T: Hash + Send, S: BuildHasher + Sync> ParallelExtend<T> for &GrowableCuckooFilter<S> {
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, items: I) {
        if let Err(err) = self.try_par_extend(items) {
            panic!("GrowableCuckooFilter::par_extend: {err}");
        }
    }
}

/// Inserts every item on rayon's threads; see the impl for `&GrowableCuckooFilter`.
impl<T: Hash + Send, S: BuildHasher + Sync> ParallelExtend<T> for GrowableCuckooFilter<S> {
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, items: I) {
        (&*self).par_extend(items);
    }
}

/// Builds a filter from a parallel iterator on all of rayon's threads: a first level sized
/// for the iterator's length when it knows it (else 1,024 items), grown as the items come.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
/// use rayon::prelude::*;
///
/// let filter: GrowableCuckooFilter = (0..100_000u64).into_par_iter().collect();
/// assert_eq!(filter.len(), 100_000);
/// ```
///
/// # Panics
///
/// As [`FromIterator`].
impl<T: Hash + Send, S: BuildHasher + Default + Sync> FromParallelIterator<T>
    for GrowableCuckooFilter<S>
{
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(items: I) -> Self {
        let items = items.into_par_iter();
        let capacity = items.opt_len().unwrap_or(1024).max(1);
        let mut filter = Self::with_capacity_and_hasher(capacity, S::default());
        filter.par_extend(items);
        filter
    }
}
