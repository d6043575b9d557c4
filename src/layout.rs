//! How a fixed-size filter lays its buckets out in memory.

use core::fmt;

use crate::raw::Shape;

/// How a fixed filter's table holds its buckets, chosen by
/// [`ConcurrentCuckooFilterBuilder::layout`](crate::ConcurrentCuckooFilterBuilder::layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableLayout {
    /// Buckets packed end to end, a fingerprint of `f` bits costing `f` bits, lookups validated
    /// by the stripe locks' stamps. Takes every shape.
    Packed,
    /// One 64-bit word per bucket, 48 bits of fingerprints and a 16-bit version, so a lookup
    /// loads two words, checks one again and reads no stamps. Needs plain buckets of at most 48
    /// bits (`bucket_size · fingerprint_bits`); 4 × 12 bits take a third more memory.
    BucketWord,
}

impl TableLayout {
    /// The layout of a builder that names none, as `ConcurrentCuckooFilterBuilder::layout` says.
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
        fmt::Debug::fmt(self, f)
    }
}
