//! What can go wrong, worded for the person at the terminal, and the exit status it gives.

use std::fmt;
use std::io;
use std::path::PathBuf;

use concurrent_cuckoo_filter::{BuildError, DecodeError, MergeError};

use crate::mixing::Unmixed;

/// Exit status of a failed command (as grep and diff use 2; clap's usage errors exit 2 too).
pub const EXIT_ERROR: i32 = 2;

/// A failure of a `ccf` command.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// An input or output file could not be opened, read or written.
    File { path: PathBuf, error: io::Error },
    /// Standard input or output failed (other than a closed pipe).
    Stdio(io::Error),
    /// Standard output was closed by its reader before everything was written.
    BrokenPipe,
    /// A filter file could not be decoded.
    Decode { path: PathBuf, error: DecodeError },
    /// The filter could not be configured as asked.
    Build(BuildError),
    /// A filter could not be merged: incompatible, or no room.
    Merge { path: PathBuf, error: MergeError },
    /// The filter had no room for a key.
    Full {
        /// 1-based line number, counted over all inputs.
        line: u64,
        /// The key, lossily as text.
        key: String,
        /// Items the filter held when it stopped.
        stored: usize,
        /// What would have made room.
        remedy: &'static str,
    },
    /// A `--hex64` line that is not a 64-bit hexadecimal number.
    BadHex { line: u64, text: String },
    /// `--hex64` lines that look like plain integers, not hashes.
    Unmixed {
        /// 1-based line number of the first line of the lines judged.
        line: u64,
        /// What gave them away.
        signs: Unmixed,
    },
    /// Merging would fill the target: no filter of its shape holds the items of all.
    MergeTooSmall {
        /// The filter merged into.
        target: PathBuf,
        /// Items the target is sized for.
        capacity: usize,
        /// Items of all the filters together: at least their union.
        items: u64,
    },
    /// An output that is the same file as one of the inputs: writing it would destroy what is
    /// being read.
    OutputIsInput {
        /// The output as given, or `standard output`.
        output: PathBuf,
        /// The input it is, as given, or `standard input`.
        input: PathBuf,
    },
    /// An output that exists and holds something other than a filter's snapshot, without
    /// `--force`.
    OutputNotAFilter {
        /// The output as given.
        output: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// A new filter larger than the memory the machine has available.
    TooLarge {
        /// What is allocated up front: the table, or a growable filter's first level.
        what: &'static str,
        /// Bytes it would take.
        needed: u64,
        /// Bytes there are.
        available: u64,
        /// Where `available` comes from.
        source: &'static str,
    },
    /// Arguments that parse but make no sense together.
    Usage(String),
    /// A filter file of a kind the command cannot use.
    Unsupported { path: PathBuf, reason: &'static str },
}

impl CliError {
    /// `error` from the file at `path`.
    pub fn file(path: impl Into<PathBuf>, error: io::Error) -> Self {
        Self::File {
            path: path.into(),
            error,
        }
    }
}

impl From<io::Error> for CliError {
    /// An error of standard input or output.
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Self::BrokenPipe
        } else {
            Self::Stdio(error)
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { path, error } => write!(f, "{}: {error}", path.display()),
            Self::Stdio(error) => write!(f, "standard input or output: {error}"),
            Self::BrokenPipe => f.write_str(
                "standard output was closed before everything was written (broken pipe): what \
                 its reader got is incomplete",
            ),
            Self::Decode { path, error } => {
                write!(f, "{}: not a readable filter: {error}", path.display())
            }
            Self::Build(error) => write!(f, "cannot build the filter: {error}"),
            Self::Merge { path, error } => {
                write!(f, "{}: cannot merge: {error}", path.display())
            }
            Self::Full {
                line,
                key,
                stored,
                remedy,
            } => write!(
                f,
                "the filter is full at line {line} ({key:?}) with {stored} items stored; {remedy}"
            ),
            Self::BadHex { line, text } => write!(
                f,
                "line {line}: {text:?} is not a 64-bit hexadecimal number (--hex64)"
            ),
            Self::Unmixed { line, signs } => write!(
                f,
                "the --hex64 lines from line {line} do not look like 64-bit hashes ({signs}): a \
                 filter takes a key's buckets and fingerprint from its hash's bits, and integers \
                 like these share most of them, so they would collide. Give the lines without \
                 --hex64 and ccf hashes each one itself (query them the same way); if they are \
                 hashes after all, pass --hex64-unmixed-ok"
            ),
            Self::MergeTooSmall {
                target,
                capacity,
                items,
            } => {
                // The items of all, or if they fall short of the target's capacity (a merge
                // can fail just below it) a quarter more than that.
                let needed = (*items).max(*capacity as u64 + *capacity as u64 / 4);
                write!(
                    f,
                    "merging would need a filter of capacity >= {needed} (the filters hold {items} \
                     items together; {} is sized for {capacity}); nothing was written. Rebuild \
                     every filter with --capacity {needed} (and the same --fpr) and merge those",
                    target.display()
                )
            }
            Self::OutputIsInput { output, input } => write!(
                f,
                "{}: is the same file as the input {}; nothing was written: give another output",
                output.display(),
                input.display()
            ),
            Self::OutputNotAFilter { output, what } => write!(
                f,
                "{}: exists and {what}; nothing was written: give another output, or --force to \
                 replace it",
                output.display()
            ),
            Self::TooLarge {
                what,
                needed,
                available,
                source,
            } => write!(
                f,
                "cannot build the filter: {what} would need {} ({needed} bytes), more than the {} \
                 ({available} bytes) of memory available ({source}); give a smaller --capacity \
                 (or a larger --fpr)",
                gib(*needed),
                gib(*available)
            ),
            Self::Usage(message) => f.write_str(message),
            Self::Unsupported { path, reason } => write!(f, "{}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for CliError {}

/// Bytes in GiB, for a message.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}
