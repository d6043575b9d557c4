//! The union of two filters of the same shape and hasher.

use crate::error::MergeError;
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;

impl<K: Kind, S: PartialEq> CuckooFilter<K, S> {
    /// Whether [`merge`](Self::merge) can merge `other` into this filter: an equal hasher (seed
    /// included) and, for fixed filters, the same buckets, bucket size, fingerprint width and
    /// semi-sorting (capacity, stripes and search limits may differ); for growable filters, the
    /// same plan (capacity, rate, split depth and level shape).
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
    ///
    /// let a = ConcurrentCuckooFilter::with_capacity(1000);
    /// assert!(a.is_compatible(&ConcurrentCuckooFilter::with_capacity(1000)));
    /// assert!(!a.is_compatible(&ConcurrentCuckooFilter::with_capacity(100_000)));
    ///
    /// let a = GrowableCuckooFilter::with_capacity(1000);
    /// // Both first levels were raised to one chunk (3,891 items): the same plan.
    /// assert!(a.is_compatible(&GrowableCuckooFilter::with_capacity(2000)));
    /// assert!(!a.is_compatible(&GrowableCuckooFilter::with_capacity(100_000)));
    /// ```
    #[must_use]
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.check_compatible(other).is_ok()
    }

    /// Why `other` cannot be merged into this filter, if it cannot.
    fn check_compatible(&self, other: &Self) -> Result<(), MergeError> {
        self.core().check_compatible(other.core())?;
        if self.hasher() != other.hasher() {
            return Err(MergeError::Hasher);
        }
        Ok(())
    }

    /// Inserts every item of `other` into this filter: afterwards it answers as if every insert
    /// into either had been made into it. Copies add up: an item stored twice in `other` gains
    /// two copies in this one, and [`len`](Self::len) grows by `other.len()`. Returns how many
    /// fingerprints went in.
    ///
    /// No key is rehashed: each fingerprint goes from its bucket in `other` to the same pair of
    /// buckets in this filter, through the ordinary insert, so other threads may insert, look up
    /// and remove in this filter meanwhile with every guarantee they have against each other.
    /// `other` is read one bucket at a time, each bucket consistently; if other threads move
    /// fingerprints in `other` meanwhile, one moved across the scan may be merged twice or not
    /// at all, so merge from a filter no one is writing to. Merging a filter into itself doubles
    /// every item.
    ///
    /// A growable filter puts each fingerprint into the level it has in `other` (levels `other`
    /// has and this filter has not yet are added first). A level holds at most `2^split_depth`
    /// times its first size, and a fingerprint of level `i` can go to level `i` only (it carries
    /// no more of its key's hash): so two filters whose levels are full together do not fit one,
    /// and the merge stops as full. Merge filters whose levels fit (a larger first capacity, or
    /// fewer items per filter). A source other threads write meanwhile may have a fingerprint
    /// moved by a split seen twice, never not at all.
    ///
    /// # Errors
    ///
    /// [`MergeError::Geometry`] or [`MergeError::Hasher`] if the filters are not
    /// [compatible](Self::is_compatible); nothing was merged. [`MergeError::Full`] if this filter
    /// ran out of room: it keeps what it held and the fingerprints merged before the one that
    /// failed, and says how many those were; nothing is lost or half-inserted. A growable filter
    /// is full when a level could not be added or a fingerprint found no room in its level.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter, MergeError};
    ///
    /// let (a, b) = (ConcurrentCuckooFilter::with_capacity(1000), ConcurrentCuckooFilter::with_capacity(1000));
    /// a.insert("apple")?;
    /// b.insert("banana")?;
    /// assert_eq!(a.merge(&b), Ok(1));
    /// assert!(a.contains("apple") && a.contains("banana"));
    ///
    /// let small = ConcurrentCuckooFilter::with_capacity(10);
    /// assert!(matches!(small.merge(&a), Err(MergeError::Geometry { field: "buckets", .. })));
    ///
    /// let (a, b) = (GrowableCuckooFilter::with_capacity(1000), GrowableCuckooFilter::with_capacity(1000));
    /// a.try_extend(0..20_000u64)?;
    /// b.try_extend(20_000..200_000u64)?;
    /// assert_eq!(a.merge(&b), Ok(180_000));
    /// assert_eq!(a.len(), 200_000);
    /// assert!((0..200_000u64).all(|key| a.contains(&key)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn merge(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, false)
    }

    /// [`merge`](Self::merge) as a set union: a fingerprint goes in only if neither of its
    /// buckets in this filter holds it yet (checked and placed under the same locks, as
    /// [`insert_unique`](Self::insert_unique) does). For filters built with `insert_unique`,
    /// the result holds each item once, as if the union of both item sets had been inserted
    /// with `insert_unique`. Returns how many fingerprints went in. A growable filter checks
    /// only the fingerprint's own level: an item inserted into different levels of the two
    /// filters keeps a copy in each.
    ///
    /// # Errors
    ///
    /// As for [`merge`](Self::merge).
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let (a, b) = (ConcurrentCuckooFilter::with_capacity(1000), ConcurrentCuckooFilter::with_capacity(1000));
    /// for key in 0..600u32 {
    ///     a.insert_unique(&key)?;
    /// }
    /// for key in 400..1000u32 {
    ///     b.insert_unique(&key)?;
    /// }
    /// let added = a.merge_unique(&b).unwrap();
    /// assert!(added <= 400 && added > 390, "{added}"); // 400 new keys, less any false positives
    /// assert!((0..1000u32).all(|key| a.contains(&key)));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    pub fn merge_unique(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, true)
    }

    fn merge_with(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        self.check_compatible(other)?;
        self.core().merge_from(other.core(), unique)
    }
}
