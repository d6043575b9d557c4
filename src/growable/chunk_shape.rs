//! How a level of chunks is shaped, planned before anything is allocated.

use super::split::SplitPlacement;
use crate::raw::Geometry;
use crate::sizing::target_load_permille;

/// A split copies a chunk while its writers wait: a level sized for more starts as several.
const MAX_CHUNK_BUCKETS: usize = 1 << 16;

/// A level's directory has `2^MAX_ROUTE_BITS` words at most.
pub(crate) const MAX_ROUTE_BITS: u32 = 24;

/// A chunk splits when it is full, not its level: the larger, the nearer its fill to the mean.
pub(crate) const MIN_CHUNK_BUCKETS: usize = 1 << 10;

/// How a level's chunks are shaped, as the builder and the decoder plan it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChunkShape {
    /// Every chunk's geometry, with the core bits as its fingerprint width.
    pub(crate) template: Geometry,
    /// Route bits the level's chunks split until each has.
    pub(crate) route_bits: u32,
    /// Route bits of the level's first chunks.
    pub(crate) first_depth: u32,
    /// Chunks the level may have (a filter's `max_capacity`).
    pub(crate) max_chunks: u64,
}

impl ChunkShape {
    /// A level of `template`'s buckets in all, to split `growth_depth` times, with no limit.
    pub(crate) fn of(template: Geometry, growth_depth: u32) -> Self {
        let buckets = template.shape.bucket_count;
        let first_depth = buckets
            .div_ceil(MAX_CHUNK_BUCKETS)
            .next_power_of_two()
            .trailing_zeros();
        let mut template = template;
        template.shape.bucket_count = buckets.div_ceil(1 << first_depth);
        Self {
            template,
            route_bits: first_depth + growth_depth,
            first_depth,
            max_chunks: u64::MAX,
        }
    }

    /// Items a chunk is sized for: its slots at the target load (no small-table slack), at least 1.
    pub(crate) fn chunk_capacity(&self) -> usize {
        let shape = &self.template.shape;
        let slots = (shape.bucket_count * shape.bucket_size) as u64;
        (slots * target_load_permille(shape.bucket_size) / 1000).max(1) as usize
    }

    /// Items the level may grow to: its most chunks, at most one per route, at their capacity.
    pub(crate) fn most_items(&self) -> usize {
        let chunks = self.max_chunks.min(1 << self.route_bits) as usize;
        chunks.saturating_mul(self.chunk_capacity())
    }

    /// The placement of a chunk whose id has `born_at` route bits.
    pub(crate) fn placement(&self, born_at: u32) -> SplitPlacement {
        let table = &self.template.shape;
        let (buckets, core_bits) = (table.bucket_count, table.fingerprint_bits);
        SplitPlacement::new(buckets, core_bits, born_at, self.route_bits)
    }
}
