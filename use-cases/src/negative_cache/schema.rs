//! What the store's parts share: the database's tables and keys, the snapshot file's magic, and
//! the store's states and errors.

use std::fmt;
use std::io;

use concurrent_cuckoo_filter::{BuildError, ExtendError};
use redb::TableDefinition;

pub(crate) const DATA: TableDefinition<'_, &[u8], &[u8]> = TableDefinition::new("data");
pub(crate) const META: TableDefinition<'_, &str, u64> = TableDefinition::new("meta");
pub(crate) const SEQUENCE: &str = "sequence";
pub(crate) const INSTANCE: &str = "instance";
/// The first bytes of a snapshot file, before the database's identity and sequence number.
pub(crate) const SNAPSHOT_MAGIC: [u8; 8] = *b"CCFNEGC1";

/// Why a snapshot was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotState {
    /// No snapshot path was configured.
    NotConfigured,
    /// No file at the snapshot path.
    Missing,
    /// The database was written after the snapshot was taken (or lost commits it had seen).
    Stale {
        /// The snapshot's sequence number.
        snapshot: u64,
        /// The database's.
        database: u64,
    },
    /// The snapshot belongs to another database.
    ForeignDatabase,
    /// The file could not be read as a snapshot.
    Unreadable(String),
}

/// What can go wrong in the store.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed (boxed: redb's error is large, and every `get` returns this type).
    Database(Box<redb::Error>),
    /// The filter could not be built for the capacity asked.
    Filter(BuildError),
    /// Reading or writing a snapshot failed.
    Io(io::Error),
    /// A snapshot was asked of a filter that is no longer trusted: it overflowed.
    FilterOverflowed,
    /// A snapshot was asked of a store without a filter or a snapshot path.
    NoSnapshot,
    /// A rebuild found no room for a key: one key stored more often than a bucket pair holds.
    Rebuild(ExtendError),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Database(err) => write!(f, "database: {err}"),
            Self::Filter(err) => write!(f, "filter: {err}"),
            Self::Io(err) => write!(f, "snapshot: {err}"),
            Self::FilterOverflowed => {
                f.write_str("the filter overflowed and is not trusted; reopen to rebuild it")
            }
            Self::NoSnapshot => f.write_str("the store has no filter or no snapshot path"),
            Self::Rebuild(err) => write!(f, "rebuilding the filter: {err}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl<E: Into<redb::Error>> From<E> for StoreError {
    fn from(err: E) -> Self {
        Self::Database(Box::new(err.into()))
    }
}
