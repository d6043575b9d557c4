use super::*;

#[test]
fn the_most_buckets_are_2_to_the_32_or_what_the_target_can_address() {
    let shape = |bucket_size| Shape {
        bucket_count: 0,
        bucket_size,
        fingerprint_bits: 32,
        semi_sorted: false,
        bucket_words: false,
    };
    assert_eq!(shape(8).max_bucket_count(i64::MAX as u64), MAX_BUCKET_COUNT);
    assert!(shape(2).max_bucket_count(i32::MAX as u64) < 1 << 28);
}
