//! Errors.

use core::fmt;

/// Why an item could not be inserted. The filter is left holding exactly what it held before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InsertError {
    /// The item found no room (see [`insert`](crate::CuckooFilter::insert)).
    Full,
    /// The filter was opened [`Access::ReadOnly`](crate::Access::ReadOnly) from a file.
    ReadOnly,
    /// A count window has counted 2^62 inserts or generations, the most it counts.
    CountExhausted,
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => {
                f.write_str("the cuckoo filter is full: no room for the item in either bucket")
            }
            Self::ReadOnly => f.write_str("the cuckoo filter was opened read-only"),
            Self::CountExhausted => {
                f.write_str("the count window has counted 2^62 inserts or generations, its most")
            }
        }
    }
}

impl std::error::Error for InsertError {}

/// Why a builder could not build a filter: each variant names the parameter at fault and its value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// `capacity` needs more than 2^32 buckets, or a table larger than the address space.
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
        /// The largest capacity this configuration supports.
        max: usize,
    },
    /// `fingerprint_bits` was outside `4..=32`.
    FingerprintBits {
        /// The width asked for.
        bits: u32,
    },
    /// `bucket_size` was not 2, 4 or 8.
    BucketSize {
        /// The size asked for.
        size: usize,
    },
    /// `semi_sorted(true)` with a bucket size other than 4.
    SemiSortedBucketSize {
        /// The bucket size in effect.
        size: usize,
    },
    /// `semi_sorted(true)` with fingerprints under 5 bits.
    SemiSortedFingerprintBits {
        /// The width in effect.
        bits: u32,
    },
    /// `layout` cannot hold buckets of this size and width (a bucket word holds 48 bits).
    LayoutBucketBits {
        /// The layout asked for.
        layout: crate::TableLayout,
        /// The bucket size in effect.
        bucket_size: usize,
        /// The fingerprint width in effect.
        fingerprint_bits: u32,
    },
    /// `layout` cannot hold semi-sorted buckets.
    LayoutSemiSorted {
        /// The layout asked for.
        layout: crate::TableLayout,
    },
    /// `false_positive_rate` was not strictly between 0 and 1, or fit no allowed bucket.
    FalsePositiveRate {
        /// The rate asked for.
        rate: f64,
    },
    /// `false_positive_rate` was below what the kind's widest fingerprints reach with these
    /// settings (32 bits; 48 bits a bucket in bucket words; an expiring filter's 28, beside
    /// their age tags).
    FalsePositiveRateTooSmall {
        /// The rate asked for.
        rate: f64,
        /// The smallest rate these settings reach.
        smallest: f64,
    },
    /// The test hook `stripes` (or `item_locks`) was not a power of two in range.
    #[doc(hidden)]
    Stripes {
        stripes: usize,
        min: usize,
        max: usize,
    },
    /// The test hook `search_limits` was out of range.
    #[doc(hidden)]
    SearchLimits { max_hops: usize, max_buckets: usize },
    /// The memory of the table or of its stripes could not be allocated.
    OutOfMemory {
        /// Bytes the table and the stripes needed.
        bytes: usize,
    },
    /// A growable filter's `split_depth` was outside `1..=10`.
    SplitDepth {
        /// The depth asked for.
        depth: u32,
    },
    /// A growable filter's `max_capacity` was below its `capacity`, or below what one bucket of
    /// its first level holds.
    MaxCapacity {
        /// The capacity asked for, or, if larger, what one bucket of the first level holds.
        capacity: usize,
        /// The limit asked for.
        max_capacity: usize,
    },
    /// An expiring filter's `generations` was outside `1..=max` (`2^tag_bits − 2`).
    Generations {
        /// The count asked for.
        generations: u32,
        /// The most these tags allow.
        max: u32,
    },
    /// An expiring filter's `Window::Items` was 0, or more than a table can hold.
    WindowItems {
        /// The window asked for.
        items: u64,
    },
    /// An expiring filter's `Window::Time` was shorter than one nanosecond per generation, or
    /// longer than `u64::MAX` nanoseconds (about 584 years).
    WindowDuration {
        /// The window asked for.
        duration: core::time::Duration,
    },
    /// An expiring filter's `capacity` was 0 for a time window, or set for a count window.
    WindowCapacity {
        /// The capacity asked for (0: none).
        capacity: u64,
        /// Whether the window is a time window.
        time_window: bool,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CapacityTooLarge { capacity, max } => write!(
                f,
                "capacity {capacity} is too large: this configuration holds at most {max} items"
            ),
            Self::FingerprintBits { bits } => {
                write!(f, "fingerprint_bits must be in 4..=32, got {bits}")
            }
            Self::BucketSize { size } => write!(f, "bucket_size must be 2, 4 or 8, got {size}"),
            Self::SemiSortedBucketSize { size } => write!(
                f,
                "semi_sorted needs bucket_size 4, got {size}"
            ),
            Self::SemiSortedFingerprintBits { bits } => write!(
                f,
                "semi_sorted needs fingerprint_bits of at least 5, got {bits}"
            ),
            Self::LayoutBucketBits {
                layout,
                bucket_size,
                fingerprint_bits,
            } => write!(
                f,
                "layout {layout} holds at most 48 bits of fingerprints per bucket, got bucket_size {bucket_size} × fingerprint_bits {fingerprint_bits} = {}",
                *bucket_size as u64 * u64::from(*fingerprint_bits)
            ),
            Self::LayoutSemiSorted { layout } => {
                write!(f, "layout {layout} cannot hold semi_sorted buckets")
            }
            Self::FalsePositiveRate { rate } => write!(
                f,
                "false_positive_rate must be above 0 and below 1, and reachable with 32-bit fingerprints, got {rate}",
            ),
            Self::FalsePositiveRateTooSmall { rate, smallest } => write!(
                f,
                "false_positive_rate must be at least {}, the smallest the widest fingerprints reach with these settings, got {rate}",
                RoundedUp(*smallest),
            ),
            Self::Stripes { stripes, min, max } => write!(
                f,
                "stripes must be 0 (the default) or a power of two from {min} to {max} for this table, got {stripes}"
            ),
            Self::SearchLimits {
                max_hops,
                max_buckets,
            } => write!(
                f,
                "search limits must be max_hops <= {} (0 for the default) and max_buckets >= 2, got {max_hops} and {max_buckets}",
                crate::raw::MAX_HOPS
            ),
            Self::OutOfMemory { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the filter's table and stripes")
            }
            Self::SplitDepth { depth } => {
                write!(f, "split_depth must be in 1..=10, got {depth}")
            }
            Self::MaxCapacity {
                capacity,
                max_capacity,
            } => write!(
                f,
                "max_capacity must be at least the capacity {capacity}, got {max_capacity}"
            ),
            Self::Generations { generations, max } => {
                write!(f, "generations must be in 1..={max}, got {generations}")
            }
            Self::WindowItems { items } => write!(
                f,
                "Window::Items must be at least 1 and addressable by a table, got {items}"
            ),
            Self::WindowDuration { duration } => write!(
                f,
                "Window::Time must be at least one nanosecond per generation and at most \
                 2^64 - 1 nanoseconds (about 584 years), got {duration:?}"
            ),
            Self::WindowCapacity {
                capacity,
                time_window: true,
            } => write!(
                f,
                "a time window needs capacity (the most items one window holds) of at least 1, got {capacity}"
            ),
            Self::WindowCapacity {
                capacity,
                time_window: false,
            } => write!(
                f,
                "a count window's capacity is its item count: capacity must not be set, got {capacity}"
            ),
        }
    }
}

