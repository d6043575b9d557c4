//! The plan of every level, and the list of levels: write-once slots filled in order, read
//! without locks; writers racing to fill the next slot wait for the one that does, parked.

use core::fmt;

use super::chunk_shape::{ChunkShape, MAX_ROUTE_BITS, MIN_CHUNK_BUCKETS};
use super::chunks::{Chunks, LockedChunk};
use crate::error::BuildError;
use crate::raw::Geometry;
use crate::settings::TableSettings;
use crate::sizing::target_load_permille;
use crate::sync::{AtomicU64, OnceSlot, Ordering};

/// Fingerprint widths (32 bits) run out before this many levels at every useful rate.
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
    /// Every table setting but the capacity and the rate, which are each level's own.
    pub(crate) table: TableSettings,
    pub(crate) initial_capacity: usize,
    /// Buckets of the first level instead of ones derived from the capacity; 0 when unset.
    pub(crate) initial_buckets: usize,
    pub(crate) false_positive_rate: f64,
    /// The most items all levels together may be sized for.
    pub(crate) max_capacity: usize,
    /// Splits of each level's chunks before the next level is added.
    pub(crate) split_depth: u32,
}

impl Plan {
    /// The first level's bucket count in whole chunks within the limit, where the count cut to
    /// the limit rounds up to chunks that pass it; `None` where those fit, or the plan records
    /// its count. The builder records it, which level shapes take as it is.
    pub(crate) fn first_buckets_in_whole_chunks(&self) -> Option<usize> {
        if self.initial_buckets != 0 {
            return None;
        }
        let mut geometry = self.geometry(0).ok()?;
        let buckets = first_buckets(&geometry, self.max_capacity);
        geometry.shape.bucket_count = buckets;
        let shape = ChunkShape::of(geometry, self.split_depth_of(0));
        let chunks = 1usize << shape.first_depth;
        let held = shape.chunk_capacity().checked_mul(chunks);
        if held.is_some_and(|held| held <= self.max_capacity) {
            return None;
        }
        Some(buckets / chunks * chunks)
    }

    /// `2^split_depth`.
    pub(crate) fn growth_factor(&self) -> usize {
        1 << self.split_depth
    }

    /// Level `level`'s shape, as built and as decoded, or why the plan cannot have it.
    pub(crate) fn level_shape(&self, level: usize) -> Result<ChunkShape, BuildError> {
        // The limit less what the older levels may grow to, as shaped: their chunks may hold
        // more than the capacities planned for them.
        let mut room = self.max_capacity;
        for older in 0..level {
            room -= self.shape_within(older, room)?.most_items();
        }
        self.shape_within(level, room)
    }

    /// Level `level`'s shape within `room` items, or why the plan cannot have it.
    fn shape_within(&self, level: usize, room: usize) -> Result<ChunkShape, BuildError> {
        let depth = self.split_depth_of(level);
        let mut geometry = self.geometry(level)?;
        if depth == 0 {
            return Err(BuildError::FingerprintBits {
                bits: geometry.shape.fingerprint_bits + 1,
            });
        }
        if self.initial_buckets == 0 {
            geometry.shape.bucket_count = first_buckets(&geometry, room);
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

    /// The plan's depth, or less where the level's core and route bits would pass 32 bits.
    pub(crate) fn split_depth_of(&self, level: usize) -> u32 {
        let mut table = self.table;
        table.capacity = 1;
        table.request.false_positive_rate = Some(self.rate_of(level));
        let core = table
            .geometry()
            .map_or(32, |geometry| geometry.shape.fingerprint_bits);
        self.split_depth.min(32u32.saturating_sub(core))
    }

    /// Items level `level` is sized for when added, if that fits in a `usize`.
    pub(crate) fn capacity_of(&self, level: usize) -> Option<usize> {
        let shift: u32 = (0..level).map(|i| self.split_depth_of(i)).sum();
        self.initial_capacity
            .checked_mul(1usize.checked_shl(shift)?)
            .filter(|capacity| capacity >> shift == self.initial_capacity)
    }

    /// Items the levels `levels` are sized for together, if that fits.
    fn capacity_of_levels(&self, levels: core::ops::RangeInclusive<usize>) -> Option<usize> {
        levels
            .into_iter()
            .try_fold(0usize, |sum, i| sum.checked_add(self.capacity_of(i)?))
    }

    /// `ε/2^(level+1)`: the levels' rates sum to less than `ε`.
    pub(crate) fn rate_of(&self, level: usize) -> f64 {
        self.false_positive_rate / 2f64.powi(level as i32 + 1)
    }

    /// The geometry of level `level`, if the plan's limit allows that level.
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

/// `geometry`'s buckets (from its capacity) raised to the smallest chunk, as far as `room` allows.
fn first_buckets(geometry: &Geometry, room: usize) -> usize {
    let shape = &geometry.shape;
    let per_bucket = shape.bucket_size as u64 * target_load_permille(shape.bucket_size);
    let fit = (room as u64).saturating_mul(1000) / per_bucket;
    let least = (MIN_CHUNK_BUCKETS as u64).min(fit) as usize;
    // Never past the limit, which a fixed filter's slack for small tables may pass.
    shape.bucket_count.max(least).min(fit.max(1) as usize)
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
    /// Levels published, raised (`Release`) after their slot is filled, before `grow` returns.
    published: AtomicU64,
    plan: Plan,
}

impl Levels {
    pub(crate) fn new(plan: Plan) -> Result<Self, BuildError> {
        let first = build_level(&plan, 0)?;
        Ok(Self::from_levels(plan, vec![first]))
    }

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

    /// Levels published so far, at least 1.
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        // Every slot below it was filled before the store that raised it, which this load reads.
        self.published.load(Ordering::Acquire) as usize
    }

    /// Panics for a level not published: callers ask for levels below a `count` they read.
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
        let added = self.slots.iter().map_while(|slot| slot.get()?.as_ref());
        core::iter::once(&self.first).chain(added)
    }

    /// Every published level with every chunk locked: no writer anywhere until the guards drop.
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

    /// A copy taken under [`Self::lock_all`]; `None` without the memory.
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

    /// Makes sure a level after `newest` exists, adding it if no other thread has; `false` if
    /// none can be added (for good, or until memory can be had).
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
            // Before returning: the caller's next `count` must show it.
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
