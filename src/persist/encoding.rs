//! One table's encoding (`FORMAT.md`), a fixed filter's bytes and each growable chunk's: its
//! header, checksums, and reads that allocate only for bytes that have arrived.

use std::io::{self, Read, Write};

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use super::{DecodeError, RecordedHasher, StableHashBuilder};
use crate::raw::{
    fits_bucket_word, min_stripes, Geometry, LockedTable, Place, RawFilter, SearchLimits, Shape,
    MAX_BUCKET_COUNT, MAX_HOPS,
};

/// As PNG's signature: a non-ASCII byte, the name, and what a text-mode transfer would mangle.
pub(crate) const MAGIC: [u8; 8] = *b"\x89CCF\r\n\x1a\n";
pub(crate) const GROWABLE_MAGIC: [u8; 8] = *b"\x89CCG\r\n\x1a\n";
pub(crate) const EXPIRING_MAGIC: [u8; 8] = *b"CCFEXPR1";
/// So that each decoder can say whose bytes it was given.
const MAGICS: [(&[u8; 8], &str); 3] = [
    (&MAGIC, "ConcurrentCuckooFilter"),
    (&GROWABLE_MAGIC, "GrowableCuckooFilter"),
    (&EXPIRING_MAGIC, "ExpiringCuckooFilter"),
];
/// The format version this build writes, and the only one it reads.
pub(crate) const VERSION: u16 = 1;
const FLAG_SEMI_SORTED: u16 = 1;
/// One word per bucket, whose versions are written as 0.
const FLAG_BUCKET_WORDS: u16 = 2;
const KNOWN_FLAGS: u16 = FLAG_SEMI_SORTED | FLAG_BUCKET_WORDS;
/// Bytes of header fields, before the header checksum.
const FIELDS_LEN: usize = 80;
/// Bytes of the header, its checksum included.
pub(crate) const HEADER_LEN: usize = FIELDS_LEN + 8;
pub(crate) const CHECKSUM_LEN: usize = 8;
/// The cap on the recorded `max_search_buckets`: 16 MiB of queue, far beyond any useful search.
pub(crate) const MAX_SEARCH_BUCKETS: u64 = 1 << 20;
/// Most bytes asked of a reader at once.
const READ_STEP: usize = 64 * 1024;
/// Bytes of table handed to a writer at once.
const WRITE_STEP: usize = 4096;

/// The header's fields, as numbers; [`Header::geometry`] checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    flags: u16,
    bucket_size: u8,
    fingerprint_bits: u8,
    max_hops: u8,
    buckets: u64,
    stripes: u64,
    max_search_buckets: u64,
    pub(crate) capacity: u64,
    hasher_id: u64,
    seed: u64,
    items: u64,
    table_words: u64,
}

impl Header {
    /// The header of a snapshot of `items` items in `table_words` words.
    pub(crate) fn new(
        geometry: &Geometry,
        capacity: usize,
        hasher: RecordedHasher,
        items: usize,
        table_words: usize,
    ) -> Self {
        let (shape, limits) = (&geometry.shape, &geometry.limits);
        Self {
            flags: (u16::from(shape.semi_sorted) * FLAG_SEMI_SORTED)
                | (u16::from(shape.bucket_words) * FLAG_BUCKET_WORDS),
            bucket_size: shape.bucket_size as u8,
            fingerprint_bits: shape.fingerprint_bits as u8,
            max_hops: limits.max_hops as u8,
            buckets: shape.bucket_count as u64,
            // Stripes that could never be locked are not recorded; buckets map to stripes alike.
            stripes: (geometry.stripes as u64).min(geometry.max_useful_stripes()),
            // Likewise a search bound the search could never reach, or beyond the format's cap.
            max_search_buckets: (limits.max_search_buckets as u64)
                .min(search_bound(shape.bucket_size, limits.max_hops)),
            capacity: capacity as u64,
            hasher_id: hasher.id,
            seed: hasher.seed,
            items: items as u64,
            table_words: table_words as u64,
        }
    }

    pub(crate) fn recorded_hasher(&self) -> RecordedHasher {
        RecordedHasher {
            id: self.hasher_id,
            seed: self.seed,
        }
    }

