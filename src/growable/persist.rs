//! Persistence of a growable filter: its header (the plan), then its levels chunk by chunk
//! (`persist_split`), every chunk checked against what the plan gives its level. The layout is in
//! `FORMAT.md` ("Growable filters").

use std::io::{self, Read, Write};

use super::builder::MAX_SPLIT_DEPTH;
use super::levels::{Levels, Plan, MAX_LEVELS};
use super::persist_split as split;
use super::GrowableCuckooFilter;
use crate::builder::Builder;
use crate::persist::{
    check_checksum, check_len, check_sealed_header, decode_table, read_up_to, sealed_header,
    u64_at, DecodeError, Header, StableHashBuilder, MAX_SEARCH_BUCKETS,
};
use crate::raw::{Geometry, ItemLocks, RawFilter, DEFAULT_ITEM_LOCKS, MAX_BUCKET_COUNT, MAX_HOPS};

/// A fixed filter's magic with `G` for `F`, so that neither reader mistakes the other's bytes.
const MAGIC: [u8; 8] = *b"\x89CCG\r\n\x1a\n";
/// The growable format's version, counted apart from the fixed format's: 3, levels that split.
/// Versions 1 and 2 (chained fixed-size levels) were never released; they are refused.
pub(super) const VERSION_SPLIT: u16 = 3;
/// Bytes of header fields, before the header checksum.
const FIELDS_LEN: usize = 104;
/// Bytes of the header, its checksum included; the first level starts here.
pub(super) const HEADER_LEN: usize = FIELDS_LEN + 8;
/// `max_capacity` of a filter without a limit.
const NO_LIMIT: u64 = u64::MAX;

/// The header's fields, as numbers; [`GrowableHeader::plan`] checks them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct GrowableHeader {
    version: u16,
    flags: u16,
    bucket_size: u8,
    fingerprint_bits: u8,
    semi_sorted: u8,
    max_hops: u8,
    initial_capacity: u64,
    initial_buckets: u64,
    growth_factor: u64,
    false_positive_rate: f64,
    max_capacity: u64,
    stripes: u64,
    max_search_buckets: u64,
    pub(super) hasher_id: u64,
    pub(super) seed: u64,
    pub(super) level_count: u64,
    pub(super) items: u64,
}

impl GrowableHeader {
    pub(super) fn of(
        plan: &Plan,
        (hasher_id, seed): (u64, u64),
        level_count: usize,
        items: usize,
    ) -> Self {
        let (request, stripes, (max_hops, max_search_buckets)) = plan.template.settings();
        Self {
            version: VERSION_SPLIT,
            flags: 0,
            bucket_size: request.bucket_size.map_or(0, |size| size as u8),
            fingerprint_bits: request.fingerprint_bits.map_or(0, |bits| bits as u8),
            semi_sorted: match request.semi_sorted {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            },
            max_hops: max_hops as u8,
            initial_capacity: plan.initial_capacity as u64,
            initial_buckets: plan.initial_buckets as u64,
            growth_factor: plan.growth_factor() as u64,
            false_positive_rate: plan.false_positive_rate,
            max_capacity: if plan.max_capacity == usize::MAX {
                NO_LIMIT
            } else {
                plan.max_capacity as u64
            },
            stripes: stripes as u64,
            // A level records at most this bound (see `FORMAT.md`), so the levels it gives are
            // the same.
            max_search_buckets: (max_search_buckets as u64).min(MAX_SEARCH_BUCKETS),
            hasher_id,
            seed,
            level_count: level_count as u64,
            items: items as u64,
        }
    }

    pub(super) fn to_bytes(self) -> [u8; HEADER_LEN] {
        sealed_header(
            (&MAGIC, self.version),
            self.flags,
            [
                self.bucket_size,
                self.fingerprint_bits,
                self.semi_sorted,
                self.max_hops,
            ],
            &[
                self.initial_capacity,
                self.initial_buckets,
                self.growth_factor,
                self.false_positive_rate.to_bits(),
                self.max_capacity,
                self.stripes,
                self.max_search_buckets,
                self.hasher_id,
                self.seed,
                self.level_count,
                self.items,
            ],
        )
    }

