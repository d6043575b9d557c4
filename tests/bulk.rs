//! Bulk and parallel operations keep the single-item guarantees.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DebugCandidates, InsertError, TableLayout};
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn contains_batch_answers_exactly_as_contains_does() {
    // 40k items: a table of about 64 KB (no prefetching); 4M: about 6 MB (prefetching).
    for capacity in [40_000usize, 4_000_000] {
        let filter = ConcurrentCuckooFilter::with_capacity(capacity);
        filter.try_extend(0..capacity as u64).unwrap();
        // Members and non-members interleaved, and a length that is no multiple of the block.
        let queries: Vec<u64> = (0..(2 * capacity as u64 + 7)).map(|i| i * 3 / 2).collect();
        let batched = filter.contains_batch(&queries);
        let single: Vec<bool> = queries.iter().map(|q| filter.contains(q)).collect();
        assert_eq!(batched, single);
        assert!(queries
            .iter()
            .zip(&batched)
            .all(|(&q, &found)| found || q >= capacity as u64));
        let mut into = vec![true; queries.len()];
        filter.contains_batch_into(&queries, &mut into);
        assert_eq!(into, single);
    }
    let empty: [u64; 0] = [];
    assert!(ConcurrentCuckooFilter::with_capacity(10)
        .contains_batch(&empty)
        .is_empty());
}

#[test]
fn contains_batch_agrees_with_contains_for_every_layout_and_short_batches() {
    // Plain narrow, semi-sorted narrow, and buckets wider than 64 bits take different paths.
    for (slots, fp_bits, semi_sorted) in
        [(4, 12, false), (4, 13, true), (8, 16, false), (4, 20, true)]
    {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(5_000)
            .bucket_size(slots)
            .fingerprint_bits(fp_bits)
            .semi_sorted(semi_sorted)
            .build()
            .unwrap();
        filter.try_extend(0..4_000u64).unwrap();
        // Every length around the prefetch distance and the hashing chunk.
        for len in (0..40).chain([511, 512, 513, 1025]) {
            let queries: Vec<u64> = (0..len as u64).map(|i| i * 7 % 8_000).collect();
            let single: Vec<bool> = queries.iter().map(|q| filter.contains(q)).collect();
            assert_eq!(
                filter.contains_batch(&queries),
                single,
                "b={slots} f={fp_bits} len={len}"
            );
            assert!(queries
                .iter()
                .zip(&single)
                .all(|(&q, &found)| found || q >= 4_000));
        }
    }
}

#[test]
fn prefetched_batches_of_every_length_and_start_answer_as_single_lookups() {
    // The prefetch distance of a batch lookup (`AHEAD`, raw/lookup.rs).
    const AHEAD: usize = 16;
    let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
    let stored: Vec<u64> = (0..20_000).map(hash).collect();
    // Members and non-members interleaved.
    let queries: Vec<u64> = (0..80).map(|i| hash(i * 500)).collect();
    // Bucket words, narrow packed buckets, and semi-sorted buckets of 76 bits: the three loops
    // the prefetching batch has (the last through the stamped path of every other form).
    for (fingerprint_bits, semi_sorted, layout) in [
        (12, false, TableLayout::BucketWord),
        (12, false, TableLayout::Packed),
        (20, true, TableLayout::Packed),
    ] {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(4_000_000)
            .bucket_size(4)
            .fingerprint_bits(fingerprint_bits)
            .semi_sorted(semi_sorted)
            .layout(layout)
            .build()
            .unwrap();
        // Past the 384 KiB from which batch lookups prefetch (docs/benchmarks.md).
        assert!(filter.memory_usage() >= 4 << 20, "{layout:?}");
        for &h in &stored {
            filter.insert_hash(h).unwrap();
        }
        // Every length up to past two laps of the ring, from every start up to one lap.
        for start in 0..=AHEAD {
            for end in start..queries.len() {
                let hashes = &queries[start..end];
                let mut answers = vec![false; hashes.len()];
                filter.contains_hash_batch_into(hashes, &mut answers);
                let single: Vec<bool> = hashes.iter().map(|&h| filter.contains_hash(h)).collect();
                assert_eq!(
                    answers, single,
                    "{layout:?} f={fingerprint_bits} {start}..{end}"
                );
                assert!(hashes
                    .iter()
                    .zip(&answers)
                    .all(|(h, &found)| found || !stored.contains(h)));
            }
        }
        assert!(queries.iter().any(|&h| filter.contains_hash(h)));
    }
}

#[test]
fn insert_unique_inserts_once_and_counts_copies() {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    assert_eq!(filter.insert_unique("k"), Ok(true));
    assert_eq!(filter.insert_unique("k"), Ok(false));
    assert_eq!(filter.count("k"), 1);
    filter.insert("k").unwrap();
    assert_eq!(filter.count("k"), 2);
    assert_eq!(filter.count("absent"), 0);
    assert_eq!(filter.len(), 2);
}