    /// Each field but the item count, named as in `FORMAT.md`.
    fn shape_fields(&self) -> [(&'static str, u64); 11] {
        [
            ("flags", self.flags.into()),
            ("bucket_size", self.bucket_size.into()),
            ("fingerprint_bits", self.fingerprint_bits.into()),
            ("max_hops", self.max_hops.into()),
            ("buckets", self.buckets),
            ("stripes", self.stripes),
            ("max_search_buckets", self.max_search_buckets),
            ("capacity", self.capacity),
            ("hasher_id", self.hasher_id),
            ("seed", self.seed),
            ("table_words", self.table_words),
        ]
    }

    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN] {
        sealed_header(
            (&MAGIC, VERSION),
            self.flags,
            // The fourth byte is reserved and stays 0.
            [self.bucket_size, self.fingerprint_bits, self.max_hops, 0],
            &[
                self.buckets,
                self.stripes,
                self.max_search_buckets,
                self.capacity,
                self.hasher_id,
                self.seed,
                self.items,
                self.table_words,
            ],
        )
    }

    /// The sealed header at the start of `bytes`, its reserved byte 0; fields unchecked.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_sealed_header(bytes, (&MAGIC, VERSION), FIELDS_LEN)?;
        check_field(bytes[15] == 0, "reserved", bytes[15].into())?;
        Ok(Self {
            flags: u16::from_le_bytes([bytes[10], bytes[11]]),
            bucket_size: bytes[12],
            fingerprint_bits: bytes[13],
            max_hops: bytes[14],
            buckets: u64_at(bytes, 16),
            stripes: u64_at(bytes, 24),
            max_search_buckets: u64_at(bytes, 32),
            capacity: u64_at(bytes, 40),
            hasher_id: u64_at(bytes, 48),
            seed: u64_at(bytes, 56),
            items: u64_at(bytes, 64),
            table_words: u64_at(bytes, 72),
        })
    }

    /// The geometry the fields describe, if every field is in range and they agree.
    pub(crate) fn geometry(&self) -> Result<Geometry, DecodeError> {
        let invalid = |field, value: u64| DecodeError::InvalidGeometry { field, value };
        if self.flags & !KNOWN_FLAGS != 0 {
            return Err(DecodeError::UnsupportedFlags { flags: self.flags });
        }
        let semi_sorted = self.flags & FLAG_SEMI_SORTED != 0;
        let bucket_words = self.flags & FLAG_BUCKET_WORDS != 0;
        let (size, bits, hops) = (
            self.bucket_size,
            self.fingerprint_bits,
            self.max_hops.into(),
        );
        let fits_word = fits_bucket_word(size.into(), bits.into());
        // Semi-sorted buckets pack exactly four fingerprints of at least 5 bits; a bucket word
        // holds plain fingerprints, at most 48 bits of them.
        let checks: [(bool, &str, u64); 7] = [
            (matches!(size, 2 | 4 | 8), "bucket_size", size.into()),
            ((4..=32).contains(&bits), "fingerprint_bits", bits.into()),
            (!semi_sorted || size == 4, "bucket_size", size.into()),
            (!semi_sorted || bits >= 5, "fingerprint_bits", bits.into()),
            (!(bucket_words && semi_sorted), "flags", self.flags.into()),
            (!bucket_words || fits_word, "fingerprint_bits", bits.into()),
            ((1..=MAX_HOPS).contains(&hops), "max_hops", hops as u64),
        ];
        if let Some(&(_, field, value)) = checks.iter().find(|(ok, ..)| !ok) {
            return Err(invalid(field, value));
        }
        let bucket_count = match usize::try_from(self.buckets) {
            Ok(count) if count >= 1 && self.buckets <= MAX_BUCKET_COUNT => count,
            _ => return Err(invalid("buckets", self.buckets)),
        };
        let mut geometry = Geometry {
            shape: Shape {
                bucket_count,
                bucket_size: size.into(),
                fingerprint_bits: bits.into(),
                semi_sorted,
                bucket_words,
            },
            stripes: 0,
            limits: SearchLimits {
                max_hops: hops,
                max_search_buckets: 2,
            },
        };
        let useful = geometry.max_useful_stripes();
        geometry.stripes = match usize::try_from(self.stripes) {
            Ok(stripes)
                if stripes == 0 || (stripes.is_power_of_two() && self.stripes <= useful) =>
            {
                stripes
            }
            _ => return Err(invalid("stripes", self.stripes)),
        };
        // Each stripe counts its fingerprints in 32 bits, as the builder requires.
        let enough = geometry.stripe_count() as u64 >= min_stripes(self.buckets, size as usize);
        check_field(enough, "stripes", self.stripes)?;
        let bound = search_bound(geometry.shape.bucket_size, geometry.limits.max_hops);
        geometry.limits.max_search_buckets = match usize::try_from(self.max_search_buckets) {
            Ok(max) if max >= 2 && self.max_search_buckets <= bound => max,
            _ => return Err(invalid("max_search_buckets", self.max_search_buckets)),
        };
        let fits_usize = usize::try_from(self.capacity).is_ok();
        check_field(fits_usize, "capacity", self.capacity)?;
        let words_ok = self.table_words == data_words(&geometry);
        check_field(words_ok, "table_words", self.table_words)?;
        Ok(geometry)
    }

    /// Bytes of the whole encoding; the table has at most 2^34 words.
    pub(crate) fn total_len(&self) -> u64 {
        (HEADER_LEN + CHECKSUM_LEN) as u64 + self.table_words * 8
    }
}

