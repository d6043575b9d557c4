//! The public filter: hashing and types over the raw core.

use core::fmt;
use core::hash::{BuildHasher, Hash};

use crate::error::InsertError;
use crate::hash::DefaultHashBuilder;
use crate::hooks::DebugCandidates;
use crate::raw::{Insertion, RawFilter};

/// A cuckoo filter that many threads can use at once, through `&self`.
///
/// It answers "might this item have been inserted?" with no false negatives and a small, tunable
/// rate of false positives, and unlike a Bloom filter it can delete. Share it with [`Arc`]:
/// lookups are optimistic and, unless writers keep getting in their way, take no lock (see
/// [Consistency](Self#consistency)); inserts and removes lock only the stripes of the two buckets
/// they touch.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
/// use std::sync::Arc;
///
/// let filter = Arc::new(ConcurrentCuckooFilter::with_capacity(100_000));
/// let handles: Vec<_> = (0..2u64)
///     .map(|t| {
///         let filter = Arc::clone(&filter);
///         std::thread::spawn(move || {
///             for i in (t * 50_000)..((t + 1) * 50_000) {
///                 filter.insert(&i).unwrap();
///             }
///         })
///     })
///     .collect();
/// for handle in handles {
///     handle.join().unwrap();
/// }
/// assert_eq!(filter.len(), 100_000);
/// assert!((0..100_000u64).all(|i| filter.contains(&i)));
/// assert!(filter.remove(&7u64));
/// ```
///
/// # Consistency
///
/// Every operation is linearizable with respect to the item it names: [`insert`] that returned
/// `Ok`, then [`contains`] of the same item in any thread that observes that return, answers
/// true until a [`remove`] of it, even while other threads move its fingerprint between its two
/// buckets to make room. A lookup that races an insert or remove of the same item may see the
/// filter either before or after it. [`len`] sums per-stripe counts one after another, so while
/// writes are in flight it may count some of them and not others; it is exact when none are.
///
/// A lookup ([`contains`], [`count`], [`contains_batch`]) is optimistic. Buckets are guarded by
/// striped seqlocks: it loads the stamps of its two buckets' stripes, reads the two buckets and
/// loads the stamps again, and answers only if neither stripe was locked or changed meanwhile. In
/// the common case that is all it does: it takes no lock, writes no shared memory and never
/// waits. If writers keep changing its stripes, after 9 failed tries it takes the two stripe
/// locks, as a writer would, and so waits for the writers holding them; a reader cannot starve.
/// With [`TableLayout::BucketWord`](crate::TableLayout::BucketWord) a [`contains`] reads no
/// stamps: it loads its two bucket words and answers a hit at once, and a miss once the first
/// word, loaded again, is unchanged (its version moves on every store); after 9 tries that saw
/// it change, it too takes the two stripe locks.
/// While every stripe is locked, by [`to_bytes`] (and the other encoders) copying the table or by
/// an insert whose optimistic attempts racing writers kept spoiling, a lookup waits until the
/// locks are released.
///
/// [`insert`] returns `Err(Full)` only if the item had no room at one moment during the call: no
/// empty slot in its two buckets and no short enough chain of moves to one. The search for such a
/// chain reads buckets without locks; before the insert reports that there is none, a search
/// that checks the stamps of every stripe it read must find none too, and when one moved the
/// insert tries again. After 64 attempts spoiled by racing writers, it locks every stripe, in the
/// order all writers lock them, and decides under those locks.
///
/// As in any cuckoo filter, `remove` must only be called for items that were inserted: removing
/// an item that was never inserted may remove a different item that shares its fingerprint and
/// bucket, and that item would then be reported absent (paper Section 3.3).
///
/// There is no `PartialEq`: two filters of the same items can hold their fingerprints in
/// different slots (where racing inserts and moves put them), so comparing tables would call
/// them unequal, and comparing them while other threads write would answer for no one moment;
/// compare [`to_bytes`] of filters built alike if that is what you need.
///
/// [`Arc`]: std::sync::Arc
/// [`insert`]: Self::insert
/// [`contains`]: Self::contains
/// [`remove`]: Self::remove
/// [`len`]: Self::len
/// [`count`]: Self::count
/// [`contains_batch`]: Self::contains_batch
/// [`to_bytes`]: Self::to_bytes
pub struct ConcurrentCuckooFilter<S = DefaultHashBuilder> {
    raw: RawFilter,
    hasher: S,
    capacity: usize,
}

