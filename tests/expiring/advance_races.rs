//! A time window on the manual clock: threads insert and unique-insert while another moves the
//! clock on in steps and in jumps past whole windows (which empty the table under all its
//! locks): every key is found for the window after its insert, whatever the clock did meanwhile.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use concurrent_cuckoo_filter::{Clock, ExpiringCuckooFilter, InsertError, Overflow, Window};

const INSERTERS: u64 = 3;
/// The window, in the test's time unit (a millisecond of the manual clock).
const WINDOW: u64 = 8_000;

/// Three threads insert (every fourth key by `insert_unique`) and look up their keys of the
/// last window while a fourth advances the clock by 1 to 300 units at a time and, now and then,
/// by more than a window and a generation at once. A key inserted when the clock was at least
/// `t` (the last time whose `advance_to` had returned before the insert began) must be found by
/// any lookup that ends before the clock is set past `t + WINDOW`.
#[test]
fn inserts_racing_advances_and_jumps_keep_the_last_window() {
    for overflow in [Overflow::Error, Overflow::ExpireEarly] {
        let filter = ExpiringCuckooFilter::builder(Window::Time(Duration::from_millis(WINDOW)))
            .capacity(200_000)
            .generations(8)
            .overflow(overflow)
            .clock(Clock::Manual)
            .build()
            .unwrap();
        // `done`: the last time whose advance returned; `next`: the time being set (at least
        // the filter's).
        let (done, next) = (AtomicU64::new(0), AtomicU64::new(0));
        let stop = AtomicBool::new(false);
        let (misses, checked, fulls) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|scope| {
            for t in 0..INSERTERS {
                let (filter, done, next, stop) = (&filter, &done, &next, &stop);
                let (misses, checked, fulls) = (&misses, &checked, &fulls);
                scope.spawn(move || {
                    let mut recent: std::collections::VecDeque<(u64, u64)> = Default::default();
                    for i in 0.. {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let key = (t + 1) << 56 | i;
                        let at = done.load(Ordering::SeqCst);
                        let inserted = if i % 4 == 0 {
                            filter.insert_unique(&key).map(|_| ())
                        } else {
                            filter.insert(&key)
                        };
                        match inserted {
                            Ok(()) => recent.push_back((key, at)),
                            // Past a time window's capacity with `Overflow::Error`: nothing kept.
                            Err(InsertError::Full) => {
                                fulls.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(err) => panic!("{err}"),
                        };
                        while recent
                            .front()
                            .is_some_and(|&(_, at)| next.load(Ordering::SeqCst) >= at + WINDOW)
                        {
                            recent.pop_front();
                        }
                        for &(key, at) in recent.iter().rev().step_by(31).take(8) {
                            let found = filter.contains(&key);
                            // Counted only if the clock still held the key when the lookup ended.
                            if next.load(Ordering::SeqCst) < at + WINDOW {
                                checked.fetch_add(1, Ordering::Relaxed);
                                if !found {
                                    misses.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                });
            }
            let (filter, done, next, stop) = (&filter, &done, &next, &stop);
            scope.spawn(move || {
                let mut now = 0u64;
                let mut seed = 0x9E37_79B9_7F4A_7C15u64;
                for step in 0..6_000u64 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    now += if step % 997 == 996 {
                        WINDOW * 2 + seed % WINDOW
                    } else {
                        1 + seed % 300
                    };
                    next.store(now, Ordering::SeqCst);
                    filter.advance_to(Duration::from_millis(now)).unwrap();
                    done.store(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(20));
                }
                stop.store(true, Ordering::SeqCst);
            });
        });
        let checked = checked.load(Ordering::Relaxed);
        let fulls = fulls.load(Ordering::Relaxed);
        eprintln!(
            "{overflow:?}: {checked} lookups inside the window, {fulls} Full, {:?}",
            filter.stats()
        );
        assert!(checked > 10_000, "{checked} lookups checked");
        assert_eq!(
            misses.load(Ordering::Relaxed),
            0,
            "{overflow:?}: keys missed inside their window"
        );
    }
}
