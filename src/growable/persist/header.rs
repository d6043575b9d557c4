//! The growable format's header: the plan a filter was built with, its hasher, and its level
//! and item counts, checked field by field before anything else is read. The layout is in
//! `FORMAT.md` ("The byte format of a `GrowableCuckooFilter`").

use crate::growable::builder::MAX_SPLIT_DEPTH;
use crate::growable::levels::{Plan, MAX_LEVELS};
use crate::layout::TableLayout;
use crate::persist::encoding::{
    check_sealed_header, sealed_header, u64_at, GROWABLE_MAGIC as MAGIC, MAX_SEARCH_BUCKETS,
};
use crate::persist::{DecodeError, RecordedHasher};
use crate::raw::{MAX_BUCKET_COUNT, MAX_HOPS};
use crate::settings::TableSettings;

/// The growable format's version, counted apart from the fixed format's: 3, levels that split.
/// Versions 1 and 2 (chained fixed-size levels) were never released; they are refused.
pub(crate) const VERSION_SPLIT: u16 = 3;
/// Bytes of header fields, before the header checksum.
const FIELDS_LEN: usize = 104;
/// Bytes of the header, its checksum included; the first level starts here.
pub(crate) const HEADER_LEN: usize = FIELDS_LEN + 8;
/// `max_capacity` of a filter without a limit.
const NO_LIMIT: u64 = u64::MAX;

/// The header's fields, as numbers; [`GrowableHeader::plan`] checks them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GrowableHeader {
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
    pub(crate) hasher: RecordedHasher,
    pub(crate) level_count: u64,
    pub(crate) items: u64,
}

impl GrowableHeader {
    pub(crate) fn of(
        plan: &Plan,
        hasher: RecordedHasher,
        level_count: usize,
        items: usize,
    ) -> Self {
        let TableSettings {
            request,
            stripes,
            max_hops,
            max_search_buckets,
            ..
        } = plan.table;
        Self {
            flags: 0,
            bucket_size: request.bucket_size.map_or(0, |size| size as u8),
            fingerprint_bits: request.fingerprint_bits.map_or(0, |bits| bits as u8),
            // 0: unset, 1: plain, 2: semi-sorted.
            semi_sorted: request.semi_sorted.map_or(0, |sorted| 1 + u8::from(sorted)),
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
            hasher,
            level_count: level_count as u64,
            items: items as u64,
        }
    }

    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN] {
        sealed_header(
            (&MAGIC, VERSION_SPLIT),
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
                self.hasher.id,
                self.hasher.seed,
                self.level_count,
                self.items,
            ],
        )
    }

    /// Reads the header at the start of `bytes`, checking the magic, the version, that the
    /// header is all there and its checksum, in that order.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_sealed_header(bytes, (&MAGIC, VERSION_SPLIT), FIELDS_LEN)?;
        Ok(Self {
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
            hasher: RecordedHasher {
                id: u64_at(bytes, 72),
                seed: u64_at(bytes, 80),
            },
            level_count: u64_at(bytes, 88),
            items: u64_at(bytes, 96),
        })
    }

    /// The plan the fields describe, if every field is in range. Whether it builds every
    /// recorded level is checked level by level as the levels are read. Allocates nothing.
    pub(crate) fn plan(&self) -> Result<Plan, DecodeError> {
        let invalid = |field, value: u64| DecodeError::InvalidGeometry { field, value };
        let fits = |field, value: u64| usize::try_from(value).map_err(|_| invalid(field, value));
        if self.flags != 0 {
            return Err(DecodeError::UnsupportedFlags { flags: self.flags });
        }
        let mut table = TableSettings {
            layout: Some(TableLayout::Packed),
            ..TableSettings::default()
        };
        match self.bucket_size {
            0 => {}
            2 | 4 | 8 => table.request.bucket_size = Some(self.bucket_size.into()),
            size => return Err(invalid("bucket_size", size.into())),
        }
        match self.fingerprint_bits {
            0 => {}
            4..=32 => table.request.fingerprint_bits = Some(self.fingerprint_bits.into()),
            bits => return Err(invalid("fingerprint_bits", bits.into())),
        }
        match self.semi_sorted {
            0 => {}
            1 | 2 => table.request.semi_sorted = Some(self.semi_sorted == 2),
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
            table: TableSettings {
                stripes,
                max_hops: self.max_hops.into(),
                max_search_buckets: self.max_search_buckets as usize,
                ..table
            },
            initial_capacity,
            initial_buckets,
            false_positive_rate: rate,
            max_capacity,
            split_depth,
        };
        Ok(plan)
    }
}
