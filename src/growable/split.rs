//! A chunk's placement and split (docs/growth.md, "How it grows", gives the protocol): a chunk
//! holds the keys whose route starts with its id; a fingerprint carries the route bits its chunk
//! may still split on (*growth* bits, below the *core*), and the alternate bucket depends on the
//! core alone, so a moving fingerprint goes to the same bucket of the new chunk.

use crate::raw::{
    reflect, BucketIndex, Candidates, Fingerprint, Fingerprints, Geometry, Place, RawFilter,
};
use crate::sync::{AtomicU64, Ordering};

const ROUTE_MIX: u64 = 0xd6e8_feb8_6659_fd93;

/// The bits that pick a hash's chunk, low bit first: mixed from all 64, so independent of the
/// bucket (the high half) and the fingerprint (the low half).
#[inline(always)]
pub(crate) fn route_of(hash: u64) -> u32 {
    ((hash ^ (hash >> 32)).wrapping_mul(ROUTE_MIX) >> 32) as u32
}

/// Where a chunk puts a hash: the fixed placement's, with the alternate from the core bits only.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitPlacement {
    bucket_count: u64,
    /// 2^core_bits - 1, the non-zero cores.
    cores: u64,
    /// Route bits kept in each fingerprint, below its core.
    growth_bits: u32,
    growth_mask: u32,
    /// Route bits of the chunk's id; its keys' later route bits are growth bits.
    born_at: u32,
}

impl SplitPlacement {
    /// A chunk for routes `born_at` bits deep, which may split until `route_bits` deep.
    pub(crate) fn new(bucket_count: usize, core_bits: u32, born_at: u32, route_bits: u32) -> Self {
        debug_assert!(born_at <= route_bits && core_bits + route_bits - born_at <= 32);
        Self {
            bucket_count: bucket_count as u64,
            cores: (1u64 << core_bits) - 1,
            growth_bits: route_bits - born_at,
            growth_mask: ((1u64 << (route_bits - born_at)) - 1) as u32,
            born_at,
        }
    }

    /// The placement of the chunk a split `depth` deep creates.
    pub(crate) fn child(&self, depth: u32) -> Self {
        debug_assert!(depth >= self.born_at && depth < self.max_depth());
        let (buckets, core_bits) = (self.bucket_count as usize, self.cores.count_ones());
        Self::new(buckets, core_bits, depth + 1, self.max_depth())
    }

    pub(crate) fn born_at(&self) -> u32 {
        self.born_at
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.cores.count_ones() + self.growth_bits
    }

    pub(crate) fn max_depth(&self) -> u32 {
        self.born_at + self.growth_bits
    }

    /// The level's `template` with this placement's fingerprint width.
    pub(crate) fn geometry(&self, template: Geometry) -> Geometry {
        let mut geometry = template;
        geometry.shape.fingerprint_bits = self.fingerprint_bits();
        geometry
    }

    /// Whether a split `depth` deep moves `fp`: its route bit `depth` is 1.
    fn moves(&self, fp: Fingerprint, depth: u32) -> bool {
        (fp >> (depth - self.born_at)) & 1 == 1
    }

    /// `fp` in the new chunk of a split `depth` deep: its route bits up to `depth` dropped.
    fn moved(&self, fp: Fingerprint, depth: u32) -> Fingerprint {
        fp >> (depth + 1 - self.born_at)
    }

    /// [`Place::candidates`] of a hash whose route is known.
    #[inline(always)]
    pub(crate) fn candidates_on(&self, hash: u64, route: u32) -> Candidates {
        self.candidates_of(Placed {
            core: (((hash & 0xffff_ffff) * self.cores) >> 32) as u32 + 1,
            route,
            bucket: (((hash >> 32) * self.bucket_count) >> 32) as BucketIndex,
        })
    }

