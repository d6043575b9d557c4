//! rayon's parallel extend and collect for [`ConcurrentCuckooFilter`], on its pipelined blocks.

use core::hash::{BuildHasher, Hash};

use crate::bulk::{collect_hashes, Pending};
use crate::error::ExtendError;
use crate::error::InsertError;
use crate::filter::ConcurrentCuckooFilter;
use crate::raw::BLOCK;
use core::sync::atomic::{AtomicUsize, Ordering};
use rayon::iter::{FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};
use rayon::slice::ParallelSlice;

impl<S: BuildHasher + Sync> ConcurrentCuckooFilter<S> {
    /// Inserts every item of a parallel iterator on rayon's threads, each thread pipelining
    /// its blocks as [`try_extend`](Self::try_extend) does.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    /// use rayon::prelude::*;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(100_000);
    /// assert_eq!(filter.try_par_extend((0..100_000u64).into_par_iter()), Ok(100_000));
    /// let full = filter.try_par_extend((0..1_000_000u64).into_par_iter().map(|i| i + (1 << 40)));
    /// assert_eq!(full.unwrap_err().inserted(), filter.len() - 100_000);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ExtendError`] soon after the first item that finds no room: the items that went
    /// in stay, and [`ExtendError::inserted`] counts them.
    pub fn try_par_extend<I>(&self, items: I) -> Result<usize, ExtendError>
    where
        I: IntoParallelIterator,
        I::Item: Hash,
    {
        let inserted = AtomicUsize::new(0);
        let flush = |pending: &mut Pending| match pending.flush(self) {
            Ok(n) => {
                inserted.fetch_add(n, Ordering::Relaxed);
                Ok(())
            }
            Err(n) => {
                inserted.fetch_add(n, Ordering::Relaxed);
                Err(InsertError::Full)
            }
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
            .map_err(|_| ExtendError::full(inserted, None))
    }
}

/// Inserts every item on rayon's threads (see
/// [`ConcurrentCuckooFilter::try_par_extend`]).
///
/// # Panics
///
/// If the filter fills up. Use `try_par_extend` to handle a full filter.
impl<T: Hash + Send, S: BuildHasher + Sync> ParallelExtend<T> for &ConcurrentCuckooFilter<S> {
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, items: I) {
        if let Err(err) = self.try_par_extend(items) {
            panic!("ConcurrentCuckooFilter::par_extend: {err}");
        }
    }
}

/// Builds a filter from a parallel iterator on all of rayon's threads, as
/// [`FromIterator`] does: hashes every item in parallel (8 bytes each, held until the filter
/// is sized for their number), then inserts the hashes in parallel.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
/// use rayon::prelude::*;
///
/// let filter: ConcurrentCuckooFilter = (0..100_000u64).into_par_iter().collect();
/// assert_eq!(filter.len(), 100_000);
/// ```
///
/// # Panics
///
/// If one item occurs more than `2 · bucket_size` times (8 with the default configuration),
/// as for [`FromIterator`].
impl<T: Hash + Send, S: BuildHasher + Default + Sync> FromParallelIterator<T>
    for ConcurrentCuckooFilter<S>
{
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(items: I) -> Self {
        let hasher = S::default();
        let hashes: Vec<u64> = items
            .into_par_iter()
            .map(|item| hasher.hash_one(&item))
            .collect();
        collect_hashes(&hashes, hasher, |filter| {
            hashes
                .par_chunks(BLOCK)
                .all(|block| filter.raw().insert_block(block).is_ok())
        })
    }
}
