//! Persistence of a growable filter: its header (the plan, [`header`]), then its levels chunk by
//! chunk ([`records`]). The layout is in `FORMAT.md` ("The byte format of a
//! `GrowableCuckooFilter`").

mod header;
mod records;

use std::io::{self, Read, Write};

use self::header::{GrowableHeader, HEADER_LEN};
use super::GrowableCuckooFilter;
use crate::persist::encoding::read_up_to;
use crate::persist::{DecodeError, RecordedHasher, StableHashBuilder};

pub(crate) use self::records::stats;

/// Decodes a whole encoding: `bytes` must be exactly one growable filter.
fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let header = GrowableHeader::parse(bytes)?;
    let plan = header.plan()?;
    records::decode_slice(&header, plan, bytes)
}

/// Reads one whole encoding from `reader`: the header first, then, once it is checked, as many
/// bytes as the levels it describes take, and not one more.
fn decode_from<S: StableHashBuilder, R: Read>(
    mut reader: R,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let mut bytes = Vec::new();
    read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
    let header = GrowableHeader::parse(&bytes)?;
    let plan = header.plan()?;
    records::decode_stream(&header, plan, reader)
}

/// Serialization, for a filter whose hasher has a [`StableHashBuilder`] identity. The format is
/// described in `FORMAT.md` ("Growable filters").
impl<S: StableHashBuilder> GrowableCuckooFilter<S> {
    /// The filter's bytes: its plan (initial capacity, target rate, growth factor, limit and
    /// level settings), its hasher's id and seed, then every level, each as a fixed filter's
    /// encoding, with checksums. [`from_bytes`](GrowableCuckooFilter::from_bytes) (or
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).for another hasher) reads them back on any platform: a filter
    /// that answers every query as this one does and goes on growing by the same plan.
    ///
    /// # Consistency
    ///
    /// The bytes are a state the filter really had, even while other threads insert, remove
    /// and add levels: every stripe lock of every level is held at once while the levels are
    /// copied (taken level by level in index order, as a level's writers take them), so each
    /// insert or remove is in the copy entirely or not at all, in whichever level it went. A
    /// level added while the locks are being taken is locked too before anything is copied. A
    /// level still being built when the locks are all held is not in the copy, and it holds
    /// nothing yet: items enter a level only once it is published. A level that splits is held
    /// whole, every chunk of it, once no split is under way in it. Writers wait while the bytes
    /// are written into the returned vector, allocated at their exact length once the locks
    /// are held: the filter and its bytes are all the memory this takes. Lookups that meet no
    /// lock do not wait at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(100);
    /// filter.try_extend(0..10_000u64)?;
    /// let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes())?;
    /// assert_eq!(copy.level_count(), filter.level_count());
    /// assert_eq!(copy.len(), 10_000);
    /// assert!((0..10_000u64).all(|key| copy.contains(&key)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        records::to_bytes(&self.levels, RecordedHasher::of(&self.hasher))
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes to `writer`, from the same consistent
    /// snapshot, without a copy of any level: each chunk's table goes to `writer` a few
    /// kilobytes at a time while every chunk's stripe locks are held, and the memory this takes
    /// is those few kilobytes.
    ///
    /// So writers, and lookups that meet a locked stripe, wait for the whole write, `writer`'s
    /// I/O included. Where that matters, write into memory ([`to_bytes`](Self::to_bytes)) or
    /// to a fast file, then move the bytes on. `writer` must not use this filter: its writes
    /// and lookups would wait for locks the write holds, for ever. Wrap a file in a
    /// `BufWriter`.
    ///
    /// # Errors
    ///
    /// Whatever `writer` returns: `WriteZero` from a slice too short for the bytes, which a
    /// buffer of [`serialized_len`](Self::serialized_len) bytes can be if the filter grew
    /// since.
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        records::write_to(&self.levels, RecordedHasher::of(&self.hasher), writer)
    }

    /// Bytes [`to_bytes`](Self::to_bytes) and [`write_to`](Self::write_to) produce now,
    /// computed from the levels' chunks: nothing is written or locked. It grows as chunks split
    /// and levels are added, not as items come and go: while other threads insert, a later
    /// write may need more.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(1000);
    /// filter.try_extend(0..100_000u64)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    #[must_use]
    pub fn serialized_len(&self) -> u64 {
        HEADER_LEN as u64 + self.levels.iter().map(records::level_len).sum::<u64>()
    }

    /// [`from_bytes`](GrowableCuckooFilter::from_bytes) for a filter whose hasher is `S`:
    /// refused with [`DecodeError::HasherMismatch`] unless the bytes were written with a hasher
    /// whose function `S` computes ([`from_recorded`](StableHashBuilder::from_recorded)); the hasher is rebuilt from the
    /// recorded seed. Name the type, as in `GrowableCuckooFilter::<MyHasher>::from_bytes_with_hasher(&bytes)`.
    ///
    /// # Errors
    ///
    /// As for [`from_bytes`](GrowableCuckooFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes)
    }

    /// [`read_from`](GrowableCuckooFilter::read_from) for a filter whose hasher is `S`; see
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    ///
    /// # Errors
    ///
    /// As for [`read_from`](GrowableCuckooFilter::read_from).
    pub fn read_from_with_hasher<R: Read>(reader: R) -> Result<Self, DecodeError> {
        decode_from(reader)
    }
}

/// Deserialization with the default hasher, on the default type so that
/// `GrowableCuckooFilter::from_bytes(&bytes)` needs no type annotation.
impl GrowableCuckooFilter {
    /// Reads a filter from the bytes [`to_bytes`](GrowableCuckooFilter::to_bytes) made, on this
    /// platform or another, by this version of the crate or an earlier one.
    ///
    /// Every field of the plan is checked, and every level is checked against the geometry the
    /// plan gives its index and then as a fixed filter's encoding is, checksums included. The
    /// total length is checked against what the levels take before any level is allocated, so
    /// a header that claims huge levels in a few bytes allocates nothing. Levels that split are
    /// read chunk by chunk, each chunk's record and header checked before its table is
    /// allocated, and the chunks checked to hold every route once.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] saying what is wrong, never a panic: a level's own fault comes as
    /// [`DecodeError::Level`] naming it, a level shaped other than the plan says as a
    /// [`DecodeError::PlanMismatch`] inside that, a plan that cannot build a recorded level
    /// (past its limit) as [`DecodeError::InvalidPlan`].
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError, GrowableCuckooFilter};
    ///
    /// let mut bytes = GrowableCuckooFilter::with_capacity(100).to_bytes();
    /// let last = bytes.len() - 1;
    /// bytes[last] ^= 1;
    /// let err = GrowableCuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(err, DecodeError::Level { level: 0, .. }), "{err}");
    ///
    /// // A fixed filter's bytes are not a growable filter's, and the error says whose they are.
    /// let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    /// assert_eq!(
    ///     GrowableCuckooFilter::from_bytes(&fixed).unwrap_err(),
    ///     DecodeError::OtherFilterType { found: "ConcurrentCuckooFilter" }
    /// );
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes)
    }

    /// Reads a filter written by [`write_to`](GrowableCuckooFilter::write_to), with the checks
    /// of [`from_bytes`](Self::from_bytes). Reads exactly the filter's bytes and no more, so
    /// `reader` is left at whatever follows. The header is checked before anything else is
    /// read, and memory grows with the bytes that actually arrive. Wrap a file in a
    /// `BufReader`.
    ///
    /// # Errors
    ///
    /// As for [`from_bytes`](Self::from_bytes), and [`DecodeError::Io`] if `reader` fails.
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        decode_from(reader)
    }
}
