//! The append-only list of levels: a fixed array of write-once slots, filled in order.
//!
//! Level `i` is a complete fixed-size filter for `c·g^i` items (initial capacity `c`, growth
//! factor `g`) whose fingerprints are sized for a rate `ε_i` from the plan's [`RateSchedule`],
//! chosen so that the rates of all levels ever added sum to less than `ε`. A lookup reads the
//! slots without locks; a writer whose newest level is full fills the next slot, and writers
//! that race it wait for that one fill, parked.

use core::fmt;

use super::chunks::{Chunks, Located, MAX_ROUTE_BITS, MIN_CHUNK_BUCKETS};
use crate::builder::Builder;
use crate::error::BuildError;
use crate::filter::ConcurrentCuckooFilter;
use crate::raw::{Geometry, Insertion, LevelCandidates, LockedTable, RawFilter};
use crate::sizing::{capacity_of, target_load_permille};
use crate::sync::{AtomicU64, OnceSlot, Ordering};

/// Most levels a filter can have. With the default growth factor the 32nd level would be 2^31
/// times the first; fingerprint widths run out (32 bits) well before for every useful rate.
pub(crate) const MAX_LEVELS: usize = 32;

/// One level: a fixed-size filter whose items are hashed by the growable filter.
pub(crate) type Level = ConcurrentCuckooFilter<()>;

/// What a growable filter needs of a level: a fixed-size filter, or [`Chunks`] that split as
/// they fill. Every operation takes the item's hash already remixed for the level.
pub(crate) trait LevelKind: Sized {
    /// Level `level` of `plan`, or why it cannot be built.
    fn build(plan: &Plan, level: usize) -> Result<Self, BuildError>;
    /// Inserts one copy (or with `unique`, unless one is there); `Full` for no room.
    fn insert(&self, hash: u64, unique: bool) -> Insertion;
    fn contains(&self, hash: u64) -> bool;
    /// Where the hash is in the level, its buckets' loads started: the first half of a lookup
    /// in several levels, which starts every level's loads before it probes any.
    type Located<'a>: Copy
    where
        Self: 'a;
    fn locate_and_prefetch(&self, hash: u64) -> Self::Located<'_>;
    /// The second half: whether the level holds the hash located.
    fn contains_located(&self, located: Self::Located<'_>) -> bool;
    fn count(&self, hash: u64) -> usize;
    /// Whether copies of the hash's fingerprint fill its buckets, so that growing would not
    /// make room for another copy in this level (see `RawFilter::copies_fill_buckets`).
    fn copies_fill_buckets(&self, hash: u64) -> bool;
    fn remove(&self, hash: u64) -> bool;
    /// Items the level is sized for now.
    fn capacity(&self) -> usize;
    fn memory_usage(&self) -> usize;
    /// The level's false positive rate at the load it is sized for.
    fn expected_false_positive_rate(&self) -> f64;
    /// Fingerprint bits every item of the level has at least.
    fn fingerprint_bits(&self) -> u32;
}

impl LevelKind for Level {
    fn build(plan: &Plan, level: usize) -> Result<Self, BuildError> {
        plan.builder(level)?.build()
    }

    #[inline(always)]
    fn insert(&self, hash: u64, unique: bool) -> Insertion {
        self.raw().insert(hash, unique)
    }

    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        self.raw().contains(hash)
    }

    type Located<'a> = LevelCandidates;

    #[inline(always)]
    fn locate_and_prefetch(&self, hash: u64) -> LevelCandidates {
        self.raw().locate_and_prefetch(hash)
    }

    #[inline(always)]
    fn contains_located(&self, located: LevelCandidates) -> bool {
        self.raw().contains_located(located)
    }

    fn count(&self, hash: u64) -> usize {
        self.raw().count(hash)
    }

    fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.raw().copies_fill_buckets(hash)
    }

    fn remove(&self, hash: u64) -> bool {
        self.raw().remove(hash)
    }

    fn capacity(&self) -> usize {
        self.capacity()
    }

    fn memory_usage(&self) -> usize {
        self.memory_usage()
    }

    fn expected_false_positive_rate(&self) -> f64 {
        self.expected_false_positive_rate()
    }

    fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits()
    }
}

