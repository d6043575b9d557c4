//! The one trait under every filter kind, what a kind does with 64-bit hashes: a new kind
//! implements [`Kind`] and gets every layer above, written once over it.

use core::fmt;
use std::io::{self, Read, Write};

use crate::error::{InsertError, MergeError};
use crate::persist::{DecodeError, StableHashBuilder};

mod sealed {
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// A kind of filter: how [`CuckooFilter`](crate::CuckooFilter) stores fingerprints, as
/// [`Fixed`](crate::Fixed) ([`ConcurrentCuckooFilter`]) or [`Growable`](crate::Growable)
/// ([`GrowableCuckooFilter`]). Sealed: its methods take hashes the filter computed, and are no API.
///
/// [`ConcurrentCuckooFilter`]: crate::ConcurrentCuckooFilter
/// [`GrowableCuckooFilter`]: crate::GrowableCuckooFilter
// `is_empty` is the face's, from `len`.
#[allow(clippy::len_without_is_empty)]
pub trait Kind: Sealed + Sized {
    /// The type's name in `Debug` and messages.
    #[doc(hidden)]
    const NAME: &'static str;
    /// Whether the kind adds room as it fills: collecting into it need not count the items first.
    #[doc(hidden)]
    const GROWS: bool;

    /// The default configuration for `capacity` items, and `hasher` back; panics if too big.
    #[doc(hidden)]
    fn with_capacity<S>(capacity: usize, hasher: S) -> (Self, S);

    /// Inserts `hash`: `Ok(true)` if it went in, `Ok(false)` if `unique` and it was present.
    #[doc(hidden)]
    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError>;
    /// Inserts at most `raw::BLOCK` hashes in order; `Err(n)`: only the first `n` went in.
    #[doc(hidden)]
    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize>;
    /// Why a block insert stopped: `Full`, unless the kind refuses every write.
    #[doc(hidden)]
    fn block_error(&self) -> InsertError {
        InsertError::Full
    }
    /// Unique inserts in order, `new[i]` whether `hashes[i]` went in; `Err(i)`: it had no room.
    #[doc(hidden)]
    fn insert_unique_block(&self, hashes: &[u64], new: &mut [bool]) -> Result<(), usize> {
        for (i, (&hash, flag)) in hashes.iter().zip(new.iter_mut()).enumerate() {
            *flag = self.insert(hash, true).map_err(|_| i)?;
        }
        Ok(())
    }
    #[doc(hidden)]
    fn contains(&self, hash: u64) -> bool;
    /// `answers[i] = contains(hashes[i])`, the memory loads of consecutive hashes overlapped.
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

    /// Empties every table under all its locks.
    #[doc(hidden)]
    fn clear(&self);
    /// A copy of a state the kind really had; `None` without the memory.
    #[doc(hidden)]
    fn duplicate(&self) -> Option<Self>;

    /// Why `other`'s fingerprints cannot go into this kind's (hashers aside).
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
    /// The kind's encoding in a vector allocated once, at its exact length; `OutOfMemory`
    /// without the memory.
    #[doc(hidden)]
    fn to_bytes<S: StableHashBuilder>(&self, hasher: &S) -> io::Result<Vec<u8>> {
        let mut out = reserved(self.serialized_len())?;
        self.write_to(hasher, &mut out)?;
        Ok(out)
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

/// An empty vector with room for `len` bytes; `OutOfMemory` without it.
pub(crate) fn reserved(len: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    usize::try_from(len)
        .ok()
        .and_then(|len| out.try_reserve_exact(len).ok())
        .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
    Ok(out)
}