/// The header at the start of `bytes` and its geometry, after it equals `expected` but items.
pub(crate) fn parse_table(
    bytes: &[u8],
    expected: Option<&Header>,
) -> Result<(Header, Geometry), DecodeError> {
    let header = Header::parse(bytes)?;
    let plan = expected.map(|expected| expected.shape_fields());
    if let Some((field, expected, found)) =
        plan.and_then(|e| first_difference(e, header.shape_fields()))
    {
        return Err(DecodeError::PlanMismatch {
            field,
            expected,
            found,
        });
    }
    Ok((header, header.geometry()?))
}

/// The first of the named fields whose values differ, with `ours` and `theirs`.
pub(crate) fn first_difference<const N: usize>(
    ours: [(&'static str, u64); N],
    theirs: [(&'static str, u64); N],
) -> Option<(&'static str, u64, u64)> {
    let mut pairs = ours.into_iter().zip(theirs);
    let ((field, ours), (_, theirs)) = pairs.find(|(ours, theirs)| ours != theirs)?;
    Some((field, ours, theirs))
}

/// A header of `N` bytes: magic, version, flags, four one-byte fields, `fields`, checksum.
pub(crate) fn sealed_header<const N: usize>(
    (magic, version): (&[u8; 8], u16),
    flags: u16,
    bytes: [u8; 4],
    fields: &[u64],
) -> [u8; N] {
    let mut prefix = [0u8; 16];
    prefix[0..8].copy_from_slice(magic);
    prefix[8..10].copy_from_slice(&version.to_le_bytes());
    prefix[10..12].copy_from_slice(&flags.to_le_bytes());
    prefix[12..16].copy_from_slice(&bytes);
    sealed_record(&prefix, fields)
}

/// A record of `N` bytes: `prefix`, `fields`, then the checksum of all before it.
pub(crate) fn sealed_record<const N: usize>(prefix: &[u8], fields: &[u64]) -> [u8; N] {
    debug_assert_eq!(prefix.len() + 8 * fields.len() + CHECKSUM_LEN, N);
    let mut out = [0u8; N];
    out[..prefix.len()].copy_from_slice(prefix);
    for (at, field) in (prefix.len()..).step_by(8).zip(fields) {
        out[at..at + 8].copy_from_slice(&field.to_le_bytes());
    }
    let checksum = xxh3_64(&out[..N - CHECKSUM_LEN]);
    out[N - CHECKSUM_LEN..].copy_from_slice(&checksum.to_le_bytes());
    out
}

/// For bytes not starting with `magic`: whose they are if another type's magic is recognised.
pub(crate) fn not_this_magic(bytes: &[u8], magic: &[u8; 8]) -> DecodeError {
    let prefix = bytes.len().min(magic.len());
    let other = MAGICS
        .iter()
        .find(|(other, _)| *other != magic && prefix > 3 && bytes[..prefix] == other[..prefix]);
    match other {
        Some(&(_, found)) => DecodeError::OtherFilterType { found },
        None => DecodeError::BadMagic,
    }
}

/// Checks, in order, the magic and version (on the bytes there are), length and checksum.
pub(crate) fn check_sealed_header(
    bytes: &[u8],
    (magic, known_version): (&[u8; 8], u16),
    fields_len: usize,
) -> Result<(), DecodeError> {
    let prefix = bytes.len().min(magic.len());
    if bytes[..prefix] != magic[..prefix] {
        return Err(not_this_magic(bytes, magic));
    }
    if bytes.len() >= 10 {
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != known_version {
            return Err(DecodeError::UnsupportedVersion { version });
        }
    }
    let header_len = fields_len + 8;
    if bytes.len() < header_len {
        return Err(DecodeError::Truncated {
            needed: header_len as u64,
            found: bytes.len() as u64,
        });
    }
    check_record(&bytes[..header_len])
}

/// The largest `max_search_buckets` recorded: what a search can reach, capped (`FORMAT.md`).
fn search_bound(bucket_size: usize, max_hops: usize) -> u64 {
    let mut level = 2u64;
    let mut reachable = 0u64;
    for _ in 0..=max_hops {
        reachable += level;
        level *= bucket_size as u64;
    }
    reachable.min(MAX_SEARCH_BUCKETS)
}

/// Words of table data: the bucket bits, rounded up to whole words.
pub(crate) fn data_words(geometry: &Geometry) -> u64 {
    geometry.shape.data_bits().div_ceil(64)
}

pub(crate) fn encoded_len(geometry: &Geometry) -> u64 {
    (HEADER_LEN + CHECKSUM_LEN) as u64 + data_words(geometry) * 8
}

/// The little-endian `u64` at `bytes[at..at + 8]`.
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// [`DecodeError::InvalidGeometry`] of `field` unless `ok`.
pub(crate) fn check_field(ok: bool, field: &'static str, value: u64) -> Result<(), DecodeError> {
    ok.then_some(())
        .ok_or(DecodeError::InvalidGeometry { field, value })
}

/// Refuses an input of `len` bytes where a checked header says `expected`.
pub(crate) fn check_len(expected: u64, len: impl TryInto<u64>) -> Result<(), DecodeError> {
    let found = len.try_into().unwrap_or(u64::MAX);
    if found < expected {
        return Err(DecodeError::Truncated {
            needed: expected,
            found,
        });
    }
    if found > expected {
        return Err(DecodeError::TrailingBytes { expected, found });
    }
    Ok(())
}

/// The checksum stored in the last eight bytes and the computed one, if they differ.
fn checksum_mismatch(bytes: &[u8]) -> Option<(u64, u64)> {
    let (body, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let (stored, computed) = (u64_at(stored, 0), xxh3_64(body));
    (stored != computed && !cfg!(fuzzing)).then_some((stored, computed))
}

/// Checks a whole encoding's checksum, in its last eight bytes.
pub(crate) fn check_checksum(bytes: &[u8]) -> Result<(), DecodeError> {
    match checksum_mismatch(bytes) {
        Some((stored, computed)) => Err(DecodeError::ChecksumMismatch { stored, computed }),
        None => Ok(()),
    }
}

/// Checks a header's or a record's checksum, in its last eight bytes.
pub(crate) fn check_record(record: &[u8]) -> Result<(), DecodeError> {
    match checksum_mismatch(record) {
        Some((stored, computed)) => Err(DecodeError::HeaderChecksumMismatch { stored, computed }),
        None => Ok(()),
    }
}

pub(crate) fn hasher_of<S: StableHashBuilder>(recorded: RecordedHasher) -> Result<S, DecodeError> {
    if recorded.id != S::HASHER_ID {
        return Err(DecodeError::HasherMismatch {
            expected: S::HASHER_ID,
            found: recorded.id,
        });
    }
    S::from_seed(recorded.seed).ok_or(DecodeError::InvalidSeed {
        seed: recorded.seed,
    })
}

/// The table of an encoding whose header, length and checksum are checked.
pub(crate) fn decode_table(
    header: &Header,
    geometry: &Geometry,
    bytes: &[u8],
) -> Result<RawFilter, DecodeError> {
    let table = &bytes[HEADER_LEN..bytes.len() - CHECKSUM_LEN];
    let tail_bits = geometry.shape.data_bits() % 64;
    if tail_bits != 0 && table.len() >= 8 && u64_at(table, table.len() - 8) >> tail_bits != 0 {
        return Err(DecodeError::NonZeroPadding);
    }
    // Straight from the input: the input and the table are all the memory a decode holds.
    let raw = RawFilter::from_le_bytes(geometry, table).ok_or(DecodeError::OutOfMemory {
        bytes: geometry.memory_bytes(),
    })?;
    if let Some(bucket) = raw.first_non_canonical_bucket() {
        return Err(DecodeError::InvalidBucket {
            bucket: bucket as u64,
        });
    }
    let items = raw.len() as u64;
    if items != header.items {
        return Err(DecodeError::ItemCountMismatch {
            header: header.items,
            table: items,
        });
    }
    Ok(raw)
}

/// Appends from `reader` until `bytes` holds `len` bytes or the reader ends, growing it to at
/// most twice what has arrived, and to exactly `len` at the end.
pub(crate) fn read_up_to<R: Read>(
    reader: &mut R,
    bytes: &mut Vec<u8>,
    len: u64,
) -> Result<(), DecodeError> {
    let mut chunk =
        vec![0u8; len.saturating_sub(bytes.len() as u64).min(READ_STEP as u64) as usize];
    while (bytes.len() as u64) < len {
        let want = (len - bytes.len() as u64).min(chunk.len() as u64) as usize;
        match reader.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => {
                if bytes.capacity() - bytes.len() < n {
                    let grown = (bytes.len() as u64 * 2).max(READ_STEP as u64).min(len);
                    let grown = usize::try_from(grown).unwrap_or(usize::MAX);
                    let extra = grown - bytes.len();
                    bytes
                        .try_reserve_exact(extra.max(n))
                        .map_err(|_| DecodeError::OutOfMemory { bytes: len })?;
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

/// Writes the encoding of `table`, of `geometry` and sized for `capacity`: its header, the table
/// a part at a time, the checksum.
pub(crate) fn write_encoding<P: Place, W: Write>(
    mut writer: W,
    table: &LockedTable<'_, P>,
    geometry: &Geometry,
    capacity: usize,
    hasher: RecordedHasher,
) -> io::Result<()> {
    let header = Header::new(
        geometry,
        capacity,
        hasher,
        table.items(),
        table.data_words(),
    );
    let mut checksum = Xxh3::new();
    let mut put = |bytes: &[u8]| {
        checksum.update(bytes);
        writer.write_all(bytes)
    };
    put(&header.to_bytes())?;
    let len = header.table_words as usize;
    put_words(len, |from, part| table.read_words(from, part), &mut put)?;
    writer.write_all(&checksum.digest().to_le_bytes())
}

/// Puts `len` words, little-endian, a part at a time as `read(from, part)` gives them, through a
/// buffer on the stack.
pub(crate) fn put_words(
    len: usize,
    mut read: impl FnMut(usize, &mut [u64]),
    mut put: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut words = [0u64; WRITE_STEP / 8];
    let mut bytes = [0u8; WRITE_STEP];
    for from in (0..len).step_by(words.len()) {
        let part = &mut words[..(len - from).min(WRITE_STEP / 8)];
        read(from, part);
        let bytes = &mut bytes[..part.len() * 8];
        for (out, word) in bytes.chunks_exact_mut(8).zip(part.iter()) {
            out.copy_from_slice(&word.to_le_bytes());
        }
        put(bytes)?;
    }
    Ok(())
}
