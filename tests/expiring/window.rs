//! Count windows, one thread: no false negatives inside the window, retention, FPR, never Full.

use concurrent_cuckoo_filter::{ExpiringCuckooFilter, Window};

/// Every key inserted in the last `window` inserts is found, after each insert, for several
/// windows; and no key is found past `(G + 1)·ceil(W/G)` inserts but at the rate.
#[test]
fn every_key_of_the_window_is_found_and_none_is_kept_past_the_bound() {
    for (window, generations) in [(64u64, 8u32), (1000, 8), (999, 7), (500, 1), (700, 14)] {
        let filter = ExpiringCuckooFilter::builder(Window::Items(window))
            .generations(generations)
            .build()
            .unwrap();
        let per = window.div_ceil(u64::from(generations));
        let bound = per * (u64::from(generations) + 1);
        let total = window * 6;
        let mut kept_past = 0u64;
        let mut checked_past = 0u64;
        for i in 0..total {
            filter.insert(&i).unwrap();
            // Exhaustive over the window every few inserts (all of it for small windows).
            if window <= 64 || i % 97 == 0 {
                for back in 0..window.min(i + 1) {
                    assert!(
                        filter.contains(&(i - back)),
                        "W={window} G={generations}: key {} missed {back} inserts later",
                        i - back
                    );
                }
            }
            if i >= bound {
                checked_past += 1;
                kept_past += u64::from(filter.contains(&(i - bound)));
            }
        }
        // Past the bound a key is found only at the false positive rate (0.1%, with room).
        assert!(
            kept_past as f64 <= 0.01 * checked_past as f64 + 2.0,
            "W={window} G={generations}: {kept_past} of {checked_past} keys kept past {bound}"
        );
        assert_eq!(filter.stats().early_expiries, 0);
    }
}

/// The false positive rate of keys never inserted, measured at every point of a stream of
/// 100 windows, stays under the rate asked for.
#[test]
fn false_positive_rate_stays_under_the_rate_over_a_hundred_windows() {
    let window = 20_000u64;
    for rate in [0.01, 0.001] {
        let filter = ExpiringCuckooFilter::builder(Window::Items(window))
            .false_positive_rate(rate)
            .build()
            .unwrap();
        let mut probes = 0u64;
        let mut false_positives = 0u64;
        let mut worst = 0.0f64;
        for round in 0..100u64 {
            for i in 0..window {
                filter.insert(&(round * window + i)).unwrap();
            }
            let mut round_fp = 0;
            let samples = 20_000u64;
            for j in 0..samples {
                round_fp += u64::from(filter.contains(&(u64::MAX - round * samples - j)));
            }
            worst = worst.max(round_fp as f64 / samples as f64);
            probes += samples;
            false_positives += round_fp;
        }
        let measured = false_positives as f64 / probes as f64;
        println!(
            "rate {rate}: measured {measured:.5} over {probes} probes, worst window {worst:.5}"
        );
        assert!(measured <= rate, "rate {rate}: measured {measured}");
        assert!(worst <= rate * 1.5, "rate {rate}: worst window {worst}");
    }
}

/// A count window never answers Full, and `len` stays within the live window and the sweep's
/// lag, over a long stream of distinct and repeated keys, removes included.
#[test]
fn a_count_window_never_answers_full_and_len_stays_bounded() {
    let window = 10_000u64;
    let filter = ExpiringCuckooFilter::builder(Window::Items(window))
        .build()
        .unwrap();
    for i in 0..window * 50 {
        filter.insert(&(i % (window * 3))).unwrap();
        if i % 7 == 0 {
            filter.remove(&(i / 2));
        }
        let len = filter.len() as u64;
        assert!(len <= window * 2, "len {len} at {i}");
    }
    let stats = filter.stats();
    assert_eq!(stats.early_expiries, 0);
    println!("{stats:?}");
}

