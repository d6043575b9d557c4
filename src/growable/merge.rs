//! The union of two growable filters of the same plan and hasher.
//!
//! Two filters built by the same plan shape every level alike: the same chunk bucket count,
//! core bits and route bits. A fingerprint of the source's level `i` is known without its key by
//! its core, its whole route (the chunk id's bits, then the route bits the fingerprint still
//! carries) and its bucket, which place it in the target's level `i`, however differently the
//! two levels have split.

use super::split::Placed;
use super::GrowableCuckooFilter;
use crate::error::MergeError;
use crate::raw::Insertion;

impl<S: PartialEq> GrowableCuckooFilter<S> {
    /// Whether [`merge`](Self::merge) would take `other`: the same plan (capacity, rate, split
    /// depth and level shape) and an equal hasher.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let a = GrowableCuckooFilter::with_capacity(1000);
    /// let b = GrowableCuckooFilter::with_capacity(1000);
    /// assert!(a.is_compatible(&b));
    /// // Both first levels were raised to one chunk (3,891 items): the same plan.
    /// assert!(a.is_compatible(&GrowableCuckooFilter::with_capacity(2000)));
    /// assert!(!a.is_compatible(&GrowableCuckooFilter::with_capacity(100_000)));
    /// ```
    #[must_use]
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.check_compatible(other).is_ok()
    }

    fn check_compatible(&self, other: &Self) -> Result<(), MergeError> {
        let (ours, theirs) = (self.plan(), other.plan());
        let (our_chunks, their_chunks) =
            (self.levels.first().shape(), other.levels.first().shape());
        let (our_shape, our_routes) = (our_chunks.template, our_chunks.route_bits);
        let (their_shape, their_routes) = (their_chunks.template, their_chunks.route_bits);
        let fields = [
            (
                "initial_capacity",
                ours.initial_capacity as u64,
                theirs.initial_capacity as u64,
            ),
            (
                "false_positive_rate",
                ours.false_positive_rate.to_bits(),
                theirs.false_positive_rate.to_bits(),
            ),
            (
                "split_depth",
                ours.split_depth.into(),
                theirs.split_depth.into(),
            ),
            (
                "buckets",
                our_shape.shape.bucket_count as u64,
                their_shape.shape.bucket_count as u64,
            ),
            (
                "bucket_size",
                our_shape.shape.bucket_size as u64,
                their_shape.shape.bucket_size as u64,
            ),
            (
                "fingerprint_bits",
                our_shape.shape.fingerprint_bits.into(),
                their_shape.shape.fingerprint_bits.into(),
            ),
            (
                "semi_sorted",
                our_shape.shape.semi_sorted.into(),
                their_shape.shape.semi_sorted.into(),
            ),
            ("route_bits", our_routes.into(), their_routes.into()),
        ];
        if let Some((field, target, source)) = fields.into_iter().find(|(_, a, b)| a != b) {
            return Err(MergeError::Geometry {
                field,
                target,
                source,
            });
        }
        if self.hasher() != other.hasher() {
            return Err(MergeError::Hasher);
        }
        Ok(())
    }

    /// Inserts every fingerprint of `other` into this filter, each into the level it has in
    /// `other` (levels `other` has and this filter has not yet are added first), while other
    /// threads use both. Returns how many went in.
    ///
    /// A level holds at most `2^split_depth` times its first size, and a fingerprint of level
    /// `i` can go to level `i` only (it carries no more of its key's hash): so two filters whose
    /// levels are full together do not fit one, and the merge stops as full. Merge filters
    /// whose levels fit (a larger first capacity, or fewer items per filter).
    ///
    /// A filter merged into itself merges a copy of what it held when the merge started. A
    /// source that other threads write meanwhile may have a fingerprint moved by a split seen
    /// twice, never not at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let a = GrowableCuckooFilter::with_capacity(1000);
    /// let b = GrowableCuckooFilter::with_capacity(1000);
    /// a.try_extend(0..20_000u64)?;
    /// b.try_extend(20_000..200_000u64)?;
    /// assert_eq!(a.merge(&b), Ok(180_000));
    /// assert_eq!(a.len(), 200_000);
    /// assert!((0..200_000u64).all(|key| a.contains(&key)));
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`MergeError::Geometry`] or [`MergeError::Hasher`] if the filters are not compatible,
    /// before anything is merged; [`MergeError::Full`] if a level could not be added or a
    /// fingerprint found no room in its level (its chunk split as deep as it can, past the
    /// limit, or copies of it filling its buckets): the fingerprints merged before it stay.
    pub fn merge(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, false)
    }

    /// [`merge`](Self::merge), inserting a fingerprint only where its level does not show it
    /// in its buckets already: the union of two sets, exactly once per level. (An item inserted
    /// into different levels of the two filters keeps a copy in each.)
    ///
    /// # Errors
    ///
    /// As for [`merge`](Self::merge).
    pub fn merge_unique(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, true)
    }

    fn merge_with(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        self.check_compatible(other)?;
        while self.levels.count() < other.levels.count() {
            if !self.levels.grow(self.levels.count() - 1) {
                return Err(MergeError::Full { merged: 0 });
            }
        }
        let mut merged = 0;
        let mut put = |level: usize, placed: Placed| {
            let inserted = self.levels.level(level).insert_placed(placed, unique);
            match inserted.unwrap_or(Insertion::Full) {
                Insertion::Inserted => merged += 1,
                Insertion::Present => {}
                Insertion::Full => return Err(MergeError::Full { merged }),
            }
            Ok(())
        };
        let levels = 0..other.levels.count();
        if core::ptr::eq(self, other) {
            // Its own new fingerprints must not be met again: a copy of them first.
            let copy: Vec<(usize, Placed)> = levels
                .flat_map(|level| {
                    let chunks = other.levels.level(level).placed_fingerprints();
                    chunks.map(move |placed| (level, placed))
                })
                .collect();
            for (level, placed) in copy {
                put(level, placed)?;
            }
        } else {
            for level in levels {
                for placed in other.levels.level(level).placed_fingerprints() {
                    put(level, placed)?;
                }
            }
        }
        Ok(merged)
    }
}