impl std::error::Error for BuildError {}

/// Why [`try_extend`](crate::ConcurrentCuckooFilter::try_extend) or
/// [`try_par_extend`](crate::ConcurrentCuckooFilter::try_par_extend) stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExtendError {
    inserted: usize,
    position: Option<usize>,
    error: InsertError,
}

impl ExtendError {
    /// `inserted` items went in, then one failed with `error` (at `position` of an ordered input).
    pub(crate) fn new(error: InsertError, inserted: usize, position: Option<usize>) -> Self {
        Self {
            inserted,
            position,
            error,
        }
    }

    /// Items that went in before the stop. They stay in the filter.
    #[must_use]
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// The index in the input of the item that found no room, for inputs inserted in order
    /// (it and those after it were not tried): [`inserted`](Self::inserted) unless items found
    /// present were skipped. `None` after `try_par_extend`, which inserts in no fixed order.
    #[must_use]
    pub fn position(&self) -> Option<usize> {
        self.position
    }

    /// Why the first failed item failed.
    #[must_use]
    pub fn error(&self) -> InsertError {
        self.error
    }
}

impl fmt::Display for ExtendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stopped after inserting {} items: {}",
            self.inserted, self.error
        )
    }
}

impl std::error::Error for ExtendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why [`merge`](crate::ConcurrentCuckooFilter::merge) or
/// [`merge_unique`](crate::ConcurrentCuckooFilter::merge_unique) did not merge everything.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MergeError {
    /// The two tables differ in shape. Nothing was merged.
    Geometry {
        /// The setting that differs: `buckets`, `bucket_size`, `fingerprint_bits`, `semi_sorted`
        /// (1 for true); a growable filter's also `initial_capacity`, `false_positive_rate` (its
        /// bits), `split_depth`, `route_bits`, with those of its first-level chunk and core,
        /// then `buckets` and `route_bits` of each later level the source has (a `max_capacity`
        /// that cuts a level gives it fewer).
        field: &'static str,
        /// Its value in the filter merged into.
        target: u64,
        /// Its value in the filter merged from.
        source: u64,
    },
    /// The two filters hash with different hashers or seeds. Nothing was merged.
    Hasher,
    /// A fingerprint found no room; the `merged` ones before it stay in the target.
    Full {
        /// Fingerprints of the source that went in.
        merged: usize,
    },
    /// Filters of this kind cannot be merged (an expiring filter's ages are its clock's).
    Unsupported {
        /// The kind's name.
        kind: &'static str,
    },
    /// The target was opened [`Access::ReadOnly`](crate::Access::ReadOnly) from a file.
    ReadOnly,
    /// No memory for the copy of the source a merge reads when the source may be the target
    /// (itself, or a live file). Nothing was merged.
    OutOfMemory {
        /// Bytes the copy needed.
        bytes: usize,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Geometry {
                field,
                target,
                source,
            } => write!(
                f,
                "the filters differ in {field}: {target} in the target, {source} in the source"
            ),
            Self::Hasher => f.write_str("the filters hash with different hashers or seeds"),
            Self::Full { merged } => write!(
                f,
                "the target filter is full after merging {merged} fingerprints of the source"
            ),
            Self::Unsupported { kind } => write!(f, "filters of kind {kind} cannot be merged"),
            Self::ReadOnly => f.write_str("the target filter was opened read-only"),
            Self::OutOfMemory { bytes } => write!(
                f,
                "no memory for a copy of the source to merge ({bytes} bytes)"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

impl MergeError {
    /// [`Self::Geometry`] of the first field that differs, if one does.
    pub(crate) fn unless_same(difference: Option<(&'static str, u64, u64)>) -> Result<(), Self> {
        match difference {
            Some((field, target, source)) => Err(Self::Geometry {
                field,
                target,
                source,
            }),
            None => Ok(()),
        }
    }
}

/// A positive rate to four significant digits, rounded up: a rate a message names is reachable.
struct RoundedUp(f64);

impl fmt::Display for RoundedUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut exponent = self.0.log10().floor() as i32;
        let mut mantissa = (self.0 / 10f64.powi(exponent) * 1000.0).ceil() / 1000.0;
        if mantissa >= 10.0 {
            mantissa /= 10.0;
            exponent += 1;
        }
        write!(f, "{mantissa:.3}e{exponent}")
    }
}
