//! Persistence: one table's encoding (`encoding.rs`), which the fixed filter's bytes are and
//! each chunk of a growable filter's is, its errors, hashers and statistics.

pub(crate) mod encoding;
mod error;
mod hasher;
mod stats;

pub use self::error::DecodeError;
pub(crate) use self::hasher::RecordedHasher;
pub use self::hasher::StableHashBuilder;
pub use self::stats::FilterStats;
