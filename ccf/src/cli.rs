//! The command line.

use std::path::PathBuf;

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
    /// Write the union of compatible fixed-size filters (same shape and hasher).
    Merge(MergeArgs),
}

/// How the filter is sized.
#[derive(Debug, Args)]
pub struct Sizing {
    /// Keys the filter must hold. Without it, the input files' lines are counted first;
    /// standard input needs it. With --grow: the keys the first level holds (default
    /// 1000000); the filter grows past it.
    #[arg(long, value_name = "N")]
    pub capacity: Option<u64>,
    /// Highest false positive rate wanted at capacity, e.g. 0.001. Without it: 12-bit
    /// fingerprints in 4-slot buckets, about 0.19%; with --grow, 0.1%, kept however far the
    /// filter grows.
    #[arg(long, value_name = "ε")]
    pub fpr: Option<f64>,
    /// Grow as keys arrive instead of being sized up front: no line count, and standard input
    /// needs no --capacity. The filter (a growable filter) adds a level twice as large, with
    /// fingerprints as wide or wider, each time its newest level fills; a lookup probes every
    /// level, so a filter sized for its keys is smaller and faster to query.
    #[arg(long)]
    pub grow: bool,
    /// With --grow: the most keys all levels together may be sized for (default: no limit);
    /// past it the filter is full.
    #[arg(long, value_name = "N", requires = "grow")]
    pub max_capacity: Option<u64>,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub sizing: Sizing,
    /// Lines are 64-bit hashes in hexadecimal (up to 16 digits, optional 0x), computed elsewhere
    /// (not with --grow).
    #[arg(long, conflicts_with = "grow")]
    pub hex64: bool,
    /// The filter file to write (default: standard output, if it is not a terminal).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
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
    /// Input files (default, or `-`: standard input).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DedupArgs {
    #[command(flatten)]
    pub sizing: Sizing,
    /// Input files (default, or `-`: standard input).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file (fixed-size or growable).
    pub filter: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Filter files, all of the same shape and hasher; growable filters have no union.
    #[arg(required = true, num_args = 2.., value_name = "FILTER")]
    pub filters: Vec<PathBuf>,
    /// The filter file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}
