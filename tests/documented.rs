//! What the docs of each public call promise, on both kinds: the cases the docs' examples show
//! for one kind only.

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DecodeError, DefaultHashBuilder, GrowableCuckooFilter,
};

#[test]
fn bytes_round_trip_for_both_kinds_and_their_length_is_known_before() {
    let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    filter.try_extend(0..5_000u64).unwrap();
    assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    let mut file = Vec::new();
    filter.write_to(&mut file).unwrap();
    assert_eq!(file, filter.to_bytes());
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    assert!(filter.write_to_slice(&mut buffer[..100]).is_err());

    let filter = GrowableCuckooFilter::with_capacity(100);
    filter.try_extend(0..10_000u64).unwrap();
    let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.level_count(), filter.level_count());
    assert_eq!(copy.len(), 10_000);
    assert!((0..10_000u64).all(|key| copy.contains(&key)));

    let filter = GrowableCuckooFilter::with_capacity(1000);
    filter.try_extend(0..100_000u64).unwrap();
    assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
}

#[test]
fn bytes_read_back_with_a_named_hasher_or_from_a_reader() {
    let hasher = DefaultHashBuilder::with_seed(9);
    let filter = ConcurrentCuckooFilter::with_capacity_and_hasher(100, hasher);
    filter.insert("a").unwrap();
    let bytes = filter.to_bytes();
    let copy =
        ConcurrentCuckooFilter::<DefaultHashBuilder>::from_bytes_with_hasher(&bytes).unwrap();
    assert!(copy.contains("a"));
    assert_eq!(copy.hasher().seed(), 9);

    let mut reader = &bytes[..];
    let copy =
        ConcurrentCuckooFilter::<DefaultHashBuilder>::read_from_with_hasher(&mut reader).unwrap();
    assert!(copy.contains("a") && reader.is_empty());
}

#[test]
fn foreign_and_corrupted_bytes_are_named_errors() {
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(b"not a filter").unwrap_err(),
        DecodeError::BadMagic
    );
    let mut bytes = GrowableCuckooFilter::with_capacity(100).to_bytes();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let err = GrowableCuckooFilter::from_bytes(&bytes).unwrap_err();
    assert!(matches!(err, DecodeError::Level { level: 0, .. }), "{err}");
    let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&fixed).unwrap_err(),
        DecodeError::OtherFilterType {
            found: "ConcurrentCuckooFilter"
        }
    );
}

