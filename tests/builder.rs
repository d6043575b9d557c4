//! The fixed filter's builder through its public calls and test hooks: every bad parameter is
//! a named error, and the documented examples' cases.

use concurrent_cuckoo_filter::{BuildError, ConcurrentCuckooFilter, TableLayout};

fn builder() -> concurrent_cuckoo_filter::ConcurrentCuckooFilterBuilder {
    ConcurrentCuckooFilter::builder()
}

#[test]
fn every_bad_parameter_is_named() {
    let cases = [
        (
            builder().capacity(usize::MAX).build().unwrap_err(),
            "capacity",
        ),
        (
            builder()
                .capacity(10)
                .fingerprint_bits(0)
                .build()
                .unwrap_err(),
            "fingerprint_bits",
        ),
        (
            builder()
                .capacity(10)
                .fingerprint_bits(33)
                .build()
                .unwrap_err(),
            "fingerprint_bits",
        ),
        (
            builder().capacity(10).bucket_size(3).build().unwrap_err(),
            "bucket_size",
        ),
        (
            builder().capacity(10).bucket_size(0).build().unwrap_err(),
            "bucket_size",
        ),
        (
            builder().capacity(10).stripes(3).build().unwrap_err(),
            "stripes",
        ),
        (
            builder()
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
        builder()
            .capacity(10)
            .fingerprint_bits(33)
            .build()
            .unwrap_err(),
        BuildError::FingerprintBits { bits: 33 }
    );
    let err = builder().capacity(10).bucket_size(3).build().unwrap_err();
    assert_eq!(err.to_string(), "bucket_size must be 2, 4 or 8, got 3");
}

#[test]
fn a_table_larger_than_memory_is_out_of_memory_or_built_untouched() {
    // 2^32 buckets of eight 32-bit fingerprints: 128 GiB, never written.
    match builder()
        .buckets(1 << 32)
        .bucket_size(8)
        .fingerprint_bits(32)
        .build()
    {
        Err(BuildError::OutOfMemory { bytes }) => {
            assert!(bytes as u64 >= (1 << 37), "{bytes}")
        }
        Err(err) => panic!("{err}"),
        // Where the system grants it, the zeroed pages stay untouched until written.
        Ok(filter) => assert_eq!(filter.len(), 0),
    }
}

#[test]
fn the_bucket_word_layout_is_chosen_or_refused_by_name() {
    let filter = builder()
        .capacity(100_000)
        .layout(TableLayout::BucketWord)
        .build()
        .unwrap();
    assert_eq!(filter.layout(), TableLayout::BucketWord);

    let err = builder()
        .capacity(10)
        .layout(TableLayout::BucketWord)
        .fingerprint_bits(16)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout BucketWord holds at most 48 bits of fingerprints per bucket, \
         got bucket_size 4 × fingerprint_bits 16 = 64"
    );
}

#[test]
fn memory_bytes_is_what_build_allocates() {
    let builder = builder().capacity(1_000_000);
    let bytes = builder.memory_bytes().unwrap();
    let filter = builder.build().unwrap();
    assert!(bytes <= filter.memory_usage() as u64);
    assert!(filter.memory_usage() as u64 - bytes < 1024);
}

/// Bucket size, semi-sorting and fingerprint width.
fn shape(filter: &ConcurrentCuckooFilter) -> (usize, bool, u32) {
    (
        filter.bucket_size(),
        filter.is_semi_sorted(),
        filter.fingerprint_bits(),
    )
}

#[test]
fn rates_pick_semi_sorted_four_slot_buckets_with_eq_6_bits() {
    for (rate, bits) in [
        (0.03, 9),
        (0.01, 10),
        (0.001, 13),
        (0.0001, 17),
        (0.00001, 20),
    ] {
        let filter = builder().false_positive_rate(rate).build().unwrap();
        assert_eq!(shape(&filter), (4, true, bits));
        assert!(filter.expected_false_positive_rate() <= rate);
    }
}

