//! The expiring table: its parts, and the reads of a bucket's slots every operation shares.

use super::clock::Generations;
use super::slots::{Slots, BUCKET_SIZE};
use super::window::{Ages, Overflow, Window, TAG_BITS};
use crate::raw::{Lanes, Placement, Stripes};
use crate::sync::AtomicU64;

/// What a builder settled, kept for `stats`, the encoding and `Debug`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Settings {
    pub(crate) window: Window,
    pub(crate) overflow: Overflow,
    pub(crate) clock: super::window::Clock,
    /// The most items one window holds: a count window's item count, a time window's capacity.
    pub(crate) capacity: u64,
    pub(crate) fingerprint_bits: u32,
    pub(crate) bucket_count: usize,
    /// `G`.
    pub(crate) generations: u32,
}

/// A bucket read once in a generation: its tags, and bit `i` of each mask for slot `i`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Masks {
    tags: u64,
    /// Slots holding the fingerprint looked for.
    matches: u32,
    pub(crate) empty: u32,
    pub(crate) expired: u32,
}

impl Masks {
    /// Slots empty or expired.
    #[inline(always)]
    pub(crate) fn free(&self) -> u32 {
        self.expired | self.empty
    }

    /// Slots holding the fingerprint, live.
    #[inline(always)]
    pub(crate) fn live(&self) -> u32 {
        self.matches & !self.expired
    }

    /// The first live slot holding `fp`, and its value.
    #[inline(always)]
    pub(crate) fn first_live(&self, fp: u32) -> Option<(usize, u64)> {
        let live = self.live();
        (live != 0).then(|| {
            let i = live.trailing_zeros();
            (i as usize, Ages::slot(fp, self.tags >> (i * TAG_BITS)))
        })
    }
}

#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) placement: Placement,
    pub(crate) stripes: Stripes,
    pub(crate) slots: Slots,
    pub(crate) ages: Ages,
    pub(crate) clock: Generations,
    pub(crate) settings: Settings,
    /// Buckets each insert sweeps.
    pub(crate) sweep_per_insert: u64,
    /// Generations moved on early because an insert found no room.
    pub(crate) early_expiries: AtomicU64,
    /// The generation the last early expiry counted moved on to: of the inserts that found no
    /// room in one generation, only the first to move past it counts.
    pub(crate) early_counted: AtomicU64,
    /// The inline lookup's lanes: tags beside the fingerprints, and a clock that never runs ahead.
    pub(crate) inline_lanes: Option<Lanes>,
}

impl Table {
    /// `bucket` read once for `fp` in generation `g` seen `lag` generations late.
    #[inline(always)]
    pub(crate) fn masks(&self, bucket: usize, fp: u32, g: u64, lag: u64) -> Masks {
        let (tags, matches, empty) = match self.slots.lanes() {
            Some(lanes) => {
                let bits = self.slots.bucket_bits(bucket);
                let holding = |want| lanes.slots(lanes.matches(bits.low, want));
                (self.slots.tags(bucket, Some(bits)), holding(fp), holding(0))
            }
            None => {
                let fps = self.slots.fingerprints_of(bucket);
                let holding =
                    |want| (0..BUCKET_SIZE).fold(0, |m, i| m | u32::from(fps[i] == want) << i);
                (self.slots.tags(bucket, None), holding(fp), holding(0))
            }
        };
        let expired = match self.ages.generations.checked_sub(lag) {
            Some(generations) => Ages { generations }.expired_lanes(tags, g),
            None => (1 << BUCKET_SIZE) - 1,
        };
        Masks {
            tags,
            matches,
            empty,
            expired,
        }
    }

    /// The first slot of `bucket` with `fp` live in generation `g` seen `lag` late, and its value.
    #[inline(always)]
    pub(crate) fn find_live(
        &self,
        bucket: usize,
        fp: u32,
        g: u64,
        lag: u64,
    ) -> Option<(usize, u64)> {
        self.masks(bucket, fp, g, lag).first_live(fp)
    }

    /// Which of `bucket`'s slots are free in generation `g`: empty, or expired.
    #[inline(always)]
    pub(crate) fn free_lanes(&self, bucket: usize, g: u64) -> u32 {
        self.masks(bucket, 0, g, 0).free()
    }
}