#[test]
fn calls_by_hash_are_the_key_calls_for_both_kinds() {
    use core::hash::BuildHasher;

    let filter = GrowableCuckooFilter::with_capacity(1000);
    let hash = filter.hasher().hash_one("key");
    filter.insert_hash(hash).unwrap();
    assert!(filter.contains("key") && filter.contains_hash(hash));
    assert_eq!(filter.count_hash(hash), 1);
    assert!(filter.remove_hash(hash));
    assert!(!filter.contains("key"));

    let seen = ConcurrentCuckooFilter::with_capacity(1000);
    assert_eq!(seen.insert_unique_hash(42), Ok(true));
    assert_eq!(seen.insert_unique_hash(42), Ok(false));
    assert_eq!(seen.count_hash(42), 1);

    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    filter.insert_hash(7).unwrap();
    assert!(filter.contains_hash(7));
    assert!(filter.remove_hash(7));
    assert!(!filter.contains_hash(7));

    let hashes = ["in", "out"].map(|key| filter.hasher().hash_one(key));
    filter.insert_hash(hashes[0]).unwrap();
    let mut answers = [false; 2];
    filter.contains_hash_batch_into(&hashes, &mut answers);
    assert_eq!(answers, [true, false]);

    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    let hashes: Vec<u64> = (0..500u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    assert_eq!(filter.try_extend_hashes(&hashes), Ok(500));
    assert!(hashes.iter().all(|&h| filter.contains_hash(h)));
}

#[test]
fn a_hasher_given_at_construction_is_kept_by_both_kinds() {
    let hasher = DefaultHashBuilder::with_seed(7);
    let filter = ConcurrentCuckooFilter::with_capacity_and_hasher(1000, hasher);
    filter.insert("a").unwrap();
    assert!(filter.contains("a"));
    assert_eq!(filter.hasher().seed(), 7);

    let filter = GrowableCuckooFilter::with_capacity_and_hasher(10, hasher);
    filter.try_extend(0..100u32).unwrap();
    assert!(filter.contains(&99u32));
    assert_eq!(filter.hasher().seed(), 7);
}

#[test]
fn clear_keeps_the_capacity_of_both_kinds() {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    filter.try_extend(0..500u64).unwrap();
    filter.clear();
    assert_eq!(
        filter.capacity(),
        ConcurrentCuckooFilter::with_capacity(1000).capacity()
    );

    let filter = GrowableCuckooFilter::with_capacity(100);
    filter.try_extend(0..10_000u64).unwrap();
    let capacity = filter.capacity();
    filter.clear();
    assert!(filter.is_empty() && !filter.contains(&7u64));
    assert_eq!(filter.capacity(), capacity);
}

#[test]
fn a_growable_filter_deduplicates_across_its_growth() {
    let seen = GrowableCuckooFilter::with_capacity(10);
    let fresh = (0..1000u32)
        .filter(|key| seen.insert_unique(key) == Ok(true))
        .count();
    // A key whose fingerprint an earlier key already shows is a false positive, under 0.1%.
    assert!(fresh >= 995, "{fresh}");
    assert_eq!(seen.len(), fresh);
}

#[test]
fn compatibility_and_merges_of_both_kinds() {
    let a = ConcurrentCuckooFilter::with_capacity(1000);
    assert!(a.is_compatible(&ConcurrentCuckooFilter::with_capacity(1000)));
    assert!(!a.is_compatible(&ConcurrentCuckooFilter::with_capacity(100_000)));

    let a = GrowableCuckooFilter::with_capacity(1000);
    // Both first levels were raised to one chunk (3,891 items): the same plan.
    assert!(a.is_compatible(&GrowableCuckooFilter::with_capacity(2000)));
    assert!(!a.is_compatible(&GrowableCuckooFilter::with_capacity(100_000)));

    let b = GrowableCuckooFilter::with_capacity(1000);
    a.try_extend(0..20_000u64).unwrap();
    b.try_extend(20_000..200_000u64).unwrap();
    assert_eq!(a.merge(&b), Ok(180_000));
    assert_eq!(a.len(), 200_000);
    assert!((0..200_000u64).all(|key| a.contains(&key)));
}

#[test]
fn batches_and_collections_of_a_growable_filter() {
    let filter = GrowableCuckooFilter::with_capacity(10);
    filter.try_extend(0..100u32).unwrap();
    assert_eq!(
        filter.contains_batch(&[1u32, 99, 1 << 30]),
        [true, true, false]
    );

    let filter: ConcurrentCuckooFilter = (0..10_000u32).collect();
    assert_eq!(filter.len(), 10_000);
    let filter: GrowableCuckooFilter = (0..10_000u32).filter(|key| key % 3 == 0).collect();
    assert_eq!(filter.len(), 3_334);
    assert!((0..10_000u32).step_by(3).all(|key| filter.contains(&key)));
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_extends_and_collections_of_both_kinds() {
    use rayon::prelude::*;

    let filter = GrowableCuckooFilter::with_capacity(1000);
    assert_eq!(
        filter.try_par_extend((0..100_000u64).into_par_iter()),
        Ok(100_000)
    );
    assert_eq!(filter.len(), 100_000);

    let filter: ConcurrentCuckooFilter = (0..100_000u64).into_par_iter().collect();
    assert_eq!(filter.len(), 100_000);
    let filter: GrowableCuckooFilter = (0..100_000u64).into_par_iter().collect();
    assert_eq!(filter.len(), 100_000);
}

#[test]
fn level_stats_describe_every_level() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(1000)
        .build()
        .unwrap();
    filter.try_extend(0..5000u64).unwrap();
    let levels = filter.level_stats();
    assert_eq!(levels.len(), filter.level_count());
    assert_eq!(levels.iter().map(|level| level.len).sum::<usize>(), 5000);
    assert!(levels
        .windows(2)
        .all(|pair| pair[0].capacity < pair[1].capacity));
    assert!(levels
        .iter()
        .all(|level| level.hasher_seed == filter.hasher().seed()));
}
