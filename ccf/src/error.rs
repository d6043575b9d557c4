//! What can go wrong, worded for the person at the terminal, and the exit status it gives.

use std::fmt;
use std::io;
use std::path::PathBuf;

use concurrent_cuckoo_filter::{BuildError, DecodeError, MergeError};

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
    /// Standard output was closed by its reader: not an error to report.
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
            Self::BrokenPipe => f.write_str("broken pipe"),
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
            Self::Usage(message) => f.write_str(message),
            Self::Unsupported { path, reason } => write!(f, "{}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for CliError {}
