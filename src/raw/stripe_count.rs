//! How many stripes a table gets: the default count, and the counts a builder accepts. Also the
//! count of a growable filter's item locks, which are stripes over item hashes.

use core::ops::RangeInclusive;

use super::bucket::BucketCodec;
use super::index::MAX_BUCKET_COUNT;
use super::table::Table;

/// Stripes a filter gets unless it has fewer lock groups than this. 4096 stamps are 32 KiB, about
/// an L1 cache; with that many, two threads pick the same stripe once in 4096 operations.
pub(crate) const DEFAULT_STRIPES: usize = 4096;

/// A table gets at most one stripe (8 bytes) per this many bytes of table.
const STRIPE_SHARE: usize = 512;

/// Item locks of a growable filter's unique inserts, held only for a check and an insert: 256
/// rarely collide, and a small filter carries no 32 KiB of them.
pub(crate) const DEFAULT_ITEM_LOCKS: usize = 256;

/// The most item locks a growable filter may ask for: more would only cost memory.
const MAX_ITEM_LOCKS: usize = 1 << 20;

/// The most stripes a table of `bucket_count` buckets can use: one per lock group, rounded up to a
/// power of two. In 64 bits: 2^32 one-bucket groups round to 2^32, past a 32-bit `usize`.
pub(crate) fn useful_stripes(bucket_count: u64, codec: &BucketCodec) -> u64 {
    bucket_count
        .div_ceil(1 << Table::lock_group_shift(codec))
        .next_power_of_two()
}

/// The stripes a table of `table_bytes` bytes gets by default when `useful` stripes (a power of
/// two, [`useful_stripes`]) would each be locked: at most [`DEFAULT_STRIPES`], and one per
/// [`STRIPE_SHARE`] bytes, a small share of a small table's memory.
pub(crate) fn default_stripe_count(table_bytes: u64, useful: u64) -> u64 {
    let by_size = 1u64 << (table_bytes / STRIPE_SHARE as u64).max(1).ilog2();
    useful.min(by_size).min(DEFAULT_STRIPES as u64)
}

/// The fewest stripes (a power of two) for which no stripe covers 2^32 − 1 slots or more: a
/// stripe's count shares its stamp with the version, and counts of about 32 bits leave the
/// version at least 31.
pub(crate) fn min_stripes(bucket_count: u64, bucket_size: usize) -> u64 {
    let total = u128::from(bucket_count) * bucket_size as u128;
    let mut stripes = 1u64;
    while total / u128::from(stripes) >= u128::from(u32::MAX) {
        stripes *= 2;
    }
    stripes
}

/// The most stripes the builder accepts: 2^32 (one per bucket of the largest table), or fewer
/// where `bytes` (what the target can address) cannot hold that many stamps.
pub(crate) fn max_stripes(bytes: u64) -> u64 {
    let stamps = (bytes / 8).max(1);
    (1u64 << stamps.ilog2()).min(MAX_BUCKET_COUNT)
}

/// The stripe counts the builder accepts for a table of `bucket_count` buckets of `bucket_size`,
/// on a target that addresses `bytes` bytes and counts to `usize_max`: the powers of two in this
/// range. The default count is always in it.
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
