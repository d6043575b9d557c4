//! The public filter, one struct over every kind: it hashes keys and types the kind's answers,
//! each layer written once over [`Kind`]; the fixed kind beside it (docs/architecture.md).

pub(crate) mod builder;
pub(crate) mod bulk;
mod bytes;
pub(crate) mod fixed;
pub(crate) mod kind;
mod merge;
mod prehashed;
#[cfg(all(target_os = "linux", not(loom)))]
mod shared;

use core::fmt;
use core::hash::{BuildHasher, Hash};

use self::kind::Kind;
use crate::error::InsertError;
use crate::hash::DefaultHashBuilder;

/// A cuckoo filter of kind `K` that many threads use at once through `&self`, hashing items
/// with `S`, once each and with no lock held. Named by its kind, [`ConcurrentCuckooFilter`] (one
/// table, sized once) or [`GrowableCuckooFilter`] (levels added as it fills), whose docs say how
/// it behaves under concurrency.
///
/// [`ConcurrentCuckooFilter`]: crate::ConcurrentCuckooFilter
/// [`GrowableCuckooFilter`]: crate::GrowableCuckooFilter
// `repr(C)`, hasher first: the layout the lookup instruction counts of docs/benchmarks.md hold for.
#[repr(C)]
pub struct CuckooFilter<K, S = DefaultHashBuilder> {
    hasher: S,
    core: K,
}

impl<K, S> CuckooFilter<K, S> {
    pub(crate) fn from_parts(core: K, hasher: S) -> Self {
        Self { core, hasher }
    }

    pub(crate) fn into_parts(self) -> (K, S) {
        (self.core, self.hasher)
    }

    pub(crate) fn core(&self) -> &K {
        &self.core
    }

    /// The hasher items are hashed with.
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<K: Kind> CuckooFilter<K> {
    /// A filter for `capacity` items (0: the smallest table) with the default configuration and
    /// hasher: for a fixed filter 4-slot buckets of 12-bit fingerprints in 64-bit words
    /// ([`TableLayout::BucketWord`](crate::TableLayout::BucketWord)), under 0.2% false positives
    /// when full; for a growable filter a first level of `capacity` items at a 0.1% target rate.
    ///
    /// # Panics
    ///
    /// If `capacity` is too large to address; the kind's `builder` returns an error instead.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, DefaultHashBuilder::new())
    }
}

impl<K: Kind, S> CuckooFilter<K, S> {
    /// [`with_capacity`](CuckooFilter::with_capacity) with items hashed by `hasher`.
    ///
    /// # Panics
    ///
    /// As [`with_capacity`](CuckooFilter::with_capacity).
    #[must_use]
    pub fn with_capacity_and_hasher(capacity: usize, hasher: S) -> Self {
        let (core, hasher) = K::with_capacity(capacity.max(1), hasher);
        Self { core, hasher }
    }

    /// Items stored (each copy of a duplicate counts; in a growable filter, in all levels).
    /// Exact when no write is in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether the filter holds no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every item, keeping the tables (and a growable filter's levels), under every
    /// stripe lock as [`to_bytes`](CuckooFilter::to_bytes) takes them: each write is entirely
    /// before the clear or after it. A lookup or remove racing it may find an earlier item or not.
    pub fn clear(&self) {
        self.core.clear();
    }

