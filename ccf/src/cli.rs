//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// Build, query, deduplicate and merge with concurrent cuckoo filters: approximate sets of
/// lines at about 1.6 bytes per line, on all cores.
///
/// Exit status: 0 on success, 1 when `query` selected no line, 2 on an error.
#[derive(Debug, Parser)]
#[command(name = "ccf", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a filter from keys, one per line, and write it in the portable format (with
    /// --grow, a filter that grows as keys arrive).
    Build(BuildArgs),
    /// Print the lines that may be in a filter (with -v, the lines certainly not in it).
    Query(QueryArgs),
    /// Print each line the first time it is seen, in input order, in bounded memory.
    Dedup(DedupArgs),
    /// Describe a filter file: shape, items, load, bits per item, expected false positive rate,
    /// hasher and format version; for a growable filter, its levels too.
    Info(InfoArgs),
    /// Write the union of compatible filters: all fixed-size or all growable, of the same shape
    /// and hasher.
    Merge(MergeArgs),
}

/// How the filter is sized.
#[derive(Debug, Args)]
pub struct Sizing {
    /// Keys the filter must hold, at least 1; a filter that would not fit in the memory available
    /// (for build, twice over: it is encoded in memory to be written) is refused. Without it, the
    /// input files' lines are counted first; standard input (or a pipe or device named as a file)
    /// needs it. With --grow: the keys the first level holds before it first grows (default: 1/62
    /// of the input files' lines, counted first, so that they fill the first level's last split,
    /// where it takes the fewest bits per key; 1000000 for standard input, a pipe or a device; at
    /// most --max-capacity).
    #[arg(long, value_name = "N", value_parser = count_of_keys, allow_negative_numbers = true)]
    pub capacity: Option<u64>,
    /// Highest false positive rate wanted at capacity, between 0 and 1 (exclusive), e.g.
    /// 0.001, and no smaller than 32-bit fingerprints reach (about 1e-9, 8e-9 with --grow, 3e-8
    /// with --window, whose 28-bit fingerprints sit beside age tags; the error names the
    /// smallest). Without it: 12-bit fingerprints in 4-slot buckets, about 0.19%; with --grow,
    /// 0.1%, kept however far the filter grows; with --window, 0.1%, kept at every point of the
    /// stream.
    #[arg(long, value_name = "ε", value_parser = rate, allow_negative_numbers = true)]
    pub fpr: Option<f64>,
    /// Grow as keys arrive instead of being sized up front: no line count, and standard input needs
    /// no --capacity. The filter (a growable filter) grows in place: a full chunk of its level
    /// splits in two, until the level is 64 times its first size (fewer times at an --fpr below
    /// about 3e-7, where its fingerprints would pass 32 bits), and a lookup still probes it once.
    /// Only then (or sooner, when keys that share hash bits fill a chunk split as deep as it can
    /// be) is a next level added, starting at the size the one before reached and growing as far in
    /// turn, with fingerprints one bit wider (two after a level of 2-slot buckets, which an --fpr
    /// of 6.25% or more gives the first level). A lookup probes every level, and a growing level
    /// takes more bits per key than a fixed filter, so a filter sized for its keys is smaller and
    /// faster to query.
    #[arg(long)]
    pub grow: bool,
    /// With --grow: the most keys all levels together may be sized for, at least 1 (default:
    /// no limit); past it the filter is full.
    #[arg(
        long,
        value_name = "N",
        requires = "grow",
        value_parser = count_of_keys,
        allow_negative_numbers = true
    )]
    pub max_capacity: Option<u64>,
}

/// A count of keys: a whole number, at least 1.
fn count_of_keys(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("a filter must hold at least 1 key; give a count of 1 or more".into()),
        Ok(count) => Ok(count),
        Err(_) if text.parse::<i128>().is_ok() => Err(format!(
            "a count of keys is a whole number from 1 to {}",
            u64::MAX
        )),
        Err(_) => Err("a count of keys is a whole number, at least 1, e.g. 1000000".into()),
    }
}

