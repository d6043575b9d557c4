//! How a level of chunks is shaped: how many chunks it starts as, their buckets, and how many
//! route bits it resolves, planned from the level's geometry before anything is allocated.

use crate::raw::{Geometry, Shape};
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

/// How a level's chunks are shaped: what [`PlannedChunks::of`] plans and
/// [`Chunks::shape`](super::chunks::Chunks::shape) reads back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChunkShape {
    /// Every chunk's geometry but its fingerprint width, which is the core bits here.
    pub(crate) template: Geometry,
    /// Route bits the level resolves: its chunks split until each has this many.
    pub(crate) route_bits: u32,
    /// How many route bits the level's first chunks have.
    pub(crate) first_depth: u32,
}

/// A level's [`ChunkShape`] as planned, and the items each chunk is sized for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlannedChunks {
    pub(crate) shape: ChunkShape,
    pub(crate) chunk_capacity: usize,
}

impl PlannedChunks {
    /// What the level `template` (all its buckets together) splitting `growth_depth` times
    /// becomes: one chunk's template, the route bits and the first chunks' depth, and the items
    /// each chunk is sized for. Nothing is built: the builder and the decoder start from it.
    pub(crate) fn of(template: Geometry, growth_depth: u32) -> Self {
        let buckets = template.shape.bucket_count;
        let first_depth = buckets
            .div_ceil(MAX_CHUNK_BUCKETS)
            .next_power_of_two()
            .trailing_zeros();
        let mut template = template;
        template.shape.bucket_count = buckets.div_ceil(1 << first_depth);
        PlannedChunks {
            shape: ChunkShape {
                template,
                route_bits: first_depth + growth_depth,
                first_depth,
            },
            chunk_capacity: chunk_capacity(&template.shape),
        }
    }
}

/// Items a chunk of `shape` is sized for: its slots at the target load (past the small-table
/// slack a fixed filter's sizing adds, as chunks are large), at least 1.
pub(crate) fn chunk_capacity(shape: &Shape) -> usize {
    let slots = (shape.bucket_count * shape.bucket_size) as u64;
    (slots * target_load_permille(shape.bucket_size) / 1000).max(1) as usize
}
