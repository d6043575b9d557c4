//! The growable format's header (`FORMAT.md`): the plan, the hasher, the level and item counts.

use crate::growable::builder::MAX_SPLIT_DEPTH;
use crate::growable::levels::{Plan, MAX_LEVELS};
use crate::layout::TableLayout;
use crate::persist::encoding::{
    check_field, check_sealed_header, sealed_header, u64_at, GROWABLE_MAGIC, MAX_SEARCH_BUCKETS,
};
use crate::persist::{DecodeError, RecordedHasher};
use crate::raw::{MAX_BUCKET_COUNT, MAX_HOPS};
use crate::settings::TableSettings;

/// Counted apart from the fixed format's version.
pub(crate) const VERSION_SPLIT: u16 = 3;
/// Bytes of header fields, before the header checksum.
const FIELDS_LEN: usize = 104;
/// Bytes of the header, its checksum included.
pub(crate) const HEADER_LEN: usize = FIELDS_LEN + 8;
/// `max_capacity` of a filter without a limit.
const NO_LIMIT: u64 = u64::MAX;

pub(crate) struct GrowableHeader {
    pub(crate) plan: Plan,
    pub(crate) hasher: RecordedHasher,
    pub(crate) level_count: usize,
    pub(crate) items: u64,
}

impl GrowableHeader {
    pub(crate) fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let plan = &self.plan;
        let TableSettings {
            request,
            stripes,
            max_hops,
            max_search_buckets,
            ..
        } = plan.table;
        sealed_header(
            (&GROWABLE_MAGIC, VERSION_SPLIT),
            0,
            [
                request.bucket_size.map_or(0, |size| size as u8),
                request.fingerprint_bits.map_or(0, |bits| bits as u8),
                // 0: unset, 1: plain, 2: semi-sorted.
                request.semi_sorted.map_or(0, |sorted| 1 + u8::from(sorted)),
                max_hops as u8,
            ],
            &[
                plan.initial_capacity as u64,
                plan.initial_buckets as u64,
                plan.growth_factor() as u64,
                plan.false_positive_rate.to_bits(),
                match plan.max_capacity {
                    usize::MAX => NO_LIMIT,
                    max => max as u64,
                },
                stripes as u64,
                // As each level records it.
                (max_search_buckets as u64).min(MAX_SEARCH_BUCKETS),
                self.hasher.id,
                self.hasher.seed,
                self.level_count as u64,
                self.items,
            ],
        )
    }

    /// The header at the start of `bytes`, every field checked but whether its plan builds.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_sealed_header(bytes, (&GROWABLE_MAGIC, VERSION_SPLIT), FIELDS_LEN)?;
        let invalid = |field, value: u64| DecodeError::InvalidGeometry { field, value };
        let fits = |field, value: u64| usize::try_from(value).map_err(|_| invalid(field, value));
        let field = |index: usize| u64_at(bytes, 16 + 8 * index);
        let flags = u16::from_le_bytes([bytes[10], bytes[11]]);
        if flags != 0 {
            return Err(DecodeError::UnsupportedFlags { flags });
        }
        let mut table = TableSettings {
            layout: Some(TableLayout::Packed),
            ..TableSettings::default()
        };
        match bytes[12] {
            0 => {}
            size @ (2 | 4 | 8) => table.request.bucket_size = Some(size.into()),
            size => return Err(invalid("bucket_size", size.into())),
        }
        match bytes[13] {
            0 => {}
            bits @ 4..=32 => table.request.fingerprint_bits = Some(bits.into()),
            bits => return Err(invalid("fingerprint_bits", bits.into())),
        }
        match bytes[14] {
            0 => {}
            sorted @ (1 | 2) => table.request.semi_sorted = Some(sorted == 2),
            value => return Err(invalid("semi_sorted", value.into())),
        }
        table.max_hops = bytes[15].into();
        check_field(table.max_hops <= MAX_HOPS, "max_hops", bytes[15].into())?;
        let initial_capacity = fits("initial_capacity", field(0))?;
        check_field(initial_capacity != 0, "initial_capacity", 0)?;
        let buckets_ok = field(1) <= MAX_BUCKET_COUNT;
        check_field(buckets_ok, "initial_buckets", field(1))?;
        let initial_buckets = fits("initial_buckets", field(1))?;
        // Levels grow 2^split_depth times each, 2 to 2^MAX_SPLIT_DEPTH.
        let growth_factor = field(2);
        let growth_ok = (2..=1 << MAX_SPLIT_DEPTH).contains(&growth_factor);
        let growth_ok = growth_ok && growth_factor.is_power_of_two();
        check_field(growth_ok, "growth_factor", growth_factor)?;
        let rate = f64::from_bits(field(3));
        check_field(rate > 0.0 && rate < 1.0, "false_positive_rate", field(3))?;
        let max_capacity = match field(4) {
            NO_LIMIT => usize::MAX,
            max => fits("max_capacity", max)?,
        };
        table.stripes = fits("stripes", field(5))?;
        let stripes_ok = table.stripes == 0 || table.stripes.is_power_of_two();
        check_field(stripes_ok, "stripes", field(5))?;
        let search_ok = (2..=MAX_SEARCH_BUCKETS).contains(&field(6));
        check_field(search_ok, "max_search_buckets", field(6))?;
        table.max_search_buckets = field(6) as usize;
        let level_count = field(9);
        let levels_ok = (1..=MAX_LEVELS as u64).contains(&level_count);
        check_field(levels_ok, "level_count", level_count)?;
        Ok(Self {
            plan: Plan {
                table,
                initial_capacity,
                initial_buckets,
                false_positive_rate: rate,
                max_capacity,
                split_depth: growth_factor.trailing_zeros(),
            },
            hasher: RecordedHasher {
                id: field(7),
                seed: field(8),
            },
            level_count: level_count as usize,
            items: field(10),
        })
    }
}