    /// Items the filter is sized for, at least the capacity asked for (what fits:
    /// [`capacity`](crate::ConcurrentCuckooFilterBuilder::capacity)); a growable filter's levels'
    /// so far, up to [`max_capacity`](crate::GrowableCuckooFilterBuilder::max_capacity).
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.core.capacity()
    }

    /// Bytes of memory the filter uses: its tables, its locks and itself.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.core.memory_usage()
    }

    /// The share of slots in use (over every level's chunks in a growable filter), from 0 to 1.
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / (self.bucket_count() * self.bucket_size()) as f64
    }

    /// Buckets in the table (of every level's chunks together, in a growable filter).
    #[must_use]
    pub fn bucket_count(&self) -> usize {
        self.core.bucket_count()
    }

    /// Slots per bucket (the same in every level of a growable filter).
    #[must_use]
    pub fn bucket_size(&self) -> usize {
        self.core.bucket_size()
    }

    /// Whether buckets are semi-sorted (see
    /// [`ConcurrentCuckooFilterBuilder::semi_sorted`](crate::ConcurrentCuckooFilterBuilder::semi_sorted)).
    /// Not for the levels a growable filter's builder makes, which keep fingerprints plain.
    #[must_use]
    pub fn is_semi_sorted(&self) -> bool {
        self.core.is_semi_sorted()
    }

    /// The false positive rate the filter expects: a fixed filter's at the load it was sized
    /// for, `1 − (1 − 1/(2^f − 1))^(2·b·α)`, about `2·b·α/2^f`; a growable filter's now, its
    /// levels' sum.
    #[must_use]
    pub fn expected_false_positive_rate(&self) -> f64 {
        self.core.expected_false_positive_rate()
    }
}

impl<K: Kind, S: BuildHasher> CuckooFilter<K, S> {
    /// Inserts one copy of `item` (into a growable filter's newest level, adding one if it is
    /// full). Each copy of a duplicate needs its own [`remove`](Self::remove).
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] if the item finds no room (see
    /// [Consistency](crate::ConcurrentCuckooFilter#consistency); a growable filter: no level to
    /// add), and then nothing changed (but a growable filter's new empty level or chunk); always
    /// for the `2 · bucket_size + 1`-th copy of one item (`bucket_size + 1`-th: one bucket twice).
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        self.core
            .insert(self.hasher.hash_one(item), false)
            .map(drop)
    }

    /// Inserts `item` unless it (or an item of the same fingerprint and buckets, in any level)
    /// is present: `Ok(true)` if inserted, `Ok(false)` if it was there. Check and insert are one
    /// atomic step, so threads racing to `insert_unique` one item insert it once.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert), when the item is absent and finds no room.
    pub fn insert_unique<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        self.core.insert(self.hasher.hash_one(item), true)
    }

    /// Whether `item` may have been inserted: always if it was (and not removed since), with a
    /// small probability if not. Takes no lock in the common case (see
    /// [Consistency](crate::ConcurrentCuckooFilter#consistency)); never waits for growth.
    #[inline(always)]
    #[must_use]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.core.contains(self.hasher.hash_one(item))
    }

    /// Copies of `item`'s fingerprint in its buckets (over all levels), other items' included.
    #[must_use]
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.core.count(self.hasher.hash_one(item))
    }

    /// Removes one copy of `item`; `false` if none was found. Only remove items that were
    /// inserted. A growable filter also answers `false` when several levels hold the item's
    /// fingerprint (see its [Consistency](crate::GrowableCuckooFilter#consistency)).
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.core.remove(self.hasher.hash_one(item))
    }
}

/// A copy of a state the filter really had, taken as [`to_bytes`](CuckooFilter::to_bytes) is.
///
/// # Panics
///
/// If the copy's memory cannot be had, as other collections' `clone` fails.
impl<K: Kind, S: Clone> Clone for CuckooFilter<K, S> {
    fn clone(&self) -> Self {
        let Some(core) = self.core.duplicate() else {
            panic!(
                "out of memory for a copy of a filter of {} bytes",
                self.memory_usage()
            )
        };
        Self::from_parts(core, self.hasher.clone())
    }
}

/// An empty filter of the smallest table, `with_capacity_and_hasher(0, S::default())`; only a
/// growable filter grows from it.
impl<K: Kind, S: Default> Default for CuckooFilter<K, S> {
    fn default() -> Self {
        Self::with_capacity_and_hasher(0, S::default())
    }
}

impl<K: Kind, S> fmt::Debug for CuckooFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct(K::NAME);
        f.field("len", &self.len());
        self.core.debug_fields(&mut f);
        f.finish_non_exhaustive()
    }
}