    /// Reads the header at the start of `bytes`, checking the magic, the version, that the
    /// header is all there and its checksum, in that order.
    fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_sealed_header(bytes, (&MAGIC, VERSION_SPLIT), FIELDS_LEN)?;
        Ok(Self {
            version: VERSION_SPLIT,
            flags: u16::from_le_bytes([bytes[10], bytes[11]]),
            bucket_size: bytes[12],
            fingerprint_bits: bytes[13],
            semi_sorted: bytes[14],
            max_hops: bytes[15],
            initial_capacity: u64_at(bytes, 16),
            initial_buckets: u64_at(bytes, 24),
            growth_factor: u64_at(bytes, 32),
            false_positive_rate: f64::from_bits(u64_at(bytes, 40)),
            max_capacity: u64_at(bytes, 48),
            stripes: u64_at(bytes, 56),
            max_search_buckets: u64_at(bytes, 64),
            hasher_id: u64_at(bytes, 72),
            seed: u64_at(bytes, 80),
            level_count: u64_at(bytes, 88),
            items: u64_at(bytes, 96),
        })
    }

    /// The plan the fields describe and the geometry and capacity it gives each recorded level,
    /// if every field is in range and the plan can build every level. Allocates no table.
    fn plan(&self) -> Result<(Plan, Vec<(Geometry, usize)>), DecodeError> {
        let invalid = |field, value: u64| DecodeError::InvalidGeometry { field, value };
        let fits = |field, value: u64| usize::try_from(value).map_err(|_| invalid(field, value));
        if self.flags != 0 {
            return Err(DecodeError::UnsupportedFlags { flags: self.flags });
        }
        let mut template = Builder::new().hasher(());
        match self.bucket_size {
            0 => {}
            2 | 4 | 8 => template = template.bucket_size(self.bucket_size.into()),
            size => return Err(invalid("bucket_size", size.into())),
        }
        match self.fingerprint_bits {
            0 => {}
            4..=32 => template = template.fingerprint_bits(self.fingerprint_bits.into()),
            bits => return Err(invalid("fingerprint_bits", bits.into())),
        }
        match self.semi_sorted {
            0 => {}
            1 | 2 => template = template.semi_sorted(self.semi_sorted == 2),
            value => return Err(invalid("semi_sorted", value.into())),
        }
        if usize::from(self.max_hops) > MAX_HOPS {
            return Err(invalid("max_hops", self.max_hops.into()));
        }
        let initial_capacity = fits("initial_capacity", self.initial_capacity)?;
        if initial_capacity == 0 {
            return Err(invalid("initial_capacity", 0));
        }
        if self.initial_buckets > MAX_BUCKET_COUNT {
            return Err(invalid("initial_buckets", self.initial_buckets));
        }
        let initial_buckets = fits("initial_buckets", self.initial_buckets)?;
        // Levels grow 2^split_depth times each, 2 to 2^MAX_SPLIT_DEPTH.
        let growth_factor = self.growth_factor;
        if !growth_factor.is_power_of_two() || !(2..=1 << MAX_SPLIT_DEPTH).contains(&growth_factor)
        {
            return Err(invalid("growth_factor", growth_factor));
        }
        let split_depth = growth_factor.trailing_zeros();
        let rate = self.false_positive_rate;
        if !(rate > 0.0 && rate < 1.0) {
            return Err(invalid("false_positive_rate", rate.to_bits()));
        }
        let max_capacity = match self.max_capacity {
            NO_LIMIT => usize::MAX,
            max => fits("max_capacity", max)?,
        };
        let stripes = fits("stripes", self.stripes)?;
        if stripes != 0 && !stripes.is_power_of_two() {
            return Err(invalid("stripes", self.stripes));
        }
        if !(2..=MAX_SEARCH_BUCKETS).contains(&self.max_search_buckets) {
            return Err(invalid("max_search_buckets", self.max_search_buckets));
        }
        if !(1..=MAX_LEVELS as u64).contains(&self.level_count) {
            return Err(invalid("level_count", self.level_count));
        }
        let plan = Plan {
            template: template
                .stripes(stripes)
                .search_limits(self.max_hops.into(), self.max_search_buckets as usize),
            initial_capacity,
            initial_buckets,
            false_positive_rate: rate,
            max_capacity,
            split_depth,
        };
        let levels = (0..self.level_count as usize)
            .map(|level| {
                plan.geometry(level)
                    .map_err(|error| DecodeError::InvalidPlan {
                        level: level as u64,
                        error,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((plan, levels))
    }
}

/// Decodes a whole encoding: `bytes` must be exactly one growable filter.
fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let header = GrowableHeader::parse(bytes)?;
    let (plan, _) = header.plan()?;
    split::decode_slice(&header, plan, bytes)
}

/// The decoded filter, once the item count its header recorded is the count its levels hold.
pub(super) fn assemble<S>(
    levels: Levels,
    (recorded, held): (u64, u64),
    hasher: S,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    if recorded != held {
        return Err(DecodeError::ItemCountMismatch {
            header: recorded,
            table: held,
        });
    }
    let item_locks = ItemLocks::new(DEFAULT_ITEM_LOCKS).ok_or(DecodeError::OutOfMemory {
        bytes: DEFAULT_ITEM_LOCKS as u64 * 8,
    })?;
    Ok(GrowableCuckooFilter::from_parts(levels, item_locks, hasher))
}

/// Decodes one level's encoding, whose header must be `expected` in every field but the item
/// count.
pub(super) fn decode_level(bytes: &[u8], expected: &Header) -> Result<RawFilter, DecodeError> {
    let (header, geometry) = level_header(bytes, expected)?;
    check_len(header.total_len(), bytes.len())?;
    check_checksum(bytes)?;
    decode_table(&header, &geometry, bytes)
}

/// The header at the start of a level's encoding and its geometry, checked: the fixed format's
/// checks of a header, then every field but the item count against `expected`.
pub(super) fn level_header(
    bytes: &[u8],
    expected: &Header,
) -> Result<(Header, Geometry), DecodeError> {
    let header = Header::parse(bytes)?;
    for ((field, expected), (_, found)) in expected
        .shape_fields()
        .into_iter()
        .zip(header.shape_fields())
    {
        if found != expected {
            return Err(DecodeError::PlanMismatch {
                field,
                expected,
                found,
            });
        }
    }
    let geometry = header.geometry()?;
    Ok((header, geometry))
}

/// Reads one whole encoding from `reader`: the header first, then, once it is checked, as many
/// bytes as the levels it describes take, and not one more.
fn decode_from<S: StableHashBuilder, R: Read>(
    mut reader: R,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let mut bytes = Vec::new();
    read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
    let header = GrowableHeader::parse(&bytes)?;
    let (plan, _) = header.plan()?;
    split::decode_stream(&header, plan, reader)
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
    /// whole, every chunk of it, once no split is under way in it. Writers wait for the copy in
    /// memory, not for the encoding; lookups that meet no lock do not wait at all.
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
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes [`to_bytes`](Self::to_bytes)' bytes to `writer`, from the same consistent
    /// snapshot, which is taken before anything is written: no lock is held while `writer`
    /// works. Wrap a file in a `BufWriter`.
    ///
    /// # Errors
    ///
    /// Whatever `writer` returns.
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        split::write_to(&self.levels, self.hasher_pair(), writer)
    }

    /// The hasher's id and seed, as the format records them.
    fn hasher_pair(&self) -> (u64, u64) {
        (S::HASHER_ID, StableHashBuilder::seed(&self.hasher))
    }

    /// [`from_bytes`](GrowableCuckooFilter::from_bytes) for a filter whose hasher is `S`:
    /// refused with [`DecodeError::HasherMismatch`] unless the bytes were written with a hasher
    /// of `S`'s [`HASHER_ID`](StableHashBuilder::HASHER_ID); the hasher is rebuilt from the
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
    /// // A fixed filter's bytes are not a growable filter's.
    /// let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    /// assert_eq!(GrowableCuckooFilter::from_bytes(&fixed).unwrap_err(), DecodeError::BadMagic);
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
