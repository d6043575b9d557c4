//! The growable kind: levels of chunks that split as they fill (`docs/growth.md`).

mod builder;
mod chunk_shape;
mod chunk_slots;
mod chunks;
mod levels;
mod persist;
mod split;

use core::fmt;
use core::hash::{BuildHasher, Hash};
use std::io::{self, Read, Write};

use self::chunk_shape::ChunkShape;
use self::chunks::Located;
use self::split::{route_of, Placed};
use crate::error::{InsertError, MergeError};
use crate::filter::kind::{Kind, Sealed};
use crate::filter::CuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::hooks::DebugCandidates;
use crate::persist::encoding::first_difference;
use crate::persist::{DecodeError, FilterStats, RecordedHasher, StableHashBuilder};
use crate::raw::{level_hash, Insertion, Stripes, AHEAD};
use crate::sync::{fence, Ordering};

pub use self::builder::GrowableCuckooFilterBuilder;
use self::chunks::Chunks;
use self::levels::Levels;

/// Levels whose buckets a lookup requests at once: more loads than a core keeps in flight.
const PROBE_WINDOW: usize = 8;

/// A concurrent cuckoo filter that grows when it fills, keeping its false positive rate under a
/// target ε however far it grows.
///
/// It grows in place, as extendible hashing does: a full chunk (a small cuckoo table) splits, so
/// a lookup probes one chunk per level; after
/// [`split_depth`](GrowableCuckooFilterBuilder::split_depth) splits (6 by default, 64×) a level
/// that much larger is added, level `i` at the rate `ε/2^(i+1)` (the repository's docs/growth.md).
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
/// A reader never waits for growth, and the guarantees of [`ConcurrentCuckooFilter`] hold across
/// it: levels are only added, a level published after a lookup started holds only inserts that
/// had not returned, and a split keeps each moving fingerprint in the old chunk until the new one
/// is published (a reader that misses looks again in the item's new chunk). A failed insert
/// changes nothing but may leave a new, empty level or a split chunk.
///
/// - [`insert_unique`](Self::insert_unique) calls racing on one item insert it once across all
///   levels: each holds a lock of the item's while it checks every level and inserts. A plain
///   [`insert`](Self::insert) racing it may add a copy of its own.
/// - [`len`](Self::len) adds the levels' counts oldest first: exact when no write is in flight.
///   Meanwhile it may count some writes and not others (and a split's moving fingerprints
///   twice), but a count that shows a thread's write shows everything that thread wrote before.
/// - [`remove`](Self::remove) removes the copy from the one level whose buckets hold the item's
///   fingerprint; if several do (with probability about ε, or for an item inserted before and
///   after a level was added), it removes nothing and returns `false`, so that a false positive
///   stays rather than a false negative appears. Only remove items that were inserted.
///
/// [`ConcurrentCuckooFilter`]: crate::ConcurrentCuckooFilter
pub type GrowableCuckooFilter<S = DefaultHashBuilder> = CuckooFilter<Growable, S>;

/// The kind of [`GrowableCuckooFilter`]: its levels, and the item locks of unique inserts.
pub struct Growable {
    levels: Levels,
    /// Locks by item hash, taken before any level's stripes and by nothing else: no lock cycle.
    item_locks: Stripes,
}

