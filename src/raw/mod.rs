//! The raw filter: the concurrency protocol over 64-bit hashes, computed before any lock is
//! taken, with no generics and no user code. The protocol is docs/architecture.md's "How it
//! works"; each file states its part where it is enforced.

mod block;
mod bucket;
mod bucket_word;
mod geometry;
mod index;
mod insert;
mod lookup;
pub(crate) use self::lookup::{contains_blocks, AHEAD};
#[cfg(all(target_os = "linux", not(loom)))]
mod mapped;
mod merge;
#[cfg(all(target_os = "linux", not(loom)))]
mod owners;
mod path;
mod queue;
mod semisort;
#[cfg(all(test, not(loom)))]
mod stall;
mod stripe;
mod stripe_count;
mod table;

use core::fmt;

use self::bucket::BucketCodec;
use self::stripe::AllStripesGuard;
pub(crate) use self::stripe::{Guard, Stripes};
use self::table::Table;
use crate::sync::{table_words, TableWords};

pub(crate) use self::block::BLOCK;
pub(crate) use self::bucket::{fits_bucket_word, Fingerprints};
pub(crate) use self::geometry::{Geometry, Shape};
pub(crate) use self::index::{
    level_hash, reflect, window, BucketIndex, Candidates, Fingerprint, Lanes, Place, Placement,
    Words, MAX_BUCKET_COUNT,
};
#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) use self::mapped::{Damage, MappedParts};
#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) use self::owners::{Registry, STRIDE as SHARED_STRIDE};
pub(crate) use self::path::{
    default_max_hops, search, CuckooPath, PathTable, SearchLimits, MAX_HOPS,
};
pub(crate) use self::queue::{with_queue, SearchQueue};
pub(crate) use self::stripe_count::{
    accepted_item_locks, accepted_stripes, default_stripe_count, is_accepted, min_stripes,
    DEFAULT_ITEM_LOCKS,
};
#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) use self::table::SPARE_WORDS;
pub(crate) use self::table::WRITE_PREFETCH_MIN_BYTES;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Insertion {
    Inserted,
    /// A unique insert found the fingerprint already in one of its buckets.
    Present,
    /// No room, and nothing changed.
    Full,
}

// In this order, aligned: what a lookup reads first spans few lines (a growable's many tables).
#[repr(C, align(64))]
pub(crate) struct RawFilter<P: Place = Placement> {
    placement: P,
    stripes: Stripes,
    table: Table,
    codec: BucketCodec,
    gate: P::Gate,
    geometry: Geometry,
}

impl RawFilter {
    pub(crate) fn new(geometry: &Geometry) -> Option<Self> {
        Self::with_placement(geometry, Self::placement_for(geometry), ())
    }

    fn placement_for(geometry: &Geometry) -> Placement {
        Placement::new(geometry.shape.bucket_count, geometry.shape.fingerprint_bits)
    }

    /// A filter over a table's data words, little-endian; its stripe counts recomputed.
    pub(crate) fn from_le_bytes(geometry: &Geometry, bytes: &[u8]) -> Option<Self> {
        if bytes.len() % 8 != 0 {
            return None;
        }
        let words = bytes.chunks_exact(8).map(|word| {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            u64::from_le_bytes(le)
        });
        Self::from_data_words(geometry, words)
    }

    /// A filter over a table's data words; its stripe counts recomputed.
    pub(crate) fn from_data_words(
        geometry: &Geometry,
        words: impl ExactSizeIterator<Item = u64>,
    ) -> Option<Self> {
        let codec = geometry.shape.codec();
        let table = Table::from_data_words(geometry.shape.bucket_count, &codec, words)?;
        let stamps = table_words(geometry.stripe_count(), false)?;
        let mut filter = Self::with_table(
            geometry,
            codec,
            table,
            stamps,
            Self::placement_for(geometry),
            (),
        )?;
        for bucket in 0..geometry.shape.bucket_count {
            let raw = filter.table.load(bucket);
            let used = geometry.shape.bucket_size - filter.codec.count(&raw, 0);
            filter.stripes.add_count(bucket, used as u64);
        }
        Some(filter)
    }

    /// Whether the table is words of a live file's mapping.
    pub(crate) fn is_mapped(&self) -> bool {
        #[cfg(all(target_os = "linux", not(loom)))]
        return self.stripes.shared.is_some();
        #[cfg(not(all(target_os = "linux", not(loom))))]
        false
    }

    /// An unshared copy of a state the table really had: under every stripe lock, or for a
    /// read-only opener, which cannot lock, [`Self::copy_unlocked`]. `None` without the memory.
    pub(crate) fn duplicate(&self) -> Option<RawFilter> {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.stripes.read_only_locks() {
            return self.copy_unlocked(shared).map(|copy| copy.filter);
        }
        self.lock_table().duplicate()
    }

    /// The first bucket not in the form the encoder writes.
    pub(crate) fn first_non_canonical_bucket(&self) -> Option<BucketIndex> {
        (0..self.bucket_count()).find(|&bucket| {
            !self.codec.is_canonical(&self.table.load(bucket))
                || (self.codec.is_word()
                    && self.table.has_bits_above(bucket, self.codec.limb_bits()))
        })
    }
}

impl<P: Place> RawFilter<P> {
    pub(crate) fn with_placement(geometry: &Geometry, placement: P, gate: P::Gate) -> Option<Self> {
        let codec = geometry.shape.codec();
        let table = Table::new(geometry.shape.bucket_count, &codec)?;
        let stamps = table_words(geometry.stripe_count(), false)?;
        Self::with_table(geometry, codec, table, stamps, placement, gate)
    }

