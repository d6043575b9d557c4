//! Every kind's bytes, over the kind's own encoding ([`Kind::write_to`], [`Kind::decode`]).

use std::io::{self, Read, Write};

use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::persist::{DecodeError, StableHashBuilder};

/// Serialization, for a filter whose hasher has a [`StableHashBuilder`] identity, in the
/// portable format of `FORMAT.md`, which every later version of this crate reads.
///
/// # Consistency
///
/// The bytes are a state the filter really had, even while other threads write: encoded under
/// every stripe lock (of every chunk of every level), each insert or remove is in them entirely
/// or not at all, and a fingerprint being moved in one of its buckets. Writers wait meanwhile; a
/// level still being built holds nothing yet and is left out.
impl<K: Kind, S: StableHashBuilder> CuckooFilter<K, S> {
    /// The filter's bytes, with checksums, in a vector allocated once at its exact length, for
    /// [`from_bytes`](CuckooFilter::from_bytes) on any platform.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    /// filter.try_extend(0..5_000u64)?;
    /// let copy = ConcurrentCuckooFilter::from_bytes(&filter.to_bytes())?;
    /// assert_eq!(copy.len(), 5_000);
    /// assert!((0..5_000u64).all(|key| copy.contains(&key)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    ///
    /// Without memory for the bytes (or, for a read-only live filter, for the copy of its table
    /// they are written from), as [`clone`](Clone::clone) does; [`write_to`](Self::write_to)
    /// returns that as an error instead.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.core()
            .to_bytes(self.hasher())
            .unwrap_or_else(|err| panic!("no memory for the filter's bytes: {err}"))
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes to `writer`, which runs with no lock held (it
    /// may even use this filter).
    ///
    /// # Errors
    ///
    /// The first error `writer` returns, what was written before it not a whole filter; or
    /// [`OutOfMemory`](io::ErrorKind::OutOfMemory) without memory for the bytes, nothing written.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        writer.write_all(&self.core().to_bytes(self.hasher())?)
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes into `out`, allocating nothing (but a
    /// read-only live filter's copy of its table); `Ok(n)`: they took `out[..n]`.
    ///
    /// # Errors
    ///
    /// [`WriteZero`](io::ErrorKind::WriteZero) if `out` is too short (a growable filter may have
    /// grown past a `serialized_len` measured before); `out` then holds no whole filter.
    /// [`OutOfMemory`](io::ErrorKind::OutOfMemory) without memory for a read-only live filter's
    /// copy.
    pub fn write_to_slice(&self, out: &mut [u8]) -> io::Result<usize> {
        let len = out.len();
        let mut rest = out;
        self.core().write_to(self.hasher(), &mut rest)?;
        Ok(len - rest.len())
    }

    /// Bytes [`to_bytes`](Self::to_bytes) produces now, from the shape alone, locking nothing.
    #[must_use]
    pub fn serialized_len(&self) -> u64 {
        self.core().serialized_len()
    }

    /// [`from_bytes`](CuckooFilter::from_bytes) for a filter whose hasher is `S`, rebuilt from
    /// the recorded seed: `ConcurrentCuckooFilter::<MyHasher>::from_bytes_with_hasher(&bytes)`.
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes`](CuckooFilter::from_bytes): [`DecodeError::HasherMismatch`] for
    /// bytes of another hash function, [`DecodeError::InvalidSeed`] if `S` refuses the seed.
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        K::decode(bytes).map(|(core, hasher)| Self::from_parts(core, hasher))
    }

    /// [`read_from`](CuckooFilter::read_from) for a filter whose hasher is `S`.
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes_with_hasher`](Self::from_bytes_with_hasher), and
    /// [`DecodeError::Io`] if the reader fails.
    pub fn read_from_with_hasher<R: Read>(reader: R) -> Result<Self, DecodeError> {
        K::decode_from(reader).map(|(core, hasher)| Self::from_parts(core, hasher))
    }
}

/// Deserialization with the default hasher, needing no type annotation.
impl<K: Kind> CuckooFilter<K> {
    /// Reads a filter from the bytes [`to_bytes`](CuckooFilter::to_bytes) made with the default
    /// hasher (its seed restored), on any platform, by this version of the crate or an earlier
    /// one. A truncated, extended, corrupted or foreign input gets a [`DecodeError`], never a
    /// panic, a filter that answers differently, or an allocation the input does not hold.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] naming the first check the input fails, in the order `FORMAT.md`
    /// lists them (a growable filter's level's own fault inside [`DecodeError::Level`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_hasher(bytes)
    }

    /// Reads exactly one filter written by [`write_to`](CuckooFilter::write_to), leaving
    /// `reader` at what follows, with the checks of [`from_bytes`](Self::from_bytes); memory
    /// grows with the bytes that arrive. Wrap a file in a `BufReader`.
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes`](Self::from_bytes), and [`DecodeError::Io`] if the reader fails;
    /// a stream that ends early is [`DecodeError::Truncated`].
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::read_from_with_hasher(reader)
    }
}
