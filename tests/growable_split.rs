//! The growable filter with levels that split as they fill (the default): its false positive
//! rate after growing far, one level until it has grown `2^depth` times, and its limits. What it
//! shares with fixed-size levels, under threads, is in `growable.rs`.

use concurrent_cuckoo_filter::{GrowableCuckooFilter, InsertError};

fn split(capacity: usize, rate: f64, depth: u32) -> GrowableCuckooFilter {
    GrowableCuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(rate)
        .split_depth(depth)
        .build()
        .unwrap()
}

#[test]
fn the_rate_stays_under_the_target_after_growing_a_thousandfold() {
    for rate in [0.01, 0.001] {
        let filter = split(4_000, rate, 6);
        let items = 4_000_000u64;
        assert_eq!(filter.try_extend(0..items), Ok(items as usize));
        assert_eq!(filter.len(), items as usize);
        assert!((0..items).all(|key| filter.contains(&key)));
        // 64× in the first level, then a second one.
        assert_eq!(filter.level_count(), 2, "{filter:?}");
        let absent = (items..2 * items)
            .filter(|key| filter.contains(&(key << 20)))
            .count();
        let measured = absent as f64 / items as f64;
        assert!(filter.expected_false_positive_rate() <= rate);
        assert!(measured <= rate, "target {rate}, measured {measured}");
    }
}

#[test]
fn split_levels_keep_fingerprints_plain_with_the_rate_s_width() {
    for (rate, bits) in [(0.01, 11), (0.001, 14)] {
        let filter = split(4_000, rate, 6);
        let stats = &filter.level_stats()[0];
        assert!(!stats.semi_sorted, "{stats:?}");
        assert_eq!((stats.bucket_size, stats.fingerprint_bits), (4, bits));
    }
}

#[test]
fn each_level_keeps_the_bits_the_builder_docs_give_it() {
    use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    // One bit more than a fixed filter's at the target for the first level, one more for each
    // level after, one fewer for a level of 2-slot buckets.
    for rate in [0.3, 0.1, 0.05, 0.01, 0.001] {
        let fixed = ConcurrentCuckooFilter::builder()
            .capacity(100_000)
            .false_positive_rate(rate)
            .build()
            .unwrap()
            .stats()
            .fingerprint_bits;
        let filter = split(1000, rate, 1);
        filter.try_extend(0..100_000u64).unwrap();
        let stats = filter.level_stats();
        assert!(stats.len() > 3, "{rate}: {filter:?}");
        for (level, stats) in stats.iter().enumerate() {
            let two_slots = u32::from(stats.bucket_size == 2);
            let expected = fixed + 1 + level as u32 - two_slots;
            assert_eq!(stats.fingerprint_bits, expected, "{rate}, level {level}");
        }
    }
}

#[test]
fn one_level_holds_a_growth_of_two_to_the_depth() {
    let filter = split(4_000, 0.01, 4);
    let mut key = 0u64;
    while filter.level_count() == 1 {
        filter.insert(&key).unwrap();
        key += 1;
    }
    // The first level grew from about 4,000 items to 16 chunks of about 4,000 before the second.
    assert!(key > 16 * 3_600, "{key}");
    assert_eq!(filter.len(), key as usize);
    assert!((0..key).all(|k| filter.contains(&k)));
    let bits = filter.level_fingerprint_bits();
    assert_eq!(bits.len(), 2);
    assert_eq!(bits[1], bits[0] + 1, "{bits:?}");
}

#[test]
fn a_full_filter_refuses_and_keeps_what_it_held() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(1000)
        .max_capacity(40_000)
        .split_depth(6)
        .build()
        .unwrap();
    let mut inserted = 0u64;
    while filter.insert(&inserted).is_ok() {
        inserted += 1;
    }
    assert_eq!(filter.insert(&inserted), Err(InsertError::Full));
    assert!(filter.capacity() <= 40_000, "{}", filter.capacity());
    assert_eq!(
        filter.len(),
        inserted as usize,
        "failed inserts change nothing"
    );
    assert!(inserted > 30_000, "{inserted}");
    assert!((0..inserted).all(|key| filter.contains(&key)));
    let err = filter.try_extend(inserted..inserted + 1000).unwrap_err();
    assert_eq!(filter.len(), inserted as usize + err.inserted());
}

