//! The expiring table: its parts, and the reads every operation shares.

use super::clock::Generations;
use super::slots::{Slots, BUCKET_SIZE};
use super::window::{Ages, Overflow, Window, TAG_BITS};
use crate::raw::{Candidates, Lanes, Place, Placement, Stripes};
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

/// A bucket as an insert reads it: which slots are free, and where a live copy of its
/// fingerprint is (slot and value).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BucketRead {
    pub(crate) free: u32,
    pub(crate) live_copy: Option<(usize, u64)>,
}

/// A table of tagged fingerprints, its stripes and generations.
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
    /// The lane masks of the inline lookup (`lookup.rs`), tested once a lookup: `None` unless
    /// a bucket's fingerprints fit one window with its tags beside them and the clock does not
    /// run ahead of the published generation.
    pub(crate) inline_lanes: Option<Lanes>,
}

impl Table {
    pub(crate) fn candidates(&self, hash: u64) -> Candidates {
        self.placement.candidates(hash)
    }

    /// The first slot of `bucket` holding `fp` live in generation `g`, with its value.
    #[inline(always)]
    pub(crate) fn find_live(
        &self,
        bucket: usize,
        fp: u32,
        g: u64,
        lag: u64,
    ) -> Option<(usize, u64)> {
        if let Some(lanes) = self.slots.lanes() {
            let hits = lanes.matches(self.slots.fingerprints(bucket), fp);
            return self.live_among(lanes, bucket, fp, hits, g, lag);
        }
        let slots = self.slots.bucket(bucket);
        (0..BUCKET_SIZE).find_map(|i| {
            let slot = slots[i];
            (Ages::fingerprint(slot) == u64::from(fp) && self.ages.is_live(slot, g, lag))
                .then_some((i, slot))
        })
    }

    /// The first of `bucket`'s lanes in `hits` (from [`Lanes::matches`] of `fp`) whose tag is
    /// live in generation `g`, with its slot: the tags are read only if some lane matched.
    #[inline(always)]
    pub(crate) fn live_among(
        &self,
        lanes: Lanes,
        bucket: usize,
        fp: u32,
        mut hits: u64,
        g: u64,
        lag: u64,
    ) -> Option<(usize, u64)> {
        if hits == 0 {
            return None;
        }
        let tags = self.slots.tags(bucket);
        while hits != 0 {
            let i = lanes.lane(hits.trailing_zeros());
            let tag = tags >> (i as u32 * TAG_BITS) & Ages::TAG_MASK;
            if Ages::age(tag, g) + lag <= self.ages.generations {
                return Some((i, Ages::slot(fp, tag)));
            }
            hits &= hits - 1;
        }
        None
    }

    /// Which of `bucket`'s slots are free in generation `g` (empty, or expired): bit `i` for
    /// slot `i`.
    #[inline(always)]
    pub(crate) fn free_lanes(&self, bucket: usize, g: u64) -> u32 {
        let [expired, empty] = self.expired_and_empty(bucket, g);
        expired | empty
    }

    /// Which of `bucket`'s slots hold a fingerprint expired in generation `g`: what the sweep
    /// clears.
    #[inline(always)]
    pub(crate) fn expired_slots(&self, bucket: usize, g: u64) -> u32 {
        let [expired, empty] = self.expired_and_empty(bucket, g);
        expired & !empty
    }

    /// `bucket`'s slots whose tags are expired in generation `g` (empty ones too, whose tag is
    /// 0, may be among them), and its empty slots.
    #[inline(always)]
    fn expired_and_empty(&self, bucket: usize, g: u64) -> [u32; 2] {
        match self.slots.lanes() {
            Some(lanes) => {
                let bits = self.slots.bucket_bits(bucket);
                let tags = self.slots.tags_of(bucket, bits);
                [
                    self.ages.expired_lanes(tags, g),
                    empty_lanes(lanes, bits.low),
                ]
            }
            None => {
                let slots = self.slots.bucket(bucket);
                (0..BUCKET_SIZE).fold([0, 0], |[expired, empty], i| {
                    let tag_expired = Ages::age(slots[i], g) > self.ages.generations;
                    [
                        expired | u32::from(tag_expired) << i,
                        empty | u32::from(slots[i] == 0) << i,
                    ]
                })
            }
        }
    }

    /// `bucket` read once in generation `g`: its free slots, and a live copy of `fp`.
    #[inline(always)]
    pub(crate) fn read_bucket(&self, bucket: usize, fp: u32, g: u64) -> BucketRead {
        if let Some(lanes) = self.slots.lanes() {
            let fingerprints = self.slots.fingerprints(bucket);
            let tags = self.slots.tags(bucket);
            let hits = lanes.matches(fingerprints, fp);
            return BucketRead {
                free: self.ages.expired_lanes(tags, g) | empty_lanes(lanes, fingerprints),
                live_copy: self.live_among(lanes, bucket, fp, hits, g, 0),
            };
        }
        let slots = self.slots.bucket(bucket);
        BucketRead {
            free: (0..BUCKET_SIZE).fold(0, |free, i| {
                free | u32::from(!self.ages.is_live(slots[i], g, 0)) << i
            }),
            live_copy: (0..BUCKET_SIZE).find_map(|i| {
                let slot = slots[i];
                (Ages::fingerprint(slot) == u64::from(fp) && self.ages.is_live(slot, g, 0))
                    .then_some((i, slot))
            }),
        }
    }

    /// The fingerprints of `bucket`'s four slots (0: empty).
    #[inline(always)]
    pub(crate) fn fingerprints_of(&self, bucket: usize) -> [u32; BUCKET_SIZE] {
        match self.slots.lanes() {
            Some(_) => {
                let window = self.slots.fingerprints(bucket);
                core::array::from_fn(|i| self.slots.lane_fingerprint(window, i))
            }
            None => self
                .slots
                .bucket(bucket)
                .map(|slot| Ages::fingerprint(slot) as u32),
        }
    }

    /// Live copies of `fp` in `bucket`.
    pub(crate) fn count_live(&self, bucket: usize, fp: u32, g: u64, lag: u64) -> usize {
        self.slots
            .bucket(bucket)
            .into_iter()
            .filter(|&slot| {
                Ages::fingerprint(slot) == u64::from(fp) && self.ages.is_live(slot, g, lag)
            })
            .count()
    }
}

/// The lanes of a bucket's `fingerprints` window that hold fingerprint 0 (empty slots), bit `i`
/// for slot `i`: nearly always none, so a loop over the matches.
#[inline(always)]
fn empty_lanes(lanes: Lanes, fingerprints: u64) -> u32 {
    let mut matches = lanes.matches(fingerprints, 0);
    let mut empty = 0;
    while matches != 0 {
        empty |= 1 << lanes.lane(matches.trailing_zeros());
        matches &= matches - 1;
    }
    empty
}
