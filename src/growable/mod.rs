//! A filter that grows: levels of chunks that split as they fill, each level larger and with
//! wider fingerprints than the one before.

mod builder;
mod bulk;
mod chunk_shape;
mod chunk_slots;
mod chunks;
mod item_locks;
mod levels;
mod merge;
mod persist;
mod prehashed;
mod split;

use core::fmt;
use core::hash::{BuildHasher, Hash};

use self::item_locks::ItemLocks;
use self::split::route_of;
use crate::error::InsertError;
use crate::hash::DefaultHashBuilder;
use crate::hooks::DebugCandidates;
use crate::persist::FilterStats;
use crate::persist::{RecordedHasher, StableHashBuilder};
use crate::raw::{level_hash, Insertion};
use crate::sync::{fence, Ordering};

pub use self::builder::GrowableCuckooFilterBuilder;
use self::chunks::Chunks;
use self::levels::Levels;

/// Levels whose buckets one lookup loads at once.
pub(crate) const PROBE_WINDOW: usize = 8;

/// A concurrent cuckoo filter that grows when it fills, keeping its false positive rate under a
/// target ε however far it grows.
///
/// By default it grows in place, by splitting, as extendible hashing does. A level is a set of
/// chunks, small cuckoo tables of the same shape, and a directory that names, for the first
/// route bits of an item's hash, the chunk holding it. A full chunk is split: the items whose
/// next route bit is 1 go to a new chunk, the others stay. Every fingerprint carries the route
/// bits its chunk may still be split on, and an item's alternate bucket depends only on the rest
/// of its fingerprint, so a split moves each fingerprint to the same bucket of the new chunk,
/// without the item and without a search. A lookup reads one directory pointer and probes one
/// chunk, however far the level has grown, comparing plain fingerprints (a split level does not
/// semi-sort them: a bit more per item, for slots compared in place). The route bits a chunk
/// has not yet been split on are compared too, so the level's false positive rate stays under
/// its cores' and reaches it only once every chunk has split as deep as it can. Once a level's
/// chunks have split [`split_depth`](GrowableCuckooFilterBuilder::split_depth) times (6 by default: the
/// level grew 64×), the next level is added, `2^split_depth` times larger; level `i` has the
/// rate `ε/2^(i+1)`, so the rates of all levels, which a lookup of an absent item adds up, stay
/// below ε. Only the writers of a chunk being split wait for the split, parked.
///
/// Inserts go to the newest level. A lookup in a filter of several levels locates the item in
/// every level and asks the CPU for their buckets at once, then probes them newest first: its
/// cache misses overlap instead of following one another. Each level hashes the item's 64-bit
/// hash again, so that items colliding in one level are independent in the others; the item
/// itself is hashed once.
///
/// [`to_bytes`](Self::to_bytes) and [`from_bytes`](GrowableCuckooFilter::from_bytes) save and
/// load it, plan and levels, in the crate's portable format (`FORMAT.md`).
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
///
/// let filter = GrowableCuckooFilter::builder()
///     .capacity(1_000)
///     .false_positive_rate(0.01)
///     .build()?;
/// for key in 0..100_000u64 {
///     filter.insert(&key)?;
/// }
/// // Grown 100× in place: still one level, one probe per lookup.
/// assert_eq!(filter.level_count(), 1);
/// assert!(filter.capacity() >= 100_000);
/// assert_eq!(filter.len(), 100_000);
/// assert!((0..100_000u64).all(|key| filter.contains(&key)));
/// let false_positives = (100_000..200_000u64).filter(|key| filter.contains(key)).count();
/// assert!(false_positives < 1_000, "{false_positives}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Consistency
///
/// A reader never waits for growth. Levels are only ever added: a reader probes the levels
/// published when it started, and a level published meanwhile holds only items whose inserts had
/// not returned when the reader started. Within a level of chunks, a split keeps every moving
/// fingerprint in the old chunk until the new one is published, and a reader that misses an item
/// in a chunk that a split has since changed looks again in the item's new chunk. So the
/// guarantees of [`ConcurrentCuckooFilter`] hold across growth: an insert that returned `Ok`
/// before a lookup started is found, and a failed insert changes nothing (it may leave a new,
/// empty level, or a split chunk).
///
/// - [`insert_unique`](Self::insert_unique) calls racing on one item insert it once across all
///   levels: each holds a lock of the item's while it checks every level and inserts, and within
///   a level of chunks an item has one chunk, whose stripe locks decide. A plain
///   [`insert`](Self::insert) racing it may add a copy of its own, as it would in any filter.
/// - [`len`](Self::len) adds the levels' counts one after another, oldest first (and a level's
///   chunks in the order they were created): exact when no write is in flight. While writes
///   are, it may count some of them and not others, and while a split is under way it may count
///   the fingerprints it moves twice; but a count that includes a thread's write includes
///   everything that thread wrote before it: an insert that added a level or split a chunk,
///   then a remove, never shows as the remove alone.
/// - [`remove`](Self::remove) removes the item's copy from the one level whose buckets hold its
///   fingerprint. If several levels do, it cannot know which copy is the item's and which
///   belongs to another item that shares its fingerprint in that level (this happens with a
///   probability of about ε), so it removes nothing and returns `false`: the item stays a false
///   positive rather than the other item becoming a false negative. This is also what removing
///   an item inserted twice, once before and once after a level was added, gets.
///
/// As in any cuckoo filter, `remove` must only be called for items that were inserted.
///
/// [`ConcurrentCuckooFilter`]: crate::ConcurrentCuckooFilter
pub struct GrowableCuckooFilter<S = DefaultHashBuilder> {
    levels: Levels,
    item_locks: ItemLocks,
    hasher: S,
}

