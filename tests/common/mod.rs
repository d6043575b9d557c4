//! Workloads shared by the integration tests.

#![allow(dead_code)] // each test crate uses its own subset

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::sync::Arc;

/// Inserts 0, 1, 2, ... until the first failure; returns how many went in.
pub fn fill(filter: &ConcurrentCuckooFilter) -> u64 {
    let mut n = 0u64;
    while filter.insert(&n).is_ok() {
        n += 1;
    }
    n
}

/// `threads` threads each insert `per_thread` keys of their own, then for `rounds` rounds remove
/// a third of them, check that the other two thirds are all still found, and put the third back,
/// while the other threads' inserts move fingerprints around. Returns every key, all inserted.
/// Panics (failing the test) on a false negative or a failed remove of a present key.
pub fn churn(
    filter: &Arc<ConcurrentCuckooFilter>,
    threads: u64,
    per_thread: u64,
    rounds: u64,
) -> Vec<u64> {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let filter = Arc::clone(filter);
            std::thread::spawn(move || {
                let keys: Vec<u64> = (0..per_thread).map(|i| t << 48 | i).collect();
                for key in &keys {
                    filter.insert(key).unwrap();
                }
                for round in 0..rounds {
                    let churned = |i: usize| i as u64 % 3 == round % 3;
                    for (i, key) in keys.iter().enumerate().filter(|(i, _)| churned(*i)) {
                        assert!(
                            filter.remove(key),
                            "thread {t}: remove of held key {i} failed"
                        );
                    }
                    for (i, key) in keys.iter().enumerate().filter(|(i, _)| !churned(*i)) {
                        assert!(filter.contains(key), "thread {t}: held key {i} not found");
                    }
                    for (_, key) in keys.iter().enumerate().filter(|(i, _)| churned(*i)) {
                        filter.insert(key).unwrap();
                    }
                }
                keys
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect()
}