#[test]
fn levels_added_under_a_limit_are_sized_for_at_most_it_together() {
    // A level's chunks may hold more than the capacity it is planned for (a first level raised
    // to a whole chunk, a fixed table's slack for small tables): the later levels get the room
    // the older ones may really grow to.
    for (capacity, depth, rate, max_capacity) in [
        (1, 1, 0.1, 12_907),
        (1, 2, 0.1, 20_689),
        (1, 3, 0.1, 20_689),
        (5_000, 1, 0.1, 46_234),
        (70_001, 1, 0.1, 631_243),
    ] {
        let filter = GrowableCuckooFilter::builder()
            .capacity(capacity)
            .split_depth(depth)
            .false_positive_rate(rate)
            .max_capacity(max_capacity)
            .build()
            .unwrap();
        let mut inserted = 0u64;
        while filter.insert(&inserted).is_ok() {
            inserted += 1;
        }
        let held = filter.capacity();
        let what = format!("{capacity}, depth {depth}, limit {max_capacity}: {held}, {filter:?}");
        assert!(held <= max_capacity, "{what}");
        assert!(filter.level_count() > 1, "{what}");
        assert_eq!(filter.len(), inserted as usize, "{what}");
        assert!((0..inserted).all(|key| filter.contains(&key)), "{what}");
        // Read back, its levels are shaped within the same room.
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(
            (copy.capacity(), copy.len()),
            (held, filter.len()),
            "{what}"
        );
        assert!(copy.is_compatible(&filter), "{what}");
    }
}

#[test]
fn threads_splitting_at_once_never_pass_the_limit() {
    for _ in 0..8 {
        let filter = GrowableCuckooFilter::builder()
            .capacity(1000)
            .max_capacity(60_000)
            .split_depth(6)
            .build()
            .unwrap();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let filter = &filter;
                // Past the first `Full`: other chunks may still have room.
                scope.spawn(move || {
                    (0..17_000u64)
                        .filter(|&i| filter.insert(&(t, i)).is_ok())
                        .count()
                });
            }
        });
        // Fifteen chunks of 3,891 items fit the limit, a sixteenth would not.
        assert!(filter.capacity() <= 60_000, "{}", filter.capacity());
        assert!(filter.len() > 50_000, "{}", filter.len());
    }
}

/// `count` keys, from the start of `0..`, that `pick` accepts.
fn chosen_keys(count: usize, pick: impl Fn(u64) -> bool) -> Vec<u64> {
    (0u64..).filter(|&key| pick(key)).take(count).collect()
}

/// Inserts `keys` into `filter` with no limit set: every one is taken and found, and `len` is
/// exact. Then random keys after them are all taken too.
fn takes_every_key(filter: &GrowableCuckooFilter, keys: &[u64], what: &str) {
    for (done, key) in keys.iter().enumerate() {
        assert_eq!(filter.insert(key), Ok(()), "{what}: refused after {done}");
    }
    assert_eq!(filter.len(), keys.len(), "{what}");
    assert!(keys.iter().all(|key| filter.contains(key)), "{what}");
    let random = (1u64 << 40)..(1u64 << 40) + 100_000;
    assert_eq!(filter.try_extend(random.clone()), Ok(100_000), "{what}");
    assert_eq!(filter.len(), keys.len() + 100_000, "{what}");
    assert!(random.clone().all(|key| filter.contains(&key)), "{what}");
}

