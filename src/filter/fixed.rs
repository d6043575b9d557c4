//! The fixed kind: one table sized once, the raw core and the capacity it was sized for.

use core::fmt;
use core::hash::{BuildHasher, Hash};
use std::io::{self, Read, Write};

use crate::error::{BuildError, InsertError, MergeError};
use crate::filter::kind::{Kind, Sealed};
use crate::filter::CuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::hooks::DebugCandidates;
use crate::persist::encoding::VERSION;
use crate::persist::encoding::{
    check_checksum, check_len, decode_table, encoded_len, hasher_of, parse_table, read_up_to,
    write_encoding, HEADER_LEN,
};
use crate::persist::{DecodeError, FilterStats, RecordedHasher, StableHashBuilder};
use crate::raw::{Geometry, Insertion, RawFilter};
use crate::settings::TableSettings;
use crate::sizing::capacity_of;

/// A cuckoo filter that many threads can use at once, through `&self`.
///
/// It answers "might this item have been inserted?" with no false negatives and a small, tunable
/// rate of false positives, and unlike a Bloom filter it can delete. Share it by reference or
/// in an [`Arc`].
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
///
/// let filter = ConcurrentCuckooFilter::with_capacity(100_000);
/// std::thread::scope(|scope| {
///     for t in 0..2u64 {
///         let filter = &filter;
///         scope.spawn(move || {
///             for i in t * 50_000..(t + 1) * 50_000 {
///                 filter.insert(&i).unwrap();
///             }
///         });
///     }
/// });
/// assert_eq!(filter.len(), 100_000);
/// assert!((0..100_000u64).all(|i| filter.contains(&i)));
/// assert!(filter.remove(&7u64));
/// ```
///
/// # Consistency
///
/// Every operation is linearizable with respect to the item it names: once [`insert`] returned
/// `Ok`, [`contains`] of the item answers true in any thread that observes that return until a
/// [`remove`] of it, even while other threads move its fingerprint to make room. A lookup racing
/// an insert or remove of the same item may see either side of it. [`len`] sums per-stripe counts
/// one after another: exact when no write is in flight.
///
/// A lookup ([`contains`], [`count`], [`contains_batch`]) reads its two buckets between two reads
/// of their stripes' seqlock stamps (with [`TableLayout::BucketWord`](crate::TableLayout::BucketWord),
/// its two versioned bucket words) and answers when nothing changed: no lock, no shared write, no
/// wait. After 9 tries spoiled by writers it takes the two stripe locks, so it cannot starve; while
/// every stripe is locked (by [`to_bytes`] and the other encoders, or by an insert racing writers
/// kept spoiling) it waits. Inserts and removes lock only the stripes of the buckets they touch.
///
/// [`insert`] returns `Err(Full)` only if the item had no room at one moment during the call: no
/// empty slot in its two buckets and no short enough chain of moves to one, confirmed by a search
/// validated against every stripe it read. After 64 attempts spoiled by racing writers it decides
/// under every stripe lock.
///
/// As in any cuckoo filter, `remove` an item only if it was inserted: removing one never inserted
/// may remove another that shares its fingerprint and bucket (paper Section 3.3).
///
/// [`Arc`]: std::sync::Arc
/// [`insert`]: Self::insert
/// [`contains`]: Self::contains
/// [`remove`]: Self::remove
/// [`len`]: Self::len
/// [`count`]: Self::count
/// [`contains_batch`]: Self::contains_batch
/// [`to_bytes`]: Self::to_bytes
pub type ConcurrentCuckooFilter<S = DefaultHashBuilder> = CuckooFilter<Fixed, S>;

/// The kind of [`ConcurrentCuckooFilter`]: one table, sized once.
pub struct Fixed {
    raw: RawFilter,
    capacity: usize,
    writes: Writes,
    /// The live file the table is mapped from, for a shared filter.
    #[cfg(all(target_os = "linux", not(loom)))]
    file: Option<Box<crate::shared::SharedFile>>,
}

/// How the table takes writes, which picks the raw core's `SHARED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(all(target_os = "linux", not(loom))), allow(dead_code))]
enum Writes {
    /// The process's own table (`SHARED = false`).
    InMemory,
    /// A live file's, opened `Access::ReadWrite` (`SHARED = true`).
    Shared,
    /// A live file's, opened `Access::ReadOnly`: every write refused before the raw core.
    ReadOnly,
}

impl Fixed {
    pub(crate) fn new(raw: RawFilter, capacity: usize) -> Self {
        Self {
            raw,
            capacity,
            writes: Writes::InMemory,
            #[cfg(all(target_os = "linux", not(loom)))]
            file: None,
        }
    }