impl GrowableCuckooFilter {
    /// A filter whose first level holds `capacity` items, with the default target false positive
    /// rate (0.1%), growing by split levels. A capacity of 0 is rounded up to 1.
    ///
    /// # Panics
    ///
    /// If `capacity` is too large to address. Use [`builder`](Self::builder) to get an error
    /// instead.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, DefaultHashBuilder::new())
    }

    /// A [`GrowableCuckooFilterBuilder`] for any other configuration.
    pub fn builder() -> GrowableCuckooFilterBuilder {
        GrowableCuckooFilterBuilder::new()
    }
}

impl<S> GrowableCuckooFilter<S> {
    /// [`with_capacity`](GrowableCuckooFilter::with_capacity) with items hashed by `hasher`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter};
    ///
    /// let hasher = DefaultHashBuilder::with_seed(7);
    /// let filter = GrowableCuckooFilter::with_capacity_and_hasher(10, hasher);
    /// filter.try_extend(0..100u32)?;
    /// assert!(filter.contains(&99u32));
    /// assert_eq!(filter.hasher().seed(), 7);
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `capacity` is too large to address. Use [`GrowableCuckooFilterBuilder::hasher`] to get an error
    /// instead.
    #[must_use]
    pub fn with_capacity_and_hasher(capacity: usize, hasher: S) -> Self {
        match GrowableCuckooFilterBuilder::new()
            .capacity(capacity.max(1))
            .hasher(hasher)
            .build()
        {
            Ok(filter) => filter,
            Err(err) => panic!("a GrowableCuckooFilter for {capacity} items: {err}"),
        }
    }

    pub(crate) fn from_parts(levels: Levels, item_locks: ItemLocks, hasher: S) -> Self {
        Self {
            levels,
            item_locks,
            hasher,
        }
    }

    /// Items stored in all levels (each copy of a duplicate counts). Exact when no write is in
    /// flight.
    #[must_use]
    pub fn len(&self) -> usize {
        // Oldest first, with an acquire fence after each level: a count that shows a write to
        // one level then shows every write its thread made before it, including inserts into
        // any newer level, so that `len` never sees a remove without the insert that preceded it.
        self.levels
            .iter()
            .map(|level| {
                let len = level.len();
                fence(Ordering::Acquire);
                len
            })
            .sum()
    }

    /// Whether the filter holds no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Levels added so far, at least 1.
    #[must_use]
    pub fn level_count(&self) -> usize {
        self.levels.count()
    }

