//! A filter's bytes, for every kind: `to_bytes`, `write_to`, `serialized_len`, `from_bytes`,
//! `read_from`, framed over the kind's own encoding ([`Kind::write_to`], [`Kind::decode`]).

use std::io::{self, Read, Write};

use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::persist::{DecodeError, StableHashBuilder};

/// Serialization, for a filter whose hasher has a [`StableHashBuilder`] identity. The format is
/// described in `FORMAT.md`; every version of this crate reads what earlier versions wrote.
impl<K: Kind, S: StableHashBuilder> CuckooFilter<K, S> {
    /// The filter's bytes, with checksums: a fixed filter's geometry, its hasher's id and seed,
    /// its item count and its table; a growable filter's plan (initial capacity, target rate,
    /// growth factor, limit and level settings), its hasher, then every level chunk by chunk,
    /// each as a fixed filter's encoding. [`from_bytes`](CuckooFilter::from_bytes) (or
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher) for another hasher) reads them
    /// back on any platform, answering every query exactly as this filter does (and a growable
    /// filter goes on growing by the same plan).
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
    /// A growable filter holds every stripe lock of every level at once while the levels are
    /// written (taken level by level in index order), so each write is in the bytes entirely or
    /// not at all, in whichever level it went. A level added while the locks are being taken is
    /// locked too before anything is written; a level still being built when the locks are all
    /// held is not in the bytes, and holds nothing yet: items enter a level only once it is
    /// published. A level that splits is held whole, every chunk of it, once no split is under
    /// way in it. Lookups that meet no lock do not wait at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    /// for key in 0..5_000u64 {
    ///     filter.insert(&key)?;
    /// }
    /// let bytes = filter.to_bytes();
    /// let copy = ConcurrentCuckooFilter::from_bytes(&bytes)?;
    /// assert_eq!(copy.len(), 5_000);
    /// assert!((0..5_000u64).all(|key| copy.contains(&key)));
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
        self.core().to_bytes(self.hasher())
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes to `writer`, from the same consistent state.
    ///
    /// The bytes are taken first, as `to_bytes` takes them, and `writer` runs only after every
    /// lock is released: it is the caller's code, and none runs under the filter's locks, so a
    /// `writer` may even use this filter, and a slow one keeps no other thread waiting. The
    /// memory this takes is one copy of the bytes; to save with no copy, write into a buffer of
    /// your own with [`write_to_slice`](Self::write_to_slice).
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The first error `writer` returns; what was written before it is not a whole filter.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        writer.write_all(&self.to_bytes())
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes into `out`, from the same consistent state,
    /// allocating nothing: for a buffer allocated elsewhere, such as a Python `bytes` object of
    /// [`serialized_len`](Self::serialized_len) bytes. `Ok(n)`: the bytes took `out[..n]`.
    ///
    /// Writers, and lookups that meet a locked stripe, wait while the bytes are written into
    /// `out`, as for `to_bytes`.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// filter.insert("a")?;
    /// let mut buffer = vec![0u8; filter.serialized_len() as usize];
    /// assert_eq!(filter.write_to_slice(&mut buffer)?, buffer.len());
    /// assert_eq!(buffer, filter.to_bytes());
    /// assert!(filter.write_to_slice(&mut buffer[..100]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`WriteZero`](io::ErrorKind::WriteZero) if `out` is too short for the bytes, which a
    /// buffer of `serialized_len` bytes can be if a growable filter grew since; what was written
    /// into it then is not a whole filter.
    pub fn write_to_slice(&self, out: &mut [u8]) -> io::Result<usize> {
        let len = out.len();
        let mut rest = out;
        self.core().write_to(self.hasher(), &mut rest)?;
        Ok(len - rest.len())
    }

    /// Bytes [`to_bytes`](Self::to_bytes) and [`write_to`](Self::write_to) produce now, computed
    /// from the shape alone: nothing is written or locked. A fixed filter's does not change as
    /// items come and go, so a buffer of this length takes the bytes at any later moment; a
    /// growable filter's grows as chunks split and levels are added: while other threads
    /// insert, a later write may need more.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(1000);
    /// filter.try_extend(0..100_000u64)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    /// # Ok::<(), concurrent_cuckoo_filter::ExtendError>(())
    /// ```
    #[must_use]
    pub fn serialized_len(&self) -> u64 {
        self.core().serialized_len()
    }

    /// [`from_bytes`](CuckooFilter::from_bytes) for a filter whose hasher is `S`, named by the
    /// type, as in `ConcurrentCuckooFilter::<MyHasher>::from_bytes_with_hasher`: the hasher is
    /// rebuilt from the seed the bytes record.
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
    /// Those of [`from_bytes`](CuckooFilter::from_bytes), among them
    /// [`DecodeError::HasherMismatch`] unless the bytes were written with a hasher whose
    /// function `S` computes, and [`DecodeError::InvalidSeed`] if `S` cannot take the recorded
    /// seed.
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (core, hasher) = K::decode(bytes)?;
        Ok(Self::from_parts(core, hasher))
    }

    /// [`read_from`](CuckooFilter::read_from) for a filter whose hasher is `S`; see
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    ///
    /// # Errors
    ///
    /// Those of [`from_bytes_with_hasher`](Self::from_bytes_with_hasher), and
    /// [`DecodeError::Io`] if the reader fails.
    pub fn read_from_with_hasher<R: Read>(reader: R) -> Result<Self, DecodeError> {
        let (core, hasher) = K::decode_from(reader)?;
        Ok(Self::from_parts(core, hasher))
    }
}