    /// The candidates in this chunk of a fingerprint known by core, route and one bucket.
    #[inline(always)]
    pub(crate) fn candidates_of(&self, placed: Placed) -> Candidates {
        let growth = (placed.route >> self.born_at) & self.growth_mask;
        Candidates {
            fp: placed.core << self.growth_bits | growth,
            first: placed.bucket,
            second: reflect(placed.bucket, placed.core, self.bucket_count),
        }
    }

    /// A fingerprint of chunk `id`, with its whole route: the id's bits, then its growth bits.
    fn placed(&self, id: u64, bucket: BucketIndex, fp: Fingerprint) -> Placed {
        Placed {
            core: fp >> self.growth_bits,
            route: id as u32 | (fp & self.growth_mask) << self.born_at,
            bucket,
        }
    }

    /// Split `depth` deep, a chunk keeps the keys whose route bits from its birth to `depth` are 0.
    fn owns(&self, fp: Fingerprint, depth: u32) -> bool {
        let decided = ((1u64 << (depth - self.born_at)) - 1) as u32;
        fp & decided == 0
    }
}

/// A fingerprint of a level known without its key: what a merge carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placed {
    /// Its core bits, never 0.
    pub(crate) core: u32,
    /// All of the level's route bits.
    pub(crate) route: u32,
    /// The bucket it was found in.
    pub(crate) bucket: BucketIndex,
}

impl Place for SplitPlacement {
    /// The chunk's split state, `refused << 33 | depth << 1 | sealed`, which its writers check
    /// under their locks; changed only with every stripe locked.
    type Gate = AtomicU64;

    #[inline]
    fn candidates(&self, hash: u64) -> Candidates {
        self.candidates_on(hash, route_of(hash))
    }

    #[inline]
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex {
        reflect(bucket, fp >> self.growth_bits, self.bucket_count)
    }

    /// Not while sealed, nor a fingerprint a split gave to another chunk.
    #[inline(always)]
    fn admits(&self, gate: &AtomicU64, fp: Option<Fingerprint>) -> bool {
        let state = SplitState(gate.load(Ordering::Relaxed));
        !state.is_sealed() && fp.map_or(true, |fp| self.owns(fp, state.depth()))
    }

    fn duplicate_gate(&self, gate: &AtomicU64) -> AtomicU64 {
        AtomicU64::new(gate.load(Ordering::Relaxed))
    }
}

/// The gate of a chunk split `depth` deep, unsealed.
fn unsealed(depth: u32) -> AtomicU64 {
    AtomicU64::new(u64::from(depth) << 1)
}

/// One refused split in a chunk's split state: above the depth's 32 bits, which `depth` drops.
const REFUSED: u64 = 1 << 33;

/// A chunk's split state as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SplitState(u64);

impl SplitState {
    pub(crate) fn depth(self) -> u32 {
        (self.0 >> 1) as u32
    }

    pub(crate) fn is_sealed(self) -> bool {
        self.0 & 1 == 1
    }
}

