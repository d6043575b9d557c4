//! Persistence of a growable filter whose levels split (format version 3), and the statistics
//! of such a level.

use std::io::{self, Write};

use super::chunks::Chunks;
use super::levels::Levels;
use crate::stats::FilterStats;

/// Writes the filter's plan and every level's chunks, from one snapshot.
pub(crate) fn write_to<W: Write>(
    _levels: &Levels<Chunks>,
    _hasher: (u64, u64),
    _writer: W,
) -> io::Result<()> {
    Err(io::Error::other("split levels are not yet encoded"))
}

/// A split level's statistics: its chunks' buckets, items and memory together.
pub(crate) fn stats(_level: &Chunks, _hasher_id: u64, _hasher_seed: u64) -> FilterStats {
    unimplemented!("split level statistics")
}
