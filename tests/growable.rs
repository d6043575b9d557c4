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
    let bits = filter.level_fingerprint_bits();
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
    let build = |b: concurrent_cuckoo_filter::GrowableCuckooFilterBuilder| b.build().unwrap_err();
    let builder = GrowableCuckooFilter::builder;
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

#[test]
fn a_limit_equal_to_the_capacity_builds_a_first_level_within_it() {
    // Cut to the limit, a first level of several chunks rounded its chunks up past it and was
    // refused as "capacity n is too large: this configuration holds at most n items".
    for capacity in [100_000, 500_000, 1_000_000, 3_000_000] {
        let filter = GrowableCuckooFilter::builder()
            .capacity(capacity)
            .max_capacity(capacity)
            .build()
            .unwrap_or_else(|err| panic!("{capacity}: {err}"));
        assert!(filter.capacity() <= capacity, "{filter:?}");
        assert!(filter.capacity() >= capacity - capacity / 100, "{filter:?}");
        filter.try_extend(0..filter.capacity() as u64 / 2).unwrap();
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert!(copy.is_compatible(&filter), "{copy:?}");
        assert_eq!(
            (copy.len(), copy.capacity()),
            (filter.len(), filter.capacity())
        );
        assert!((0..filter.len() as u64).all(|key| copy.contains(&key)));
    }
}

#[test]
fn the_hash_family_collections_and_sizes_agree_with_the_keyed_calls() {
    use core::hash::BuildHasher;
    let filter: GrowableCuckooFilter = (0..20_000u64).collect();
    assert_eq!(filter.len(), 20_000);
    let hashes: Vec<u64> = (20_000..60_000u64)
        .map(|key| filter.hasher().hash_one(key))
        .collect();
    assert_eq!(filter.try_extend_hashes(&hashes), Ok(40_000));
    let mut answers = vec![false; hashes.len()];
    filter.contains_hash_batch_into(&hashes, &mut answers);
    assert!(answers.iter().all(|&hit| hit));
    assert!((0..60_000u64).all(|key| filter.contains(&key)));
    let mut new = vec![false; 4];
    let fresh = [1u64 << 50, 1 << 51, 1 << 50, 7];
    let fresh_hashes: Vec<u64> = fresh.iter().map(|k| filter.hasher().hash_one(k)).collect();
    filter
        .insert_unique_hash_batch_into(&fresh_hashes, &mut new)
        .unwrap();
    assert_eq!(new, [true, true, false, false]);
    assert_eq!(filter.count_hash(fresh_hashes[0]), 1);
    assert!(filter.remove_hash(fresh_hashes[0]));
    assert!(!filter.contains_hash(fresh_hashes[0]));
    assert_eq!(filter.len(), 60_001);
    let load = filter.load_factor();
    let slots = (filter.bucket_count() * filter.bucket_size()) as f64;
    assert!((load - filter.len() as f64 / slots).abs() < 1e-12, "{load}");
    assert!(load > 0.2 && load < 1.0, "{load}");
    assert!(!filter.is_semi_sorted());
    assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    let mut extended = GrowableCuckooFilter::with_capacity(10);
    extended.extend(0..5_000u32);
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        extended.par_extend((5_000..50_000u32).into_par_iter());
        let collected: GrowableCuckooFilter = (0..50_000u32).into_par_iter().collect();
        assert_eq!(collected.len(), 50_000);
    }
    assert!((0..5_000u32).all(|key| extended.contains(&key)));
}

