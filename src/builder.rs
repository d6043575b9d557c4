//! Configuring a filter.

use crate::error::BuildError;
use crate::filter::ConcurrentCuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::raw::{default_max_hops, Geometry, RawFilter, MAX_BUCKETS, MAX_HOPS};
use crate::sizing::{sized_capacity, target_load_permille, Request, Shape};

/// Buckets a cuckoo path search reads at most before it declares the filter full.
const DEFAULT_SEARCH_BUCKETS: usize = 2000;

/// Builds a [`ConcurrentCuckooFilter`] with a configuration other than the default.
///
/// ```
/// use concurrent_cuckoo_filter::{BuildError, ConcurrentCuckooFilter};
///
/// let filter = ConcurrentCuckooFilter::builder()
///     .capacity(100_000)
///     .fingerprint_bits(16)
///     .bucket_size(4)
///     .build()?;
/// assert!(filter.capacity() >= 100_000);
///
/// let err = ConcurrentCuckooFilter::builder().capacity(10).bucket_size(3).build().unwrap_err();
/// assert_eq!(err, BuildError::BucketSize { size: 3 });
/// assert_eq!(err.to_string(), "bucket_size must be 2, 4 or 8, got 3");
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<S = DefaultHashBuilder> {
    capacity: usize,
    request: Request,
    hasher: S,
    stripes: usize,
    buckets: usize,
    max_hops: usize,
    max_search_buckets: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// A builder with the defaults: 4-slot buckets, 12-bit fingerprints, [`DefaultHashBuilder`].
    /// A capacity must still be set.
    pub fn new() -> Self {
        Self {
            capacity: 0,
            request: Request::default(),
            hasher: DefaultHashBuilder::new(),
            stripes: 0,
            buckets: 0,
            max_hops: 0,
            max_search_buckets: DEFAULT_SEARCH_BUCKETS,
        }
    }
}

impl<S> Builder<S> {
    /// How many items the filter must hold. The table gets just enough buckets for that many at
    /// the load factor the bucket size reaches (84% for 2 slots, 95% for 4, 97% for 8), so a
    /// filter sized for `n` items takes about `n · fingerprint_bits / load` bits.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Bits per fingerprint, 4 to 32 (default 12). Each added bit halves the false positive rate,
    /// which is about `2 · bucket_size / 2^bits` when full. Below 8 bits, fewer fingerprints
    /// than the capacity may fit (paper Figure 2).
    pub fn fingerprint_bits(mut self, bits: u32) -> Self {
        self.request.fingerprint_bits = Some(bits);
        self
    }

    /// Slots per bucket: 2, 4 (default) or 8. Larger buckets fill further but need longer
    /// fingerprints for the same false positive rate.
    pub fn bucket_size(mut self, size: usize) -> Self {
        self.request.bucket_size = Some(size);
        self
    }

    /// Semi-sorted buckets (paper Section 5.2): each 4-slot bucket keeps its fingerprints sorted
    /// and stores their four high bits as one 12-bit code, so an `f`-bit fingerprint costs
    /// `f − 1` bits. Same false positive rate, one bit per item less; lookups decode the bucket
    /// (a 7.6 KiB table) and run somewhat slower. Needs `bucket_size` 4 and `fingerprint_bits`
    /// of at least 5.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let plain = ConcurrentCuckooFilter::builder().capacity(1 << 20).fingerprint_bits(13).build()?;
    /// let sorted = ConcurrentCuckooFilter::builder()
    ///     .capacity(1 << 20)
    ///     .fingerprint_bits(13)
    ///     .semi_sorted(true)
    ///     .build()?;
    /// // 12 bits instead of 13 per slot.
    /// let ratio = sorted.memory_usage() as f64 / plain.memory_usage() as f64;
    /// assert!((ratio - 12.0 / 13.0).abs() < 0.01, "{ratio}");
    /// # Ok::<(), concurrent_cuckoo_filter::BuildError>(())
    /// ```
    pub fn semi_sorted(mut self, semi_sorted: bool) -> Self {
        self.request.semi_sorted = Some(semi_sorted);
        self
    }

