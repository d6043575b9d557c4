//! The growable filter's writes racing its splits and growth: a key removed and put back while
//! its chunk splits, threads reaching `max_capacity` together, `clear`, `merge` and `to_bytes`
//! racing inserts. The plain races of inserts, removes and lookups are in `growable.rs`.

use concurrent_cuckoo_filter::{GrowableCuckooFilter, InsertError, MergeError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

fn split(capacity: usize, depth: u32) -> GrowableCuckooFilter {
    GrowableCuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(0.001)
        .split_depth(depth)
        .build()
        .unwrap()
}

/// Keys of thread `t`: its own range.
fn key(t: u64, i: u64) -> u64 {
    t << 40 | i
}

#[test]
fn a_key_put_back_while_its_chunk_splits_is_never_missed() {
    for depth in [6, 1] {
        let filter = split(100, depth);
        // Live for the whole test: the readers' witnesses.
        filter.try_extend((0..2_000).map(|i| key(9, i))).unwrap();
        let done = AtomicBool::new(false);
        let (churned, extra, writing) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(2));
        std::thread::scope(|scope| {
            for t in 0..2 {
                let (filter, writing) = (&filter, &writing);
                scope.spawn(move || {
                    for i in 0..60_000 {
                        filter.insert(&key(t, i)).unwrap();
                    }
                    writing.fetch_sub(1, Ordering::Release);
                });
            }
            let (filter, done, churned, extra) = (&filter, &done, &churned, &extra);
            // One thread removes and puts back its keys, each found as soon as it is back.
            scope.spawn(move || {
                let keys: Vec<u64> = (0..64).map(|i| key(7, i)).collect();
                for key in &keys {
                    filter.insert(key).unwrap();
                }
                let mut round = 0u64;
                while !done.load(Ordering::Relaxed) {
                    for key in &keys {
                        assert!(filter.contains(key), "{key:#x} lost before its remove");
                        // Refused only where two levels show its fingerprint (about ε).
                        if !filter.remove(key) {
                            assert!(filter.count(key) >= 2, "{key:#x}: remove found nothing");
                            extra.fetch_add(1, Ordering::Relaxed);
                        }
                        filter.insert(key).unwrap();
                        assert!(filter.contains(key), "{key:#x} lost after its insert");
                    }
                    round += 1;
                }
                churned.store(round, Ordering::Relaxed);
            });
            scope.spawn(move || {
                let mut rounds = 0;
                while !done.load(Ordering::Relaxed) || rounds == 0 {
                    for i in 0..2_000 {
                        assert!(filter.contains(&key(9, i)), "witness {i} lost");
                    }
                    rounds += 1;
                }
            });
            while writing.load(Ordering::Acquire) > 0 {
                std::thread::yield_now();
            }
            done.store(true, Ordering::Relaxed);
        });
        assert!(churned.load(Ordering::Relaxed) > 0);
        let extra = extra.load(Ordering::Relaxed) as usize;
        assert!(extra < 20, "{extra} removes refused");
        assert_eq!(filter.len(), 2_000 + 64 + 120_000 + extra, "depth {depth}");
        assert!((0..2).all(|t| (0..60_000).all(|i| filter.contains(&key(t, i)))));
        assert!((0..64).all(|i| filter.contains(&key(7, i))));
        assert!(filter.level_count() > 1 || depth == 6);
    }
}