/// Inserting a live key refreshes it: it stays one copy and is found a window after its last
/// insert; `insert_unique` says whether it was live.
#[test]
fn insert_refreshes_a_live_key_and_insert_unique_tells() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap();
    assert!(filter.insert_unique(&"k").unwrap());
    assert!(!filter.insert_unique(&"k").unwrap());
    assert_eq!(filter.len(), 1);
    for i in 0..1000u32 {
        if i % 50 == 0 {
            filter.insert(&"k").unwrap(); // refreshed every half window
        }
        filter.insert(&i).unwrap();
        assert!(filter.contains(&"k"), "refreshed key lost at {i}");
    }
    assert!(filter.remove(&"k"));
    assert!(!filter.contains(&"k"));
    assert!(filter.insert_unique(&"k").unwrap());
    // Every call counted, refreshes too: a count window's clock.
    assert_eq!(filter.stats().inserts, 2 + 20 + 1000 + 1);
}

/// Space at ε = 0.1% and G = 8: the table's bits per item of a full window, printed, and within
/// 1.7 times the plain filter's smallest (12.6 bits per item).
#[test]
fn space_per_window_item_at_the_default_rate() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(1_000_000))
        .build()
        .unwrap();
    let stats = filter.stats();
    println!(
        "W = 1,000,000, G = 8, eps = 0.1%: {} buckets, {}-bit fingerprints + {}-bit tags, {:.2} bits per window item",
        stats.bucket_count, stats.fingerprint_bits, stats.tag_bits, stats.bits_per_window_item
    );
    assert!(stats.bits_per_window_item <= 1.7 * 12.6);
}

/// Every fingerprint width on both sides of the one-window lookup (four fingerprints in at most
/// 64 bits, `f ≤ 16`, or read slot by slot): each key of the window is found after each insert,
/// removes take exactly the key's copy, and a key past the bound is gone but at the rate.
#[test]
fn every_fingerprint_width_finds_its_window() {
    // The rate that gives `f`-bit fingerprints: the builder's `2·4·0.95 / (2^f − 1)`.
    let rate = |f: u32| 7.6 / ((1u64 << f) - 1) as f64;
    for f in [4, 5, 12, 13, 15, 16, 17, 20, 28] {
        let window = 300u64;
        let filter = ExpiringCuckooFilter::builder(Window::Items(window))
            .false_positive_rate(rate(f))
            .build()
            .unwrap();
        assert_eq!(filter.stats().fingerprint_bits, f);
        let bound = window.div_ceil(8) * 9;
        let mut kept_past = 0u64;
        for i in 0..window * 5 {
            filter.insert(&i).unwrap();
            for back in 0..window.min(i + 1) {
                assert!(
                    filter.contains(&(i - back)),
                    "f {f}: key {} missed",
                    i - back
                );
            }
            if i >= bound {
                kept_past += u64::from(filter.contains(&(i - bound)));
            }
        }
        let checked_past = window * 5 - bound;
        assert!(
            kept_past as f64 <= 3.0 * rate(f).min(1.0) * checked_past as f64 + 3.0,
            "f {f}: {kept_past} of {checked_past} kept past the bound"
        );
        // A key of the window removed is gone, its neighbours stay (wide fingerprints only: a
        // narrow one may share its slot with another key).
        if f >= 20 {
            let last = window * 5 - 1;
            assert!(filter.remove(&last));
            assert!(!filter.contains(&last));
            assert!(filter.contains(&(last - 1)));
        }
    }
}

/// A batch lookup answers as one lookup a key, for keys in the window, past it and never
/// inserted, in a table large enough that the batch asks for its buckets ahead.
#[test]
fn a_batch_answers_as_single_lookups() {
    let window = 200_000u64;
    let filter = ExpiringCuckooFilter::builder(Window::Items(window))
        .build()
        .unwrap();
    for key in 0..3 * window {
        filter.insert(&key).unwrap();
    }
    let keys: Vec<u64> = (0..4 * window).step_by(3).collect();
    let mut answers = vec![false; keys.len()];
    filter.contains_batch_into(&keys, &mut answers);
    for (key, answer) in keys.iter().zip(&answers) {
        assert_eq!(*answer, filter.contains(key), "key {key}");
    }
    let in_window = keys
        .iter()
        .zip(&answers)
        .filter(|(&k, _)| (2 * window..3 * window).contains(&k));
    assert!(in_window.clone().count() > 60_000);
    assert!(
        in_window.into_iter().all(|(_, &found)| found),
        "a key of the window missed"
    );
}
