use super::*;

#[test]
fn capacity_of_is_the_exact_inverse_of_buckets_for() {
    for bucket_size in [2, 4, 8] {
        let mut last = 0;
        for n in (0..5000u64).chain([1 << 20, 1 << 31, u32::MAX as u64, 1 << 34]) {
            let bucket_count = bucket_count_for(n, bucket_size);
            assert!(bucket_count >= last, "monotone: b={bucket_size} n={n}");
            last = bucket_count;
            let capacity = capacity_of(bucket_count, bucket_size);
            assert!(capacity >= n, "b={bucket_size} n={n}");
            assert!(
                bucket_count_for(capacity, bucket_size) <= bucket_count,
                "b={bucket_size} n={n}"
            );
            assert!(
                bucket_count_for(capacity + 1, bucket_size) > bucket_count,
                "b={bucket_size} n={n}"
            );
        }
    }
}

#[test]
fn large_tables_are_sized_for_the_target_load_alone() {
    for (bucket_size, from) in [(2usize, 21_000u64), (4, 988), (8, 550)] {
        let load = target_load_permille(bucket_size) as u128;
        for n in (from..from + 3000).chain([1 << 20, 123_456_789, 1 << 34]) {
            let at_target = (n as u128 * 1000).div_ceil(bucket_size as u128 * load) as u64;
            assert_eq!(
                bucket_count_for(n, bucket_size),
                at_target,
                "b={bucket_size} n={n}"
            );
        }
    }
    // Past 2^32 buckets nothing wraps: the rule saturates, it does not shrink.
    assert!(bucket_count_for(u64::MAX, 2) > 1 << 32);
    assert_eq!(capacity_of(u64::MAX, 8), u64::MAX);
}
