//! What can be wrong with the bytes handed to the decoder.

use core::fmt;
use std::io;

use crate::error::BuildError;

/// Why bytes could not be decoded into a filter by
/// [`from_bytes`](crate::CuckooFilter::from_bytes) and its relatives: every malformed input gets
/// one, by the first check it fails, in the order of `FORMAT.md` that the variants follow.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input does not start with the format's magic bytes.
    BadMagic,
    /// The input's format version is one this build cannot read.
    UnsupportedVersion {
        /// The version the input declares.
        version: u16,
    },
    /// The input ended early.
    Truncated {
        /// Bytes needed: the whole filter if the header was read, the header if not.
        needed: u64,
        /// Bytes there were.
        found: u64,
    },
    /// The header's own checksum does not match it.
    HeaderChecksumMismatch {
        /// The checksum the input carries.
        stored: u64,
        /// The checksum of the header as read.
        computed: u64,
    },
    /// The header sets a flag bit no format version this build reads defines.
    UnsupportedFlags {
        /// The flags field.
        flags: u16,
    },
    /// A header field is out of range or disagrees with the others.
    InvalidGeometry {
        /// The field, named as in `FORMAT.md`.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A growable filter's recorded plan cannot build one of its recorded levels.
    InvalidPlan {
        /// The first level it cannot build.
        level: u64,
        /// Why, as the builder says it.
        error: BuildError,
    },
    /// The input is longer than the filter its header describes.
    TrailingBytes {
        /// Bytes the filter takes.
        expected: u64,
        /// Bytes there were.
        found: u64,
    },
    /// The checksum over the whole input does not match.
    ChecksumMismatch {
        /// The checksum the input carries.
        stored: u64,
        /// The checksum of the input as read.
        computed: u64,
    },
    /// The filter was written with another hash function than the one it is read with.
    HasherMismatch {
        /// [`StableHashBuilder::HASHER_ID`](crate::StableHashBuilder::HASHER_ID) of the hasher
        /// asked for.
        expected: u64,
        /// The hasher id the input records.
        found: u64,
    },
    /// The hasher asked for cannot take the recorded seed.
    InvalidSeed {
        /// The seed the input records.
        seed: u64,
    },
    /// Bits after the last bucket, which are always zero, are not.
    NonZeroPadding,
    /// A semi-sorted bucket is not in the one form the encoder writes.
    InvalidBucket {
        /// The first such bucket.
        bucket: u64,
    },
    /// The item count in the header differs from the fingerprints in the table.
    ItemCountMismatch {
        /// The count the header records.
        header: u64,
        /// Fingerprints in the table.
        table: u64,
    },
    /// A level of a growable filter is wrong; `error` says how.
    Level {
        /// The level, 0 for the first.
        level: u64,
        /// What is wrong with it.
        error: Box<DecodeError>,
    },
    /// A level header's field differs from what the plan gives the level (inside
    /// [`DecodeError::Level`]).
    PlanMismatch {
        /// The field, named as in `FORMAT.md`.
        field: &'static str,
        /// What the plan gives.
        expected: u64,
        /// What the level header says.
        found: u64,
    },
    /// A chunk of a split level holds a fingerprint of a route it does not hold (inside
    /// [`DecodeError::Level`]).
    UnownedFingerprint {
        /// The chunk's id.
        chunk: u64,
        /// The first bucket holding such a fingerprint.
        bucket: u64,
    },
    /// The input is the bytes of another filter type than the decoder's.
    OtherFilterType {
        /// The type the bytes are of, as `"GrowableCuckooFilter"`.
        found: &'static str,
    },
    /// The table's memory could not be allocated.
    OutOfMemory {
        /// Bytes the table needed.
        bytes: u64,
    },
    /// The reader of [`read_from`](crate::CuckooFilter::read_from) failed.
    Io {
        /// The kind of the I/O error.
        kind: io::ErrorKind,
        /// Its message.
        message: String,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not a serialized cuckoo filter: bad magic bytes"),
            Self::UnsupportedVersion { version } => {
                write!(f, "unsupported cuckoo filter format version {version}")
            }
            Self::Truncated { needed, found } => write!(
                f,
                "truncated cuckoo filter: {found} bytes, at least {needed} needed"
            ),
            Self::HeaderChecksumMismatch { stored, computed } => write!(
                f,
                "corrupted cuckoo filter header: checksum {computed:#018x}, header says {stored:#018x}"
            ),
            Self::UnsupportedFlags { flags } => {
                write!(f, "unsupported cuckoo filter flags {flags:#06x}")
            }
            Self::InvalidGeometry { field, value } => {
                write!(f, "invalid cuckoo filter header: {field} = {value}")
            }
            Self::InvalidPlan { level, error } => write!(
                f,
                "invalid growable cuckoo filter header: its plan cannot build level {level}: {error}"
            ),
            Self::TrailingBytes { expected, found } => write!(
                f,
                "{} trailing bytes after the cuckoo filter ({found} bytes, the filter takes {expected})",
                found.saturating_sub(*expected)
            ),
            Self::ChecksumMismatch { stored, computed } => write!(
                f,
                "corrupted cuckoo filter: checksum {computed:#018x}, input says {stored:#018x}"
            ),
            Self::HasherMismatch { expected, found } => write!(
                f,
                "cuckoo filter was written with hasher id {found:#018x}, not {expected:#018x}"
            ),
            Self::InvalidSeed { seed } => {
                write!(f, "the hasher cannot take the recorded seed {seed:#018x}")
            }
            Self::NonZeroPadding => {
                f.write_str("invalid cuckoo filter table: bits after the last bucket are set")
            }
            Self::InvalidBucket { bucket } => write!(
                f,
                "invalid cuckoo filter table: semi-sorted bucket {bucket} is not in canonical form"
            ),
            Self::ItemCountMismatch { header, table } => write!(
                f,
                "invalid cuckoo filter: header counts {header} items, the table holds {table}"
            ),
            Self::Level { level, error } => {
                write!(f, "level {level} of the growable cuckoo filter: {error}")
            }
            Self::PlanMismatch {
                field,
                expected,
                found,
            } => write!(f, "{field} = {found}, where the filter's plan gives {expected}"),
            Self::UnownedFingerprint { chunk, bucket } => write!(
                f,
                "invalid split level: bucket {bucket} of chunk {chunk} holds a fingerprint of a route the chunk does not hold"
            ),
            Self::OutOfMemory { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the cuckoo filter")
            }
            Self::OtherFilterType { found } => write!(
                f,
                "these are the bytes of a {found}: read them with {found}::from_bytes"
            ),
            Self::Io { message, .. } => write!(f, "reading the cuckoo filter failed: {message}"),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidPlan { error, .. } => Some(error),
            Self::Level { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

impl From<io::Error> for DecodeError {
    fn from(err: io::Error) -> Self {
        Self::Io {
            kind: err.kind(),
            message: err.to_string(),
        }
    }
}
