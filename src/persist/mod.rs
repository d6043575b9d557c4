//! Persistence: a filter's bytes, written from a consistent snapshot and read back with every
//! field checked. `encoding.rs` has one table's encoding, which the fixed filter's bytes are
//! and each chunk of a growable filter's (`growable/persist/`) is; this file has the fixed
//! filter's calls.
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

use std::io::{self, Read, Write};

use self::encoding::{
    check_checksum, check_len, decode_table, hasher_of, read_up_to, write_encoding, Header,
    HEADER_LEN,
};
use crate::filter::ConcurrentCuckooFilter;

/// Decodes a whole encoding: `bytes` must be exactly one filter.
fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<ConcurrentCuckooFilter<S>, DecodeError> {
    let header = Header::parse(bytes)?;
    let geometry = header.geometry()?;
    check_len(header.total_len(), bytes.len())?;
    check_checksum(bytes)?;
    let hasher = hasher_of::<S>(header.recorded_hasher())?;
    let raw = decode_table(&header, &geometry, bytes)?;
    // `Header::geometry` checked that the capacity fits.
    let capacity = header.capacity as usize;
    Ok(ConcurrentCuckooFilter::from_raw(raw, hasher, capacity))
}

/// Reads one whole encoding from `reader`: the header first, then, once the header is checked,
/// as many bytes as it says, and not one more. Memory grows with the bytes that arrive, never
/// ahead of them on the word of a length field.
fn decode_from<S: StableHashBuilder, R: Read>(
    mut reader: R,
) -> Result<ConcurrentCuckooFilter<S>, DecodeError> {
    let mut bytes = Vec::new();
    read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
    let header = Header::parse(&bytes)?;
    header.geometry()?;
    read_up_to(&mut reader, &mut bytes, header.total_len())?;
    decode(&bytes)
}