#[test]
fn keys_sharing_hash_bits_never_fill_a_filter_without_a_limit() {
    use core::hash::BuildHasher;
    let hash = |key: u64| concurrent_cuckoo_filter::DefaultHashBuilder::new().hash_one(key);
    let probe = GrowableCuckooFilter::with_capacity(1000);
    let first_bucket = probe.debug_candidates(0, &0u64).first;
    type Pick<'a> = Box<dyn Fn(u64) -> bool + 'a>;
    let cases: [(&str, Pick<'_>); 5] = [
        // Every split leaves them all in one chunk, until it can split no further.
        (
            "route bits",
            Box::new(|key| probe.debug_route(0, &key) % 1024 == 0),
        ),
        ("top 10 bits", Box::new(|key| hash(key) >> 54 == 0)),
        ("low 10 bits", Box::new(|key| hash(key) % 1024 == 0)),
        (
            "bits 32 to 41",
            Box::new(|key| (hash(key) >> 32) % 1024 == 0),
        ),
        (
            "first bucket",
            Box::new(|key| probe.debug_candidates(0, &key).first == first_bucket),
        ),
    ];
    for (what, pick) in cases {
        let keys = chosen_keys(10_000, pick);
        for builder in [
            GrowableCuckooFilter::builder(),
            GrowableCuckooFilter::builder().split_depth(1),
        ] {
            let filter = builder.capacity(1000).build().unwrap();
            takes_every_key(&filter, &keys, what);
        }
    }
}

#[test]
fn the_rate_docs_growth_md_names_is_where_copies_fill_two_slot_buckets() {
    let doc = include_str!("../docs/growth.md").replace('\n', " ");
    let (_, after) = doc
        .split_once("a fifth in the 2-slot buckets that rates of ")
        .expect("docs/growth.md names the rates that pick 2-slot buckets");
    let percent: f64 = after.split('%').next().unwrap().parse().unwrap();
    let copies = |rate: f64| {
        let filter = GrowableCuckooFilter::builder()
            .false_positive_rate(rate)
            .build()
            .unwrap();
        (0..20)
            .take_while(|_| filter.insert("same").is_ok())
            .count()
    };
    let named = percent / 100.0;
    assert_eq!(copies(named), 4, "{percent}%: a fifth copy is refused");
    assert_eq!(copies(named - 1e-4), 8, "below {percent}%: a ninth is");
}

#[test]
fn copies_of_one_item_are_refused_without_growing() {
    for builder in [
        GrowableCuckooFilter::builder(),
        GrowableCuckooFilter::builder().split_depth(1),
    ] {
        let filter = builder.capacity(1000).build().unwrap();
        filter.try_extend(0..500u64).unwrap();
        let copies = (0..100)
            .take_while(|_| filter.insert("same").is_ok())
            .count();
        assert_eq!(copies, 8, "two buckets of four slots");
        assert_eq!(filter.level_count(), 1);
        assert_eq!(
            filter.level_stats()[0].buckets,
            1024,
            "one chunk, not split"
        );
        assert_eq!(filter.len(), 508);
    }
}

#[test]
fn the_filters_estimate_of_its_rate_is_within_a_quarter_of_the_measured_rate() {
    // Points where a few million absent keys find enough false positives to measure the rate
    // within a few percent: from 10× the first capacity, past the second level's start.
    for rate in [0.01, 0.001] {
        let filter = split(10_000, rate, 6);
        let mut inserted = 0u64;
        for growth in [10u64, 37, 64, 100, 300] {
            let items = 10_000 * growth;
            assert_eq!(
                filter.try_extend(inserted..items),
                Ok((items - inserted) as usize)
            );
            inserted = items;
            let probes = 4_000_000u64;
            let hits = (0..probes)
                .filter(|key| filter.contains(&(key | 1 << 62)))
                .count();
            let measured = hits as f64 / probes as f64;
            let estimate = filter.expected_false_positive_rate();
            let ratio = estimate / measured;
            assert!(
                (0.75..=1.25).contains(&ratio),
                "ε {rate}, {growth}×: estimate {estimate}, measured {measured} ({hits} hits)"
            );
            assert!(estimate <= rate);
        }
    }
}