impl LevelKind for Chunks {
    fn build(plan: &Plan, level: usize) -> Result<Self, BuildError> {
        let shape = plan.split_level_shape(level)?;
        let chunks = Chunks::with_shape(shape.template, shape.route_bits, shape.first_depth)
            .ok_or(BuildError::OutOfMemory {
                bytes: shape
                    .template
                    .memory_bytes()
                    .try_into()
                    .unwrap_or(usize::MAX),
            })?;
        Ok(chunks.with_max_chunks(shape.max_chunks))
    }

    #[inline(always)]
    fn insert(&self, hash: u64, unique: bool) -> Insertion {
        self.insert(hash, unique).unwrap_or(Insertion::Full)
    }

    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        self.contains(hash)
    }

    type Located<'a> = Located<'a>;

    #[inline(always)]
    fn locate_and_prefetch(&self, hash: u64) -> Located<'_> {
        self.locate_and_prefetch(hash)
    }

    #[inline(always)]
    fn contains_located(&self, located: Located<'_>) -> bool {
        self.contains_located(located)
    }

    fn count(&self, hash: u64) -> usize {
        self.count(hash)
    }

    fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.copies_fill_buckets(hash)
    }

    fn remove(&self, hash: u64) -> bool {
        self.remove(hash)
    }

    fn capacity(&self) -> usize {
        self.capacity()
    }

    fn memory_usage(&self) -> usize {
        self.memory_usage()
    }

    fn expected_false_positive_rate(&self) -> f64 {
        self.expected_false_positive_rate()
    }

    fn fingerprint_bits(&self) -> u32 {
        self.core_bits()
    }
}

/// The rates the levels get, as fractions of the target ε that sum to at most 1 over any number
/// of levels. Each costs the level `log2(ε/ε_i)` fingerprint bits more than a fixed filter at ε.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RateSchedule {
    /// `ε_i = ε/2^(i+1)`: one bit more per level. Cheap for the first levels, but the newest
    /// level, which holds about half the items at growth factor 2, pays one bit per level ever
    /// added. What format version 1 records.
    BitPerLevel,
    /// `ε_i = ε/2^(3 + ⌊i/4⌋)`: three bits more than a fixed filter for the first four levels,
    /// then one bit more per four levels (`Σ 4·2^-k` over `k ≥ 3` is 1). After growing 64× at
    /// factor 2 the items pay 3.8 bits more on average instead of 5.1, after 1,000× 4.7 instead
    /// of 9.0; it costs more only while there are three levels or fewer. The default, and
    /// format version 2.
    BitPerFourLevels,
}

impl RateSchedule {
    /// How many times smaller than ε level `level`'s rate is: a power of two.
    fn divisor(self, level: usize) -> f64 {
        let exponent = match self {
            Self::BitPerLevel => level + 1,
            Self::BitPerFourLevels => 3 + level / 4,
        };
        2f64.powi(exponent as i32)
    }
}

/// How each level is built.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) schedule: RateSchedule,
    /// Every setting but the capacity and the rate.
    pub(crate) template: Builder<()>,
    pub(crate) initial_capacity: usize,
    /// Buckets of the first level instead of ones derived from the capacity; 0 when unset.
    pub(crate) initial_buckets: usize,
    pub(crate) growth_factor: usize,
    pub(crate) false_positive_rate: f64,
    /// The most items all levels together may be sized for.
    pub(crate) max_capacity: usize,
    /// How many times each level's chunks may split, for levels of [`Chunks`]; then the growth
    /// factor is `2^split_depth`, the size a level reaches before the next is added.
    pub(crate) split_depth: u32,
}

