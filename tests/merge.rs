//! Merging filters, operations by precomputed hash, and the stats and encoded length.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder, MergeError};
use core::hash::BuildHasher;
use std::sync::Arc;

fn filled(capacity: usize, keys: impl Iterator<Item = u64>) -> ConcurrentCuckooFilter {
    let filter = ConcurrentCuckooFilter::with_capacity(capacity);
    for key in keys {
        filter.insert(&key).unwrap();
    }
    filter
}

#[test]
fn a_merge_keeps_every_item_of_both_filters_and_adds_their_counts() {
    for builder in [
        ConcurrentCuckooFilter::builder().capacity(50_000),
        ConcurrentCuckooFilter::builder()
            .capacity(50_000)
            .semi_sorted(true),
        ConcurrentCuckooFilter::builder()
            .capacity(50_000)
            .bucket_size(8)
            .fingerprint_bits(20),
    ] {
        let a = builder.clone().build().unwrap();
        let b = builder.build().unwrap();
        a.try_extend(0..20_000u64).unwrap();
        b.try_extend(10_000..30_000u64).unwrap();
        assert_eq!(a.merge(&b), Ok(20_000));
        assert_eq!(a.len(), 40_000);
        assert!((0..30_000u64).all(|key| a.contains(&key)));
        // The overlap is stored twice: each copy needs its own remove.
        assert_eq!(a.count(&15_000u64), 2);
        assert_eq!(b.len(), 20_000, "the source is unchanged");
    }
}

#[test]
fn a_unique_merge_of_overlapping_sets_holds_each_item_once() {
    let a = ConcurrentCuckooFilter::with_capacity(50_000);
    let b = ConcurrentCuckooFilter::with_capacity(50_000);
    for key in 0..20_000u64 {
        a.insert_unique(&key).unwrap();
    }
    for key in 10_000..30_000u64 {
        b.insert_unique(&key).unwrap();
    }
    let before = a.len();
    let added = a.merge_unique(&b).unwrap();
    // 10,000 new keys, less those whose fingerprint a already held in their buckets: false
    // positives, under 0.2% each.
    assert!((9_950..=10_000).contains(&added), "{added}");
    assert_eq!(a.len(), before + added);
    assert!((0..30_000u64).all(|key| a.contains(&key)));
    assert_eq!(a.count(&15_000u64), 1);
}

#[test]
fn filters_of_another_shape_or_hasher_are_refused_and_left_alone() {
    let a = filled(1000, 0..100);
    let bigger = filled(100_000, 0..100);
    assert!(!a.is_compatible(&bigger));
    assert!(matches!(
        a.merge(&bigger),
        Err(MergeError::Geometry {
            field: "buckets",
            ..
        })
    ));
    let wider = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .fingerprint_bits(16)
        .build()
        .unwrap();
    assert_eq!(
        a.merge_unique(&wider).unwrap_err(),
        MergeError::Geometry {
            field: "fingerprint_bits",
            target: 12,
            source: 16
        }
    );
    let reseeded = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .hasher(DefaultHashBuilder::with_seed(1))
        .build()
        .unwrap();
    reseeded.insert(&7u64).unwrap();
    assert!(!a.is_compatible(&reseeded));
    assert_eq!(a.merge(&reseeded), Err(MergeError::Hasher));
    assert_eq!(a.len(), 100);
    assert!(a.is_compatible(&filled(1000, 500..600)));
}

#[test]
fn a_merge_into_a_full_filter_stops_losing_nothing_and_says_how_many_went_in() {
    let target = ConcurrentCuckooFilter::with_capacity(10_000);
    let before = common_fill(&target, 0);
    let source = ConcurrentCuckooFilter::with_capacity(10_000);
    source
        .try_extend((1u64 << 40)..(1u64 << 40) + 5_000)
        .unwrap();
    match target.merge(&source) {
        Err(MergeError::Full { merged }) => {
            assert!(merged < 5_000);
            assert_eq!(target.len(), before as usize + merged);
        }
        other => panic!("expected Full, got {other:?}"),
    }
    assert!((0..before).all(|key| target.contains(&key)));
}