impl RawFilter<SplitPlacement> {
    /// Every fingerprint of this chunk, `id`, each bucket read as a state it really had.
    pub(crate) fn placed_fingerprints(&self, id: u64) -> impl Iterator<Item = Placed> + '_ {
        (0..self.bucket_count()).flat_map(move |bucket| {
            self.bucket_fingerprints(bucket)
                .as_slice()
                .iter()
                .filter(|&&fp| fp != 0)
                .map(|&fp| self.placement().placed(id, bucket, fp))
                .collect::<Vec<_>>()
        })
    }

    /// An empty chunk split `depth` deep; `None` without the memory.
    pub(crate) fn new_chunk(
        template: Geometry,
        placement: SplitPlacement,
        depth: u32,
    ) -> Option<Self> {
        Self::with_placement(&placement.geometry(template), placement, unsealed(depth))
    }

    /// `Acquire`: a caller that sees a split finished sees the route published before.
    pub(crate) fn split_state(&self) -> SplitState {
        SplitState(self.gate().load(Ordering::Acquire))
    }

    /// Seals the chunk if its state is still `seen`: after `true` no write is in it, nor gets in
    /// until it is unsealed; `false`: another thread split or sealed it first.
    pub(crate) fn try_seal(&self, seen: SplitState) -> bool {
        let _all = self.lock_table();
        let state = self.gate();
        let sealed = state.load(Ordering::Relaxed) == seen.0 && !seen.is_sealed();
        if sealed {
            state.store(seen.0 | 1, Ordering::Relaxed);
        }
        sealed
    }

    /// For a split that could not be made. Counted in the state: a write the seal refused sees
    /// it changed and tries again, where the same state would say the chunk had no room.
    pub(crate) fn unseal_unsplit(&self) {
        let _all = self.lock_table();
        let state = self.gate();
        let refused = (state.load(Ordering::Relaxed) & !1).wrapping_add(REFUSED);
        state.store(refused, Ordering::Release);
    }

    /// Copies what the sealed chunk's split moves into `child`, unseen yet, at the same buckets.
    pub(crate) fn copy_moving_into(&self, child: &mut Self) {
        let depth = self.split_state().depth();
        for bucket in 0..self.bucket_count() {
            let (moved, _) = self.divide(bucket, depth);
            if !moved.is_empty() {
                child.fill_bucket(bucket, moved.as_slice());
            }
        }
    }

    /// What a split `depth` deep moves of `bucket`, as the new chunk holds it, and the bucket as
    /// it leaves it.
    fn divide(&self, bucket: BucketIndex, depth: u32) -> (Fingerprints, Fingerprints) {
        let (mut moved, mut kept) = (Fingerprints::default(), Fingerprints::default());
        for &fp in self.bucket_fingerprints(bucket).as_slice() {
            if fp != 0 && self.placement().moves(fp, depth) {
                moved.push(self.placement().moved(fp, depth));
                kept.push(0);
            } else {
                kept.push(fp);
            }
        }
        (moved, kept)
    }

    /// Removes what [`Self::copy_moving_into`] copied, bucket by bucket under its stripe's lock
    /// (readers see each bucket change whole), then unseals the chunk one split deeper. Call
    /// only once readers look for those keys in the new chunk.
    pub(crate) fn purge_moved_and_unseal(&self) {
        let state = self.split_state();
        debug_assert!(state.is_sealed());
        let depth = state.depth();
        for bucket in 0..self.bucket_count() {
            // Read unlocked: a sealed chunk changes only here.
            let (moved, kept) = self.divide(bucket, depth);
            if !moved.is_empty() {
                self.empty_slots_of(bucket, kept.as_slice(), moved.as_slice().len());
            }
        }
        let _all = self.lock_table();
        self.gate()
            .store(u64::from(depth + 1) << 1, Ordering::Release);
    }

    /// The first bucket holding a fingerprint of a route given away, or of core 0 (no key's).
    pub(crate) fn first_unowned_bucket(&self) -> Option<BucketIndex> {
        let (depth, placement) = (self.split_state().depth(), self.placement());
        let unowned = |fp| fp >> placement.growth_bits == 0 || !placement.owns(fp, depth);
        (0..self.bucket_count()).find(|&bucket| {
            self.bucket_fingerprints(bucket)
                .as_slice()
                .iter()
                .any(|&fp| fp != 0 && unowned(fp))
        })
    }
}

impl RawFilter {
    /// A decoded table as a chunk split `depth` deep, stripes and counts as they are.
    pub(crate) fn into_chunk(
        self,
        placement: SplitPlacement,
        depth: u32,
    ) -> RawFilter<SplitPlacement> {
        debug_assert_eq!(
            self.geometry().shape.fingerprint_bits,
            placement.fingerprint_bits()
        );
        debug_assert!(placement.born_at() <= depth && depth <= placement.max_depth());
        self.with_new_placement(placement, unsealed(depth))
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/growable/split.rs"]
mod tests;
