use super::*;

#[test]
fn stripe_arithmetic_holds_past_2_to_the_32() {
    // 64-bit buckets are one-bucket lock groups: 2^32 − 1 of them round up to 2^32 stripes,
    // which a 32-bit `usize` could not hold.
    let wide = BucketCodec::new(2, 32, false);
    assert_eq!(useful_stripes(0xFFFF_FFFF, &wide), 1 << 32);
    assert_eq!(useful_stripes(1 << 32, &wide), 1 << 32);
    let default = |buckets, bytes| default_stripe_count(bytes, useful_stripes(buckets, &wide));
    assert_eq!(default(0xFFFF_FFFF, 1 << 35), DEFAULT_STRIPES as u64);
    assert_eq!(default(3, 40), 1);
    // 2^35 slots need 16 stripes to keep each under 2^32 − 1.
    assert_eq!(min_stripes(1 << 32, 8), 16);
    assert_eq!(min_stripes(1000, 4), 1);
    assert_eq!(max_stripes(i32::MAX as u64), 1 << 27);
    assert_eq!(max_stripes(i64::MAX as u64), 1 << 32);
}

#[test]
fn accepted_counts_are_powers_of_two_in_range() {
    let range = accepted_stripes(1 << 32, 8, i32::MAX as u64, u32::MAX as u64);
    assert_eq!(range, 16..=1 << 27);
    assert!(is_accepted(16, &range) && is_accepted(1 << 27, &range));
    assert!(!is_accepted(8, &range) && !is_accepted(24, &range));
    assert!(!is_accepted(1 << 28, &range));
    let locks = accepted_item_locks();
    assert!(is_accepted(1, &locks) && is_accepted(MAX_ITEM_LOCKS as u64, &locks));
    assert!(!is_accepted(0, &locks) && !is_accepted(3, &locks));
    assert!(!is_accepted(2 * MAX_ITEM_LOCKS as u64, &locks));
}