    /// A fixed filter over a mapped live file.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn in_file(
        raw: RawFilter,
        capacity: usize,
        file: crate::shared::SharedFile,
    ) -> Self {
        Self {
            writes: if file.is_read_only() {
                Writes::ReadOnly
            } else {
                Writes::Shared
            },
            file: Some(Box::new(file)),
            ..Self::new(raw, capacity)
        }
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn file(&self) -> Option<&crate::shared::SharedFile> {
        self.file.as_deref()
    }

    /// The table `settings` describe, or the parameter that makes it impossible.
    pub(crate) fn build(settings: &TableSettings) -> Result<Self, BuildError> {
        let geometry = settings.geometry()?;
        let raw = RawFilter::new(&geometry).ok_or(BuildError::OutOfMemory {
            bytes: usize::try_from(geometry.memory_bytes()).unwrap_or(usize::MAX),
        })?;
        Ok(Self::new(raw, Self::capacity_for(&geometry)))
    }

    /// The items a table of `geometry` is sized for.
    pub(crate) fn capacity_for(geometry: &Geometry) -> usize {
        let shape = &geometry.shape;
        usize::try_from(capacity_of(shape.bucket_count as u64, shape.bucket_size))
            .unwrap_or(usize::MAX)
    }

    pub(crate) fn raw(&self) -> &RawFilter {
        &self.raw
    }

    /// Out of line, so the in-memory insert inlines one copy of the raw core's, behind one test.
    #[inline(never)]
    fn insert_in_file(&self, hash: u64, unique: bool) -> Result<Insertion, InsertError> {
        match self.writes {
            Writes::ReadOnly => Err(InsertError::ReadOnly),
            _ => Ok(self.raw.insert::<true>(hash, unique)),
        }
    }
}

impl fmt::Debug for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Fixed");
        self.debug_fields(&mut f);
        f.finish()
    }
}

impl Sealed for Fixed {}

impl Kind for Fixed {
    const NAME: &'static str = "ConcurrentCuckooFilter";
    const GROWS: bool = false;

    fn with_capacity<S>(capacity: usize, hasher: S) -> (Self, S) {
        let settings = TableSettings {
            capacity,
            ..TableSettings::default()
        };
        match Self::build(&settings) {
            Ok(fixed) => (fixed, hasher),
            Err(err) => panic!("a ConcurrentCuckooFilter for {capacity} items: {err}"),
        }
    }

    #[inline(always)]
    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        let done = if self.writes == Writes::InMemory {
            self.raw.insert::<false>(hash, unique)
        } else {
            self.insert_in_file(hash, unique)?
        };
        match done {
            Insertion::Inserted => Ok(true),
            Insertion::Present => Ok(false),
            Insertion::Full => Err(InsertError::Full),
        }
    }

    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize> {
        match self.writes {
            Writes::InMemory => self.raw.insert_block::<false>(hashes),
            Writes::Shared => self.raw.insert_block::<true>(hashes),
            Writes::ReadOnly => Err(0),
        }
    }

    fn block_error(&self) -> InsertError {
        match self.writes {
            Writes::ReadOnly => InsertError::ReadOnly,
            _ => InsertError::Full,
        }
    }

    fn insert_unique_block(&self, hashes: &[u64], new: &mut [bool]) -> Result<(), usize> {
        let done = |i: usize, insertion| new[i] = insertion == Insertion::Inserted;
        match self.writes {
            Writes::InMemory => self.raw.insert_block_with::<false>(hashes, true, done),
            Writes::Shared => self.raw.insert_block_with::<true>(hashes, true, done),
            Writes::ReadOnly => Err(0),
        }
    }

    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        self.raw.contains(hash)
    }

    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        self.raw.contains_hashes(hashes, answers);
    }

    fn count(&self, hash: u64) -> usize {
        self.raw.count(hash)
    }

    fn remove(&self, hash: u64) -> bool {
        match self.writes {
            Writes::InMemory => self.raw.remove::<false>(hash),
            Writes::Shared => self.raw.remove::<true>(hash),
            Writes::ReadOnly => false,
        }
    }

    fn len(&self) -> usize {
        self.raw.len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn memory_usage(&self) -> usize {
        self.raw.memory_usage()
    }

    fn bucket_count(&self) -> usize {
        self.raw.bucket_count()
    }

    fn bucket_size(&self) -> usize {
        self.raw.bucket_size()
    }

    fn is_semi_sorted(&self) -> bool {
        self.raw.is_semi_sorted()
    }

    fn expected_false_positive_rate(&self) -> f64 {
        self.raw.geometry().shape.expected_false_positive_rate()
    }

    fn clear(&self) {
        if self.writes != Writes::ReadOnly {
            self.raw.lock_table().clear();
        }
    }

    fn duplicate(&self) -> Option<Self> {
        let raw = self.raw.duplicate()?;
        Some(Self::new(raw, self.capacity))
    }

    fn check_compatible(&self, other: &Self) -> Result<(), MergeError> {
        MergeError::unless_same(self.raw.geometry_mismatch(&other.raw))
    }

    fn merge_from(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        if self.writes == Writes::ReadOnly {
            return Err(MergeError::ReadOnly);
        }
        // A source that may be this table (itself, or a live file it maps too) is read as a copy.
        let copy;
        let source = if core::ptr::eq(self, other) || other.raw.is_mapped() {
            let bytes = other.raw.memory_usage();
            copy = other
                .raw
                .duplicate()
                .ok_or(MergeError::OutOfMemory { bytes })?;
            &copy
        } else {
            &other.raw
        };
        self.raw
            .merge_from(source, unique)
            .map_err(|merged| MergeError::Full { merged })
    }

    fn serialized_len(&self) -> u64 {
        encoded_len(self.raw.geometry())
    }

    fn write_to<S: StableHashBuilder, W: Write>(&self, hasher: &S, writer: W) -> io::Result<()> {
        if self.writes == Writes::ReadOnly {
            // It cannot lock: the bytes of a copy (`RawFilter::duplicate`).
            let copy = self
                .duplicate()
                .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
            return copy.write_to(hasher, writer);
        }
        // The hasher's `seed` is user code: asked before the locks are taken.
        let recorded = RecordedHasher::of(hasher);
        let table = self.raw.lock_table();
        write_encoding(writer, &table, self.raw.geometry(), self.capacity, recorded)
    }

    fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Self, S), DecodeError> {
        let (header, geometry) = parse_table(bytes, None)?;
        check_len(header.total_len(), bytes.len())?;
        check_checksum(bytes)?;
        let hasher = hasher_of::<S>(header.recorded_hasher())?;
        let raw = decode_table(&header, &geometry, bytes)?;
        // `Header::geometry` checked that the capacity fits.
        Ok((Self::new(raw, header.capacity as usize), hasher))
    }

    fn decode_from<S: StableHashBuilder, R: Read>(mut reader: R) -> Result<(Self, S), DecodeError> {
        // Memory grows with the bytes that arrive, never ahead of them on a length field's word.
        let mut bytes = Vec::new();
        read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
        let (header, _) = parse_table(&bytes, None)?;
        read_up_to(&mut reader, &mut bytes, header.total_len())?;
        Self::decode(&bytes)
    }

    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("capacity", &self.capacity)
            .field("fingerprint_bits", &self.raw.fingerprint_bits())
            .field("bucket_size", &self.raw.bucket_size())
            .field("semi_sorted", &self.raw.is_semi_sorted())
            .field("buckets", &self.raw.bucket_count())
            .field("stripes", &self.raw.stripe_count());
    }
}