#[test]
fn explicit_settings_win_over_the_rate() {
    let filter = builder()
        .bucket_size(2)
        .false_positive_rate(0.01)
        .build()
        .unwrap();
    assert_eq!(shape(&filter), (2, false, 9));
    let filter = builder()
        .fingerprint_bits(16)
        .semi_sorted(false)
        .false_positive_rate(0.01)
        .build()
        .unwrap();
    // With the width fixed, 8-slot buckets fill furthest and still meet the rate.
    assert_eq!(shape(&filter), (8, false, 16));
}

#[test]
fn impossible_rates_and_semi_sorted_shapes_are_errors() {
    for rate in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(
            matches!(
                builder().false_positive_rate(rate).build(),
                Err(BuildError::FalsePositiveRate { rate: got }) if got.to_bits() == rate.to_bits()
            ),
            "{rate}"
        );
    }
    // With a rate too, which the settings would not otherwise stop from being met.
    for rate in [None, Some(0.5), Some(0.01)] {
        let builder = || match rate {
            Some(rate) => builder().false_positive_rate(rate),
            None => builder(),
        };
        assert_eq!(
            builder()
                .semi_sorted(true)
                .bucket_size(8)
                .build()
                .unwrap_err(),
            BuildError::SemiSortedBucketSize { size: 8 },
            "{rate:?}"
        );
        assert_eq!(
            builder()
                .semi_sorted(true)
                .fingerprint_bits(4)
                .build()
                .unwrap_err(),
            BuildError::SemiSortedFingerprintBits { bits: 4 },
            "{rate:?}"
        );
    }
}

#[test]
fn a_growable_builder_names_its_errors_and_its_memory() {
    use concurrent_cuckoo_filter::GrowableCuckooFilter;

    let err = GrowableCuckooFilter::builder()
        .capacity(10)
        .split_depth(11)
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "split_depth must be in 1..=10, got 11");

    // A limit below what one 4-slot bucket holds at its target load (3 items) names the limit;
    // from there on the filter is built and holds its limit.
    for max_capacity in [1, 2] {
        let builder = GrowableCuckooFilter::builder()
            .capacity(1)
            .max_capacity(max_capacity);
        let refused = BuildError::MaxCapacity {
            capacity: 3,
            max_capacity,
        };
        assert_eq!(builder.memory_bytes().unwrap_err(), refused);
        assert_eq!(builder.build().unwrap_err(), refused);
    }
    let smallest = GrowableCuckooFilter::builder()
        .capacity(1)
        .max_capacity(3)
        .build()
        .unwrap();
    for key in 0..3u64 {
        smallest.insert(&key).unwrap();
    }

    // Rates in (0, 1) too small for 32-bit fingerprints name the rate given, down to the
    // smallest subnormal, whose first level's half of it is 0.
    for rate in [1e-12, 1e-300, f64::MIN_POSITIVE, 1e-320, 5e-324] {
        for builder in [
            GrowableCuckooFilter::builder(),
            GrowableCuckooFilter::builder().capacity(10),
        ] {
            let builder = builder.false_positive_rate(rate);
            for err in [
                builder.memory_bytes().unwrap_err(),
                builder.build().unwrap_err(),
            ] {
                assert!(
                    matches!(err, BuildError::FalsePositiveRateTooSmall { rate: got, .. } if got == rate),
                    "{rate:e}: {err}"
                );
            }
        }
    }

    let builder = GrowableCuckooFilter::builder().capacity(1_000_000);
    let bytes = builder.memory_bytes().unwrap();
    let filter = builder.build().unwrap();
    assert!(bytes <= filter.memory_usage() as u64);
    assert!(filter.memory_usage() as u64 - bytes < 4096);
}

