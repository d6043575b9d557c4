//! What opening or creating a live file can go wrong with, naming the file.

use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::BuildError;
use crate::persist::DecodeError;

/// How a process opens a live filter file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Insert, remove and look up, sharing every change with the other processes at once; needs
    /// write permission.
    ReadWrite,
    /// Look up and copy only, writes refused (`InsertError::ReadOnly`); needs read permission.
    /// Never writes the file, and sees the other processes' writes live (docs/shared.md).
    ReadOnly,
}

/// Why a live filter file could not be created or opened. Each names the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum SharedError {
    /// The operating system refused an operation on the file (open, create, lock, map...).
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file is no live filter file, or a damaged or truncated one, or one of another hasher.
    Decode {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: DecodeError,
    },
    /// The path names a directory, a FIFO, a socket or a device, not a regular file.
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it names.
        what: &'static str,
    },
    /// The file cannot be opened now: its creator has not finished, every registration slot
    /// is held by a process that has it open for writing, or another file was put at the path
    /// while it was being opened.
    Busy {
        /// The file.
        path: PathBuf,
        /// Why.
        what: &'static str,
    },
    /// The builder's settings describe no filter.
    Build(BuildError),
}

impl SharedError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn decode(path: &Path, source: DecodeError) -> Self {
        Self::Decode {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn busy(path: &Path, what: &'static str) -> Self {
        Self::Busy {
            path: path.to_path_buf(),
            what,
        }
    }

    /// An error opening the file for `access`.
    pub(crate) fn open(path: &Path, access: Access, source: io::Error) -> Self {
        if access == Access::ReadWrite && source.kind() == io::ErrorKind::PermissionDenied {
            let why = "no permission to open it for writing (Access::ReadOnly needs only reading)";
            return Self::refused(path, source.kind(), why);
        }
        Self::io(path, source)
    }

    /// [`Self::Io`] of `kind` with the crate's words `why`, and no OS error number.
    pub(crate) fn refused(path: &Path, kind: io::ErrorKind, why: &'static str) -> Self {
        Self::io(path, io::Error::new(kind, why))
    }
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "live filter file {}: {source}", path.display()),
            Self::Decode { path, source } => write!(
                f,
                "{} is no usable live filter file: {source}",
                path.display()
            ),
            Self::NotAFile { path, what } => {
                write!(f, "{} is {what}, not a live filter file", path.display())
            }
            Self::Busy { path, what } => {
                write!(f, "live filter file {} is busy: {what}", path.display())
            }
            Self::Build(err) => write!(f, "cannot build the filter: {err}"),
        }
    }
}

impl std::error::Error for SharedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Decode { source, .. } => Some(source),
            Self::Build(err) => Some(err),
            _ => None,
        }
    }
}
