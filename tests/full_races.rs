//! Filters driven to `Full` by several threads at once: every item whose insert returned `Ok`
//! (and was not removed) is still there, `len` is the `Ok` inserts less the removes, and at
//! quiescence a failed insert changes nothing (README, guarantees 1 and 2).

use std::sync::atomic::{AtomicU64, Ordering};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, CuckooFilter, GrowableCuckooFilter, InsertError, Kind, TableLayout,
};

const THREADS: u64 = 4;

/// Keys of thread `t`: disjoint from every other thread's.
fn key(t: u64, i: u64) -> u64 {
    (t + 1) << 48 | i
}

/// What one thread did: the keys it holds in the filter, and its failed inserts.
struct Outcome {
    kept: Vec<u64>,
    fulls: u64,
    /// Removes refused as ambiguous (a growable filter's, about ε of them).
    refused: u64,
}

/// Thread `t` inserts its keys one by one (thread 3 in blocks of 64 by `try_extend`), removing
/// one of its own kept keys every 5th key and checking a few kept ones as it goes, until it has
/// seen `Full` `stop` times. `ambiguous`: removes may be refused (a growable filter's).
fn fill<K: Kind>(
    filter: &CuckooFilter<K>,
    t: u64,
    stop: u64,
    ambiguous: bool,
    misses: &AtomicU64,
) -> Outcome {
    let (mut kept, mut fulls, mut refused, mut i) = (Vec::new(), 0, 0, 0u64);
    while fulls < stop {
        if t == 3 {
            let block: Vec<u64> = (i..i + 64).map(|i| key(t, i)).collect();
            i += 64;
            match filter.try_extend(&block) {
                Ok(n) => kept.extend_from_slice(&block[..n]),
                Err(err) => {
                    assert_eq!(err.error(), InsertError::Full);
                    assert_eq!(err.position(), Some(err.inserted()), "distinct keys");
                    kept.extend_from_slice(&block[..err.inserted()]);
                    fulls += 1;
                }
            }
        } else {
            let k = key(t, i);
            i += 1;
            match filter.insert(&k) {
                Ok(()) => kept.push(k),
                Err(InsertError::Full) => {
                    fulls += 1;
                    continue;
                }
                Err(err) => panic!("{err}"),
            }
        }
        if i % 5 == 0 && kept.len() > 10 {
            let at = (i as usize * 7919) % kept.len();
            if filter.remove(&kept[at]) {
                kept.swap_remove(at);
            } else {
                // A growable filter refuses a remove whose fingerprint two levels show.
                assert!(
                    ambiguous,
                    "thread {t}: a kept key {} was not there",
                    kept[at]
                );
                refused += 1;
            }
        }
        for &k in kept.iter().rev().step_by(97).take(4) {
            if !filter.contains(&k) {
                misses.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Outcome {
        kept,
        fulls,
        refused,
    }
}

/// Four threads fill `filter` past `Full`, then the checks of the module docs.
fn fill_to_full<K: Kind + Sync>(filter: &CuckooFilter<K>, ambiguous: bool, what: &str) {
    let misses = AtomicU64::new(0);
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (filter, misses) = (filter, &misses);
                scope.spawn(move || fill(filter, t, 200, ambiguous, misses))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(misses.load(Ordering::Relaxed), 0, "{what}: false negatives");
    let kept: Vec<u64> = outcomes
        .iter()
        .flat_map(|o| o.kept.iter().copied())
        .collect();
    let missing = kept.iter().filter(|k| !filter.contains(k)).count();
    assert_eq!(missing, 0, "{what}: acknowledged keys lost");
    assert_eq!(
        filter.len(),
        kept.len(),
        "{what}: len against the Ok inserts"
    );
    assert!(outcomes.iter().all(|o| o.fulls == 200));
    let refused: u64 = outcomes.iter().map(|o| o.refused).sum();
    assert!(
        refused <= kept.len() as u64 / 100,
        "{what}: {refused} removes refused"
    );
    // At quiescence: a failed insert leaves the bytes as they were.
    let mut failed = 0;
    for i in 0..2_000u64 {
        let before = filter.to_bytes();
        match filter.insert(&key(9, i)) {
            Ok(()) => assert!(filter.remove(&key(9, i)) || ambiguous),
            Err(InsertError::Full) => {
                failed += 1;
                assert!(
                    filter.to_bytes() == before,
                    "{what}: a failed insert changed it"
                );
            }
            Err(err) => panic!("{err}"),
        }
    }
    assert!(failed > 0, "{what}: the filter was not full");
    eprintln!(
        "{what}: {} kept, load {:.3}, {failed} of 2000 more refused",
        kept.len(),
        filter.len() as f64 / filter.capacity() as f64
    );
}

#[test]
fn threads_driving_a_fixed_filter_to_full_lose_nothing_and_count_exactly() {
    fill_to_full(
        &ConcurrentCuckooFilter::with_capacity(30_000),
        false,
        "bucket words",
    );
    let packed = ConcurrentCuckooFilter::builder()
        .capacity(30_000)
        .layout(TableLayout::Packed)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .build()
        .unwrap();
    fill_to_full(&packed, false, "packed semi-sorted");
    for bucket_size in [2, 8] {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(20_000)
            .bucket_size(bucket_size)
            .fingerprint_bits(16)
            .build()
            .unwrap();
        fill_to_full(&filter, false, &format!("{bucket_size}-slot buckets"));
    }
}

#[test]
fn threads_driving_a_growable_filter_to_its_limit_lose_nothing_and_count_exactly() {
    for depth in [1, 3] {
        let filter = GrowableCuckooFilter::builder()
            .capacity(2_000)
            .split_depth(depth)
            .max_capacity(40_000)
            .build()
            .unwrap();
        fill_to_full(&filter, true, &format!("growable, split depth {depth}"));
    }
}
