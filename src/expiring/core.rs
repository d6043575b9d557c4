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

/// A bucket as an insert reads it: its free slots, and a live copy's slot and value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BucketRead {
    pub(crate) free: u32,
    pub(crate) live_copy: Option<(usize, u64)>,
}

/// A bucket read once: its tags, and bit `i` of each mask for slot `i`.
#[derive(Clone, Copy, Debug)]
struct Masks {
    tags: u64,
    matches: u32,
    empty: u32,
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
    /// The inline lookup's lanes: tags beside the fingerprints, and a clock that never runs ahead.
    pub(crate) inline_lanes: Option<Lanes>,
}

impl Table {
    /// `bucket`'s tags, its slots holding `fp`, and its empty slots, from one read.
    #[inline(always)]
    fn masks(&self, bucket: usize, fp: u32) -> Masks {
        let Some(lanes) = self.slots.lanes() else {
            let fps = self.slots.fingerprints_of(bucket);
            let holding =
                |want| (0..BUCKET_SIZE).fold(0, |m, i| m | u32::from(fps[i] == want) << i);
            return Masks {
                tags: self.slots.tags(bucket, None),
                matches: holding(fp),
                empty: holding(0),
            };
        };
        let bits = self.slots.bucket_bits(bucket);
        Masks {
            tags: self.slots.tags(bucket, Some(bits)),
            matches: lanes.slots(lanes.matches(bits.low, fp)),
            empty: lanes.slots(lanes.matches(bits.low, 0)),
        }
    }

    /// Which of `tags` are expired in generation `g` seen `lag` generations late.
    #[inline(always)]
    fn expired(&self, tags: u64, g: u64, lag: u64) -> u32 {
        match self.ages.generations.checked_sub(lag) {
            Some(generations) => Ages { generations }.expired_lanes(tags, g),
            None => (1 << BUCKET_SIZE) - 1,
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
        let masks = self.masks(bucket, fp);
        first_live(masks, fp, self.expired(masks.tags, g, lag))
    }

    pub(crate) fn count_live(&self, bucket: usize, fp: u32, g: u64, lag: u64) -> usize {
        let masks = self.masks(bucket, fp);
        (masks.matches & !self.expired(masks.tags, g, lag)).count_ones() as usize
    }

    /// Which of `bucket`'s slots are free in generation `g`: empty, or expired.
    #[inline(always)]
    pub(crate) fn free_lanes(&self, bucket: usize, g: u64) -> u32 {
        let masks = self.masks(bucket, 0);
        self.ages.expired_lanes(masks.tags, g) | masks.empty
    }

    /// Which of `bucket`'s slots hold a fingerprint expired in generation `g`.
    #[inline(always)]
    pub(crate) fn expired_slots(&self, bucket: usize, g: u64) -> u32 {
        let masks = self.masks(bucket, 0);
        self.ages.expired_lanes(masks.tags, g) & !masks.empty
    }

    #[inline(always)]
    pub(crate) fn read_bucket(&self, bucket: usize, fp: u32, g: u64) -> BucketRead {
        let masks = self.masks(bucket, fp);
        let expired = self.ages.expired_lanes(masks.tags, g);
        BucketRead {
            free: expired | masks.empty,
            live_copy: first_live(masks, fp, expired),
        }
    }
}

/// The first of `masks`' slots holding `fp` and not `expired`, with its value.
#[inline(always)]
fn first_live(masks: Masks, fp: u32, expired: u32) -> Option<(usize, u64)> {
    let live = masks.matches & !expired;
    (live != 0).then(|| {
        let i = live.trailing_zeros();
        (i as usize, Ages::slot(fp, masks.tags >> (i * TAG_BITS)))
    })
}
