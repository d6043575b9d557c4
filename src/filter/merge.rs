//! The union of two filters of the same shape and hasher.

use crate::error::MergeError;
use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;

impl<K: Kind, S: PartialEq> CuckooFilter<K, S> {
    /// Whether [`merge`](Self::merge) can merge `other` into this filter: an equal hasher (seed
    /// included) and table shape (buckets, bucket size, fingerprint width, semi-sorting; a
    /// growable filter's plan, and the buckets of each level `other` has, which a `max_capacity`
    /// that cuts a level changes); capacity, stripes and search limits may differ.
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

    /// Inserts every item of `other` into this filter, as if every insert into either had been
    /// made into it; returns how many fingerprints went in (copies add up in [`len`](Self::len)).
    ///
    /// Each fingerprint goes through the ordinary insert to the same buckets, so others may use
    /// this filter meanwhile. `other` is read a bucket at a time: merge from a filter no one
    /// writes to, or a fingerprint moved across the scan may be merged twice or not at all (by a
    /// growable filter's split: twice, never not at all).
    ///
    /// A growable filter puts each fingerprint into its level in `other`, adding levels first;
    /// two filters whose levels are full together do not fit one (a level holds at most
    /// `2^split_depth` times its first size): the merge stops as full.
    ///
    /// # Errors
    ///
    /// [`MergeError::Geometry`] or [`MergeError::Hasher`] if the filters are not
    /// [compatible](Self::is_compatible): nothing was merged. [`MergeError::Full`] if a
    /// fingerprint found no room: the ones before it stay merged, nothing is half-inserted.
    pub fn merge(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, false)
    }

    /// [`merge`](Self::merge) as a set union: each fingerprint inserted as by
    /// [`insert_unique`](Self::insert_unique) (in a growable filter, checked in its own level).
    ///
    /// # Errors
    ///
    /// As for [`merge`](Self::merge).
    pub fn merge_unique(&self, other: &Self) -> Result<usize, MergeError> {
        self.merge_with(other, true)
    }

    fn merge_with(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        self.check_compatible(other)?;
        self.core().merge_from(other.core(), unique)
    }
}