/// Inserts `start`, `start + 1`, ... until the first failure; returns how many went in.
fn common_fill(filter: &ConcurrentCuckooFilter, start: u64) -> u64 {
    let mut n = 0;
    while filter.insert(&(start + n)).is_ok() {
        n += 1;
    }
    n
}

#[test]
fn a_merge_races_other_writers_on_the_target_without_losing_an_item() {
    let target = Arc::new(ConcurrentCuckooFilter::with_capacity(200_000));
    let source = filled(200_000, 0..90_000);
    let writer = {
        let target = Arc::clone(&target);
        std::thread::spawn(move || {
            for key in 1_000_000..1_090_000u64 {
                target.insert(&key).unwrap();
            }
            for key in (1_000_000..1_090_000u64).step_by(3) {
                assert!(target.remove(&key));
            }
        })
    };
    assert_eq!(target.merge(&source), Ok(90_000));
    writer.join().unwrap();
    assert_eq!(target.len(), 90_000 + 60_000);
    assert!((0..90_000u64).all(|key| target.contains(&key)));
    assert!((1_000_000..1_090_000u64)
        .filter(|key| (key - 1_000_000) % 3 != 0)
        .all(|key| target.contains(&key)));
}

#[test]
fn merging_a_filter_into_itself_doubles_every_item() {
    let filter = filled(10_000, 0..3_000);
    assert_eq!(filter.merge(&filter), Ok(3_000));
    assert_eq!(filter.len(), 6_000);
    assert!((0..3_000u64).all(|key| filter.count(&key) >= 2));
    assert_eq!(filter.merge_unique(&filter), Ok(0));
}

#[test]
fn a_precomputed_hash_is_the_key_when_it_comes_from_the_filters_hasher() {
    let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    let hash = |key: &str| filter.hasher().hash_one(key);
    filter.insert_hash(hash("alpha")).unwrap();
    assert!(filter.contains("alpha"));
    filter.insert("beta").unwrap();
    assert!(filter.contains_hash(hash("beta")));
    assert_eq!(filter.insert_unique_hash(hash("beta")), Ok(false));
    assert_eq!(filter.insert_unique_hash(hash("gamma")), Ok(true));
    assert_eq!(filter.count_hash(hash("gamma")), 1);
    assert!(filter.remove_hash(hash("alpha")));
    assert!(!filter.contains("alpha"));
    assert_eq!(filter.len(), 2);
}

#[test]
fn hashes_from_another_function_have_no_false_negatives_and_the_expected_false_positives() {
    // SplitMix64 of the index stands in for a hash computed in another program.
    let mix = |mut x: u64| {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    };
    let filter = ConcurrentCuckooFilter::with_capacity(100_000);
    let members: Vec<u64> = (0..100_000).map(mix).collect();
    assert_eq!(filter.try_extend_hashes(&members), Ok(100_000));
    let mut answers = vec![false; members.len()];
    filter.contains_hash_batch_into(&members, &mut answers);
    assert!(answers.iter().all(|&found| found));
    let strangers: Vec<u64> = (100_000..1_100_000).map(mix).collect();
    let mut answers = vec![false; strangers.len()];
    filter.contains_hash_batch_into(&strangers, &mut answers);
    let rate = answers.iter().filter(|&&found| found).count() as f64 / 1e6;
    let expected = filter.stats().false_positive_rate_at_load;
    assert!(rate < expected * 1.3, "{rate} vs {expected}");
    let full = filter.try_extend_hashes(&strangers).unwrap_err();
    assert_eq!(filter.len(), 100_000 + full.inserted());
}