    /// Items the levels added so far are sized for together. The filter grows past it.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.levels.iter().map(Chunks::capacity).sum()
    }

    /// Bytes of memory the filter uses: every level, the item locks and itself.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.levels.iter().map(Chunks::memory_usage).sum::<usize>()
            + self.item_locks.memory_usage()
            + core::mem::size_of::<Self>()
    }

    /// The false positive rate the filter was built to stay under.
    #[must_use]
    pub fn false_positive_rate(&self) -> f64 {
        self.plan().false_positive_rate
    }

    fn plan(&self) -> &levels::Plan {
        self.levels.plan()
    }

    /// The filter's estimate of its own false positive rate as it is now: the sum over its
    /// levels of the rate a lookup meets in each, from the items each chunk holds and the
    /// fingerprint bits it compares (a chunk not yet split as deep as it can be compares its
    /// route bits too). Below [`false_positive_rate`] by construction.
    ///
    /// [`false_positive_rate`]: Self::false_positive_rate
    #[must_use]
    pub fn expected_false_positive_rate(&self) -> f64 {
        self.levels
            .iter()
            .map(Chunks::false_positive_rate_at_load)
            .sum()
    }

    /// Core bits per fingerprint of each level added so far, oldest first: the bits every item
    /// of the level keeps, whatever route bits its chunk still carries. A per-level value, named
    /// apart from [`ConcurrentCuckooFilter::fingerprint_bits`].
    ///
    /// [`ConcurrentCuckooFilter::fingerprint_bits`]: crate::ConcurrentCuckooFilter::fingerprint_bits
    #[must_use]
    pub fn level_fingerprint_bits(&self) -> Vec<u32> {
        self.levels.iter().map(Chunks::core_bits).collect()
    }

    /// The share of slots in use, over every level's chunks, from 0 to 1.
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / (self.bucket_count() * self.bucket_size()) as f64
    }

    /// Buckets of every level's chunks together.
    #[must_use]
    pub fn bucket_count(&self) -> usize {
        self.levels.iter().map(Chunks::bucket_count).sum()
    }

    /// Slots per bucket, the same in every level.
    #[must_use]
    pub fn bucket_size(&self) -> usize {
        self.levels.first().bucket_size()
    }

    /// Whether buckets are semi-sorted: not for the levels the builder makes, which keep
    /// fingerprints plain; a filter read from bytes whose plan says so may have them.
    #[must_use]
    pub fn is_semi_sorted(&self) -> bool {
        self.levels.first().is_semi_sorted()
    }

    /// The hasher items are hashed with.
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    /// Inserts one copy of `item` into the newest level, adding a level first if it is full.
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] only if no level can be added (past the
    /// [`max_capacity`](GrowableCuckooFilterBuilder::max_capacity), past 32-bit fingerprints, or out of
    /// memory, which a later insert tries again), or if copies of the item's own fingerprint
    /// fill both its buckets in the newest level (its ninth copy, with four-slot buckets).
    /// Whatever the keys, a filter without a limit otherwise grows: keys that share hash bits
    /// fill one chunk, which splits, and past its deepest split the next level, which hashes
    /// every key anew, takes them. Nothing changed on an error, though a new empty level or
    /// chunk may have been added.
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        self.insert_hash(self.hasher.hash_one(item))
    }

    /// Inserts `item` unless some level already holds its fingerprint in its buckets:
    /// `Ok(true)` if inserted, `Ok(false)` if it was there. Threads racing to `insert_unique`
    /// one item insert it exactly once, in one level, also while levels are added.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let seen = GrowableCuckooFilter::with_capacity(10);
    /// let fresh = (0..1000u32).filter(|key| seen.insert_unique(key) == Ok(true)).count();
    /// // A key whose fingerprint an earlier key already shows is taken as seen: a false
    /// // positive, at a rate under the target 0.1%.
    /// assert!(fresh >= 995, "{fresh}");
    /// assert_eq!(seen.len(), fresh);
    /// assert_eq!(seen.insert_unique(&3u32), Ok(false));
    /// ```
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] as for [`insert`](Self::insert).
    pub fn insert_unique<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        self.insert_unique_hash(self.hasher.hash_one(item))
    }

    /// Whether `item` may have been inserted: always true if it was (and not removed since),
    /// true with a probability under the target rate if it was not. Takes no lock, writes no
    /// shared memory, allocates nothing.
    #[inline]
    #[must_use]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(item))
    }

    /// How many copies of `item`'s fingerprint its buckets hold, over all levels: the number of
    /// times it was inserted and not removed, plus any other items that share its fingerprint
    /// and a bucket in some level. Takes no lock.
    #[must_use]
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.count_hash(self.hasher.hash_one(item))
    }

    /// Removes one copy of `item`: `true` if it did. `false` if no level holds its fingerprint,
    /// or if more than one does (see [Consistency](Self#consistency): the copy could be another
    /// item's). Only remove items that were inserted.
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.remove_hash(self.hasher.hash_one(item))
    }

    test_hook! {
        /// The route bits that pick `item`'s chunk in a split level `level`, to build keys that
        /// share them on purpose.
        fn debug_route<T: Hash + ?Sized>(&self, level: usize, item: &T) -> u32 {
            route_of(level_hash(self.hasher.hash_one(item), level))
        }
    }

    test_hook! {
        /// The fingerprint and the two buckets `item` maps to in level `level`, to build
        /// collisions on purpose.
        fn debug_candidates<T: Hash + ?Sized>(
            &self,
            level: usize,
            item: &T,
        ) -> DebugCandidates {
            let hash = level_hash(self.hasher.hash_one(item), level);
            self.levels.level(level).debug_candidates(hash).into()
        }
    }
}