impl<S> ConcurrentCuckooFilter<S> {
    pub(crate) fn raw(&self) -> &RawFilter {
        &self.raw
    }

    pub(crate) fn from_raw(raw: RawFilter, hasher: S, capacity: usize) -> Self {
        Self {
            raw,
            hasher,
            capacity,
        }
    }

    /// Items stored (each copy of a duplicate counts). Exact when no write is in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the filter holds no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every item, while other threads go on using the filter; its table and capacity
    /// stay.
    ///
    /// It takes every stripe lock, in index order as [`to_bytes`] does, empties every bucket
    /// and count, and releases them. Writers and lookups that meet a locked stripe wait
    /// meanwhile. Each write is entirely before the clear (and emptied by it) or entirely
    /// after: an insert that returns `Ok` after `clear` returned is found until it is
    /// removed, and [`len`] counts exactly the writes after the clear once none is in flight.
    /// A lookup racing the clear may find an item inserted before it or not, and a remove
    /// racing it may return `false`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.try_extend(0..500u64)?;
    /// filter.clear();
    /// assert!(filter.is_empty());
    /// assert!(!filter.contains(&7u64));
    /// assert_eq!(filter.capacity(), ConcurrentCuckooFilter::with_capacity(1000).capacity());
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    ///
    /// [`to_bytes`]: Self::to_bytes
    /// [`len`]: Self::len
    pub fn clear(&self) {
        self.raw.lock_table().clear();
    }

    /// Items the table is sized for: the most `n` for which the sizing rule of
    /// [`capacity`](crate::ConcurrentCuckooFilterBuilder::capacity) gives no more buckets than
    /// the table has, so any `capacity()` distinct items fit. At least the capacity asked for:
    /// more by the rounding up to whole buckets (600,001 for 600,000: 157,895 buckets of 4
    /// slots at 95%), and in a small table, whose sizing adds slack, it reports less than the
    /// items most key sets fit (12 for a table of 64 slots that most take 56 to 64 of).
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of memory the filter uses: its table, its stripes and itself.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.raw.memory_usage()
    }

    /// The share of slots in use, from 0 to 1.
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / (self.raw.bucket_count() * self.raw.bucket_size()) as f64
    }

    /// Bits per fingerprint.
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        self.raw.fingerprint_bits()
    }

    /// Slots per bucket.
    #[must_use]
    pub fn bucket_size(&self) -> usize {
        self.raw.bucket_size()
    }

    /// Whether buckets are semi-sorted (see [`ConcurrentCuckooFilterBuilder::semi_sorted`](crate::ConcurrentCuckooFilterBuilder::semi_sorted)).
    #[must_use]
    pub fn is_semi_sorted(&self) -> bool {
        self.raw.is_semi_sorted()
    }

    /// How the table holds its buckets (see [`ConcurrentCuckooFilterBuilder::layout`](crate::ConcurrentCuckooFilterBuilder::layout)).
    #[must_use]
    pub fn layout(&self) -> crate::TableLayout {
        if self.raw.has_bucket_words() {
            crate::TableLayout::BucketWord
        } else {
            crate::TableLayout::Packed
        }
    }

    /// The false positive rate the configuration gives at the load it was sized for (84%, 95%
    /// or 97% for 2, 4 or 8 slots): `1 − (1 − 1/(2^f − 1))^(2·b·α)`, about `2·b·α/2^f`.
    #[must_use]
    pub fn expected_false_positive_rate(&self) -> f64 {
        self.raw.geometry().shape.expected_false_positive_rate()
    }

    /// Buckets in the table.
    #[must_use]
    pub fn bucket_count(&self) -> usize {
        self.raw.bucket_count()
    }

    /// The hasher items are hashed with.
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<S: BuildHasher> ConcurrentCuckooFilter<S> {
    /// Inserts one copy of `item`.
    ///
    /// Inserting the same item again stores another copy, as in the paper; each copy needs its
    /// own [`remove`](Self::remove). On `Err` nothing changed: no item was dropped to make room.
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] if neither of the item's buckets has room and no short chain of
    /// moves can make some, as happens near capacity, or to the `2 · bucket_size + 1`-th copy
    /// of one item (the `bucket_size + 1`-th if its two buckets are one bucket, as for about
    /// one item in [`bucket_count`](Self::bucket_count)); also while other threads write, `Full` means the item had no room (see
    /// [Consistency](Self#consistency)).
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        match self.raw.insert(self.hasher.hash_one(item), false) {
            Insertion::Full => Err(InsertError::Full),
            _ => Ok(()),
        }
    }

    /// Inserts `item` unless it (or an item with the same fingerprint and buckets) is already
    /// present: `Ok(true)` if inserted, `Ok(false)` if it was there. The check and the insert are
    /// one atomic step with respect to every other operation, so threads racing to
    /// `insert_unique` one item insert it exactly once: a stream deduplicator.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let seen = ConcurrentCuckooFilter::with_capacity(1000);
    /// assert_eq!(seen.insert_unique("a"), Ok(true));
    /// assert_eq!(seen.insert_unique("a"), Ok(false));
    /// assert_eq!(seen.count("a"), 1);
    /// ```
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] as for [`insert`](Self::insert), when the item is absent and finds
    /// no room; nothing changed then.
    pub fn insert_unique<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        match self.raw.insert(self.hasher.hash_one(item), true) {
            Insertion::Inserted => Ok(true),
            Insertion::Present => Ok(false),
            Insertion::Full => Err(InsertError::Full),
        }
    }

    /// Whether `item` may have been inserted: always true if it was (and not removed since),
    /// true with a small probability if it was not. Optimistic: no lock in the common case (see
    /// [Consistency](Self#consistency) for when it takes locks or waits).
    #[inline(always)]
    #[must_use]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.raw.contains(self.hasher.hash_one(item))
    }

    /// How many copies of `item`'s fingerprint its two buckets hold: the number of times it was
    /// inserted and not removed, plus any other items that share its fingerprint and a bucket.
    /// Reads the buckets as [`contains`](Self::contains) does.
    #[must_use]
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.raw.count(self.hasher.hash_one(item))
    }

    test_hook! {
        /// The fingerprint and the two buckets `item` maps to, to build collisions on purpose.
        fn debug_candidates<T: Hash + ?Sized>(&self, item: &T) -> DebugCandidates {
            self.raw.debug_candidates(self.hasher.hash_one(item)).into()
        }
    }

    /// Removes one copy of `item`; `false` if none was found. Only remove items that were
    /// inserted (see [Consistency](Self#consistency)).
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.raw.remove(self.hasher.hash_one(item))
    }
}

