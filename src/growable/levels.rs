//! The plan of every level, and the append-only list of levels: a fixed array of write-once
//! slots, filled in order. A lookup reads the slots without locks; a writer whose newest level
//! is full fills the next slot, and writers that race it wait for that one fill, parked.

use core::fmt;

use super::chunk_shape::{ChunkShape, MAX_ROUTE_BITS, MIN_CHUNK_BUCKETS};
use super::chunks::{Chunks, LockedChunk};
use crate::error::BuildError;
use crate::raw::Geometry;
use crate::settings::TableSettings;
use crate::sizing::target_load_permille;
use crate::sync::{AtomicU64, OnceSlot, Ordering};

/// Most levels a filter can have. With the default growth factor the 32nd level would be 2^31
/// times the first; fingerprint widths run out (32 bits) well before for every useful rate.
pub(crate) const MAX_LEVELS: usize = 32;

/// Level `level` of `plan`, or why it cannot be built.
pub(crate) fn build_level(plan: &Plan, level: usize) -> Result<Chunks, BuildError> {
    let shape = plan.level_shape(level)?;
    Chunks::with_shape(shape).ok_or(BuildError::OutOfMemory {
        bytes: Chunks::planned_memory(&shape)
            .try_into()
            .unwrap_or(usize::MAX),
    })
}

/// How each level is built.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Every table setting but the capacity and the rate, which each level gets its own of.
    pub(crate) table: TableSettings,
    pub(crate) initial_capacity: usize,
    /// Buckets of the first level instead of ones derived from the capacity; 0 when unset.
    pub(crate) initial_buckets: usize,
    pub(crate) false_positive_rate: f64,
    /// The most items all levels together may be sized for.
    pub(crate) max_capacity: usize,
    /// How many times each level's chunks may split: a level grows `2^split_depth` times
    /// before the next is added.
    pub(crate) split_depth: u32,
}

impl Plan {
    /// How many times larger each level may grow than it starts: `2^split_depth`.
    pub(crate) fn growth_factor(&self) -> usize {
        1 << self.split_depth
    }

    /// Level `level`'s shape, as it is built and as the decoder expects it, or why the plan
    /// cannot have it; nothing allocated. A level starts the size its predecessor may grow to,
    /// and grows `2^split_depth` times, or until all levels together reach `max_capacity`.
    pub(crate) fn level_shape(&self, level: usize) -> Result<ChunkShape, BuildError> {
        let depth = self.split_depth_of(level);
        let mut geometry = self.geometry(level)?;
        if depth == 0 {
            return Err(BuildError::FingerprintBits {
                bits: geometry.shape.fingerprint_bits + 1,
            });
        }
        // What the older levels may have grown to.
        let room = self
            .capacity_of_levels(1..=level)
            .and_then(|older| self.max_capacity.checked_sub(older))
            .ok_or_else(|| self.too_large())?;
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
        let shape = ChunkShape::of(geometry, depth);
        let chunk_capacity = shape.chunk_capacity();
        if shape.route_bits > MAX_ROUTE_BITS {
            return Err(BuildError::CapacityTooLarge {
                capacity: self.capacity_of(level).unwrap_or(usize::MAX),
                max: chunk_capacity << (MAX_ROUTE_BITS - depth),
            });
        }
        let first_capacity = (1usize << shape.first_depth).checked_mul(chunk_capacity);
        if first_capacity.map_or(true, |capacity| capacity > room) {
            return Err(self.too_large());
        }
        Ok(ChunkShape {
            max_chunks: (room / chunk_capacity) as u64,
            ..shape
        })
    }

    /// How many times level `level`'s chunks may split: the plan's depth, or fewer where the
    /// level's fingerprints would pass 32 bits (its core bits and one route bit per split); 0
    /// if not even one split fits.
    pub(crate) fn split_depth_of(&self, level: usize) -> u32 {
        let mut table = self.table;
        table.capacity = 1;
        table.request.false_positive_rate = Some(self.rate_of(level));
        let core = table
            .geometry()
            .map_or(32, |geometry| geometry.shape.fingerprint_bits);
        self.split_depth.min(32u32.saturating_sub(core))
    }

    /// Items level `level` is sized for when it is added, if that fits in a `usize`: the
    /// initial capacity times the growth of every level before, `2^depth` each.
    pub(crate) fn capacity_of(&self, level: usize) -> Option<usize> {
        let shift: u32 = (0..level).map(|i| self.split_depth_of(i)).sum();
        self.initial_capacity
            .checked_mul(1usize.checked_shl(shift)?)
            .filter(|capacity| capacity >> shift == self.initial_capacity)
    }

    /// Items the levels `levels` are sized for together, if that fits in a `usize`.
    fn capacity_of_levels(&self, levels: core::ops::RangeInclusive<usize>) -> Option<usize> {
        levels
            .into_iter()
            .try_fold(0usize, |sum, i| sum.checked_add(self.capacity_of(i)?))
    }

