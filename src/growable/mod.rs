//! A filter that grows: levels of chunks that split as they fill, each level larger and with
//! wider fingerprints than the one before.

mod builder;
mod bulk;
mod chunk_shape;
mod chunk_slots;
mod chunks;
mod levels;
mod merge;
mod persist;

use core::fmt;
use core::hash::{BuildHasher, Hash};
use std::io::{self, Read, Write};

use crate::error::{InsertError, MergeError};
use crate::filter::kind::{Kind, Sealed};
use crate::filter::CuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::hooks::DebugCandidates;
use crate::persist::{DecodeError, FilterStats, RecordedHasher, StableHashBuilder};
use crate::raw::{level_hash, route_of, Insertion, ItemLocks};
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
pub type GrowableCuckooFilter<S = DefaultHashBuilder> = CuckooFilter<Growable, S>;

/// The kind of [`GrowableCuckooFilter`]: its levels, and the locks that make a unique insert
/// one step across them.
pub struct Growable {
    levels: Levels,
    item_locks: ItemLocks,
}

impl fmt::Debug for Growable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Growable");
        self.debug_fields(&mut f);
        f.finish_non_exhaustive()
    }
}

impl GrowableCuckooFilter {
    /// A [`GrowableCuckooFilterBuilder`] for any other configuration.
    pub fn builder() -> GrowableCuckooFilterBuilder {
        GrowableCuckooFilterBuilder::new()
    }
}

/// The growable kind's own: its levels, their fingerprint widths and statistics, and the rate
/// it keeps under.
impl<S> GrowableCuckooFilter<S> {
    /// Levels added so far, at least 1.
    #[must_use]
    pub fn level_count(&self) -> usize {
        self.core().levels.count()
    }

    /// The false positive rate the filter was built to stay under.
    #[must_use]
    pub fn false_positive_rate(&self) -> f64 {
        self.core().levels.plan().false_positive_rate
    }

    /// Core bits per fingerprint of each level added so far, oldest first: the bits every item
    /// of the level keeps, whatever route bits its chunk still carries. A per-level value, named
    /// apart from [`ConcurrentCuckooFilter::fingerprint_bits`].
    ///
    /// [`ConcurrentCuckooFilter::fingerprint_bits`]: crate::ConcurrentCuckooFilter::fingerprint_bits
    #[must_use]
    pub fn level_fingerprint_bits(&self) -> Vec<u32> {
        self.core().levels.iter().map(Chunks::core_bits).collect()
    }
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    test_hook! {
        /// The route bits that pick `item`'s chunk in a split level `level`, to build keys that
        /// share them on purpose.
        fn debug_route<T: Hash + ?Sized>(&self, level: usize, item: &T) -> u32 {
            route_of(level_hash(self.hasher().hash_one(item), level))
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
            let hash = level_hash(self.hasher().hash_one(item), level);
            self.core().levels.level(level).debug_candidates(hash).into()
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
        self.core()
            .levels
            .iter()
            .map(|level| persist::stats(level, RecordedHasher::of(self.hasher())))
            .collect()
    }
}

impl Sealed for Growable {}

impl Kind for Growable {
    const NAME: &'static str = "GrowableCuckooFilter";
    const GROWS: bool = true;

    fn with_capacity<S>(capacity: usize, hasher: S) -> (Self, S) {
        match GrowableCuckooFilterBuilder::new()
            .capacity(capacity)
            .hasher(hasher)
            .build()
        {
            Ok(filter) => filter.into_parts(),
            Err(err) => panic!("a GrowableCuckooFilter for {capacity} items: {err}"),
        }
    }

    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        if !unique {
            return insert_into(&self.levels, hash).map(|()| true);
        }
        loop {
            // Held while the levels are counted, checked and the item inserted: a racing unique
            // insert of the item then sees this one's copy, in whatever level it went.
            let guard = self.item_locks.lock(hash);
            let newest = self.levels.count() - 1;
            match insert_unique_into(&self.levels, hash, newest) {
                Insertion::Inserted => return Ok(true),
                Insertion::Present => return Ok(false),
                Insertion::Full => {
                    // Others waiting for the item's lock should not wait for the growth too.
                    drop(guard);
                    let level_hash = level_hash(hash, newest);
                    if self.levels.level(newest).copies_fill_buckets(level_hash)
                        || !self.levels.grow(newest)
                    {
                        return Err(InsertError::Full);
                    }
                }
            }
        }
    }

    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize> {
        self.insert_hashes(hashes)
    }

