//! The public filter, one struct over every kind: hashing and types over the kind's hashes, and
//! each layer written once over [`Kind`] (`bulk.rs`, `prehashed.rs`, `merge.rs`, `bytes.rs`),
//! beside the trait (`kind.rs`) and the fixed kind (`fixed.rs`, `builder.rs`).

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

/// A cuckoo filter of kind `K` that many threads can use at once, through `&self`, hashing
/// items with `S`. Users name it by its kind: [`ConcurrentCuckooFilter`] (one table, sized
/// once) or [`GrowableCuckooFilter`] (levels added as it fills); each alias's docs say how its
/// kind behaves under concurrency.
///
/// It answers "might this item have been inserted?" with no false negatives and a small, tunable
/// rate of false positives, and unlike a Bloom filter it can delete. Every item is hashed once,
/// before the kind sees it, so no `Hash` impl runs under the filter's locks.
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
    /// A filter for `capacity` items with the default configuration and hasher. A fixed filter
    /// takes the paper's: 4-slot buckets and 12-bit fingerprints, each bucket in a 64-bit word of
    /// its own ([`TableLayout::BucketWord`](crate::TableLayout::BucketWord)), about 17 bits per
    /// item and a false positive rate under 0.2% when holding `capacity` items. A growable
    /// filter's first level holds them, at the default target false positive rate (0.1%), and it
    /// grows past them. A capacity of 0 builds the smallest table.
    ///
    /// # Panics
    ///
    /// If `capacity` is too large to address. Use the kind's `builder` to get an error instead.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, DefaultHashBuilder::new())
    }
}

impl<K: Kind, S> CuckooFilter<K, S> {
    /// [`with_capacity`](CuckooFilter::with_capacity) with items hashed by `hasher`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter};
    ///
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let hasher = DefaultHashBuilder::with_seed(7);
    /// let filter = ConcurrentCuckooFilter::with_capacity_and_hasher(1000, hasher);
    /// filter.insert("a")?;
    /// assert!(filter.contains("a"));
    /// assert_eq!(filter.hasher().seed(), 7);
    ///
    /// let hasher = DefaultHashBuilder::with_seed(7);
    /// let filter = GrowableCuckooFilter::with_capacity_and_hasher(10, hasher);
    /// filter.try_extend(0..100u32)?;
    /// assert!(filter.contains(&99u32));
    /// assert_eq!(filter.hasher().seed(), 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `capacity` is too large to address. Use the builder's `hasher` to get an error instead.
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

    /// Removes every item, while other threads go on using the filter; its tables and capacity
    /// stay (a growable filter keeps its levels and chunks, as a `Vec` keeps its allocation).
    ///
    /// It takes every stripe lock (of every chunk of every level), in index order as
    /// [`to_bytes`](CuckooFilter::to_bytes) does, empties every bucket and count, and releases
    /// them. Writers and lookups that meet a locked stripe wait meanwhile. Each write is
    /// entirely before the clear (and emptied by it) or entirely after: an insert that returns
    /// `Ok` after `clear` returned is found until it is removed, and [`len`](Self::len) counts
    /// exactly the writes after the clear once none is in flight. A lookup racing the clear may
    /// find an item inserted before it or not, and a remove racing it may return `false`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.try_extend(0..500u64)?;
    /// filter.clear();
    /// assert!(filter.is_empty());
    /// assert!(!filter.contains(&7u64));
    /// assert_eq!(filter.capacity(), ConcurrentCuckooFilter::with_capacity(1000).capacity());
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(100);
    /// filter.try_extend(0..10_000u64)?;
    /// let capacity = filter.capacity();
    /// filter.clear();
    /// assert!(filter.is_empty() && !filter.contains(&7u64));
    /// assert_eq!(filter.capacity(), capacity);
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    pub fn clear(&self) {
        self.core.clear();
    }

    /// Items the filter is sized for: the most `n` for which the sizing rule of
    /// [`capacity`](crate::ConcurrentCuckooFilterBuilder::capacity) gives no more buckets than
    /// the table has, so any `capacity()` distinct items fit. At least the capacity asked for:
    /// more by the rounding up to whole buckets (600,001 for 600,000: 157,895 buckets of 4 slots
    /// at 95%), and in a small table, whose sizing adds slack, less than most key sets fit (12
    /// for a table of 64 slots that most take 56 to 64 of). A growable filter's is its levels'
    /// so far together, and it grows past it.
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