    /// The rate level `level` gets: `ε/2^(level+1)`, one fingerprint bit more per level, so
    /// that the rates of all levels sum to less than `ε`.
    pub(crate) fn rate_of(&self, level: usize) -> f64 {
        self.false_positive_rate / 2f64.powi(level as i32 + 1)
    }

    /// The geometry level `level` gets, if the plan's limit allows that level, with nothing
    /// allocated.
    pub(crate) fn geometry(&self, level: usize) -> Result<Geometry, BuildError> {
        let capacity = self.capacity_of(level).ok_or_else(|| self.too_large())?;
        if level > 0
            && self
                .capacity_of_levels(0..=level)
                .map_or(true, |total| total > self.max_capacity)
        {
            return Err(self.too_large());
        }
        let mut table = self.table;
        table.capacity = capacity;
        table.request.false_positive_rate = Some(self.rate_of(level));
        if self.initial_buckets != 0 {
            let growth = capacity / self.initial_capacity;
            table.bucket_count = self.initial_buckets.saturating_mul(growth);
        }
        table.geometry()
    }

    fn too_large(&self) -> BuildError {
        BuildError::CapacityTooLarge {
            capacity: self.initial_capacity,
            max: self.max_capacity,
        }
    }
}

/// A level with every chunk locked.
pub(crate) struct LockedLevel<'a> {
    pub(crate) level: &'a Chunks,
    pub(crate) chunks: Vec<LockedChunk<'a>>,
}

pub(crate) struct Levels {
    /// Level 0, held in place: a lookup in a filter of one level reads no slot.
    first: Chunks,
    /// Levels 1 and on.
    slots: Box<[OnceSlot<Option<Chunks>>]>,
    /// Levels published, raised (`Release`) by every thread that saw a slot filled before it
    /// returns from [`Self::grow`]: one load tells a lookup how many levels to probe.
    published: AtomicU64,
    plan: Plan,
}

impl Levels {
    /// The list with its first level built.
    pub(crate) fn new(plan: Plan) -> Result<Self, BuildError> {
        let first = build_level(&plan, 0)?;
        Ok(Self::from_levels(plan, vec![first]))
    }

    /// The list holding `levels`: at least one, at most [`MAX_LEVELS`].
    pub(crate) fn from_levels(plan: Plan, levels: Vec<Chunks>) -> Self {
        debug_assert!((1..=MAX_LEVELS).contains(&levels.len()));
        let published = AtomicU64::new(levels.len() as u64);
        let mut levels = levels.into_iter();
        let first = levels.next().expect("a filter has at least one level");
        let slots: Box<[_]> = (1..MAX_LEVELS).map(|_| OnceSlot::new()).collect();
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
    pub(crate) fn level(&self, level: usize) -> &Chunks {
        if level == 0 {
            return &self.first;
        }
        match self.slots[level - 1].get() {
            Some(Some(level)) => level,
            _ => unreachable!("level {level} was counted as published"),
        }
    }

    /// The published levels, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Chunks> + '_ {
        let added = self.slots.iter().map_while(|slot| match slot.get() {
            Some(Some(level)) => Some(level),
            _ => None,
        });
        core::iter::once(&self.first).chain(added)
    }

    /// Every published level, oldest first, with every chunk locked: no writer is anywhere in
    /// the filter until the guards drop. A level still being built holds nothing yet.
    pub(crate) fn lock_all(&self) -> Vec<LockedLevel<'_>> {
        let mut locked = Vec::new();
        while locked.len() < self.count() {
            let level = self.level(locked.len());
            locked.push(LockedLevel {
                level,
                chunks: level.lock_all(),
            });
        }
        locked
    }

    /// A copy of every level, taken under [`Self::lock_all`]; `None` without the memory.
    pub(crate) fn duplicate(&self) -> Option<Self> {
        let levels = self
            .lock_all()
            .iter()
            .map(|locked| {
                let chunks = locked
                    .chunks
                    .iter()
                    .map(|chunk| Some((chunk.id, chunk.table.duplicate()?)))
                    .collect::<Option<Vec<_>>>()?;
                Chunks::from_chunks(locked.level.shape(), chunks)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self::from_levels(self.plan.clone(), levels))
    }

    /// Level 0, the only one until the filter first grows past it.
    #[inline(always)]
    pub(crate) fn first(&self) -> &Chunks {
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
        let built = next.get_or_try_init(|| match build_level(&self.plan, newest + 1) {
            Ok(level) => Ok(Some(level)),
            // The memory may be had later: the slot stays empty for a later insert.
            Err(BuildError::OutOfMemory { .. }) => Err(()),
            // Past the plan's limit or the widest fingerprints: never.
            Err(_) => Ok(None),
        });
        let added = matches!(built, Ok(Some(_)));
        if added {
            // Before returning: the caller's next `count` must show the level, or it would try
            // the full level again.
            self.published
                .fetch_max(newest as u64 + 2, Ordering::Release);
        }
        added
    }
}

impl fmt::Debug for Levels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/growable/levels.rs"]
mod tests;