impl Plan {
    /// What level `level` of a split plan is, as the level is built and as the decoder expects
    /// it, or why the plan cannot have it; nothing allocated. A level of chunks starts the size
    /// its predecessor may grow to, and grows `2^split_depth` times, or until all levels' chunks
    /// together reach the plan's `max_capacity`.
    pub(crate) fn split_level_shape(&self, level: usize) -> Result<LevelShape, BuildError> {
        let depth = self.split_depth_of(level);
        let (mut geometry, _) = self.geometry(level)?;
        if depth == 0 {
            return Err(BuildError::FingerprintBits {
                bits: geometry.shape.fingerprint_bits + 1,
            });
        }
        let too_large = || BuildError::CapacityTooLarge {
            capacity: self.initial_capacity,
            max: self.max_capacity,
        };
        // What the older levels may have grown to.
        let older = (1..=level).try_fold(0usize, |sum, i| sum.checked_add(self.capacity_of(i)?));
        let room = older
            .and_then(|older| self.max_capacity.checked_sub(older))
            .ok_or_else(too_large)?;
        // A first level raised to the smallest chunk, as far as the limit allows.
        if self.initial_buckets == 0 {
            let shape = &geometry.shape;
            let per_bucket = shape.bucket_size as u64 * target_load_permille(shape.bucket_size);
            let fit = (room as u64).saturating_mul(1000) / per_bucket;
            let least = (MIN_CHUNK_BUCKETS as u64).min(fit) as usize;
            // Never past the limit: the buckets a capacity under it needs fit, but a fixed
            // filter's slack for small tables may not.
            geometry.shape.bucket_count = shape.bucket_count.max(least).min(fit.max(1) as usize);
        }
        let ((template, route_bits, first_depth), chunk_capacity) =
            Chunks::planned_shape(geometry, depth);
        if route_bits > MAX_ROUTE_BITS {
            return Err(BuildError::CapacityTooLarge {
                capacity: self.capacity_of(level).unwrap_or(usize::MAX),
                max: chunk_capacity << (MAX_ROUTE_BITS - depth),
            });
        }
        let first_capacity = (1usize << first_depth).checked_mul(chunk_capacity);
        if first_capacity.map_or(true, |capacity| capacity > room) {
            return Err(too_large());
        }
        Ok(LevelShape {
            template,
            route_bits,
            first_depth,
            chunk_capacity,
            max_chunks: (room / chunk_capacity) as u64,
        })
    }

    /// How many times level `level`'s chunks may split: the plan's depth, or fewer where the
    /// level's fingerprints would pass 32 bits (its core bits and one route bit per split); 0
    /// if not even one split fits.
    pub(crate) fn split_depth_of(&self, level: usize) -> u32 {
        let core = self
            .template
            .clone()
            .capacity(1)
            .false_positive_rate(self.rate_of(level))
            .checked_geometry()
            .map_or(32, |geometry| geometry.shape.fingerprint_bits);
        self.split_depth.min(32u32.saturating_sub(core))
    }

    /// Items level `level` is sized for when it is added, if that fits in a `usize`: the
    /// initial capacity times the growth of every level before (`growth_factor` each, or for
    /// split levels `2^depth` each).
    pub(crate) fn capacity_of(&self, level: usize) -> Option<usize> {
        if self.split_depth == 0 {
            let growth = self.growth_factor.checked_pow(u32::try_from(level).ok()?)?;
            return self.initial_capacity.checked_mul(growth);
        }
        let shift: u32 = (0..level).map(|i| self.split_depth_of(i)).sum();
        self.initial_capacity
            .checked_mul(1usize.checked_shl(shift)?)
            .filter(|capacity| capacity >> shift == self.initial_capacity)
    }

    /// The rate level `level` gets, by the plan's schedule.
    pub(crate) fn rate_of(&self, level: usize) -> f64 {
        self.false_positive_rate / self.schedule.divisor(level)
    }

    /// The geometry and capacity level `level` gets, or why it cannot be built, with nothing
    /// allocated.
    pub(crate) fn geometry(&self, level: usize) -> Result<(Geometry, usize), BuildError> {
        let geometry = self.builder(level)?.checked_geometry()?;
        let capacity = capacity_of(
            geometry.shape.bucket_count as u64,
            geometry.shape.bucket_size,
        );
        Ok((geometry, usize::try_from(capacity).unwrap_or(usize::MAX)))
    }

    /// The builder of level `level`, if the plan's limit allows that level.
    fn builder(&self, level: usize) -> Result<Builder<()>, BuildError> {
        let too_large = BuildError::CapacityTooLarge {
            capacity: self.initial_capacity,
            max: self.max_capacity,
        };
        let capacity = self.capacity_of(level).ok_or(too_large.clone())?;
        if level > 0 {
            let total =
                (0..=level).try_fold(0usize, |sum, i| sum.checked_add(self.capacity_of(i)?));
            if total.map_or(true, |total| total > self.max_capacity) {
                return Err(too_large);
            }
        }
        let mut builder = self
            .template
            .clone()
            .capacity(capacity)
            .false_positive_rate(self.rate_of(level));
        if self.initial_buckets != 0 {
            let growth = self.capacity_of(level).ok_or(too_large)? / self.initial_capacity;
            builder = builder.buckets(self.initial_buckets.saturating_mul(growth));
        }
        Ok(builder)
    }
}