/// Deserialization with the default hasher. These live on the default hasher's type, like
/// [`with_capacity`](CuckooFilter::with_capacity), so that
/// `ConcurrentCuckooFilter::from_bytes(&bytes)` needs no type annotation.
impl<K: Kind> CuckooFilter<K> {
    /// Reads a filter from the bytes [`to_bytes`](CuckooFilter::to_bytes) made, on this
    /// platform or another, by this version of the crate or an earlier one.
    ///
    /// Every field is checked, and so are the checksums: a truncated, extended, corrupted or
    /// foreign input gets a [`DecodeError`] saying what is wrong, never a panic and never a
    /// filter that answers differently. Nothing is allocated beyond what the input's length
    /// justifies: the table's size is checked against the input before the table is allocated.
    /// The filter must have been written with the default hasher (see
    /// [`from_bytes_with_hasher`](CuckooFilter::from_bytes_with_hasher) for others); its seed
    /// is restored.
    ///
    /// A growable filter's plan is checked, and every level against the geometry the plan gives
    /// its index and then as a fixed filter's encoding is. The total length is checked against
    /// what the levels take before any level is allocated. Levels that split are read chunk by
    /// chunk, each chunk's record and header checked before its table is allocated, and the
    /// chunks checked to hold every route once.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError, GrowableCuckooFilter};
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
    ///
    /// let mut bytes = GrowableCuckooFilter::with_capacity(100).to_bytes();
    /// let last = bytes.len() - 1;
    /// bytes[last] ^= 1;
    /// let err = GrowableCuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(err, DecodeError::Level { level: 0, .. }), "{err}");
    /// // A fixed filter's bytes are not a growable filter's, and the error says whose they are.
    /// let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    /// assert_eq!(
    ///     GrowableCuckooFilter::from_bytes(&fixed).unwrap_err(),
    ///     DecodeError::OtherFilterType { found: "ConcurrentCuckooFilter" }
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] naming the first check the input fails, in the order `FORMAT.md`
    /// lists them; [`DecodeError::HasherMismatch`] if it was written with another hasher. A
    /// growable filter's level's own fault comes as [`DecodeError::Level`] naming it, a level
    /// shaped other than the plan says as a [`DecodeError::PlanMismatch`] inside that, a plan
    /// that cannot build a recorded level (past its limit) as [`DecodeError::InvalidPlan`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_hasher(bytes)
    }

    /// Reads a filter written by [`write_to`](CuckooFilter::write_to), with the checks of
    /// [`from_bytes`](Self::from_bytes). Reads exactly the filter's bytes and no more, so
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
        Self::read_from_with_hasher(reader)
    }
}