#[test]
fn tables_are_sized_for_the_documented_target_load() {
    for (bucket_size, bits, target) in [(2usize, 8u32, 0.84), (4, 12, 0.95), (8, 16, 0.97)] {
        let filter = builder()
            .capacity(1_000_000)
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .build()
            .unwrap();
        let load = 1_000_000.0 / (filter.bucket_count() * bucket_size) as f64;
        assert!(
            load <= target && load > target - 0.001,
            "b={bucket_size}: {load}"
        );
    }
}

#[test]
fn the_smallest_rate_a_growable_builder_names_builds_whatever_rate_was_refused() {
    use concurrent_cuckoo_filter::GrowableCuckooFilter;

    let smallest_for = |rate: f64| match GrowableCuckooFilter::builder()
        .false_positive_rate(rate)
        .build()
    {
        Err(BuildError::FalsePositiveRateTooSmall { smallest, .. }) => smallest,
        other => panic!("{rate:e}: {other:?}"),
    };
    let smallest = smallest_for(1e-12);
    assert!(GrowableCuckooFilter::builder()
        .false_positive_rate(smallest)
        .build()
        .is_ok());
    assert!(smallest < 1e-6, "{smallest:e}");
    for rate in [1e-300, f64::MIN_POSITIVE, 1e-320, 5e-324] {
        let named = smallest_for(rate);
        assert!(
            (named / smallest - 1.0).abs() < 1e-9,
            "{rate:e}: {named:e}, not {smallest:e}"
        );
    }
}

#[test]
fn the_smallest_rate_named_is_one_the_other_settings_build_or_refuse_for_themselves() {
    use concurrent_cuckoo_filter::GrowableCuckooFilter;

    let builder = |capacity: usize, max_capacity: usize| {
        GrowableCuckooFilter::builder()
            .capacity(capacity)
            .max_capacity(max_capacity)
    };
    let smallest_for = |capacity, max_capacity| match builder(capacity, max_capacity)
        .false_positive_rate(1e-12)
        .build()
    {
        Err(BuildError::FalsePositiveRateTooSmall { smallest, .. }) => smallest,
        other => panic!("{capacity}, {max_capacity}: {other:?}"),
    };
    // A first level cut to its limit: rates down to the widest fingerprints' build.
    for capacity in [1 << 20, 3_000_000] {
        let smallest = smallest_for(capacity, capacity);
        assert!(smallest < 1e-7, "{capacity}: {smallest:e}");
        let built = builder(capacity, capacity)
            .false_positive_rate(smallest)
            .build();
        assert!(built.is_ok(), "{capacity}: {smallest:e}: {built:?}");
    }
    // A capacity too large at every rate: the rate named is refused for the capacity alone.
    let smallest = smallest_for(1 << 40, usize::MAX);
    assert!(smallest < 1e-7, "{smallest:e}");
    let err = builder(1 << 40, usize::MAX)
        .false_positive_rate(smallest)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, BuildError::CapacityTooLarge { capacity, .. } if capacity == 1 << 40),
        "{err:?}"
    );
}

#[test]
fn the_most_items_a_growable_builder_names_is_a_capacity_it_takes() {
    use concurrent_cuckoo_filter::GrowableCuckooFilter;

    // Deep splits bound a level by its route bits before its table's bucket count does.
    for depth in [1, 6, 9, 10] {
        for rate in [0.5, 0.01] {
            let builder = |capacity: usize| {
                GrowableCuckooFilter::builder()
                    .capacity(capacity)
                    .split_depth(depth)
                    .false_positive_rate(rate)
            };
            let Err(BuildError::CapacityTooLarge { capacity, max }) =
                builder(1 << 40).memory_bytes()
            else {
                panic!("depth {depth}, {rate}: 2^40 items taken");
            };
            assert_eq!(capacity, 1 << 40);
            let at_max = builder(max).memory_bytes();
            assert!(at_max.is_ok(), "depth {depth}, {rate}: {max}: {at_max:?}");
        }
    }
}