#[test]
fn merging_grown_filters_keeps_every_item_of_both() {
    use concurrent_cuckoo_filter::{DefaultHashBuilder, MergeError};
    // Sizes whose levels, added up, fit the levels' limits: a level grows 2^depth times its
    // first size (here 3,891 items) and no further.
    for (depth, ours, theirs) in [
        (6u32, 3_000u64, 80_000u64),
        (2, 3_000, 12_000),
        (1, 2_000, 5_000),
    ] {
        let target = split(1000, 0.001, depth);
        let source = split(1000, 0.001, depth);
        // Grown apart, so the two levels' chunks have split differently.
        target.try_extend(0..ours).unwrap();
        source.try_extend(ours..ours + theirs).unwrap();
        assert_eq!(target.merge(&source), Ok(theirs as usize));
        assert_eq!(target.len(), (ours + theirs) as usize);
        assert_eq!(target.level_count(), source.level_count().max(1));
        assert!(
            (0..ours + theirs).all(|key| target.contains(&key)),
            "depth {depth}"
        );
    }
    // The union of overlapping sets: the shared keys once.
    let target = split(1000, 0.001, 6);
    target.try_extend(0..80_000u64).unwrap();
    let other = split(1000, 0.001, 6);
    other.try_extend(70_000..90_000u64).unwrap();
    let merged = target.merge_unique(&other).unwrap();
    assert!((9_900..=10_000).contains(&merged), "{merged}");
    assert_eq!(target.len(), 80_000 + merged);
    assert!((0..90_000u64).all(|key| target.contains(&key)));
    // Into itself: every copy twice.
    let before = target.len();
    assert_eq!(target.merge(&target), Ok(before));
    assert_eq!(target.len(), 2 * before);
    // Two filters that each filled their first level do not fit one: refused as full, and the
    // target keeps all it held and what went in.
    let (a, b) = (split(1000, 0.001, 1), split(1000, 0.001, 1));
    a.try_extend(0..7_000u64).unwrap();
    b.try_extend(7_000..14_000u64).unwrap();
    let Err(MergeError::Full { merged }) = a.merge(&b) else {
        panic!("two full levels merged into one");
    };
    assert_eq!(a.len(), 7_000 + merged);
    assert!((0..7_000u64).all(|key| a.contains(&key)));
    // Other plans and other seeds are refused before anything is merged.
    // The first field that differs, with the target's value, then the source's.
    let first_level = |capacity| split(capacity, 0.001, 1).capacity() as u64;
    assert_eq!(
        a.merge(&split(10_000, 0.001, 1)),
        Err(MergeError::Geometry {
            field: "initial_capacity",
            target: first_level(1000),
            source: first_level(10_000)
        })
    );
    assert_eq!(
        a.merge(&split(1000, 0.001, 3)),
        Err(MergeError::Geometry {
            field: "split_depth",
            target: 1,
            source: 3
        })
    );
    assert!(!a.is_compatible(&split(1000, 0.001, 3)));
    let seeded = |seed| {
        GrowableCuckooFilter::builder()
            .capacity(1000)
            .hasher(DefaultHashBuilder::with_seed(seed))
            .build()
            .unwrap()
    };
    assert_eq!(seeded(8).merge(&seeded(7)), Err(MergeError::Hasher));
    assert!(seeded(7).is_compatible(&seeded(7)));
}

#[test]
fn a_merge_racing_inserts_into_the_target_loses_nothing() {
    // Both fit the first level together: it grows to 64 chunks of 3,891 items.
    let target = Arc::new(split(1000, 0.001, 6));
    let source = split(1000, 0.001, 6);
    source.try_extend(0..100_000u64).unwrap();
    std::thread::scope(|scope| {
        let writer = Arc::clone(&target);
        scope.spawn(move || writer.try_extend(1 << 40..(1 << 40) + 100_000u64).unwrap());
        assert_eq!(target.merge(&source), Ok(100_000));
    });
    assert_eq!(target.len(), 200_000);
    assert!((0..100_000u64).all(|key| target.contains(&key)));
    assert!((1 << 40..(1 << 40) + 100_000u64).all(|key| target.contains(&key)));
}

#[test]
fn a_limit_that_cuts_a_level_makes_the_filters_incompatible_rather_than_misplaced() {
    use concurrent_cuckoo_filter::MergeError;
    let limited = |max| {
        GrowableCuckooFilter::builder()
            .capacity(1000)
            .split_depth(2)
            .max_capacity(max)
            .build()
            .unwrap()
    };
    // A first level of 3,891 items grows to 15,564, and the second starts that large.
    let grown = split(1000, 0.001, 2);
    grown.try_extend(0..16_000u64).unwrap();
    assert_eq!(grown.level_count(), 2);
    // 20,000 leaves the second level room for 4,436 items: fewer buckets than the unlimited
    // one's, so a fingerprint's bucket there names another place, or none.
    for (target, source) in [(&limited(20_000), &grown), (&grown, &limited(20_000))] {
        source.try_extend(0..1_000u64).unwrap();
        if source.level_count() < 2 {
            source.try_extend(1_000..16_000u64).unwrap();
        }
        let before = target.len();
        let err = target.merge(source).unwrap_err();
        assert!(
            matches!(
                err,
                MergeError::Geometry {
                    field: "buckets",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(!target.is_compatible(source));
        assert_eq!(target.len(), before);
    }
    // A limit far enough away shapes every level as no limit does: merged whole.
    let target = limited(1_000_000);
    assert!(target.is_compatible(&grown));
    assert_eq!(target.merge(&grown), Ok(grown.len()));
    assert!((0..16_000u64).all(|key| target.contains(&key)));
}
