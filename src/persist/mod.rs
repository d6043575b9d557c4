//! Persistence: a filter's bytes, written from a consistent snapshot and read back with every
//! field checked. `encoding.rs` has one table's encoding, which the fixed filter's bytes are
//! and each chunk of a growable filter's (`growable/persist/`) is; the calls every kind shares
//! are in `bytes.rs`, over each kind's own encoding.
//!
//! The decoder never trusts a length before checking it against what it was given: it reads the
//! fixed-size header, checks its checksum and every field, and only then looks at (or, from a
//! reader, reads) the table, allocating as bytes actually arrive.

pub(crate) mod encoding;
mod error;
mod hasher;
mod stats;

pub use self::error::DecodeError;
pub(crate) use self::hasher::RecordedHasher;
pub use self::hasher::StableHashBuilder;
pub use self::stats::FilterStats;
