//! A table's [`Shape`], and a filter's [`Geometry`]: the shape with its stripe count and path
//! search limits, which the builders and decoders check.

use super::bucket::BucketCodec;
use super::index::MAX_BUCKET_COUNT;
use super::path::SearchLimits;
use super::stripe_count::{default_stripe_count, useful_stripes};
use super::table::Table;

/// What a table holds (docs/architecture.md, "Words").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) bucket_count: usize,
    pub(crate) bucket_size: usize,
    pub(crate) fingerprint_bits: u32,
    pub(crate) semi_sorted: bool,
    /// One bucket per table word, with a version ([`super::bucket_word`]).
    pub(crate) bucket_words: bool,
}

impl Shape {
    pub(crate) fn codec(&self) -> BucketCodec {
        if self.bucket_words {
            return BucketCodec::word(self.bucket_size, self.fingerprint_bits);
        }
        BucketCodec::new(self.bucket_size, self.fingerprint_bits, self.semi_sorted)
    }

    /// Bits of bucket data: at most 2^32 buckets of at most 256 bits, so no overflow.
    pub(crate) fn data_bits(&self) -> u64 {
        self.bucket_count as u64 * self.codec().bucket_bits() as u64
    }

    pub(crate) fn table_bytes(&self) -> Option<usize> {
        usize::try_from(self.table_words()?).ok()?.checked_mul(8)
    }

    /// Words of the table, spare words included, in 64 bits whatever the target.
    pub(crate) fn table_words(&self) -> Option<u64> {
        Table::words_for(self.bucket_count as u64, &self.codec())
    }

    /// The most buckets like these a table of at most `bytes` can have (`bucket_count` aside).
    pub(crate) fn max_bucket_count(&self, bytes: u64) -> u64 {
        Table::max_bucket_count_in(bytes, &self.codec()).min(MAX_BUCKET_COUNT)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) shape: Shape,
    /// A power of two, or 0 for the default.
    pub(crate) stripes: usize,
    pub(crate) limits: SearchLimits,
}

impl Geometry {
    /// The requested stripes or the default, capped at one per lock group.
    pub(crate) fn stripe_count(&self) -> usize {
        if self.stripes != 0 {
            // Both powers of two; the smaller fits in a `usize`.
            return self
                .stripes
                .min(self.max_useful_stripes().min(usize::MAX as u64) as usize);
        }
        let bytes = self
            .shape
            .table_bytes()
            .map_or(u64::MAX, |bytes| bytes as u64);
        // At most DEFAULT_STRIPES, so it fits.
        default_stripe_count(bytes, self.max_useful_stripes()) as usize
    }

    pub(crate) fn max_useful_stripes(&self) -> u64 {
        useful_stripes(self.shape.bucket_count as u64, &self.shape.codec())
    }

    /// Bytes of the table and the stripes, for an out-of-memory report.
    pub(crate) fn memory_bytes(&self) -> u64 {
        let table = self.shape.table_words().unwrap_or(u64::MAX);
        table
            .saturating_add(self.stripe_count() as u64)
            .saturating_mul(8)
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/geometry.rs"]
mod tests;