    /// A filter over `table`, its stripes over `stamps` as they are.
    fn with_table(
        geometry: &Geometry,
        codec: BucketCodec,
        table: Table,
        stamps: TableWords,
        placement: P,
        gate: P::Gate,
    ) -> Option<Self> {
        let stripes = Stripes::with_stamps(
            stamps,
            Table::lock_group_shift(&codec),
            geometry.shape.bucket_count,
            geometry.shape.bucket_size,
        )?;
        Some(Self {
            geometry: *geometry,
            placement,
            codec,
            table,
            stripes,
            gate,
        })
    }

    /// The same table and stripes under another placement of the same geometry.
    pub(crate) fn with_new_placement<Q: Place>(self, placement: Q, gate: Q::Gate) -> RawFilter<Q> {
        RawFilter {
            geometry: self.geometry,
            codec: self.codec,
            placement,
            table: self.table,
            stripes: self.stripes,
            gate,
        }
    }

    pub(crate) fn placement(&self) -> &P {
        &self.placement
    }

    pub(crate) fn gate(&self) -> &P::Gate {
        &self.gate
    }

    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.table.bucket_count()
    }

    pub(crate) fn bucket_size(&self) -> usize {
        self.codec.bucket_size()
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.codec.fingerprint_bits()
    }

    pub(crate) fn is_semi_sorted(&self) -> bool {
        self.codec.is_semi_sorted()
    }

    pub(crate) fn stripe_count(&self) -> usize {
        self.stripes.count()
    }

    /// Fingerprints stored. Exact when no write is in flight.
    pub(crate) fn len(&self) -> usize {
        self.stripes.len()
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.table.memory_usage() + self.stripes.memory_usage() + core::mem::size_of::<Self>()
    }

    pub(crate) fn debug_candidates(&self, hash: u64) -> Candidates {
        self.placement.candidates(hash)
    }

    /// Removes one copy of the hash's fingerprint; `false` if neither bucket holds it.
    pub(crate) fn remove<const SHARED: bool>(&self, hash: u64) -> bool {
        let c = self.placement.candidates(hash);
        // Only the stripe of the bucket an unlocked look names (one stamp line fewer for other
        // cores to miss on); both stripes if the copy moved meanwhile, so no move can hide it.
        let pattern = self.codec.broadcast(c.fp);
        let seen = [c.first, c.second]
            .into_iter()
            .find(|&bucket| self.codec.matches(&self.table.load(bucket), pattern));
        if let Some(bucket) = seen {
            if self.remove_from(bucket, c.fp, &mut self.stripes.lock_one::<SHARED>(bucket)) {
                return true;
            }
        }
        let mut guard = self.stripes.lock_pair::<SHARED>(c.first, c.second);
        [c.first, c.second]
            .into_iter()
            .any(|bucket| self.remove_from(bucket, c.fp, &mut guard))
    }

    #[inline(always)]
    fn admits(&self, fp: Option<Fingerprint>) -> bool {
        self.placement.admits(&self.gate, fp)
    }

    /// Removes one copy of `fp` from `bucket` under `guard`; `false` if none or refused.
    fn remove_from(&self, bucket: BucketIndex, fp: Fingerprint, guard: &mut impl Guard) -> bool {
        if !self.admits(Some(fp)) {
            return false;
        }
        let mut raw = self.table.load(bucket);
        let removed = self.codec.remove(&mut raw, fp);
        if removed {
            self.table.store(bucket, &raw);
            guard.add(bucket, -1);
        }
        removed
    }
}
impl<P: Place> fmt::Debug for RawFilter<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFilter")
            .field("bucket_count", &self.bucket_count())
            .field("bucket_size", &self.bucket_size())
            .field("fingerprint_bits", &self.fingerprint_bits())
            .field("stripes", &self.stripe_count())
            .field("len", &self.len())
            .field("limits", &self.geometry.limits)
            .finish()
    }
}

/// A table with every stripe locked: no writer is anywhere in it until this drops.
#[derive(Debug)]
pub(crate) struct LockedTable<'a, P: Place = Placement> {
    filter: &'a RawFilter<P>,
    all: AllStripesGuard<'a>,
}

impl<P: Place> RawFilter<P> {
    /// Locks every stripe, in index order as writers do.
    pub(crate) fn lock_table(&self) -> LockedTable<'_, P> {
        LockedTable {
            filter: self,
            all: self.stripes.lock_all(),
        }
    }
}

impl<P: Place> LockedTable<'_, P> {
    pub(crate) fn items(&self) -> usize {
        self.filter.stripes.len()
    }

    pub(crate) fn data_words(&self) -> usize {
        self.filter.table.data_words()
    }

    /// The data words from `from` on, bucket words' versions left out, for a writer that streams.
    pub(crate) fn read_words(&self, from: usize, out: &mut [u64]) {
        self.filter.table.read_words(from, out);
    }

    pub(crate) fn clear(&mut self) {
        self.filter.table.clear();
        self.all.clear_counts();
    }

    /// An unlocked, unshared copy; `None` if its memory cannot be had.
    pub(crate) fn duplicate(&self) -> Option<RawFilter<P>> {
        let filter = self.filter;
        Some(RawFilter {
            placement: filter.placement,
            stripes: filter.stripes.duplicate()?,
            table: filter.table.duplicate(&filter.codec)?,
            codec: filter.codec.clone(),
            gate: filter.placement.duplicate_gate(&filter.gate),
            geometry: filter.geometry,
        })
    }
}
