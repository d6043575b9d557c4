//! The one trait under every filter kind: what a kind does with 64-bit hashes. The public face
//! (`filter/`'s `mod.rs`, `bulk.rs`, `prehashed.rs`, `merge.rs`, `bytes.rs`, and
//! `external_trait_impls/`) is written once over it, so a new kind implements [`Kind`] and
//! gets every layer above.

use core::fmt;
use std::io::{self, Read, Write};

use crate::error::{InsertError, MergeError};
use crate::persist::{DecodeError, StableHashBuilder};

mod sealed {
    /// Only the crate's kinds implement [`Kind`](super::Kind): its methods are internal.
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// A kind of filter: how [`CuckooFilter`](crate::CuckooFilter) stores fingerprints.
/// [`Fixed`](crate::Fixed) is one table sized once ([`ConcurrentCuckooFilter`]);
/// [`Growable`](crate::Growable) adds levels as it fills ([`GrowableCuckooFilter`]). Sealed: its
/// methods take hashes the filter computed, and are no API.
///
/// [`ConcurrentCuckooFilter`]: crate::ConcurrentCuckooFilter
/// [`GrowableCuckooFilter`]: crate::GrowableCuckooFilter
// `is_empty` is the face's, from `len`.
#[allow(clippy::len_without_is_empty)]
pub trait Kind: Sealed + Sized {
    /// The type's name in `Debug` and in messages.
    #[doc(hidden)]
    const NAME: &'static str;
    /// Whether the kind adds room as it fills: collecting into it need not count the items first.
    #[doc(hidden)]
    const GROWS: bool;

    /// A kind with the default configuration sized for `capacity` items, and `hasher` back;
    /// panics (naming the kind) if `capacity` cannot be addressed.
    #[doc(hidden)]
    fn with_capacity<S>(capacity: usize, hasher: S) -> (Self, S);

    /// Inserts `hash`: `Ok(true)` if it went in, `Ok(false)` if `unique` and it was present.
    #[doc(hidden)]
    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError>;
    /// Inserts a block of at most `raw::BLOCK` hashes in order; `Err(n)`: only the first `n` went
    /// in, the next failing with [`block_error`](Self::block_error).
    #[doc(hidden)]
    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize>;
    /// Why a block insert stopped: `Full`, unless the kind refuses every write.
    #[doc(hidden)]
    fn block_error(&self) -> InsertError {
        InsertError::Full
    }
    /// Unique inserts of a block in order, `new[i]` whether `hashes[i]` went in; `Err(i)`:
    /// `hashes[i]` found no room and was the last tried.
    #[doc(hidden)]
    fn insert_unique_block(&self, hashes: &[u64], new: &mut [bool]) -> Result<(), usize> {
        for (i, (&hash, flag)) in hashes.iter().zip(new.iter_mut()).enumerate() {
            *flag = self.insert(hash, true).map_err(|_| i)?;
        }
        Ok(())
    }
    #[doc(hidden)]
    fn contains(&self, hash: u64) -> bool;
    /// `answers[i] = contains(hashes[i])`, overlapping the memory loads of consecutive hashes.
    #[doc(hidden)]
    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]);
    #[doc(hidden)]
    fn count(&self, hash: u64) -> usize;
    #[doc(hidden)]
    fn remove(&self, hash: u64) -> bool;

    #[doc(hidden)]
    fn len(&self) -> usize;
    #[doc(hidden)]
    fn capacity(&self) -> usize;
    #[doc(hidden)]
    fn memory_usage(&self) -> usize;
    #[doc(hidden)]
    fn bucket_count(&self) -> usize;
    #[doc(hidden)]
    fn bucket_size(&self) -> usize;
    #[doc(hidden)]
    fn is_semi_sorted(&self) -> bool;
    #[doc(hidden)]
    fn expected_false_positive_rate(&self) -> f64;

    /// Empties every table under all its locks; tables and capacity stay.
    #[doc(hidden)]
    fn clear(&self);
    /// A copy of a state the kind really had, or `None` without the memory for one.
    #[doc(hidden)]
    fn duplicate(&self) -> Option<Self>;

    /// Why `other`'s fingerprints cannot go into this kind's, if they cannot (hashers aside).
    #[doc(hidden)]
    fn check_compatible(&self, other: &Self) -> Result<(), MergeError>;
    /// Inserts every fingerprint of a compatible `other`; how many went in.
    #[doc(hidden)]
    fn merge_from(&self, other: &Self, unique: bool) -> Result<usize, MergeError>;

    /// Bytes `write_to` writes now.
    #[doc(hidden)]
    fn serialized_len(&self) -> u64;
    /// Writes the kind's encoding of a consistent state, recording `hasher`.
    #[doc(hidden)]
    fn write_to<S: StableHashBuilder, W: Write>(&self, hasher: &S, writer: W) -> io::Result<()>;
    /// The kind's encoding in a vector allocated once, at its exact length.
    #[doc(hidden)]
    fn to_bytes<S: StableHashBuilder>(&self, hasher: &S) -> Vec<u8> {
        // A length that does not change while the table is locked: the bytes fill their memory.
        let mut out = Vec::with_capacity(usize::try_from(self.serialized_len()).unwrap_or(0));
        self.write_to(hasher, &mut out)
            .expect("writing to a Vec cannot fail");
        out
    }
    /// Decodes exactly one encoding of this kind, and the hasher it records.
    #[doc(hidden)]
    fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Self, S), DecodeError>;
    /// Reads exactly one encoding of this kind from `reader`, header first.
    #[doc(hidden)]
    fn decode_from<S: StableHashBuilder, R: Read>(reader: R) -> Result<(Self, S), DecodeError>;

    /// The kind's fields of the filter's `Debug`, after `len`.
    #[doc(hidden)]
    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>);
}