/// What the plan gives a split level, as `LevelKind::build` makes it, with nothing allocated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LevelShape {
    /// Every chunk's geometry but its fingerprint width, which is the core bits here.
    pub(crate) template: Geometry,
    pub(crate) route_bits: u32,
    /// How many route bits the level's first chunks have.
    pub(crate) first_depth: u32,
    /// Items each chunk is sized for, which its header records.
    pub(crate) chunk_capacity: usize,
    /// How many chunks the level may have by the plan's limit.
    pub(crate) max_chunks: u64,
}

pub(crate) struct Levels<L = Level> {
    /// Level 0, which every filter has: held in place, so that a lookup in a filter that has
    /// not added a level reads no slot.
    first: L,
    /// Levels 1 and on.
    slots: Box<[OnceSlot<Option<L>>]>,
    /// How many slots are filled with a level, raised (`Release`) by every thread that saw a
    /// slot filled before it returns from [`Self::grow`]: one `Acquire` load tells a lookup how
    /// many levels to probe, instead of one load per slot.
    published: AtomicU64,
    plan: Plan,
}

impl<L: LevelKind> Levels<L> {
    /// The list with its first level built.
    pub(crate) fn new(plan: Plan) -> Result<Self, BuildError> {
        Ok(Self {
            first: L::build(&plan, 0)?,
            slots: Self::empty_slots(),
            published: AtomicU64::new(1),
            plan,
        })
    }

    /// The list holding `levels`, decoded and checked against `plan`: at least one, at most
    /// [`MAX_LEVELS`].
    pub(crate) fn from_levels(plan: Plan, levels: Vec<L>) -> Self {
        debug_assert!((1..=MAX_LEVELS).contains(&levels.len()));
        let published = AtomicU64::new(levels.len() as u64);
        let mut levels = levels.into_iter();
        let first = levels.next().expect("a filter has at least one level");
        let slots = Self::empty_slots();
        for (slot, level) in slots.iter().zip(levels) {
            slot.get_or_init(|| Some(level));
        }
        Self {
            first,
            slots,
            published,
            plan,
        }
    }

    fn empty_slots() -> Box<[OnceSlot<Option<L>>]> {
        (1..MAX_LEVELS).map(|_| OnceSlot::new()).collect()
    }

    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Levels published so far, at least 1. Later levels may be added at any moment.
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        // Every slot below it was filled before the store that raised it, which this load reads.
        self.published.load(Ordering::Acquire) as usize
    }

    /// Level `level`. Panics for a level that was not published: callers only ask for levels
    /// below a [`Self::count`] they read.
    #[inline(always)]
    pub(crate) fn level(&self, level: usize) -> &L {
        if level == 0 {
            return &self.first;
        }
        match self.slots[level - 1].get() {
            Some(Some(level)) => level,
            _ => unreachable!("level {level} was counted as published"),
        }
    }

    /// The published levels, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &L> + '_ {
        let added = self.slots.iter().map_while(|slot| match slot.get() {
            Some(Some(level)) => Some(level),
            _ => None,
        });
        core::iter::once(&self.first).chain(added)
    }

    /// Level 0, the only one until the filter first grows past it.
    #[inline(always)]
    pub(crate) fn first(&self) -> &L {
        &self.first
    }

    /// Makes sure a level after `newest` exists, adding it if no other thread has: `false` if
    /// none can be added (the plan's limit or an impossible fingerprint width, for good; no
    /// memory, until a later call finds some). Threads racing to add the same level wait for
    /// the one that builds it, parked.
    pub(crate) fn grow(&self, newest: usize) -> bool {
        let Some(next) = self.slots.get(newest) else {
            return false;
        };
        let added = match next.get() {
            Some(level) => level.is_some(),
            None => {
                let built = next.get_or_try_init(|| match L::build(&self.plan, newest + 1) {
                    Ok(level) => Ok(Some(level)),
                    // The memory may be had later: the slot stays empty for a later insert.
                    Err(BuildError::OutOfMemory { .. }) => Err(()),
                    // Past the plan's limit or the widest fingerprints: never.
                    Err(_) => Ok(None),
                });
                matches!(built, Ok(Some(_)))
            }
        };
        if added {
            // Before returning: the caller's next `count` must show the level, or it would try
            // the full level again.
            let target = newest as u64 + 2;
            let mut seen = self.published.load(Ordering::Relaxed);
            while seen < target {
                match self.published.compare_exchange_weak(
                    seen,
                    target,
                    Ordering::Release,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(now) => seen = now,
                }
            }
        }
        added
    }
}