    /// The false positive rate the filter expects. A fixed filter's, at the load it was sized
    /// for (84%, 95% or 97% for 2, 4 or 8 slots): `1 − (1 − 1/(2^f − 1))^(2·b·α)`, about
    /// `2·b·α/2^f`. A growable filter's, as it is now: the sum over its levels of the rate a
    /// lookup meets in each, from the items each chunk holds and the fingerprint bits it compares,
    /// below its [`false_positive_rate`](crate::GrowableCuckooFilter::false_positive_rate) by construction.
    #[must_use]
    pub fn expected_false_positive_rate(&self) -> f64 {
        self.core.expected_false_positive_rate()
    }
}

impl<K: Kind, S: BuildHasher> CuckooFilter<K, S> {
    /// Inserts one copy of `item` (into a growable filter's newest level, adding a level first
    /// if it is full).
    ///
    /// Inserting the same item again stores another copy, as in the paper; each copy needs its
    /// own [`remove`](Self::remove). On `Err` nothing changed: no item was dropped to make room
    /// (a growable filter may have added an empty level or chunk).
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] if the item finds no room: in a fixed filter, when neither of its
    /// buckets has room and no short chain of moves can make some, as happens near capacity
    /// (also while other threads write, `Full` means the item had no room: see
    /// [Consistency](crate::ConcurrentCuckooFilter#consistency)); in a growable filter only when
    /// no level can be added (past its `max_capacity`, past 32-bit fingerprints, or out of
    /// memory). In both, copies of the item's own fingerprint that fill both its buckets (the
    /// `2 · bucket_size + 1`-th copy of one item, the `bucket_size + 1`-th if its two buckets are
    /// one bucket, as for about one item in `bucket_count`) make it `Full`.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        self.core
            .insert(self.hasher.hash_one(item), false)
            .map(drop)
    }

    /// Inserts `item` unless it (or an item with the same fingerprint and buckets, in any level)
    /// is already present: `Ok(true)` if inserted, `Ok(false)` if it was there. The check and
    /// the insert are one atomic step with respect to every other operation, so threads racing
    /// to `insert_unique` one item insert it exactly once (in one level, also while levels are
    /// added): a stream deduplicator.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
    ///
    /// let seen = ConcurrentCuckooFilter::with_capacity(1000);
    /// assert_eq!(seen.insert_unique("a"), Ok(true));
    /// assert_eq!(seen.insert_unique("a"), Ok(false));
    /// assert_eq!(seen.count("a"), 1);
    ///
    /// let seen = GrowableCuckooFilter::with_capacity(10);
    /// let fresh = (0..1000u32).filter(|key| seen.insert_unique(key) == Ok(true)).count();
    /// // A key whose fingerprint an earlier key already shows is taken as seen: a false
    /// // positive, at a rate under the target 0.1%.
    /// assert!(fresh >= 995, "{fresh}");
    /// assert_eq!(seen.len(), fresh);
    /// ```
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] as for [`insert`](Self::insert), when the item is absent and finds
    /// no room; nothing changed then.
    pub fn insert_unique<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        self.core.insert(self.hasher.hash_one(item), true)
    }

    /// Whether `item` may have been inserted: always true if it was (and not removed since),
    /// true with a small probability if it was not. Optimistic: no lock in the common case (see
    /// [Consistency](crate::ConcurrentCuckooFilter#consistency) for when a fixed filter's takes
    /// locks or waits; a growable filter's never waits for growth).
    #[inline(always)]
    #[must_use]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.core.contains(self.hasher.hash_one(item))
    }

    /// How many copies of `item`'s fingerprint its buckets hold (over all levels): the number of
    /// times it was inserted and not removed, plus any other items that share its fingerprint
    /// and a bucket. Reads the buckets as [`contains`](Self::contains) does.
    #[must_use]
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.core.count(self.hasher.hash_one(item))
    }

    /// Removes one copy of `item`; `false` if none was found. Only remove items that were
    /// inserted (see [Consistency](crate::ConcurrentCuckooFilter#consistency)). A growable
    /// filter also refuses, with `false`, when more than one level holds the item's fingerprint:
    /// the copy could be another item's (see its
    /// [Consistency](crate::GrowableCuckooFilter#consistency)).
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.core.remove(self.hasher.hash_one(item))
    }
}

/// A consistent copy: every table is copied while all its stripe locks are held, as
/// [`to_bytes`](CuckooFilter::to_bytes) holds them, so the copy is a state the filter really
/// had, even while other threads write; they wait for the copy in memory.
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

/// [`with_capacity_and_hasher`](CuckooFilter::with_capacity_and_hasher)`(0, S::default())`: an
/// empty filter of the smallest table (a growable filter's smallest first level, which grows as
/// items come), as an empty `HashMap` is its default. A fixed filter does not grow: size it with
/// `with_capacity` when the count is known, or take a `GrowableCuckooFilter`.
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