    #[inline]
    fn contains(&self, hash: u64) -> bool {
        match self.levels.count() {
            // Until the filter has grown past its first level (64× with the default split
            // depth), one directory pointer and one chunk; `level_hash` of level 0 is the hash.
            1 => self.levels.first().contains(hash),
            count => contains_in_levels(&self.levels, hash, count),
        }
    }

    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        self.contains_hashes_by_level(hashes, answers);
    }

    fn count(&self, hash: u64) -> usize {
        let levels = &self.levels;
        (0..levels.count())
            .map(|level| levels.level(level).count(level_hash(hash, level)))
            .sum()
    }

    fn remove(&self, hash: u64) -> bool {
        remove_from(&self.levels, hash)
    }

    fn len(&self) -> usize {
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

    fn capacity(&self) -> usize {
        self.levels.iter().map(Chunks::capacity).sum()
    }

    fn memory_usage(&self) -> usize {
        self.levels.iter().map(Chunks::memory_usage).sum::<usize>()
            + self.item_locks.memory_usage()
            + core::mem::size_of::<Self>()
    }

    fn bucket_count(&self) -> usize {
        self.levels.iter().map(Chunks::bucket_count).sum()
    }

    fn bucket_size(&self) -> usize {
        self.levels.first().bucket_size()
    }

    fn is_semi_sorted(&self) -> bool {
        self.levels.first().is_semi_sorted()
    }

    fn expected_false_positive_rate(&self) -> f64 {
        self.levels
            .iter()
            .map(Chunks::false_positive_rate_at_load)
            .sum()
    }

    fn clear(&self) {
        for level in self.levels.lock_all() {
            for mut chunk in level.chunks {
                chunk.table.clear();
            }
        }
    }

    fn duplicate(&self) -> Option<Self> {
        let (levels, item_locks) = self
            .levels
            .duplicate()
            .zip(ItemLocks::new(self.item_locks.count()))?;
        Some(Self { levels, item_locks })
    }

    fn check_compatible(&self, other: &Self) -> Result<(), MergeError> {
        self.plan_mismatch(other)
    }

    fn merge_from(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        self.merge_levels(other, unique)
    }

    fn serialized_len(&self) -> u64 {
        persist::serialized_len(&self.levels)
    }

    fn write_to<S: StableHashBuilder, W: Write>(&self, hasher: &S, writer: W) -> io::Result<()> {
        persist::write_to(&self.levels, RecordedHasher::of(hasher), writer)
    }

    fn to_bytes<S: StableHashBuilder>(&self, hasher: &S) -> Vec<u8> {
        persist::to_bytes(&self.levels, RecordedHasher::of(hasher))
    }

    fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Self, S), DecodeError> {
        persist::decode(bytes)
    }

    fn decode_from<S: StableHashBuilder, R: Read>(reader: R) -> Result<(Self, S), DecodeError> {
        persist::decode_from(reader)
    }

    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        let plan = self.levels.plan();
        f.field("false_positive_rate", &plan.false_positive_rate)
            .field("growth_factor", &plan.growth_factor())
            .field("levels", &self.levels);
    }
}

/// A lookup in several levels, out of line, so that the one-level lookup inlined in the caller
/// keeps its registers.
#[inline(never)]
fn contains_in_levels(levels: &Levels, hash: u64, count: usize) -> bool {
    // Newest first: it is the largest, and holds the most items. Every level of a window is
    // located once, its buckets' loads started, before any is probed: the probes then find
    // their buckets arriving together instead of missing one after another. A window of
    // eight levels already keeps more loads in flight than a core can track, and keeps the
    // array each lookup fills small.
    let mut newest = count;
    while newest > 0 {
        let oldest = newest.saturating_sub(PROBE_WINDOW);
        let mut located = [None; PROBE_WINDOW];
        for (level, slot) in (oldest..newest).rev().zip(&mut located) {
            let kind = levels.level(level);
            *slot = Some((kind, kind.locate_and_prefetch(level_hash(hash, level))));
        }
        if located
            .iter()
            .flatten()
            .any(|&(kind, at)| kind.contains_located(at))
        {
            return true;
        }
        newest = oldest;
    }
    false
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