#[test]
fn serialized_len_is_the_length_to_bytes_writes() {
    for builder in [
        ConcurrentCuckooFilter::builder().capacity(1),
        ConcurrentCuckooFilter::builder().capacity(12_345),
        ConcurrentCuckooFilter::builder()
            .capacity(12_345)
            .semi_sorted(true),
        ConcurrentCuckooFilter::builder()
            .capacity(777)
            .bucket_size(2)
            .fingerprint_bits(7),
        ConcurrentCuckooFilter::builder()
            .capacity(100_000)
            .bucket_size(8)
            .fingerprint_bits(31),
    ] {
        let filter = builder.build().unwrap();
        let empty = filter.serialized_len();
        assert_eq!(empty, filter.to_bytes().len() as u64);
        filter.try_extend(0..filter.capacity() as u64 / 2).unwrap();
        assert_eq!(filter.serialized_len(), empty);
        assert_eq!(filter.stats().serialized_len, empty);
    }
}

#[test]
fn stats_describe_the_filter_as_its_accessors_do() {
    let filter = filled(100_000, 0..50_000);
    let stats = filter.stats();
    assert_eq!(stats.len, 50_000);
    assert_eq!(stats.buckets, filter.bucket_count());
    assert_eq!((stats.bucket_size, stats.fingerprint_bits), (4, 12));
    assert!(!stats.semi_sorted);
    assert_eq!(stats.capacity, filter.capacity());
    assert_eq!(stats.load_factor, filter.load_factor());
    let bits = stats.bits_per_item.unwrap();
    assert_eq!(bits, filter.memory_usage() as f64 * 8.0 / 50_000.0);
    assert_eq!(stats.hasher_id, u64::from_le_bytes(*b"ccf-xxf8"));
    assert_eq!(stats.format_version, 1);
    // At about half the sized load, about half the expected rate.
    let ratio = stats.false_positive_rate_at_load / stats.expected_false_positive_rate;
    assert!((0.45..0.6).contains(&ratio), "{ratio}");
    let text = stats.to_string();
    for line in [
        "items: 50000\n",
        "hasher: ccf-xxf8 (seed ",
        "format version: 1\n",
    ] {
        assert!(text.contains(line), "{text}");
    }
    let empty = ConcurrentCuckooFilter::with_capacity(10).stats();
    assert_eq!(empty.bits_per_item, None);
    assert!(empty.to_string().contains("bits per item: -\n"));
}

#[test]
fn a_batch_of_unique_inserts_flags_first_copies_and_names_the_hash_that_found_no_room() {
    let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    let hash = |key: u64| filter.hasher().hash_one(key);
    let hashes: Vec<u64> = (0..3000u64).map(|i| hash(i % 1000)).collect();
    let mut new = vec![true; hashes.len()];
    let inserted = filter
        .insert_unique_hash_batch_into(&hashes, &mut new)
        .unwrap();
    assert_eq!(inserted, filter.len());
    assert_eq!(inserted, new.iter().filter(|&&new| new).count());
    // The first copy of each key, less a few false positives; never a later copy.
    assert!((995..=1000).contains(&inserted), "{inserted}");
    assert!(new[1000..].iter().all(|&new| !new));

    // Every key twice: the second copies are found present, so the position of the hash that
    // found no room is past the count of hashes that went in.
    let more: Vec<u64> = (10_000..100_000u64)
        .flat_map(|key| [hash(key); 2])
        .collect();
    let mut new = vec![false; more.len()];
    let before = filter.len();
    let full = filter
        .insert_unique_hash_batch_into(&more, &mut new)
        .unwrap_err();
    let at = full
        .position()
        .expect("a batch in order names the failing hash");
    assert!(at > 10_000 && at < more.len(), "{at}");
    assert!(new[at..].iter().all(|&new| !new));
    let went_in = new.iter().filter(|&&new| new).count();
    assert_eq!(full.inserted(), went_in);
    assert!(went_in <= at / 2 + 1, "{went_in} of {at}");
    assert_eq!(filter.len(), before + went_in);
    assert!(more[..at].iter().all(|&hash| filter.contains_hash(hash)));
    assert!((0..1000u64).all(|key| filter.contains(&key)));
}
