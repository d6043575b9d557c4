//! How a fixed-size filter lays its buckets out in memory.

use core::fmt;

use crate::raw::Shape;

/// How a [`ConcurrentCuckooFilter`](crate::ConcurrentCuckooFilter)'s table holds its buckets,
/// chosen with [`ConcurrentCuckooFilterBuilder::layout`](crate::ConcurrentCuckooFilterBuilder::layout), or by the rule given there when it
/// is not: bucket words for the default 4 × 12-bit buckets, packed for every other shape and
/// whenever a false positive rate is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableLayout {
    /// Buckets packed end to end, a fingerprint of `f` bits costing `f` bits (4-slot 12-bit
    /// buckets: 48 bits). Lookups are validated by the stripe locks' version stamps. Takes every
    /// bucket size, fingerprint width and semi-sorting.
    Packed,
    /// One aligned 64-bit word per bucket: its fingerprints in the low 48 bits and a 16-bit
    /// version in the top 16, so that a lookup loads two words and checks one again, and reads
    /// no lock stamps. Needs plain buckets of at most 48 bits (`bucket_size · fingerprint_bits`:
    /// 4 slots of up to 12 bits, 2 of up to 24, 8 of up to 6); 4-slot 12-bit buckets take 64
    /// bits instead of 48, a third more memory.
    BucketWord,
}

impl TableLayout {
    /// The layout of a builder that names none: bucket words for exactly 48 bits of plain
    /// fingerprints per bucket (where the word wastes no fingerprint bits) unless a rate asked
    /// for the smallest filter, packed otherwise.
    pub(crate) fn chosen_for(shape: &Shape, rate_asked: bool) -> Self {
        let word_sized = shape.bucket_size as u64 * u64::from(shape.fingerprint_bits) == 48;
        if word_sized && !shape.semi_sorted && !rate_asked {
            Self::BucketWord
        } else {
            Self::Packed
        }
    }
}

impl fmt::Display for TableLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Packed => "Packed",
            Self::BucketWord => "BucketWord",
        })
    }
}
