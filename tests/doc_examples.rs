//! The examples of secondary calls, kept as tests: each is the example its call's docs showed,
//! named after the call.

use core::hash::BuildHasher;

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DecodeError, DefaultHashBuilder, ExtendError, InsertError,
};

type Result = core::result::Result<(), Box<dyn std::error::Error>>;

#[test]
fn write_to_slice_fills_the_buffer_serialized_len_sizes() -> Result {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    assert_eq!(filter.write_to_slice(&mut buffer)?, buffer.len());
    assert_eq!(buffer, filter.to_bytes());
    Ok(())
}

#[test]
fn from_bytes_names_a_corrupted_input() {
    let mut bytes = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    bytes[100] ^= 1;
    assert!(matches!(
        ConcurrentCuckooFilter::from_bytes(&bytes),
        Err(DecodeError::ChecksumMismatch { .. })
    ));
}

#[test]
fn read_from_leaves_the_reader_at_what_follows() -> Result {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    let mut stream = filter.to_bytes();
    stream.extend_from_slice(b"next record");
    let mut reader = &stream[..];
    ConcurrentCuckooFilter::read_from(&mut reader)?;
    assert_eq!(reader, b"next record");
    Ok(())
}

#[test]
fn clear_empties_the_filter() -> core::result::Result<(), ExtendError> {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    filter.try_extend(0..500u64)?;
    filter.clear();
    assert!(filter.is_empty() && !filter.contains(&7u64));
    Ok(())
}

#[test]
fn insert_unique_inserts_once() {
    let seen = ConcurrentCuckooFilter::with_capacity(1000);
    assert_eq!(seen.insert_unique("a"), Ok(true));
    assert_eq!(seen.insert_unique("a"), Ok(false));
    assert_eq!(seen.count("a"), 1);
}

#[test]
fn insert_unique_hash_batch_into_flags_each_new_hash() {
    let seen = ConcurrentCuckooFilter::with_capacity(1000);
    let hashes = ["a", "b", "a", "c", "b"].map(|key| seen.hasher().hash_one(key));
    let mut new = [false; 5];
    assert_eq!(seen.insert_unique_hash_batch_into(&hashes, &mut new), Ok(3));
    assert_eq!(new, [true, true, false, true, false]);
}

#[test]
fn contains_batch_answers_each_item() -> core::result::Result<(), InsertError> {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    filter.insert(&3u32)?;
    assert_eq!(filter.contains_batch(&[1u32, 2, 3]), [false, false, true]);
    Ok(())
}

#[test]
fn try_extend_says_how_many_went_in_before_the_filter_filled() {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    assert_eq!(filter.try_extend(0..1000u32), Ok(1000));
    let err = filter.try_extend(1000..1_000_000u32).unwrap_err();
    assert_eq!(err.error(), InsertError::Full);
    assert_eq!(filter.len(), 1000 + err.inserted());
}

#[test]
fn collect_builds_a_filter_holding_every_item() {
    let filter: ConcurrentCuckooFilter = (0..10_000u32).collect();
    assert!((0..10_000u32).all(|key| filter.contains(&key)));
}

#[test]
fn semi_sorted_buckets_save_a_bit_per_slot() -> Result {
    let plain = ConcurrentCuckooFilter::builder()
        .capacity(1 << 20)
        .fingerprint_bits(13)
        .build()?;
    let sorted = ConcurrentCuckooFilter::builder()
        .capacity(1 << 20)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .build()?;
    // 12 bits instead of 13 per slot.
    let ratio = sorted.memory_usage() as f64 / plain.memory_usage() as f64;
    assert!((ratio - 12.0 / 13.0).abs() < 0.01, "{ratio}");
    Ok(())
}

#[test]
fn false_positive_rate_picks_the_smallest_shape() -> Result {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(1_000_000)
        .false_positive_rate(0.001)
        .build()?;
    assert_eq!(filter.fingerprint_bits(), 13);
    assert_eq!(filter.bucket_size(), 4);
    assert!(filter.is_semi_sorted());
    assert!(filter.expected_false_positive_rate() <= 0.001);
    Ok(())
}

#[test]
fn stats_describe_shape_fill_and_accuracy() -> Result {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    for key in 0..500u32 {
        filter.insert(&key)?;
    }
    let stats = filter.stats();
    assert_eq!(
        (stats.len, stats.bucket_size, stats.fingerprint_bits),
        (500, 4, 12)
    );
    assert!(stats.false_positive_rate_at_load < stats.expected_false_positive_rate);
    assert!(stats.to_string().contains("items: 500\n"));
    Ok(())
}

#[test]
fn a_random_seed_is_shared_by_cloning_the_builder_and_saved_with_the_bytes() -> Result {
    let hasher = DefaultHashBuilder::random();
    assert_ne!(hasher.seed(), DefaultHashBuilder::random().seed());
    let shards: Vec<ConcurrentCuckooFilter> = (0..2)
        .map(|_| ConcurrentCuckooFilter::with_capacity_and_hasher(1000, hasher))
        .collect();
    shards[0].insert("a")?;
    shards[1].insert("b")?;
    shards[0].merge(&shards[1])?;
    assert!(shards[0].contains("a") && shards[0].contains("b"));

    let loaded = ConcurrentCuckooFilter::from_bytes(&shards[0].to_bytes())?;
    assert_eq!(loaded.hasher().seed(), hasher.seed());
    assert!(loaded.contains("b"));
    Ok(())
}

#[test]
fn hash_stream_is_the_hash_of_a_key_writing_that_stream() {
    let hasher = DefaultHashBuilder::new();
    assert_eq!(hasher.hash_stream(b"alice\xff"), hasher.hash_one("alice"));
    assert_eq!(
        hasher.hash_stream(&7u64.to_le_bytes()),
        hasher.hash_one(7u64)
    );
}

#[cfg(feature = "rayon")]
#[test]
fn try_par_extend_counts_what_went_in_before_the_filter_filled() {
    use rayon::prelude::*;

    let filter = ConcurrentCuckooFilter::with_capacity(100_000);
    assert_eq!(
        filter.try_par_extend((0..100_000u64).into_par_iter()),
        Ok(100_000)
    );
    let full = filter.try_par_extend((0..1_000_000u64).into_par_iter().map(|i| i + (1 << 40)));
    assert_eq!(full.unwrap_err().inserted(), filter.len() - 100_000);
}

#[test]
fn merge_unites_two_filters_of_one_shape() -> Result {
    use concurrent_cuckoo_filter::MergeError;

    let (a, b) = (
        ConcurrentCuckooFilter::with_capacity(1000),
        ConcurrentCuckooFilter::with_capacity(1000),
    );
    a.insert("apple")?;
    b.insert("banana")?;
    assert_eq!(a.merge(&b), Ok(1));
    assert!(a.contains("apple") && a.contains("banana"));

    let small = ConcurrentCuckooFilter::with_capacity(10);
    assert!(matches!(
        small.merge(&a),
        Err(MergeError::Geometry {
            field: "buckets",
            ..
        })
    ));
    Ok(())
}
