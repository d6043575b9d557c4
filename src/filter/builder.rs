//! Configuring a fixed filter.

use crate::error::BuildError;
use crate::filter::fixed::{ConcurrentCuckooFilter, Fixed};
use crate::filter::CuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::layout::TableLayout;
use crate::settings::TableSettings;

/// Builds a [`ConcurrentCuckooFilter`] with a configuration other than the default.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::{BuildError, ConcurrentCuckooFilter};
///
/// let filter = ConcurrentCuckooFilter::builder()
///     .capacity(100_000)
///     .fingerprint_bits(16)
///     .build()?;
/// assert!(filter.capacity() >= 100_000);
///
/// let err = ConcurrentCuckooFilter::builder().bucket_size(3).build().unwrap_err();
/// assert_eq!(err, BuildError::BucketSize { size: 3 });
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConcurrentCuckooFilterBuilder<S = DefaultHashBuilder> {
    settings: TableSettings,
    hasher: S,
}

impl Default for ConcurrentCuckooFilterBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConcurrentCuckooFilterBuilder {
    /// A builder with the defaults: 4-slot buckets, 12-bit fingerprints, [`DefaultHashBuilder`].
    /// Unset, the capacity is 0: the smallest table.
    pub fn new() -> Self {
        Self {
            settings: TableSettings::default(),
            hasher: DefaultHashBuilder::new(),
        }
    }
}

impl<S> ConcurrentCuckooFilterBuilder<S> {
    /// How many items the filter must hold (unset or 0: the smallest table): any `capacity`
    /// distinct items fit (with fingerprints of at least 8 bits), in just enough buckets at the
    /// load the bucket size reaches (84% for 2 slots, 95% for 4, 97% for 8), plus slack for how
    /// key sets vary that matters below about 1,000 items for 4 slots (550 for 8, 21,000 for 2).
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.settings.capacity = capacity;
        self
    }

    /// Bits per fingerprint, 4 to 32 (default 12). Each bit halves the false positive rate,
    /// about `2 · bucket_size / 2^bits` when full. Below 8 bits, fewer fingerprints than the
    /// capacity may fit.
    pub fn fingerprint_bits(mut self, bits: u32) -> Self {
        self.settings.request.fingerprint_bits = Some(bits);
        self
    }

    /// Slots per bucket: 2, 4 (default) or 8. Larger buckets fill further but need longer
    /// fingerprints for one false positive rate.
    pub fn bucket_size(mut self, size: usize) -> Self {
        self.settings.request.bucket_size = Some(size);
        self
    }

    /// Semi-sorted buckets (paper Section 5.2): each 4-slot bucket keeps its fingerprints sorted
    /// and codes their four high bits together, so an `f`-bit fingerprint costs `f − 1` bits at
    /// the same false positive rate; lookups decode the bucket and run slower. Needs
    /// `bucket_size` 4 and `fingerprint_bits` of at least 5.
    pub fn semi_sorted(mut self, semi_sorted: bool) -> Self {
        self.settings.request.semi_sorted = Some(semi_sorted);
        self
    }

    /// Sizes fingerprints for a target false positive rate ε when full, by the paper's eq. (6),
    /// `f ≥ log2(2b/ε)`, with the bucket size and semi-sorting that make the filter smallest
    /// in its [`layout`](Self::layout). An explicit `fingerprint_bits`, `bucket_size` or
    /// `semi_sorted` wins.
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.settings.request.false_positive_rate = Some(rate);
        self
    }

    /// The hasher to hash items with.
    pub fn hasher<T>(self, hasher: T) -> ConcurrentCuckooFilterBuilder<T> {
        ConcurrentCuckooFilterBuilder {
            settings: self.settings,
            hasher,
        }
    }

    /// How the table holds its buckets ([`TableLayout::BucketWord`]: plain buckets of at most 48
    /// bits). Unset: bucket words for exactly 48 bits of plain fingerprints (the default 4 × 12)
    /// when no false positive rate was asked for (lookups about 1.5 times as fast, for a third
    /// more memory), else [`TableLayout::Packed`].
    pub fn layout(mut self, layout: TableLayout) -> Self {
        self.settings.layout = Some(layout);
        self
    }

    test_hook! {
        /// Lock stripes, a power of two (default: 4096, or fewer for a small table).
        fn stripes(mut self, stripes: usize) -> Self {
            self.settings.stripes = stripes;
            self
        }
    }

    test_hook! {
        /// An exact bucket count, instead of one derived from the capacity.
        fn buckets(mut self, bucket_count: usize) -> Self {
            self.settings.bucket_count = bucket_count;
            self
        }
    }

    test_hook! {
        /// Bounds of the cuckoo path search (default 5 hops, 8 for 2 slots; 2000 buckets).
        fn search_limits(mut self, max_hops: usize, max_buckets: usize) -> Self {
            self.settings.max_hops = max_hops;
            self.settings.max_search_buckets = max_buckets;
            self
        }
    }

    /// Bytes [`build`](Self::build) would allocate for the table and its stripes, checked as
    /// `build` checks, allocating nothing.
    ///
    /// # Errors
    ///
    /// Those of [`build`](Self::build) but [`BuildError::OutOfMemory`].
    pub fn memory_bytes(&self) -> Result<u64, BuildError> {
        Ok(self.settings.geometry()?.memory_bytes())
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn into_parts(self) -> (TableSettings, S) {
        (self.settings, self.hasher)
    }

    /// Builds the filter.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the first parameter out of range, with the range where one
    /// applies; [`BuildError::OutOfMemory`] if the table or its stripes cannot be allocated.
    pub fn build(self) -> Result<ConcurrentCuckooFilter<S>, BuildError> {
        Ok(CuckooFilter::from_parts(
            Fixed::build(&self.settings)?,
            self.hasher,
        ))
    }
}

// The fixed filter's builder, beside the builder, so that `fixed.rs` does not name it.
impl ConcurrentCuckooFilter {
    /// A [`ConcurrentCuckooFilterBuilder`] for any other configuration.
    pub fn builder() -> ConcurrentCuckooFilterBuilder {
        ConcurrentCuckooFilterBuilder::new()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/filter/builder.rs"]
mod tests;
