//! One table's encoding, the whole of a fixed filter's bytes and each chunk of a growable
//! filter's (`FORMAT.md` lays it out): its header, flags, checksums, and bounded reads. The
//! decoder checks every length against what it was given before it allocates for it.

use std::io::{self, Read, Write};

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use super::{DecodeError, RecordedHasher, StableHashBuilder};
use crate::raw::{
    fits_bucket_word, min_stripes, Geometry, RawFilter, SearchLimits, Shape, MAX_BUCKET_COUNT,
    MAX_HOPS,
};

/// The first eight bytes: a non-ASCII byte, the name, then the line endings and end-of-file
/// character that a text-mode transfer would mangle (as in PNG's signature).
const MAGIC: [u8; 8] = *b"\x89CCF\r\n\x1a\n";
/// A growable filter's magic: the fixed filter's with `G` for `F`, so that neither reader
/// mistakes the other's bytes, and each can say whose they are.
pub(crate) const GROWABLE_MAGIC: [u8; 8] = *b"\x89CCG\r\n\x1a\n";
/// An expiring filter's magic.
pub(crate) const EXPIRING_MAGIC: [u8; 8] = *b"CCFEXPR1";
/// Every filter type's magic and name, so that each decoder can say whose bytes it was given.
const MAGICS: [(&[u8; 8], &str); 3] = [
    (&MAGIC, "ConcurrentCuckooFilter"),
    (&GROWABLE_MAGIC, "GrowableCuckooFilter"),
    (&EXPIRING_MAGIC, "ExpiringCuckooFilter"),
];
/// The format version this build writes, and the only one it reads.
pub(crate) const VERSION: u16 = 1;
/// Flag bit 0: the buckets are semi-sorted.
const FLAG_SEMI_SORTED: u16 = 1;
/// Flag bit 1: one word per bucket, whose versions are written as 0.
const FLAG_BUCKET_WORDS: u16 = 2;
/// Every flag some version defines; any other bit set is refused.
const KNOWN_FLAGS: u16 = FLAG_SEMI_SORTED | FLAG_BUCKET_WORDS;
/// Bytes of header fields, before the header checksum.
const FIELDS_LEN: usize = 80;
/// Bytes of the header, its checksum included.
pub(crate) const HEADER_LEN: usize = FIELDS_LEN + 8;
/// Bytes of the checksum at the end.
pub(crate) const CHECKSUM_LEN: usize = 8;
/// The cap on the recorded `max_search_buckets`: a search of this many buckets (16 MiB of queue)
/// is far beyond any useful one (the default is 2000).
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
    /// The header of a table of this geometry whose snapshot holds `items` items in
    /// `table_words` words, hashed by `hasher`.
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
            // Stripes that could never be locked are not recorded (nor allocated by the reader);
            // the ones left map every bucket to a stripe exactly as before.
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

    /// The hasher the header records.
    pub(crate) fn recorded_hasher(&self) -> RecordedHasher {
        RecordedHasher {
            id: self.hasher_id,
            seed: self.seed,
        }
    }

    /// Each field but the item count, named as in `FORMAT.md`, to compare a header with the one
    /// expected of it.
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

    /// Reads the header at the start of `bytes`, checking the magic, the version, that the
    /// header is all there, its checksum and its reserved byte, in that order.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_sealed_header(bytes, (&MAGIC, VERSION), FIELDS_LEN)?;
        if bytes[15] != 0 {
            return Err(DecodeError::InvalidGeometry {
                field: "reserved",
                value: bytes[15].into(),
            });
        }
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
        let bucket_size = self.bucket_size;
        if !matches!(bucket_size, 2 | 4 | 8) {
            return Err(invalid("bucket_size", bucket_size.into()));
        }
        let fingerprint_bits = self.fingerprint_bits;
        if !(4..=32).contains(&fingerprint_bits) {
            return Err(invalid("fingerprint_bits", fingerprint_bits.into()));
        }
        // The semi-sorted encoding packs exactly four fingerprints of at least 5 bits.
        if semi_sorted && bucket_size != 4 {
            return Err(invalid("bucket_size", bucket_size.into()));
        }
        if semi_sorted && fingerprint_bits < 5 {
            return Err(invalid("fingerprint_bits", fingerprint_bits.into()));
        }
        // A bucket word holds plain fingerprints, at most 48 bits of them.
        let bucket_words = self.flags & FLAG_BUCKET_WORDS != 0;
        if bucket_words && semi_sorted {
            return Err(invalid("flags", self.flags.into()));
        }
        if bucket_words && !fits_bucket_word(bucket_size.into(), fingerprint_bits.into()) {
            return Err(invalid("fingerprint_bits", fingerprint_bits.into()));
        }
        let max_hops = self.max_hops;
        if max_hops == 0 || usize::from(max_hops) > MAX_HOPS {
            return Err(invalid("max_hops", max_hops.into()));
        }
        let bucket_count = match usize::try_from(self.buckets) {
            Ok(count) if count >= 1 && self.buckets <= MAX_BUCKET_COUNT => count,
            _ => return Err(invalid("buckets", self.buckets)),
        };
        let mut geometry = Geometry {
            shape: Shape {
                bucket_count,
                bucket_size: bucket_size.into(),
                fingerprint_bits: fingerprint_bits.into(),
                semi_sorted,
                bucket_words,
            },
            stripes: 0,
            limits: SearchLimits {
                max_hops: max_hops.into(),
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
        if (geometry.stripe_count() as u64) < min_stripes(self.buckets, bucket_size.into()) {
            return Err(invalid("stripes", self.stripes));
        }
        let bound = search_bound(geometry.shape.bucket_size, geometry.limits.max_hops);
        geometry.limits.max_search_buckets = match usize::try_from(self.max_search_buckets) {
            Ok(max) if max >= 2 && self.max_search_buckets <= bound => max,
            _ => return Err(invalid("max_search_buckets", self.max_search_buckets)),
        };
        if usize::try_from(self.capacity).is_err() {
            return Err(invalid("capacity", self.capacity));
        }
        if self.table_words != data_words(&geometry) {
            return Err(invalid("table_words", self.table_words));
        }
        Ok(geometry)
    }

    /// Bytes of the whole encoding. Cannot overflow: the table has at most 2^34 words.
    pub(crate) fn total_len(&self) -> u64 {
        (HEADER_LEN + CHECKSUM_LEN) as u64 + self.table_words * 8
    }
}

