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
/// The first bytes of a snapshot file, before the database's identity, sequence number and their
/// checksum (XXH3-64 of the 24 bytes before it).
pub(crate) const SNAPSHOT_MAGIC: [u8; 8] = *b"CCFNEGC2";

/// A snapshot's header: the magic, the database's identity and sequence number, and the checksum
/// that keeps a damaged identity or sequence number from matching another database state.
pub(crate) fn snapshot_header(instance: u64, sequence: u64) -> [u8; 32] {
    let mut head = [0u8; 32];
    head[..8].copy_from_slice(&SNAPSHOT_MAGIC);
    head[8..16].copy_from_slice(&instance.to_le_bytes());
    head[16..24].copy_from_slice(&sequence.to_le_bytes());
    let checksum = xxhash_rust::xxh3::xxh3_64(&head[..24]);
    head[24..].copy_from_slice(&checksum.to_le_bytes());
    head
}

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
    /// The snapshot's filter is sized for fewer items than [`Options::capacity`] asks, or than
    /// twice the keys it holds.
    ///
    /// [`Options::capacity`]: super::Options::capacity
    Undersized {
        /// The snapshot's filter's capacity.
        snapshot: usize,
        /// The capacity asked, or twice the keys it holds if that is more.
        asked: usize,
    },
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
