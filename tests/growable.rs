//! The growable filter under threads: no false negatives and exact counts while threads grow
//! it, unique inserts exactly once, and batches, for split depths that add levels early; its
//! errors. Its rate after growing far and its limits are in `growable_split.rs`.

use concurrent_cuckoo_filter::{BuildError, GrowableCuckooFilter};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

/// A filter of split levels, each splitting `depth` times: small ones add levels soon.
fn split(capacity: usize, rate: f64, depth: u32) -> GrowableCuckooFilter {
    GrowableCuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(rate)
        .split_depth(depth)
        .build()
        .unwrap()
}

/// Filters whose levels grow 2× and 4× before the next is added: many levels soon.
fn both_kinds(capacity: usize, rate: f64) -> [GrowableCuckooFilter; 2] {
    [split(capacity, rate, 1), split(capacity, rate, 2)]
}

#[test]
fn inserts_one_at_a_time_grow_as_far_as_extend() {
    let filter = split(100, 0.01, 1);
    for key in 0..50_000u64 {
        filter.insert(&key).unwrap();
    }
    assert_eq!(filter.len(), 50_000);
    assert!(filter.capacity() >= 50_000);
    // One bit more per level: each has half the rate of the one before.
    let bits = filter.fingerprint_bits();
    assert!(bits.len() > 2, "{bits:?}");
    assert!(
        bits.iter()
            .enumerate()
            .all(|(i, &b)| b == bits[0] + i as u32),
        "{bits:?}"
    );
    assert!((0..50_000u64).all(|key| filter.contains(&key)));
}

#[test]
fn nothing_is_lost_while_threads_insert_remove_and_look_up_during_growth() {
    for filter in both_kinds(64, 0.001) {
        no_false_negatives_while_threads_grow(filter);
    }
}

fn no_false_negatives_while_threads_grow(filter: GrowableCuckooFilter) {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 60_000;
    let filter = Arc::new(filter);
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, start) = (Arc::clone(&filter), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let key = |i: u64| t << 40 | i;
                for i in 0..PER_THREAD {
                    filter.insert(&key(i)).unwrap();
                    // Every key this thread holds is still found, whatever the others add.
                    if i % 7 == 0 {
                        for j in (0..=i).step_by(997) {
                            if j % 3 != 0 || j > i / 2 {
                                assert!(filter.contains(&key(j)), "thread {t}: key {j} lost");
                            }
                        }
                    }
                    // Removes a third of the first half as it goes.
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
    assert!(filter.level_count() > 2, "{filter:?}");
}

#[test]
fn len_is_exact_after_threads_grow_the_filter() {
    for filter in both_kinds(100, 0.01) {
        exact_len_after_threads_grow(filter);
    }
}

fn exact_len_after_threads_grow(filter: GrowableCuckooFilter) {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 50_000;
    let filter = Arc::new(filter);
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
fn racing_unique_inserts_store_each_item_once_across_levels() {
    for filter in both_kinds(16, 0.001) {
        unique_inserts_once_while_threads_grow(filter);
    }
}

fn unique_inserts_once_while_threads_grow(filter: GrowableCuckooFilter) {
    const THREADS: usize = 4;
    const KEYS: u64 = 60_000;
    let filter = Arc::new(filter);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, start) = (Arc::clone(&filter), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                // Each thread walks the keys in its own order, so that every key is raced.
                (0..KEYS)
                    .map(|i| (i * (2 * t as u64 + 1)) % KEYS)
                    .filter(|key| filter.insert_unique(key).unwrap())
                    .count()
            })
        })
        .collect();
    let wins: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    // A key whose fingerprint another key already shows is refused as present: a false
    // positive, at a rate under ε = 0.1% (twice that as a bound for chance).
    let missing = KEYS as usize - wins;
    assert!(missing < 120, "{missing} keys refused");
    assert!(filter.level_count() > 1, "{filter:?}");
    assert_eq!(filter.len(), wins);
    assert!((0..KEYS).all(|key| filter.count(&key) >= 1));
}

#[test]
fn an_items_own_copies_do_not_make_the_filter_grow() {
    let filter = split(1000, 0.01, 1);
    let copies = (0..100)
        .take_while(|_| filter.insert("same").is_ok())
        .count();
    assert_eq!(copies, 8, "two buckets of four slots");
    assert_eq!(filter.level_count(), 1);
}

#[test]
fn remove_takes_the_one_copy_and_refuses_when_two_levels_hold_one() {
    let filter = split(100, 0.001, 1);
    filter.insert("twice").unwrap();
    filter.try_extend(0..10_000u32).unwrap();
    assert!(filter.level_count() > 1);
    filter.insert("twice").unwrap();
    assert_eq!(filter.count("twice"), 2);
    assert!(!filter.remove("twice"), "two levels hold it: ambiguous");
    assert!(filter.contains("twice"));
    // Refused only where an older level shows the key's fingerprint too: about ε/2 of them.
    let removed = (0..10_000u32).filter(|key| filter.remove(key)).count();
    assert!(removed > 9_950, "{removed}");
    assert_eq!(filter.len(), 10_002 - removed);
}

#[test]
fn batches_and_parallel_extends_agree_with_single_lookups() {
    for filter in both_kinds(50, 0.001) {
        batches_agree_with_single_lookups(filter);
    }
}

fn batches_agree_with_single_lookups(filter: GrowableCuckooFilter) {
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

#[test]
fn bad_parameters_are_named() {
    let build = |b: concurrent_cuckoo_filter::GrowableBuilder| b.build().unwrap_err();
    let builder = GrowableCuckooFilter::builder;
    assert_eq!(build(builder()), BuildError::ZeroCapacity);
    for rate in [0.0, 1.5, -0.1, f64::NAN] {
        let err = build(builder().capacity(10).false_positive_rate(rate));
        assert!(
            matches!(err, BuildError::FalsePositiveRate { rate: got } if got.to_bits() == rate.to_bits()),
            "{err:?}"
        );
        assert!(err.to_string().ends_with(&format!("got {rate}")), "{err}");
    }
    for builder in [builder(), builder().split_depth(1)] {
        for (capacity, max_capacity) in [(1000, 0), (1000, 999)] {
            let err = build(
                builder
                    .clone()
                    .capacity(capacity)
                    .max_capacity(max_capacity),
            );
            assert_eq!(
                err,
                BuildError::MaxCapacity {
                    capacity,
                    max_capacity
                }
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "max_capacity must be at least the capacity {capacity}, got {max_capacity}"
                )
            );
        }
        // A small limit over a small capacity holds: the levels are sized for at most it. (Tiny
        // fixed levels hold more than they are sized for: a table has at least 14 buckets.)
        let filter = builder.capacity(1).max_capacity(500).build().unwrap();
        let inserted = (0..1000u64)
            .take_while(|key| filter.insert(key).is_ok())
            .count();
        assert!(filter.capacity() <= 500, "{filter:?}");
        assert!(inserted >= 250, "{filter:?}: {inserted}");
        assert_eq!(filter.len(), inserted);
    }
    assert_eq!(
        build(builder().capacity(10).split_depth(11)),
        BuildError::SplitDepth { depth: 11 }
    );
    assert_eq!(
        build(builder().capacity(10).split_depth(0)).to_string(),
        "split_depth must be in 1..=10, got 0"
    );
    let debug = format!("{:?}", GrowableCuckooFilter::with_capacity(10));
    assert!(
        debug.contains("levels") && debug.contains("growth_factor"),
        "{debug}"
    );
}
