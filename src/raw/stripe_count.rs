//! How many stripes a table gets, and how many item locks a growable filter gets.

use core::ops::RangeInclusive;

use super::bucket::BucketCodec;
use super::index::MAX_BUCKET_COUNT;
use super::table::Table;

/// Stripes by default at most: 32 KiB of stamps, two threads on one stripe once in 4096.
pub(crate) const DEFAULT_STRIPES: usize = 4096;

/// A table gets at most one stripe (8 bytes) per this many bytes of table.
const STRIPE_SHARE: usize = 512;

/// Item locks of a growable filter's unique inserts, held only for a check and an insert.
pub(crate) const DEFAULT_ITEM_LOCKS: usize = 256;

/// The most item locks a growable filter may ask for: more would only cost memory.
const MAX_ITEM_LOCKS: usize = 1 << 20;

/// One stripe per lock group, rounded up to a power of two (in 64 bits: 2^32 is past a `u32`).
pub(crate) fn useful_stripes(bucket_count: u64, codec: &BucketCodec) -> u64 {
    bucket_count
        .div_ceil(1 << Table::lock_group_shift(codec))
        .next_power_of_two()
}

/// The default stripe count of a table of `table_bytes` bytes that can use `useful` stripes.
pub(crate) fn default_stripe_count(table_bytes: u64, useful: u64) -> u64 {
    let by_size = 1u64 << (table_bytes / STRIPE_SHARE as u64).max(1).ilog2();
    useful.min(by_size).min(DEFAULT_STRIPES as u64)
}

/// The fewest stripes (a power of two) of which none covers 2^32 − 1 slots or more.
pub(crate) fn min_stripes(bucket_count: u64, bucket_size: usize) -> u64 {
    let total = u128::from(bucket_count) * bucket_size as u128;
    (total / u128::from(u32::MAX) + 1).next_power_of_two() as u64
}

/// The most stripes the builder accepts: 2^32, or as many stamps as `bytes` can hold.
pub(crate) fn max_stripes(bytes: u64) -> u64 {
    let stamps = (bytes / 8).max(1);
    (1u64 << stamps.ilog2()).min(MAX_BUCKET_COUNT)
}

/// The stripe counts the builder accepts: the powers of two in this range, the default among them.
pub(crate) fn accepted_stripes(
    bucket_count: u64,
    bucket_size: usize,
    bytes: u64,
    usize_max: u64,
) -> RangeInclusive<u64> {
    min_stripes(bucket_count, bucket_size)..=max_stripes(bytes).min(usize_max)
}

/// Whether `count` is a power of two in `range`.
pub(crate) fn is_accepted(count: u64, range: &RangeInclusive<u64>) -> bool {
    count.is_power_of_two() && range.contains(&count)
}

/// The item lock counts a growable filter accepts: the powers of two in this range.
pub(crate) fn accepted_item_locks() -> RangeInclusive<u64> {
    1..=MAX_ITEM_LOCKS as u64
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/stripe_count.rs"]
mod tests;
