//! The growable filter: made as `--grow` asks, and described level by level.

use std::io::{self, Write};

use concurrent_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter, StableHashBuilder};

use crate::cli::{items, Sizing};
use crate::error::CliError;
use crate::memory;

/// Keys the first level holds unless `--capacity` says otherwise or the input's lines can be
/// counted: about 2 MB at the default rate, so that a key set of millions needs few levels (each
/// one a lookup probes).
pub const DEFAULT_FIRST_LEVEL: u64 = 1_000_000;

/// Counted lines per key of the first level. A level grows 64 times (its chunks split six
/// times) before a next one starts, and takes the fewest bits per key just before that, when
/// its chunks are full and their fingerprints have given up every route bit: 1.27–1.45 times a
/// fixed filter's from 56 to 64 times its first size, up to 2 times between doublings, 3 times
/// once the next level starts (`cargo run --release --example growable -- space`). Lines fill
/// it to 62 times, with room for a few percent more keys than were counted.
const LINES_PER_FIRST_LEVEL_KEY: u64 = 62;

/// Where a growable filter's header holds its format version, 2 bytes (`FORMAT.md`, "Growable
/// filters").
const VERSION_AT: usize = 8;
/// Where it holds its `max_capacity`, 8 bytes, `2^64 − 1` for no limit.
const MAX_CAPACITY_AT: usize = 48;
/// A growable filter's file's first bytes that hold the fields read here.
pub const HEAD: usize = MAX_CAPACITY_AT + 8;

/// A growable filter whose first level holds `--capacity` keys (else a 62nd of the input's
/// lines, `counted` when every input is a file, at most `--max-capacity`), kept under `--fpr`
/// (the library's default rate without it) and limited by `--max-capacity` if given; its first
/// level checked against the memory available, with its copy if it is to be `written`.
pub fn new_filter(
    sizing: &Sizing,
    counted: Option<u64>,
    written: bool,
) -> Result<GrowableCuckooFilter, CliError> {
    let first = sizing.capacity.unwrap_or_else(|| {
        let default = counted.map_or(DEFAULT_FIRST_LEVEL, |lines| {
            lines.div_ceil(LINES_PER_FIRST_LEVEL_KEY).max(1)
        });
        // A default, not a choice: the limit the user gave bounds it.
        sizing.max_capacity.map_or(default, |max| default.min(max))
    });
    let mut builder = GrowableCuckooFilter::builder().capacity(items(first));
    if let Some(fpr) = sizing.fpr {
        builder = builder.false_positive_rate(fpr);
    }
    if let Some(max) = sizing.max_capacity {
        builder = builder.max_capacity(items(max));
    }
    memory::check_new(
        builder.memory_bytes().map_err(CliError::Build)?,
        written,
        "its first level",
        "its first level and the copy of it written out",
    )?;
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
        "{} levels; {} bits per item; expected false positive rate {:.4}% at these loads \
         (target {:.4}%, kept however far it grows)",
        filter.level_count(),
        bits_per_item(filter),
        filter.expected_false_positive_rate() * 100.0,
        filter.false_positive_rate() * 100.0,
    )
}

/// Writes what `info` shows of a growable filter read from a file of `bytes` bytes that began
/// with `head`: the whole, then each level.
pub fn describe(
    filter: &GrowableCuckooFilter,
    head: &[u8],
    bytes: u64,
    out: &mut impl Write,
) -> io::Result<()> {
    let [low, high] = field(head, VERSION_AT);
    let version = u16::from_le_bytes([low, high]);
    let levels = filter.level_stats();
    // Each level's rate at its load were its route bits not compared: a bound on the estimate.
    let core_bound: f64 = levels
        .iter()
        .map(|level| level.false_positive_rate_at_load)
        .sum();
    writeln!(out, "kind: growable")?;
    writeln!(out, "levels: {}", filter.level_count())?;
    writeln!(out, "items: {}", filter.len())?;
    let grows = match limit(head) {
        None => "grows past it".to_owned(),
        Some(limit) => format!("grows up to its limit, {limit}"),
    };
    writeln!(out, "capacity: {} ({grows})", filter.capacity())?;
    writeln!(out, "memory: {} bytes", filter.memory_usage())?;
    writeln!(out, "bits per item: {}", bits_per_item(filter))?;
    writeln!(
        out,
        "target false positive rate: {:.4}%",
        filter.false_positive_rate() * 100.0
    )?;
    writeln!(
        out,
        "expected false positive rate: {:.4}% at these loads (at most {:.4}% comparing the core \
         fingerprint bits alone)",
        filter.expected_false_positive_rate() * 100.0,
        core_bound * 100.0
    )?;
    let id = DefaultHashBuilder::HASHER_ID.to_le_bytes();
    writeln!(
        out,
        "hasher: {} (seed {:#018x})",
        String::from_utf8_lossy(&id),
        filter.hasher().seed()
    )?;
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

/// The `N` bytes at `at` of a growable filter's header, from its file's first bytes (read whole
/// with the filter, so they are there; zeros past what there is).
fn field<const N: usize>(head: &[u8], at: usize) -> [u8; N] {
    let mut field = [0u8; N];
    let there = head.get(at..).unwrap_or_default();
    let len = there.len().min(N);
    field[..len].copy_from_slice(&there[..len]);
    field
}

/// The `--max-capacity` a growable filter was built with, from its file's first bytes; `None`
/// for no limit.
pub fn limit(head: &[u8]) -> Option<u64> {
    let limit = u64::from_le_bytes(field(head, MAX_CAPACITY_AT));
    (limit != u64::MAX).then_some(limit)
}