/// The header at the start of `bytes` and the geometry it describes, every decoder's first step;
/// with `expected` (a growable chunk's, from its plan), every field but the item count must equal
/// it before the geometry is checked.
pub(crate) fn parse_table(
    bytes: &[u8],
    expected: Option<&Header>,
) -> Result<(Header, Geometry), DecodeError> {
    let header = Header::parse(bytes)?;
    if let Some(expected) = expected {
        let mut fields = expected
            .shape_fields()
            .into_iter()
            .zip(header.shape_fields());
        if let Some(((field, expected), (_, found))) = fields.find(|(e, f)| e != f) {
            return Err(DecodeError::PlanMismatch {
                field,
                expected,
                found,
            });
        }
    }
    Ok((header, header.geometry()?))
}

/// A header of `N` bytes as both formats lay theirs out: the magic, the version, the flags, four
/// one-byte fields, the eight-byte `fields` from offset 16, then the checksum of all before it.
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

/// A record of `N` bytes: `prefix`, the eight-byte `fields` after it, then the checksum of all
/// before it.
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

/// The error for bytes that do not start with `magic`: whose they are if another filter type's
/// magic is recognised (past the byte where the fixed and growable magics differ), else bad magic.
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

/// Checks the start of an encoding, in order: the magic (on as many bytes as there are), the
/// version (if it is there; the one version known), that the `fields_len` bytes of header
/// fields and the header checksum after them are all there, and that checksum.
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

/// The largest `max_search_buckets` the format records for these bucket and path sizes: the
/// buckets a search can reach at all (two roots, each bucket's fingerprints one level further, up
/// to `max_hops` levels), and at most [`MAX_SEARCH_BUCKETS`], so that a file cannot make every
/// insert into a full filter search millions of buckets.
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

/// Bytes of the encoding of a filter of this geometry.
pub(crate) fn encoded_len(geometry: &Geometry) -> u64 {
    (HEADER_LEN + CHECKSUM_LEN) as u64 + data_words(geometry) * 8
}

/// The little-endian `u64` at `bytes[at..at + 8]`, which the caller knows to be there.
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Refuses an input of `len` bytes where a checked header says `expected`.
pub(crate) fn check_len(expected: u64, len: usize) -> Result<(), DecodeError> {
    let found = len as u64;
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

/// The checksum in the last eight bytes and that of everything before them, if they differ.
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

/// The hasher `S` as `recorded`, if `S` computes the recorded function.
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

/// The table of a whole encoding whose header, length and checksum are checked: its padding,
/// its buckets and its item count checked in turn.
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
    // Only the allocation can fail now. The words go straight from the input into the table:
    // the input and the table are all the memory a decode holds.
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

/// Appends bytes from `reader` to `bytes` until it holds `len` bytes or the reader ends. The
/// buffer grows at most to double what has arrived, and to exactly `len` at the end, so it never
/// holds more than twice the bytes read nor, once complete, more than `len`.
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

/// Writes one whole encoding: `header`, the table's data words, and the checksum of both.
/// `read(from, out)` fills `out` with the words from `from` on, a part of the table at a time,
/// so that nothing the size of the table is allocated.
pub(crate) fn write_encoding<W: Write>(
    mut writer: W,
    header: Header,
    mut read: impl FnMut(usize, &mut [u64]),
) -> io::Result<()> {
    let mut checksum = Xxh3::new();
    let mut put = |bytes: &[u8]| {
        checksum.update(bytes);
        writer.write_all(bytes)
    };
    put(&header.to_bytes())?;
    let mut words = [0u64; WRITE_STEP / 8];
    let mut bytes = [0u8; WRITE_STEP];
    let len = header.table_words as usize;
    for from in (0..len).step_by(words.len()) {
        let part = &mut words[..(len - from).min(WRITE_STEP / 8)];
        read(from, part);
        let bytes = &mut bytes[..part.len() * 8];
        for (out, word) in bytes.chunks_exact_mut(8).zip(part.iter()) {
            out.copy_from_slice(&word.to_le_bytes());
        }
        put(bytes)?;
    }
    writer.write_all(&checksum.digest().to_le_bytes())
}