impl<S> ConcurrentCuckooFilter<S> {
    pub(crate) fn raw(&self) -> &RawFilter {
        self.core().raw()
    }

    /// Bits per fingerprint. A growable filter's are per level:
    /// [`level_fingerprint_bits`](crate::GrowableCuckooFilter::level_fingerprint_bits).
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        self.raw().fingerprint_bits()
    }

    /// How the table holds its buckets (see
    /// [`ConcurrentCuckooFilterBuilder::layout`](crate::ConcurrentCuckooFilterBuilder::layout)). A
    /// growable filter's chunks are always packed.
    #[must_use]
    pub fn layout(&self) -> crate::TableLayout {
        if self.raw().has_bucket_words() {
            crate::TableLayout::BucketWord
        } else {
            crate::TableLayout::Packed
        }
    }
}

impl<S: BuildHasher> ConcurrentCuckooFilter<S> {
    test_hook! {
        /// The fingerprint and buckets of `item`, to build collisions on purpose.
        fn debug_candidates<T: Hash + ?Sized>(&self, item: &T) -> DebugCandidates {
            self.raw().debug_candidates(self.hasher().hash_one(item)).into()
        }
    }
}

impl<S: StableHashBuilder> ConcurrentCuckooFilter<S> {
    /// Shape, fill, accuracy and encoding in one value, as RedisBloom's `CF.INFO` gives them,
    /// read without locks: exact when no write is in flight.
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        let hasher = RecordedHasher::of(self.hasher());
        let len = self.len();
        let slots = self.bucket_count() * self.bucket_size();
        let load_factor = len as f64 / slots as f64;
        let memory_bytes = self.memory_usage();
        let shape = &self.raw().geometry().shape;
        FilterStats {
            buckets: self.bucket_count(),
            bucket_size: self.bucket_size(),
            fingerprint_bits: self.fingerprint_bits(),
            semi_sorted: self.is_semi_sorted(),
            stripes: self.raw().stripe_count(),
            len,
            capacity: self.capacity(),
            load_factor,
            memory_bytes,
            bits_per_item: (len > 0).then(|| memory_bytes as f64 * 8.0 / len as f64),
            expected_false_positive_rate: self.expected_false_positive_rate(),
            false_positive_rate_at_load: shape.false_positive_rate_at(load_factor),
            hasher_id: hasher.id,
            hasher_seed: hasher.seed,
            format_version: VERSION,
            serialized_len: self.serialized_len(),
        }
    }
}