    /// Sizes fingerprints for a target false positive rate ε when the filter is full: the
    /// paper's eq. (6), `f ≥ log2(2b/ε)`, with the bucket size and semi-sorting that make the
    /// filter smallest (in practice 4-slot semi-sorted buckets). An explicit `fingerprint_bits`,
    /// `bucket_size` or `semi_sorted` wins over what the rate would choose.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::builder()
    ///     .capacity(1_000_000)
    ///     .false_positive_rate(0.001)
    ///     .build()?;
    /// assert_eq!(filter.fingerprint_bits(), 13);
    /// assert_eq!(filter.bucket_size(), 4);
    /// assert!(filter.is_semi_sorted());
    /// assert!(filter.expected_false_positive_rate() <= 0.001);
    /// # Ok::<(), concurrent_cuckoo_filter::BuildError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.request.false_positive_rate = Some(rate);
        self
    }

    /// The hasher to hash items with.
    pub fn hasher<T>(self, hasher: T) -> Builder<T> {
        Builder {
            capacity: self.capacity,
            request: self.request,
            hasher,
            stripes: self.stripes,
            buckets: self.buckets,
            max_hops: self.max_hops,
            max_search_buckets: self.max_search_buckets,
        }
    }

    /// Lock stripes, a power of two (default: 4096, or fewer for a small table). For tests.
    #[doc(hidden)]
    pub fn stripes(mut self, stripes: usize) -> Self {
        self.stripes = stripes;
        self
    }

    /// An exact bucket count, instead of one derived from the capacity. For tests that need a
    /// table of a few buckets.
    #[doc(hidden)]
    pub fn buckets(mut self, buckets: usize) -> Self {
        self.buckets = buckets;
        self
    }

    /// Bounds of the cuckoo path search (default 5 hops, 8 for 2-slot buckets; 2000 buckets).
    /// For tests.
    #[doc(hidden)]
    pub fn search_limits(mut self, max_hops: usize, max_buckets: usize) -> Self {
        self.max_hops = max_hops;
        self.max_search_buckets = max_buckets;
        self
    }

    /// Builds the filter, or says which parameter is impossible.
    pub fn build(self) -> Result<ConcurrentCuckooFilter<S>, BuildError> {
        let geometry = self.geometry()?;
        let raw = RawFilter::new(&geometry).ok_or(BuildError::OutOfMemory {
            bytes: geometry.table_bytes().unwrap_or(usize::MAX),
        })?;
        let capacity = self
            .capacity
            .max(sized_capacity(geometry.buckets, geometry.slots));
        Ok(ConcurrentCuckooFilter::from_raw(raw, self.hasher, capacity))
    }

    fn geometry(&self) -> Result<Geometry, BuildError> {
        let shape = Shape::resolve(&self.request)?;
        if self.stripes != 0 && !self.stripes.is_power_of_two() {
            return Err(BuildError::Stripes {
                stripes: self.stripes,
            });
        }
        let max_hops = match self.max_hops {
            0 => default_max_hops(shape.bucket_size),
            hops => hops,
        };
        if max_hops > MAX_HOPS || self.max_search_buckets < 2 {
            return Err(BuildError::SearchLimits {
                max_hops: self.max_hops,
                max_buckets: self.max_search_buckets,
            });
        }
        let buckets = if self.buckets != 0 {
            self.buckets as u128
        } else if self.capacity == 0 {
            return Err(BuildError::ZeroCapacity);
        } else {
            let per_bucket =
                shape.bucket_size as u128 * target_load_permille(shape.bucket_size) as u128;
            (self.capacity as u128 * 1000).div_ceil(per_bucket)
        };
        if buckets > MAX_BUCKETS as u128 {
            return Err(BuildError::CapacityTooLarge {
                capacity: self.capacity,
                max: sized_capacity(MAX_BUCKETS as usize, shape.bucket_size),
            });
        }
        let geometry = Geometry {
            buckets: buckets as usize,
            slots: shape.bucket_size,
            fp_bits: shape.fingerprint_bits,
            semi_sorted: shape.semi_sorted,
            stripes: self.stripes,
            max_hops,
            max_search_buckets: self.max_search_buckets,
        };
        // A stripe's count shares its stamp with the version: counts of about 32 bits leave the
        // version at least 31.
        let slots = geometry.buckets as u64 * geometry.slots as u64;
        if slots / geometry.stripe_count() as u64 >= u32::MAX as u64 {
            return Err(BuildError::Stripes {
                stripes: self.stripes,
            });
        }
        match geometry.table_bytes() {
            Some(bytes) if bytes <= isize::MAX as usize => Ok(geometry),
            _ => Err(BuildError::CapacityTooLarge {
                capacity: self.capacity,
                max: 0,
            }),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_bad_parameter_is_named() {
        let cases = [
            (Builder::new().capacity(0).build().unwrap_err(), "capacity"),
            (Builder::new().build().unwrap_err(), "capacity"),
            (
                Builder::new().capacity(usize::MAX).build().unwrap_err(),
                "capacity",
            ),
            (
                Builder::new()
                    .capacity(10)
                    .fingerprint_bits(0)
                    .build()
                    .unwrap_err(),
                "fingerprint_bits",
            ),
            (
                Builder::new()
                    .capacity(10)
                    .fingerprint_bits(33)
                    .build()
                    .unwrap_err(),
                "fingerprint_bits",
            ),
            (
                Builder::new()
                    .capacity(10)
                    .bucket_size(3)
                    .build()
                    .unwrap_err(),
                "bucket_size",
            ),
            (
                Builder::new()
                    .capacity(10)
                    .bucket_size(0)
                    .build()
                    .unwrap_err(),
                "bucket_size",
            ),
            (
                Builder::new().capacity(10).stripes(3).build().unwrap_err(),
                "stripes",
            ),
            (
                Builder::new()
                    .capacity(10)
                    .search_limits(9, 10)
                    .build()
                    .unwrap_err(),
                "max_hops",
            ),
        ];
        for (err, parameter) in cases {
            assert!(
                err.to_string().contains(parameter),
                "{err} should name {parameter}"
            );
        }
        assert_eq!(
            Builder::new()
                .capacity(10)
                .fingerprint_bits(33)
                .build()
                .unwrap_err(),
            BuildError::FingerprintBits { bits: 33 }
        );
    }

    #[test]
    fn too_few_stripes_for_32_bit_counts_are_refused() {
        let huge = Builder::new().buckets(1 << 31).bucket_size(8);
        assert_eq!(
            huge.clone().stripes(1).geometry(),
            Err(BuildError::Stripes { stripes: 1 })
        );
        assert!(huge.stripes(8).geometry().is_ok());
    }

    #[test]
    fn the_largest_capacity_is_reported_and_one_more_is_refused() {
        let err = Builder::new().capacity(usize::MAX).build().unwrap_err();
        let BuildError::CapacityTooLarge { max, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(max, sized_capacity(MAX_BUCKETS as usize, 4));
        let geometry = Builder::new().capacity(max).geometry().unwrap();
        assert_eq!(geometry.buckets as u64, MAX_BUCKETS);
        assert!(Builder::new().capacity(max + 1).geometry().is_err());
    }

    #[test]
    fn tables_are_sized_for_the_target_load() {
        for (slots, bits) in [(2usize, 8u32), (4, 12), (8, 16)] {
            let geometry = Builder::new()
                .capacity(1_000_000)
                .bucket_size(slots)
                .fingerprint_bits(bits)
                .geometry()
                .unwrap();
            let load = 1_000_000.0 / (geometry.buckets * slots) as f64;
            let target = target_load_permille(slots) as f64 / 1000.0;
            assert!(load <= target && load > target - 0.001, "b={slots}: {load}");
        }
    }
}