impl<S: StableHashBuilder> GrowableCuckooFilter<S> {
    /// Each level's statistics, oldest first: its shape, items, capacity, load and rates, as
    /// [`ConcurrentCuckooFilter::stats`] gives them for a fixed filter. Exact when no write is in
    /// flight.
    ///
    /// [`ConcurrentCuckooFilter::stats`]: crate::ConcurrentCuckooFilter::stats
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::builder().capacity(1000).build()?;
    /// filter.try_extend(0..5000u64)?;
    /// let levels = filter.level_stats();
    /// assert_eq!(levels.len(), filter.level_count());
    /// assert_eq!(levels.iter().map(|level| level.len).sum::<usize>(), 5000);
    /// assert!(levels.windows(2).all(|pair| pair[0].capacity < pair[1].capacity));
    /// assert!(levels.iter().all(|level| level.hasher_seed == filter.hasher().seed()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn level_stats(&self) -> Vec<FilterStats> {
        self.levels
            .iter()
            .map(|level| persist::stats(level, RecordedHasher::of(&self.hasher)))
            .collect()
    }
}

impl<S> fmt::Debug for GrowableCuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plan = self.plan();
        let mut f = f.debug_struct("GrowableCuckooFilter");
        f.field("len", &self.len())
            .field("false_positive_rate", &plan.false_positive_rate)
            .field("growth_factor", &plan.growth_factor())
            .field("levels", &self.levels);
        f.finish_non_exhaustive()
    }
}

/// Inserts one copy of the hash into the newest level, adding a level first if it is full.
pub(crate) fn insert_into(levels: &Levels, hash: u64) -> Result<(), InsertError> {
    loop {
        let newest = levels.count() - 1;
        let level = levels.level(newest);
        let level_hash = level_hash(hash, newest);
        // A chunk that cannot split (or whose split found no memory) is full for the level.
        match level.insert(level_hash, false).unwrap_or(Insertion::Full) {
            Insertion::Full if !level.copies_fill_buckets(level_hash) && levels.grow(newest) => {}
            Insertion::Full => return Err(InsertError::Full),
            _ => return Ok(()),
        }
    }
}

/// The unique insert into level `newest`, unless an older level holds the hash: the caller
/// holds the item's lock.
pub(crate) fn insert_unique_into(levels: &Levels, hash: u64, newest: usize) -> Insertion {
    if (0..newest).any(|level| levels.level(level).contains(level_hash(hash, level))) {
        return Insertion::Present;
    }
    levels
        .level(newest)
        .insert(level_hash(hash, newest), true)
        .unwrap_or(Insertion::Full)
}

/// Removes the hash's copy from the one level holding its fingerprint; `false` if none or
/// several do.
pub(crate) fn remove_from(levels: &Levels, hash: u64) -> bool {
    loop {
        let mut holding = (0..levels.count())
            .rev()
            .filter(|&level| levels.level(level).contains(level_hash(hash, level)));
        let (Some(level), None) = (holding.next(), holding.next()) else {
            return false;
        };
        if levels.level(level).remove(level_hash(hash, level)) {
            return true;
        }
        // A racing remove took the copy between the look and the lock: look again.
    }
}