/// `count` item locks (a power of two); `None` without the memory.
pub(crate) fn item_locks(count: usize) -> Option<Stripes> {
    Stripes::new(count, 0, count, 1)
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

/// The growable kind's own: its levels and the rate it keeps under.
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

    /// Core bits per fingerprint of each level, oldest first: what every item of the level
    /// keeps, route bits aside.
    #[must_use]
    pub fn level_fingerprint_bits(&self) -> Vec<u32> {
        self.core().levels.iter().map(Chunks::core_bits).collect()
    }
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    test_hook! {
        /// The route bits that pick `item`'s chunk in level `level`, to build keys sharing them.
        fn debug_route<T: Hash + ?Sized>(&self, level: usize, item: &T) -> u32 {
            route_of(level_hash(self.hasher().hash_one(item), level))
        }
    }

    test_hook! {
        /// `item`'s fingerprint and buckets in level `level`, to build collisions on purpose.
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
    /// Each level's statistics, oldest first, as
    /// [`ConcurrentCuckooFilter::stats`](crate::ConcurrentCuckooFilter::stats) gives a fixed
    /// filter's. Exact when no write is in flight.
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
        GrowableCuckooFilterBuilder::new()
            .capacity(capacity)
            .hasher(hasher)
            .build()
            .unwrap_or_else(|err| panic!("a GrowableCuckooFilter for {capacity} items: {err}"))
            .into_parts()
    }

    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        loop {
            // Held across the check of every level and the insert: a racing unique insert sees it.
            let guard = unique.then(|| {
                let lock = (hash >> 32) as usize & (self.item_locks.count() - 1);
                self.item_locks.lock_pair::<false>(lock, lock)
            });
            let levels = &self.levels;
            let newest = levels.count() - 1;
            let (level, in_level) = (levels.level(newest), level_hash(hash, newest));
            let older = |i| levels.level(i).contains(level_hash(hash, i));
            let inserted = if unique && (0..newest).any(older) {
                Insertion::Present
            } else {
                level.insert(in_level, unique)
            };
            drop(guard);
            match inserted {
                Insertion::Full if !level.copies_fill_buckets(in_level) && levels.grow(newest) => {}
                Insertion::Full => return Err(InsertError::Full),
                done => return Ok(done == Insertion::Inserted),
            }
        }
    }

    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize> {
        for (group, hashes) in hashes.chunks(AHEAD).enumerate() {
            let newest = self.levels.count() - 1;
            let chunks = self.levels.level(newest);
            for &hash in hashes {
                chunks.locate_and_prefetch(level_hash(hash, newest));
            }
            for (i, &hash) in hashes.iter().enumerate() {
                self.insert(hash, false).map_err(|_| group * AHEAD + i)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn contains(&self, hash: u64) -> bool {
        match self.levels.count() {
            // `level_hash` of level 0 is the hash.
            1 => self.levels.level(0).contains(hash),
            count => contains_in_levels(&self.levels, hash, count),
        }
    }

    /// A level at a time, newest first, each group's buckets requested before any is probed.
    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        answers.fill(false);
        for level in (0..self.levels.count()).rev() {
            let chunks = self.levels.level(level);
            for (hashes, answers) in hashes.chunks(AHEAD).zip(answers.chunks_mut(AHEAD)) {
                let mut located: [Option<Located<'_>>; AHEAD] = [None; AHEAD];
                for (at, &hash) in located.iter_mut().zip(hashes) {
                    *at = Some(chunks.locate_and_prefetch(level_hash(hash, level)));
                }
                for (answer, at) in answers.iter_mut().zip(located.into_iter().flatten()) {
                    *answer = *answer || chunks.contains_located(at);
                }
            }
        }
    }

    fn count(&self, hash: u64) -> usize {
        let levels = &self.levels;
        (0..levels.count())
            .map(|level| levels.level(level).count(level_hash(hash, level)))
            .sum()
    }

    /// From the one level holding the hash's fingerprint; `false` if none or several do.
    fn remove(&self, hash: u64) -> bool {
        let levels = &self.levels;
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

    fn len(&self) -> usize {
        // Oldest first, a fence after each: a remove is never counted without its insert.
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
        self.levels.level(0).shape().template.shape.bucket_size
    }

    fn is_semi_sorted(&self) -> bool {
        self.levels.level(0).shape().template.shape.semi_sorted
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
            .zip(item_locks(self.item_locks.count()))?;
        Some(Self { levels, item_locks })
    }

    fn check_compatible(&self, other: &Self) -> Result<(), MergeError> {
        let difference = first_difference(plan_fields(&self.levels), plan_fields(&other.levels));
        MergeError::unless_same(difference)?;
        // A limit that cuts a level gives its chunks fewer buckets: each level the source has
        // must be shaped here as there (one this plan cannot add leaves the merge full).
        for level in 1..other.levels.count() {
            let ours = if level < self.levels.count() {
                self.levels.level(level).shape()
            } else if let Ok(shape) = self.levels.plan().level_shape(level) {
                shape
            } else {
                break;
            };
            let theirs = other.levels.level(level).shape();
            MergeError::unless_same(first_difference(level_fields(ours), level_fields(theirs)))?;
        }
        Ok(())
    }

    /// Into the same level here, added first if missing: a fingerprint known by its core, whole
    /// route and bucket has its place in any filter of the plan, however its levels split.
    fn merge_from(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        while self.levels.count() < other.levels.count() {
            if !self.levels.grow(self.levels.count() - 1) {
                return Err(MergeError::Full { merged: 0 });
            }
        }
        let mut merged = 0;
        let mut put = |(level, placed): (usize, Placed)| {
            match self.levels.level(level).insert_placed(placed, unique) {
                Insertion::Inserted => merged += 1,
                Insertion::Present => {}
                Insertion::Full => return Err(MergeError::Full { merged }),
            }
            Ok(())
        };
        let placed = |level| {
            let chunks = other.levels.level(level).placed_fingerprints();
            chunks.map(move |placed| (level, placed))
        };
        let levels = 0..other.levels.count();
        if core::ptr::eq(self, other) {
            // Its own new fingerprints must not be met again: a copy of them first.
            let copy: Vec<(usize, Placed)> = levels.flat_map(placed).collect();
            copy.into_iter().try_for_each(&mut put)?;
        } else {
            levels.flat_map(placed).try_for_each(&mut put)?;
        }
        Ok(merged)
    }

    fn serialized_len(&self) -> u64 {
        persist::serialized_len(&self.levels)
    }

    fn write_to<S: StableHashBuilder, W: Write>(&self, hasher: &S, writer: W) -> io::Result<()> {
        let hasher = RecordedHasher::of(hasher);
        persist::write_to(&self.levels, &self.levels.lock_all(), hasher, writer)
    }

    fn to_bytes<S: StableHashBuilder>(&self, hasher: &S) -> io::Result<Vec<u8>> {
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

/// The plan's and its first level's fields, as [`MergeError::Geometry`] names them.
fn plan_fields(levels: &Levels) -> [(&'static str, u64); 8] {
    let (plan, chunks) = (levels.plan(), levels.level(0).shape());
    let shape = chunks.template.shape;
    [
        ("initial_capacity", plan.initial_capacity as u64),
        ("false_positive_rate", plan.false_positive_rate.to_bits()),
        ("split_depth", plan.split_depth.into()),
        ("buckets", shape.bucket_count as u64),
        ("bucket_size", shape.bucket_size as u64),
        ("fingerprint_bits", shape.fingerprint_bits.into()),
        ("semi_sorted", shape.semi_sorted.into()),
        ("route_bits", chunks.route_bits.into()),
    ]
}

/// A later level's fields that a limit may change, as [`MergeError::Geometry`] names them.
fn level_fields(shape: ChunkShape) -> [(&'static str, u64); 2] {
    [
        ("buckets", shape.template.shape.bucket_count as u64),
        ("route_bits", shape.route_bits.into()),
    ]
}

/// Newest first, a window of levels' buckets requested before any is probed; out of line.
#[inline(never)]
fn contains_in_levels(levels: &Levels, hash: u64, count: usize) -> bool {
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