/// A consistent copy: the table is copied while every stripe lock is held, as [`to_bytes`]
/// holds them, so the copy is a state the filter really had, even while other threads write;
/// they wait for the copy in memory.
///
/// # Panics
///
/// If the copy's memory cannot be had, as other collections' `clone` fails.
///
/// [`to_bytes`]: ConcurrentCuckooFilter::to_bytes
impl<S: Clone> Clone for ConcurrentCuckooFilter<S> {
    fn clone(&self) -> Self {
        let Some(raw) = self.raw.lock_table().duplicate() else {
            panic!(
                "out of memory for a copy of a filter of {} bytes",
                self.memory_usage()
            )
        };
        Self::from_raw(raw, self.hasher.clone(), self.capacity)
    }
}

/// [`with_capacity_and_hasher`](ConcurrentCuckooFilter::with_capacity_and_hasher)`(0,
/// S::default())`: an empty filter of the smallest table, as an empty `HashMap` is its
/// default. A fixed filter does not grow: size it with `with_capacity` when the count is
/// known, or take [`GrowableCuckooFilter::default`](crate::GrowableCuckooFilter).
impl<S: Default> Default for ConcurrentCuckooFilter<S> {
    fn default() -> Self {
        Self::with_capacity_and_hasher(0, S::default())
    }
}

impl<S> fmt::Debug for ConcurrentCuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrentCuckooFilter")
            .field("len", &self.len())
            .field("capacity", &self.capacity)
            .field("fingerprint_bits", &self.raw.fingerprint_bits())
            .field("bucket_size", &self.raw.bucket_size())
            .field("semi_sorted", &self.raw.is_semi_sorted())
            .field("buckets", &self.raw.bucket_count())
            .field("stripes", &self.raw.stripe_count())
            .finish_non_exhaustive()
    }
}