impl Levels {
    /// Every published level with all its stripes locked, oldest first: no writer is in any of
    /// them until the guards drop. Levels are locked in index order, each in its stripes' order,
    /// and a writer holds stripes of one level at a time, so this cannot deadlock. A level
    /// published while the others were being locked is locked too, so that when this returns,
    /// every level that exists is held.
    pub(crate) fn lock_all(&self) -> Vec<(&Level, LockedTable<'_>)> {
        let mut locked = Vec::new();
        loop {
            let count = self.count();
            if count == locked.len() {
                return locked;
            }
            for index in locked.len()..count {
                let level = self.level(index);
                locked.push((level, level.raw().lock_table()));
            }
        }
    }

    /// Level `level`'s raw filter. Panics for a level that was not published.
    #[inline(always)]
    pub(crate) fn raw(&self, level: usize) -> &RawFilter {
        self.level(level).raw()
    }
}

impl<L: LevelKind + fmt::Debug> fmt::Debug for Levels<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_schedule_keeps_the_rates_of_all_levels_under_the_target() {
        for schedule in [RateSchedule::BitPerLevel, RateSchedule::BitPerFourLevels] {
            let shares: Vec<f64> = (0..MAX_LEVELS).map(|i| 1.0 / schedule.divisor(i)).collect();
            assert!(shares.iter().sum::<f64>() < 1.0, "{schedule:?}");
            assert!(shares.windows(2).all(|w| w[1] <= w[0]), "{schedule:?}");
        }
        let exponents: Vec<i32> = (0..9)
            .map(|i| RateSchedule::BitPerFourLevels.divisor(i).log2() as i32)
            .collect();
        assert_eq!(exponents, [3, 3, 3, 3, 4, 4, 4, 4, 5]);
        assert_eq!(RateSchedule::BitPerLevel.divisor(4), 32.0);
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_level_refused_for_want_of_memory_is_tried_again_by_the_next_growth() {
        // Level 1: 2^32 buckets of eight 32-bit fingerprints, 128 GiB.
        let plan = Plan {
            schedule: RateSchedule::BitPerFourLevels,
            template: Builder::new()
                .hasher(())
                .bucket_size(8)
                .fingerprint_bits(32),
            initial_capacity: 8,
            initial_buckets: 1,
            growth_factor: 1 << 32,
            false_positive_rate: 0.01,
            max_capacity: usize::MAX,
            split_depth: 0,
        };
        let levels = Levels::new(plan).unwrap();
        let first = levels.raw(0);
        for hash in 1..=8u64 {
            first.insert(hash.wrapping_mul(0x9e37_79b9_7f4a_7c15), false);
        }
        assert!(
            first.len() * 2 >= levels.level(0).capacity(),
            "{}",
            first.len()
        );
        if levels.grow(0) {
            // The system granted the untouched pages: nothing was refused.
            return;
        }
        // Not marked impossible: the slot is still empty, and the next growth builds again.
        assert!(levels.slots[0].get().is_none());
        assert!(!levels.grow(0));
        assert!(levels.slots[0].get().is_none());
        assert_eq!(levels.count(), 1);
    }

    #[test]
    fn a_level_past_the_plan_limit_is_refused_for_good() {
        let plan = Plan {
            schedule: RateSchedule::BitPerFourLevels,
            template: Builder::new().hasher(()),
            initial_capacity: 8,
            initial_buckets: 0,
            growth_factor: 2,
            false_positive_rate: 0.01,
            max_capacity: 8,
            split_depth: 0,
        };
        let levels = Levels::new(plan).unwrap();
        let first = levels.raw(0);
        for hash in 1..=8u64 {
            first.insert(hash.wrapping_mul(0x9e37_79b9_7f4a_7c15), false);
        }
        assert!(!levels.grow(0));
        assert!(matches!(levels.slots[0].get(), Some(None)));
    }
}