#[test]
fn insert_unique_finds_its_item_in_full_buckets() {
    // Fill to the first failure, then re-insert every member uniquely: each must be reported
    // present (even though its buckets are full), and nothing may change.
    let filter = ConcurrentCuckooFilter::with_capacity(20_000);
    let mut n = 0u64;
    while filter.insert(&n).is_ok() {
        n += 1;
    }
    let len = filter.len();
    assert!((0..n).all(|i| filter.insert_unique(&i) == Ok(false)));
    assert_eq!(filter.len(), len);
}

#[test]
fn racing_insert_unique_inserts_each_item_exactly_once() {
    let filter = Arc::new(ConcurrentCuckooFilter::with_capacity(1 << 16));
    let keys = 50_000u64;
    let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..keys).map(|_| AtomicUsize::new(0)).collect());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (filter, wins) = (Arc::clone(&filter), Arc::clone(&wins));
            std::thread::spawn(move || {
                // Each thread walks the keys in its own order, so the races vary.
                for i in 0..keys {
                    let key = (i * (2 * t + 1)) % keys;
                    if filter.insert_unique(&key).unwrap() {
                        wins[key as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    // Keys with the same fingerprint and buckets ("twins") are one item to the filter: each
    // group of twins must have been inserted exactly once, by whichever thread won.
    let mut groups: HashMap<(u32, usize, usize), usize> = HashMap::new();
    for k in 0..keys {
        let DebugCandidates {
            fingerprint: fp,
            first: a,
            second: b,
        } = filter.debug_candidates(&k);
        *groups.entry((fp, a.min(b), a.max(b))).or_default() +=
            wins[k as usize].load(Ordering::Relaxed);
    }
    assert!(groups.values().all(|&won| won == 1));
    assert_eq!(filter.len(), groups.len());
    assert!((0..keys).all(|k| filter.contains(&k)));
}

#[test]
fn try_extend_reports_what_went_in() {
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    assert_eq!(filter.try_extend(0..1000u64), Ok(1000));
    let err = filter.try_extend(1000..1_000_000u64).unwrap_err();
    assert_eq!(err.error(), InsertError::Full);
    assert_eq!(filter.len(), 1000 + err.inserted());
    assert_eq!(err.position(), Some(err.inserted()));
    assert!((0..1000 + err.inserted() as u64).all(|i| filter.contains(&i)));
    assert!(err.to_string().contains("full"));
}

#[test]
fn parallel_extend_and_collect_insert_everything() {
    let filter = ConcurrentCuckooFilter::with_capacity(1_000_000);
    (&filter).par_extend((0..500_000u64).into_par_iter());
    assert_eq!(
        filter.try_par_extend((500_000..1_000_000u64).into_par_iter()),
        Ok(500_000)
    );
    assert_eq!(filter.len(), 1_000_000);
    assert!((0..1_000_000u64)
        .into_par_iter()
        .all(|i| filter.contains(&i)));

    let collected: ConcurrentCuckooFilter = (0..300_000u64).into_par_iter().collect();
    assert_eq!(collected.len(), 300_000);
    assert!((0..300_000u64).all(|i| collected.contains(&i)));

    let err = filter
        .try_par_extend((0..10_000_000u64).into_par_iter().map(|i| i + (1 << 40)))
        .unwrap_err();
    assert_eq!(filter.len(), 1_000_000 + err.inserted());
    assert_eq!(err.position(), None, "parallel items have no order");
}

#[test]
fn collect_sizes_the_filter_for_the_items_and_holds_every_one() {
    for n in [0u64, 1, 7, 53, 1000, 4093, 100_000] {
        let sequential: ConcurrentCuckooFilter = (0..n).collect();
        let parallel: ConcurrentCuckooFilter = (0..n).into_par_iter().collect();
        for filter in [&sequential, &parallel] {
            assert_eq!(filter.len(), n as usize);
            assert!((0..n).all(|i| filter.contains(&i)), "n = {n}");
            assert_eq!(
                filter.capacity(),
                ConcurrentCuckooFilter::with_capacity(n as usize).capacity()
            );
        }
    }
}

#[test]
fn collect_takes_any_default_hasher() {
    type StdHasher = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;
    let filter: ConcurrentCuckooFilter<StdHasher> = (0..5000u32).collect();
    assert!((0..5000u32).all(|i| filter.contains(&i)));
    let filter: ConcurrentCuckooFilter<StdHasher> = (0..5000u32).into_par_iter().collect();
    assert!((0..5000u32).all(|i| filter.contains(&i)));
}

#[test]
fn collect_keeps_as_many_copies_of_one_item_as_its_two_buckets_hold() {
    let filter: ConcurrentCuckooFilter = std::iter::repeat(7u8).take(8).chain(0..3).collect();
    assert_eq!(filter.count(&7u8), 8);
    assert_eq!(filter.len(), 11);
}

#[test]
#[should_panic(expected = "an item occurs more than 2 · bucket_size times")]
fn collect_panics_on_more_copies_of_one_item_than_its_buckets_hold() {
    let _: ConcurrentCuckooFilter = std::iter::repeat(7u8).take(9).collect();
}

#[test]
#[should_panic(expected = "an item occurs more than 2 · bucket_size times")]
fn parallel_collect_panics_on_more_copies_of_one_item_than_its_buckets_hold() {
    let _: ConcurrentCuckooFilter = rayon::iter::repeat_n(7u8, 9).collect();
}
