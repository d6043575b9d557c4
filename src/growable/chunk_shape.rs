//! How a level of chunks is shaped: how many chunks it starts as, their buckets, how many route
//! bits it resolves and how many chunks it may have, planned before anything is allocated.

use super::split::SplitPlacement;
use crate::raw::Geometry;
use crate::sizing::target_load_permille;

/// Buckets a chunk has at most: a split copies one chunk while that chunk's writers wait, so a
/// level sized for more starts as several chunks.
const MAX_CHUNK_BUCKETS: usize = 1 << 16;

/// The most route bits a level resolves: its directory has `2^MAX_ROUTE_BITS` words at most.
pub(crate) const MAX_ROUTE_BITS: u32 = 24;

/// Buckets a chunk has at least. A chunk's items find room only in its own buckets, and a level
/// splits a chunk when it is full, not when the level is: the more slots a chunk has, the closer
/// its fill when full is to the average, and past 4,096 slots a level of many chunks loads about
/// as well as one table (92% when the first of 64 such chunks fills, against 95%).
pub(crate) const MIN_CHUNK_BUCKETS: usize = 1 << 10;

/// How a level's chunks are shaped, as the builder and the decoder plan it and
/// [`Chunks::shape`](super::chunks::Chunks::shape) reads it back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChunkShape {
    /// Every chunk's geometry but its fingerprint width, which is the core bits here.
    pub(crate) template: Geometry,
    /// Route bits the level resolves: its chunks split until each has this many.
    pub(crate) route_bits: u32,
    /// How many route bits the level's first chunks have.
    pub(crate) first_depth: u32,
    /// How many chunks the level may have (a filter's `max_capacity`).
    pub(crate) max_chunks: u64,
}

impl ChunkShape {
    /// What the level `template` (all its buckets together) becomes when it is to split
    /// `growth_depth` times: one chunk's template, the route bits and the first chunks' depth,
    /// with no limit on its chunks.
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

    /// Items a chunk is sized for: its slots at the target load (past the small-table slack a
    /// fixed filter's sizing adds, as chunks are large), at least 1. Its header records it.
    pub(crate) fn chunk_capacity(&self) -> usize {
        let shape = &self.template.shape;
        let slots = (shape.bucket_count * shape.bucket_size) as u64;
        (slots * target_load_permille(shape.bucket_size) / 1000).max(1) as usize
    }

    /// The placement of a chunk of the level whose id has `born_at` route bits.
    pub(crate) fn placement(&self, born_at: u32) -> SplitPlacement {
        let table = &self.template.shape;
        let (buckets, core_bits) = (table.bucket_count, table.fingerprint_bits);
        SplitPlacement::new(buckets, core_bits, born_at, self.route_bits)
    }
}
