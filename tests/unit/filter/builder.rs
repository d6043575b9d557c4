use super::*;
use crate::settings::Limits;

#[test]
fn stripes_out_of_range_are_refused_with_the_range() {
    let huge = ConcurrentCuckooFilterBuilder::new()
        .buckets(1 << 31)
        .bucket_size(8);
    let host_max = 1 << 32;
    assert_eq!(
        huge.clone()
            .stripes(1)
            .settings
            .geometry_within(&Limits::TARGET),
        Err(BuildError::Stripes {
            stripes: 1,
            min: 8,
            max: host_max
        })
    );
    assert!(huge
        .stripes(8)
        .settings
        .geometry_within(&Limits::TARGET)
        .is_ok());
    assert!(matches!(
        ConcurrentCuckooFilterBuilder::new()
            .capacity(10)
            .stripes(1 << 62)
            .build(),
        Err(BuildError::Stripes { .. })
    ));
    for (limits, max) in [(Limits::TARGET, host_max), (THIRTY_TWO_BIT, 1 << 27)] {
        let err = ConcurrentCuckooFilterBuilder::new()
            .capacity(10)
            .stripes(1 << 62)
            .settings
            .geometry_within(&limits)
            .unwrap_err();
        let stripes = 1 << 62;
        assert_eq!(
            err,
            BuildError::Stripes {
                stripes,
                min: 1,
                max
            }
        );
        assert!(
            err.to_string().contains(&format!("from 1 to {max}")),
            "{err}"
        );
    }
    // The most there can be is accepted.
    assert!(ConcurrentCuckooFilterBuilder::new()
        .capacity(10)
        .stripes(host_max)
        .settings
        .geometry_within(&Limits::TARGET)
        .is_ok());
}

#[test]
fn the_largest_capacity_is_reported_and_one_more_is_refused() {
    for limits in [Limits::TARGET, THIRTY_TWO_BIT] {
        for (bucket_size, bits) in [(2, 32), (4, 12), (8, 32), (8, 4)] {
            let builder = |capacity: usize| {
                ConcurrentCuckooFilterBuilder::new()
                    .capacity(capacity)
                    .bucket_size(bucket_size)
                    .fingerprint_bits(bits)
            };
            let err = builder(limits.usize_max as usize)
                .settings
                .geometry_within(&limits)
                .unwrap_err();
            let BuildError::CapacityTooLarge { max, .. } = err else {
                panic!("{err:?}")
            };
            assert!(max > 0, "b={bucket_size} f={bits}");
            assert!(err.to_string().contains(&max.to_string()));
            let geometry = builder(max).settings.geometry_within(&limits).unwrap();
            assert!(geometry.shape.table_bytes().unwrap() as u64 <= limits.bytes);
            assert!(geometry.stripe_count() >= 1);
            assert!(geometry.max_useful_stripes() >= geometry.stripe_count() as u64);
            let err = builder(max + 1)
                .settings
                .geometry_within(&limits)
                .unwrap_err();
            assert!(matches!(err, BuildError::CapacityTooLarge { .. }));
        }
    }
}

/// A 32-bit target's limits, so that its arithmetic runs on this one.
const THIRTY_TWO_BIT: Limits = Limits {
    bytes: i32::MAX as u64,
    usize_max: u32::MAX as u64,
};

#[test]
fn a_32_bit_target_refuses_a_capacity_it_cannot_address_with_the_true_maximum() {
    let err = ConcurrentCuckooFilterBuilder::new()
        .capacity(u32::MAX as usize)
        .bucket_size(2)
        .fingerprint_bits(32)
        .settings
        .geometry_within(&THIRTY_TWO_BIT)
        .unwrap_err();
    // 2^31 bytes of 64-bit buckets, two slots each, at 84% load.
    let BuildError::CapacityTooLarge { max, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(max as u64, ((i32::MAX as u64 / 8 - 2) * 2) * 84 / 100);
}
