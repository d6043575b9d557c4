//! The growable filter: made as `--grow` asks, and described level by level.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DefaultHashBuilder, FilterStats, GrowableCuckooFilter,
    StableHashBuilder,
};

use crate::cli::Sizing;
use crate::error::CliError;
use crate::filter_file::items;

/// Keys the first level holds unless `--capacity` says otherwise: about 2 MB at the default
/// rate, so that a key set of millions needs few levels (each one a lookup probes).
pub const DEFAULT_FIRST_LEVEL: u64 = 1_000_000;

/// Bytes of a growable filter's header; its levels follow, each a fixed filter's encoding
/// (`FORMAT.md`, "Growable filters").
const HEADER_LEN: usize = 112;

/// Where the header holds the format version (2 bytes) and the level count (8 bytes).
const VERSION_AT: usize = 8;
const LEVEL_COUNT_AT: usize = 88;

/// A growable filter whose first level holds `--capacity` keys, kept under `--fpr` (the
/// library's default rate without it) and limited by `--max-capacity` if given.
pub fn new_filter(sizing: &Sizing) -> Result<GrowableCuckooFilter, CliError> {
    let first = sizing.capacity.unwrap_or(DEFAULT_FIRST_LEVEL);
    let mut builder = GrowableCuckooFilter::builder().capacity(items(first));
    if let Some(fpr) = sizing.fpr {
        builder = builder.false_positive_rate(fpr);
    }
    if let Some(max) = sizing.max_capacity {
        builder = builder.max_capacity(items(max));
    }
    builder.build().map_err(CliError::Build)
}

/// Bits of memory per stored item, as text; `-` for an empty filter.
fn bits_per_item(filter: &GrowableCuckooFilter) -> String {
    match filter.len() {
        0 => "-".into(),
        len => format!("{:.2}", filter.memory_usage() as f64 * 8.0 / len as f64),
    }
}

/// `build`'s summary of a growable filter, after its counts of lines.
pub fn build_report(filter: &GrowableCuckooFilter) -> String {
    format!(
        "{} levels; {} bits per item; expected false positive rate at most {:.4}% (every level \
         at capacity; target {:.4}%)",
        filter.level_count(),
        bits_per_item(filter),
        filter.expected_false_positive_rate() * 100.0,
        filter.false_positive_rate() * 100.0,
    )
}

/// Writes what `info` shows of the growable filter read from `path`: the whole, then each level
/// as the level's own encoding in the file describes it.
pub fn describe(
    filter: &GrowableCuckooFilter,
    path: &Path,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let (version, levels) = level_stats(path)?;
    let at_load: f64 = levels
        .iter()
        .map(|level| level.false_positive_rate_at_load)
        .sum();
    writeln!(out, "kind: growable")?;
    writeln!(out, "levels: {}", filter.level_count())?;
    writeln!(out, "items: {}", filter.len())?;
    writeln!(out, "capacity: {} (grows past it)", filter.capacity())?;
    writeln!(out, "memory: {} bytes", filter.memory_usage())?;
    writeln!(out, "bits per item: {}", bits_per_item(filter))?;
    writeln!(
        out,
        "target false positive rate: {:.4}%",
        filter.false_positive_rate() * 100.0
    )?;
    writeln!(
        out,
        "expected false positive rate: {:.4}% with every level at capacity, {:.4}% at these loads",
        filter.expected_false_positive_rate() * 100.0,
        at_load * 100.0
    )?;
    let id = DefaultHashBuilder::HASHER_ID.to_le_bytes();
    writeln!(
        out,
        "hasher: {} (seed {:#018x})",
        String::from_utf8_lossy(&id),
        filter.hasher().seed()
    )?;
    let bytes = std::fs::metadata(path)
        .map(|meta| meta.len())
        .map_err(|error| CliError::file(path, error))?;
    writeln!(out, "format version: {version} (growable)")?;
    writeln!(out, "serialized bytes: {bytes}")?;
    for (index, stats) in levels.iter().enumerate() {
        writeln!(
            out,
            "level {index}: buckets {}, bucket size {}, fingerprint bits {}, semi-sorted {}, \
             items {}, capacity {}, load {:.2}%",
            stats.buckets,
            stats.bucket_size,
            stats.fingerprint_bits,
            if stats.semi_sorted { "yes" } else { "no" },
            stats.len,
            stats.capacity,
            stats.load_factor * 100.0
        )?;
    }
    Ok(())
}

/// The format version of the growable filter in `path`, and each of its levels' statistics, the
/// level read as the fixed filter its encoding is, with that filter's checks. The file was read
/// whole as a growable filter before, so its levels are known good; one level at a time is in
/// memory.
fn level_stats(path: &Path) -> Result<(u16, Vec<FilterStats>), CliError> {
    let file = File::open(path).map_err(|error| CliError::file(path, error))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER_LEN];
    reader
        .read_exact(&mut header)
        .map_err(|error| CliError::file(path, error))?;
    let version = u16::from_le_bytes([header[VERSION_AT], header[VERSION_AT + 1]]);
    let mut count = [0u8; 8];
    count.copy_from_slice(&header[LEVEL_COUNT_AT..LEVEL_COUNT_AT + 8]);
    let stats = (0..u64::from_le_bytes(count))
        .map(|_| match ConcurrentCuckooFilter::read_from(&mut reader) {
            Ok(level) => Ok(level.stats()),
            Err(error) => Err(CliError::Decode {
                path: path.to_owned(),
                error,
            }),
        })
        .collect::<Result<_, _>>()?;
    Ok((version, stats))
}
