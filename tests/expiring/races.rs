//! Four threads: unique inserts racing on the same keys, a stress run of the window, copies
//! taken while others insert, and early expiries racing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

use concurrent_cuckoo_filter::{Clock, ExpiringCuckooFilter, Overflow, Window};

const THREADS: usize = 4;

/// Four threads insert_unique the same keys in different orders, window after window: each
/// key gets exactly one `true` (but for keys that are false positives of older ones, which get
/// none, at a rate of 1e-6).
#[test]
fn insert_unique_is_exact_under_four_racing_threads() {
    let keys = 2_000u64;
    let rounds = 30u64;
    let filter = ExpiringCuckooFilter::builder(Window::Items(keys * THREADS as u64 * 2))
        .false_positive_rate(1e-6)
        .build()
        .unwrap();
    let firsts: Vec<AtomicU64> = (0..keys * rounds).map(|_| AtomicU64::new(0)).collect();
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        for t in 0..THREADS as u64 {
            let (filter, firsts, barrier) = (&filter, &firsts, &barrier);
            scope.spawn(move || {
                for round in 0..rounds {
                    barrier.wait();
                    for i in 0..keys {
                        // Each thread its own order: forwards, backwards, strided.
                        let j = match t {
                            0 => i,
                            1 => keys - 1 - i,
                            _ => (i * (2 * t + 1)) % keys,
                        };
                        let key = round * keys + j;
                        if filter.insert_unique(&key).unwrap() {
                            firsts[key as usize].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let counts: Vec<u64> = firsts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    assert!(counts.iter().all(|&c| c <= 1), "a key got two trues");
    let none = counts.iter().filter(|&&c| c == 0).count();
    assert!(none <= 2, "{none} keys got no true");
}

/// Four threads insert and unique-insert their own keys, and check their own recent keys while
/// generations advance (no removes: a remove takes the one slot that colliding keys share): over more than 100 windows, no key is missed before
/// the window's inserts have passed it.
#[test]
fn no_false_negatives_inside_the_window_under_four_threads() {
    let window = 8_192u64;
    let per_thread = window * 100 / THREADS as u64 + window;
    let filter = ExpiringCuckooFilter::builder(Window::Items(window))
        .build()
        .unwrap();
    let clock = AtomicU64::new(0); // inserts returned, the test's count of positions
    let missed = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for t in 0..THREADS as u64 {
            let (filter, clock, missed) = (&filter, &clock, &missed);
            scope.spawn(move || {
                let mut recent: std::collections::VecDeque<(u64, u64)> = Default::default();
                for i in 0..per_thread {
                    let key = (t << 56) | i;
                    let start = clock.load(Ordering::SeqCst);
                    match i % 10 {
                        0 => {
                            filter.insert_unique(&key).unwrap();
                        }
                        _ => filter.insert(&key).unwrap(),
                    }
                    clock.fetch_add(1, Ordering::SeqCst);
                    recent.push_back((key, start));
                    // At most THREADS inserts are in flight beyond the test's count.
                    let now = clock.load(Ordering::SeqCst) + THREADS as u64;
                    while let Some(&(_, at)) = recent.front() {
                        if now >= at + window {
                            recent.pop_front();
                        } else {
                            break;
                        }
                    }
                    // A miss counts only if, after the lookup, the window still held the key:
                    // a thread preempted between the clock's read and its lookup may see it go.
                    let check = |key: u64, at: u64| {
                        if !filter.contains(&key)
                            && clock.load(Ordering::SeqCst) + (THREADS as u64) < at + window
                        {
                            missed.fetch_add(1, Ordering::Relaxed);
                        }
                    };
                    if i % 16 == 0 {
                        for &(key, at) in &recent {
                            check(key, at);
                        }
                    } else if let Some(&(key, at)) = recent.front() {
                        check(key, at);
                    }
                }
            });
        }
    });
    let inserts = filter.stats().inserts;
    println!("{} windows, {:?}", inserts / window, filter.stats());
    assert!(inserts >= window * 100);
    assert_eq!(
        missed.load(Ordering::Relaxed),
        0,
        "false negatives inside the window"
    );
    assert_eq!(filter.stats().early_expiries, 0);
}

/// Two writers insert while a third takes bytes and clones: each copy is a state the filter had,
/// decodable, holding every key whose insert returned before the copy began.
#[test]
fn bytes_and_clones_taken_while_others_insert_are_states_the_filter_had() {
    let per_writer = 200_000u64;
    let filter = ExpiringCuckooFilter::builder(Window::Items(4 * per_writer))
        .build()
        .unwrap();
    let done: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    std::thread::scope(|scope| {
        for (t, done) in done.iter().enumerate() {
            let filter = &filter;
            scope.spawn(move || {
                for i in 0..per_writer {
                    filter.insert(&(t as u64 * per_writer + i)).unwrap();
                    done.store(i + 1, Ordering::Release);
                }
            });
        }
        let mut copies = 0;
        while done.iter().any(|d| d.load(Ordering::Acquire) < per_writer) || copies < 4 {
            let before = [0, 1].map(|t| done[t].load(Ordering::Acquire));
            let copy = if copies % 2 == 0 {
                ExpiringCuckooFilter::from_bytes(&filter.to_bytes()).unwrap()
            } else {
                filter.clone()
            };
            for (t, &before) in before.iter().enumerate() {
                let first = t as u64 * per_writer;
                assert!((first..first + before).all(|key| copy.contains(&key)));
            }
            copies += 1;
        }
    });
}

/// Four threads overflow a time window whose manual clock never moves, so that every generation
/// it publishes is an early expiry: `stats().early_expiries` counts each once, however many
/// threads found no room in the same generation.
#[test]
fn racing_early_expiries_are_each_counted_once() {
    let filter = ExpiringCuckooFilter::builder(Window::Time(std::time::Duration::from_secs(10)))
        .capacity(100)
        .overflow(Overflow::ExpireEarly)
        .clock(Clock::Manual)
        .build()
        .unwrap();
    std::thread::scope(|scope| {
        for t in 0..THREADS as u64 {
            let filter = &filter;
            scope.spawn(move || {
                for i in 0..50_000u64 {
                    filter.insert(&(t << 56 | i)).unwrap();
                }
            });
        }
    });
    let stats = filter.stats();
    assert!(stats.generation > 1000, "{stats:?}");
    assert_eq!(stats.early_expiries, stats.generation, "{stats:?}");
}
