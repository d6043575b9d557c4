//! The growable filter with levels that split as they fill: its false positive rate after growing
//! far, one level until it has grown `2^depth` times, no false negatives and exact counts while
//! threads split chunks, unique inserts exactly once, and its limits.

use concurrent_cuckoo_filter::{GrowableCuckooFilter, InsertError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

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
    let bits = filter.fingerprint_bits();
    assert_eq!(bits.len(), 2);
    assert_eq!(bits[1], bits[0] + 1, "{bits:?}");
}

#[test]
fn nothing_is_lost_while_threads_insert_remove_and_look_up_during_splits() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 60_000;
    let filter = Arc::new(split(64, 0.001, 3));
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, start) = (Arc::clone(&filter), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let key = |i: u64| t << 40 | i;
                for i in 0..PER_THREAD {
                    filter.insert(&key(i)).unwrap();
                    if i % 7 == 0 {
                        for j in (0..=i).step_by(997) {
                            if j % 3 != 0 || j > i / 2 {
                                assert!(filter.contains(&key(j)), "thread {t}: key {j} lost");
                            }
                        }
                    }
                    if i % 2 == 0 && (i / 2) % 3 == 0 {
                        let _ = filter.remove(&key(i / 2));
                    }
                }
                (0..PER_THREAD)
                    .filter(|&i| !(i <= PER_THREAD / 2 && i % 3 == 0))
                    .all(|i| filter.contains(&key(i)))
            })
        })
        .collect();
    for handle in handles {
        assert!(handle.join().unwrap(), "a held key was lost");
    }
    // 240,000 inserts into levels of 4,096-slot chunks split three deep: several levels.
    assert!(filter.level_count() >= 2, "{filter:?}");
}

#[test]
fn len_is_exact_after_threads_split_the_filter() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 50_000;
    let filter = Arc::new(split(100, 0.01, 4));
    let removed = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, removed) = (Arc::clone(&filter), Arc::clone(&removed));
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    filter.insert(&(t, i)).unwrap();
                    if i % 10 == 0 && filter.remove(&(t, i / 2)) {
                        removed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(
        filter.len(),
        THREADS * PER_THREAD - removed.load(Ordering::Relaxed)
    );
}

#[test]
fn racing_unique_inserts_store_each_item_once_across_splits_and_levels() {
    const THREADS: usize = 4;
    const KEYS: u64 = 60_000;
    let filter = Arc::new(split(16, 0.001, 2));
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, start) = (Arc::clone(&filter), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                (0..KEYS)
                    .map(|i| (i * (2 * t as u64 + 1)) % KEYS)
                    .filter(|key| filter.insert_unique(key).unwrap())
                    .count()
            })
        })
        .collect();
    let wins: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(filter.level_count() > 1, "{filter:?}");
    let missing = KEYS as usize - wins;
    assert!(missing < 120, "{missing} keys refused");
    assert_eq!(filter.len(), wins);
    assert!((0..KEYS).all(|key| filter.count(&key) >= 1));
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
fn an_items_own_copies_split_nothing() {
    let filter = split(1000, 0.01, 6);
    let copies = (0..100)
        .take_while(|_| filter.insert("same").is_ok())
        .count();
    assert_eq!(copies, 8, "two buckets of four slots");
    assert_eq!(filter.level_count(), 1);
    assert_eq!(filter.level_stats()[0].buckets, 1024, "one chunk");
}

#[test]
fn batches_and_parallel_extends_agree_with_single_lookups() {
    let filter = split(50, 0.001, 2);
    assert_eq!(filter.try_extend(0..5_000u64), Ok(5_000));
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        assert_eq!(
            filter.try_par_extend((5_000..40_000u64).into_par_iter()),
            Ok(35_000)
        );
    }
    let keys: Vec<u64> = (0..80_000).collect();
    let answers = filter.contains_batch(&keys);
    assert!(keys
        .iter()
        .zip(&answers)
        .all(|(k, &a)| a == filter.contains(k)));
    assert!(answers[..filter.len()].iter().all(|&a| a));
}