/// Serialization, for a filter whose hasher has a [`StableHashBuilder`] identity. The format is
/// described in `FORMAT.md`; every version of this crate reads what earlier versions wrote.
impl<S: StableHashBuilder> ConcurrentCuckooFilter<S> {
    /// The filter's bytes: its geometry, its hasher's id and seed, its item count and its table,
    /// with checksums. [`from_bytes`](ConcurrentCuckooFilter::from_bytes) (or
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher) for another hasher) reads them
    /// back on any platform, answering every query exactly as this filter does.
    ///
    /// # Consistency
    ///
    /// The bytes are a state the filter really had, even while other threads insert and remove:
    /// the table and the item count are copied while every stripe lock is held, taken in index
    /// order (the order writers take them in, so no deadlock). Each insert or remove is in the
    /// copy entirely or not at all, and a fingerprint being moved to make room is in one of its
    /// buckets, never in both or neither. Writers (and lookups that meet a locked stripe) wait
    /// while the bytes are written into the returned vector, which is allocated at its exact
    /// length first: the filter and its bytes are all the memory this takes.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    /// for key in 0..5_000u64 {
    ///     filter.insert(&key)?;
    /// }
    /// let bytes = filter.to_bytes();
    /// let copy = ConcurrentCuckooFilter::from_bytes(&bytes)?;
    /// assert_eq!(copy.len(), 5_000);
    /// assert!((0..5_000u64).all(|key| copy.contains(&key)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        // The length never changes, so the bytes are written into exactly their own memory.
        let mut out = Vec::with_capacity(self.serialized_len() as usize);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes to `writer`, from the same consistent snapshot,
    /// without a copy of the table: the table goes to `writer` a few kilobytes at a time, while
    /// every stripe lock is held, and the memory this takes is those few kilobytes.
    ///
    /// So writers, and lookups that meet a locked stripe, wait for the whole write, `writer`'s
    /// I/O included. Where that matters, write into memory ([`to_bytes`](Self::to_bytes), or a
    /// buffer of [`serialized_len`](Self::serialized_len) bytes) or to a fast file, then move
    /// the bytes on. `writer` must not use this filter: its writes and lookups would wait for
    /// locks the write holds, for ever. Wrap a file in a `BufWriter`: the header and the
    /// checksum are small writes.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.insert("a")?;
    /// let mut file = Vec::new();
    /// filter.write_to(&mut file)?;
    /// assert_eq!(file, filter.to_bytes());
    ///
    /// // Into a buffer of exactly the length, or an error if it is too short.
    /// let mut buffer = vec![0u8; filter.serialized_len() as usize];
    /// filter.write_to(&mut buffer[..])?;
    /// assert_eq!(buffer, file);
    /// assert!(filter.write_to(&mut buffer[..100]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The first error `writer` returns (`WriteZero` from a slice too short for the bytes);
    /// what was written before it is not a whole filter.
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        let table = self.raw().lock_table();
        let header = Header::new(
            self.raw().geometry(),
            self.capacity(),
            RecordedHasher::of(self.hasher()),
            table.items(),
            table.data_words(),
        );
        write_encoding(writer, header, |from, out| table.read_words(from, out))
    }

    /// [`from_bytes`](ConcurrentCuckooFilter::from_bytes) for a filter whose hasher is `S`,
    /// named by the type, as in `ConcurrentCuckooFilter::<MyHasher>::from_bytes_with_hasher`:
    /// the hasher is rebuilt from the seed the bytes record.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder};
    ///
    /// let hasher = DefaultHashBuilder::with_seed(9);
    /// let filter = ConcurrentCuckooFilter::with_capacity_and_hasher(100, hasher);
    /// filter.insert("a")?;
    /// let bytes = filter.to_bytes();
    /// let copy = ConcurrentCuckooFilter::<DefaultHashBuilder>::from_bytes_with_hasher(&bytes)?;
    /// assert!(copy.contains("a"));
    /// assert_eq!(copy.hasher().seed(), 9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes`](ConcurrentCuckooFilter::from_bytes), among them
    /// [`DecodeError::HasherMismatch`] unless the bytes were written with a hasher of `S`'s
    /// [`HASHER_ID`](StableHashBuilder::HASHER_ID), and [`DecodeError::InvalidSeed`] if `S`
    /// cannot take the recorded seed.
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes)
    }

    /// [`read_from`](ConcurrentCuckooFilter::read_from) for a filter whose hasher is `S`; see
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes_with_hasher`](Self::from_bytes_with_hasher), and
    /// [`DecodeError::Io`] if the reader fails.
    pub fn read_from_with_hasher<R: Read>(reader: R) -> Result<Self, DecodeError> {
        decode_from(reader)
    }
}

/// Deserialization with the default hasher. These live on the default type, like
/// [`with_capacity`](ConcurrentCuckooFilter::with_capacity), so that
/// `ConcurrentCuckooFilter::from_bytes(&bytes)` needs no type annotation.
impl ConcurrentCuckooFilter {
    /// Reads a filter from the bytes [`to_bytes`](ConcurrentCuckooFilter::to_bytes) made, on this
    /// platform or another, by this version of the crate or an earlier one.
    ///
    /// Every field is checked, and so are the checksums: a truncated, extended, corrupted or
    /// foreign input gets a [`DecodeError`] saying what is wrong, never a panic and never a
    /// filter that answers differently. Nothing is allocated beyond what the input's length
    /// justifies: the table's size is checked against the input before the table is allocated.
    /// The filter must have been written with the default hasher (see
    /// [`from_bytes_with_hasher`](ConcurrentCuckooFilter::from_bytes_with_hasher) for others);
    /// its seed is restored.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError};
    ///
    /// let mut bytes = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    /// bytes[100] ^= 1;
    /// assert!(matches!(
    ///     ConcurrentCuckooFilter::from_bytes(&bytes),
    ///     Err(DecodeError::ChecksumMismatch { .. })
    /// ));
    /// assert_eq!(
    ///     ConcurrentCuckooFilter::from_bytes(b"not a filter").unwrap_err(),
    ///     DecodeError::BadMagic
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] naming the first check the input fails, in the order `FORMAT.md`
    /// lists them; [`DecodeError::HasherMismatch`] if it was written with another hasher.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes)
    }

    /// Reads a filter written by [`write_to`](ConcurrentCuckooFilter::write_to), with the checks
    /// of [`from_bytes`](Self::from_bytes). Reads exactly the filter's bytes and no more, so
    /// `reader` is left at whatever follows. The header is checked before anything else is read,
    /// and memory grows with the bytes that actually arrive, so a header that promises a huge
    /// table cannot make it allocate more than the stream delivers. Wrap a file in a
    /// `BufReader`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.insert("a")?;
    /// let mut stream = filter.to_bytes();
    /// stream.extend_from_slice(b"next record");
    /// let mut reader = &stream[..];
    /// let copy = ConcurrentCuckooFilter::read_from(&mut reader)?;
    /// assert!(copy.contains("a"));
    /// assert_eq!(reader, b"next record");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes`](Self::from_bytes), and [`DecodeError::Io`] if the reader fails;
    /// a stream that ends early is [`DecodeError::Truncated`].
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        decode_from(reader)
    }
}