/// A false positive rate: a number strictly between 0 and 1.
fn rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate > 0.0 && rate < 1.0 => Ok(rate),
        Ok(_) => Err(
            "a false positive rate is a fraction greater than 0 and less than 1, e.g. 0.001 for \
             0.1%"
                .into(),
        ),
        Err(_) => Err("a false positive rate is a number, e.g. 0.001 for 0.1%".into()),
    }
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub sizing: Sizing,
    /// Lines are 64-bit hashes in hexadecimal (up to 16 digits, optional 0x), computed elsewhere
    /// (not with --grow). Lines that look like plain integers rather than hashes are refused:
    /// give those without --hex64, and ccf hashes them.
    #[arg(long, conflicts_with = "grow")]
    pub hex64: bool,
    /// With --hex64: take the lines even if they do not look like well-mixed hashes (few bits
    /// set, the same high bits in every line). Such keys collide in the filter's buckets and
    /// fingerprints.
    #[arg(long, requires = "hex64")]
    pub hex64_unmixed_ok: bool,
    /// The filter file to write (default: standard output, if it is not a terminal). A
    /// regular file is replaced whole, through a temporary file renamed over it; a device or
    /// FIFO is written to in place; a symbolic link is followed to the file it names. A file
    /// that is one of the inputs or that the user may not write is refused, and so is one that
    /// holds something other than a filter, unless --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an --output that exists and is not a filter file.
    #[arg(long)]
    pub force: bool,
    /// Input files (default, or `-`: standard input).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The filter file (fixed-size or growable).
    pub filter: PathBuf,
    /// Print the lines certainly not in the filter instead.
    #[arg(short = 'v', long)]
    pub invert_match: bool,
    /// Lines are 64-bit hashes in hexadecimal, as for `build --hex64` (fixed-size filters only).
    #[arg(long)]
    pub hex64: bool,
    /// With --hex64: take the lines even if they do not look like well-mixed hashes.
    #[arg(long, requires = "hex64")]
    pub hex64_unmixed_ok: bool,
    /// Input files (default, or `-`: standard input).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DedupArgs {
    #[command(flatten)]
    pub sizing: Sizing,
    /// Forget lines after a window, and read an endless input in memory fixed by the window: N
    /// (a line seen again within the last N lines is dropped) or a duration with a unit, ms, s,
    /// m, h or d, e.g. 30s, 10m, 2h (seen again within that time of its arrival). A line is
    /// forgotten within 1 + 1/G windows (G: --generations; for N lines, (G + 1)·ceil(N/G) lines,
    /// which is more where G does not divide N). Each kept line is written before
    /// the input is read further when the output is a pipe or a terminal, so
    /// `tail -F app.log | ccf dedup --window 1000000` passes lines on as they come. With a
    /// duration, --capacity is the lines one window holds at a steady rate (default 1000000;
    /// bursts up to capacity·(1 + 1/G) lines within a window·(1 + 1/G)); past it the oldest
    /// lines are forgotten early, and a note says so.
    #[arg(
        long,
        value_name = "N|DURATION",
        value_parser = window,
        allow_negative_numbers = true,
        conflicts_with_all = ["grow", "max_capacity"]
    )]
    pub window: Option<WindowArg>,
    /// With --window: generations the window is split into, 1 to 14 (default 8): more forget
    /// sooner after the window (within 1 + 1/G windows where G divides the window) at the cost
    /// of a little speed.
    #[arg(
        long,
        value_name = "G",
        requires = "window",
        value_parser = clap::value_parser!(u32).range(1..=14)
    )]
    pub generations: Option<u32>,
    /// Input files (default, or `-`: standard input).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

/// A `--window`: the last N lines, or a duration of arrival time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowArg {
    Lines(u64),
    Time(Duration),
}

/// Units of a `--window` duration, in seconds.
const UNITS: [(&str, f64); 5] = [
    ("ms", 0.001),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
    ("d", 86400.0),
];

/// A `--window`: a whole number of lines, at least 1, or a number with a unit of time.
fn window(text: &str) -> Result<WindowArg, String> {
    let advice = "a window is a count of lines (e.g. 1000000) or a duration with a unit of ms, \
                  s, m, h or d (e.g. 30s, 10m, 2h)";
    if let Ok(lines) = text.parse::<u64>() {
        return match lines {
            0 => Err(format!("a window of 0 lines holds nothing; {advice}")),
            lines => Ok(WindowArg::Lines(lines)),
        };
    }
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, s)| s);
    let seconds = number.parse::<f64>().ok().zip(scale).map(|(n, s)| n * s);
    let too_long =
        || format!("a window must be at most 2^64 - 1 nanoseconds (about 584 years); {advice}");
    match seconds.map(|s| (s, Duration::try_from_secs_f64(s))) {
        // Past what the filter's clock counts.
        Some((_, Ok(time))) if time.as_nanos() > u128::from(u64::MAX) => Err(too_long()),
        Some((_, Ok(time))) if !time.is_zero() => Ok(WindowArg::Time(time)),
        // Positive, yet past what a duration holds (2^64 seconds).
        Some((s, Err(_))) if s > 0.0 => Err(too_long()),
        Some(_) => Err(format!("a window must be longer than 0; {advice}")),
        None => Err(advice.to_string()),
    }
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file (fixed-size or growable).
    pub filter: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Filter files, all of one kind (fixed-size or growable), shape and hasher.
    #[arg(required = true, num_args = 2.., value_name = "FILTER")]
    pub filters: Vec<PathBuf>,
    /// The filter file to write, as `build -o` writes it; one of the filters is refused, and
    /// so is a file that holds something other than a filter, unless --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Replace an --output that exists and is not a filter file.
    #[arg(long)]
    pub force: bool,
}

/// A count of keys from the command line as a capacity: at least 1, at most what a `usize`
/// holds.
pub fn items(count: u64) -> usize {
    usize::try_from(count.max(1)).unwrap_or(usize::MAX)
}