#[test]
fn threads_reaching_the_limit_together_change_nothing_by_their_failed_inserts() {
    for depth in [6, 2] {
        let filter = GrowableCuckooFilter::builder()
            .capacity(1000)
            .max_capacity(40_000)
            .split_depth(depth)
            .build()
            .unwrap();
        let start = Barrier::new(4);
        let taken: Vec<Vec<u64>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let (filter, start) = (&filter, &start);
                    scope.spawn(move || {
                        start.wait();
                        // Past the first `Full`: other chunks may still have room.
                        (0..15_000)
                            .map(|i| key(t, i))
                            .filter(|k| match filter.insert(k) {
                                Ok(()) => true,
                                Err(InsertError::Full) => false,
                                Err(err) => panic!("{err}"),
                            })
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let taken: Vec<u64> = taken.into_iter().flatten().collect();
        assert!(taken.len() < 60_000, "the limit was never reached");
        assert!(filter.capacity() <= 40_000, "{}", filter.capacity());
        assert_eq!(filter.len(), taken.len(), "depth {depth}");
        assert!(taken.iter().all(|k| filter.contains(k)));
        // Quiesced: a failing insert changes not one byte, and leaves no chunk sealed.
        let (mut failed, mut taken) = (0, taken);
        for k in 1u64 << 51.. {
            let was = filter.to_bytes();
            if filter.insert(&k).is_ok() {
                taken.push(k);
            } else {
                assert_eq!(
                    filter.to_bytes(),
                    was,
                    "the failed insert of {k} changed it"
                );
                failed += 1;
                if failed == 20 {
                    break;
                }
            }
        }
        let read = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(read.len(), filter.len());
        // A chunk left sealed would park a remove for good. Every key goes, but where two
        // levels show its fingerprint (about ε of them).
        let removed = taken.iter().filter(|k| filter.remove(k)).count();
        assert!(taken.len() - removed < taken.len() / 100, "{removed}");
        assert_eq!(filter.len(), taken.len() - removed);
    }
}

#[test]
fn clear_racing_inserts_leaves_counts_that_match_the_table() {
    for depth in [6, 1] {
        let filter = split(100, depth);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for t in 0..2 {
                let (filter, stop) = (&filter, &stop);
                scope.spawn(move || {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        filter.insert(&key(t, i)).unwrap();
                        if i % 5 == 0 {
                            filter.remove(&key(t, i / 2));
                        }
                        i += 1;
                    }
                });
            }
            for _ in 0..40 {
                std::thread::sleep(std::time::Duration::from_millis(5));
                filter.clear();
            }
            stop.store(true, Ordering::Relaxed);
        });
        // Quiesced: the count is the table's, as decoding checks chunk by chunk.
        let read = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(read.len(), filter.len());
        filter.clear();
        assert_eq!(filter.len(), 0);
        assert_eq!(filter.try_extend(0..50_000u64), Ok(50_000));
        assert_eq!(filter.len(), 50_000);
        assert!((0..50_000u64).all(|k| filter.contains(&k)));
    }
}

#[test]
fn a_merge_into_a_filter_growing_levels_keeps_every_item() {
    // Split depth 1: the target adds levels while the merge runs. A source's level goes into
    // the target's level of the same index, which the writer may have filled first: then the
    // merge is refused as full, having merged `merged`.
    for _ in 0..4 {
        let target = split(1000, 1);
        let source = split(1000, 1);
        source.try_extend(0..6_000u64).unwrap();
        let merged = std::thread::scope(|scope| {
            let writer = &target;
            scope.spawn(move || writer.try_extend((0..100_000).map(|i| key(1, i))).unwrap());
            match target.merge(&source) {
                Ok(merged) => {
                    assert_eq!(merged, 6_000);
                    merged
                }
                Err(MergeError::Full { merged }) => merged,
                Err(err) => panic!("{err}"),
            }
        });
        assert_eq!(target.len(), 100_000 + merged);
        assert!((0..100_000).all(|i| target.contains(&key(1, i))));
        let found = (0..6_000u64).filter(|k| target.contains(k)).count();
        assert!(found >= merged, "{found} of {merged}");
        if merged == 6_000 {
            assert_eq!(found, 6_000);
        }
    }
}

#[test]
fn a_snapshot_taken_while_the_filter_grows_holds_every_key_acknowledged_before() {
    for depth in [6, 1] {
        let filter = split(100, depth);
        let acknowledged = AtomicU64::new(0);
        let snapshots = std::thread::scope(|scope| {
            let (filter, acknowledged) = (&filter, &acknowledged);
            scope.spawn(move || {
                for i in 0..150_000 {
                    filter.insert(&key(1, i)).unwrap();
                    acknowledged.store(i + 1, Ordering::Release);
                }
            });
            let mut snapshots = Vec::new();
            while acknowledged.load(Ordering::Acquire) < 150_000 {
                let before = acknowledged.load(Ordering::Acquire);
                snapshots.push((before, filter.to_bytes()));
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            snapshots
        });
        assert!(snapshots.len() > 3, "{}", snapshots.len());
        for (before, bytes) in snapshots {
            let read = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
            assert!(read.len() as u64 >= before);
            assert!(
                (0..before).all(|i| read.contains(&key(1, i))),
                "depth {depth}: a snapshot after {before} misses one"
            );
        }
    }
}
