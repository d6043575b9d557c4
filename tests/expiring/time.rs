//! Time windows on the manual clock, both overflow choices.

use core::time::Duration;

use concurrent_cuckoo_filter::{
    AdvanceError, Clock, ExpiringCuckooFilter, InsertError, Overflow, Window,
};

fn manual(seconds: u64, capacity: u64, overflow: Overflow) -> ExpiringCuckooFilter {
    ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(seconds)))
        .capacity(capacity)
        .overflow(overflow)
        .clock(Clock::Manual)
        .build()
        .unwrap()
}

/// Every key of `inserted` (key, time in seconds) inserted less than `window` seconds before
/// `second` is found.
fn assert_found_within(
    filter: &ExpiringCuckooFilter,
    inserted: &[(u64, u64)],
    second: u64,
    window: u64,
) {
    for &(k, at) in inserted
        .iter()
        .rev()
        .take_while(|&&(_, at)| second < at + window)
    {
        assert!(
            filter.contains(&k),
            "key {k} inserted at {at} missed at {second}"
        );
    }
}

/// A key inserted at `t` is found until `t + D` and forgotten by `t + D·(1 + 1/G)`, over many
/// windows of a manual clock, with idle jumps past whole windows.
#[test]
fn a_time_window_keeps_keys_for_its_duration_and_no_longer() {
    let filter = manual(80, 1000, Overflow::Error);
    let mut inserted: Vec<(u64, u64)> = Vec::new(); // (key, time in seconds)
    let mut key = 0u64;
    for second in 0..2000u64 {
        if second % 500 == 400 {
            continue; // idle spells longer than the window come below
        }
        filter.advance_to(Duration::from_secs(second)).unwrap();
        for _ in 0..10 {
            filter.insert(&key).unwrap();
            inserted.push((key, second));
            key += 1;
        }
        assert_found_within(&filter, &inserted, second, 80);
        let gone = inserted
            .iter()
            .filter(|&&(_, at)| second >= at + 90)
            .take(200)
            .filter(|&&(k, _)| filter.contains(&k))
            .count();
        assert!(gone <= 2, "{gone} expired keys found at {second}");
    }
    // An idle jump past the window forgets everything.
    filter.advance_to(Duration::from_secs(100_000)).unwrap();
    assert_eq!(filter.len(), 0);
    assert!(!filter.contains(&(key - 1)));
    filter.insert(&1u8).unwrap();
    assert!(filter.contains(&1u8));
    // Time does not go back.
    filter.advance_to(Duration::from_secs(5)).unwrap();
    assert!(filter.contains(&1u8));
}

#[test]
fn overflow_error_is_full_and_changes_nothing_expire_early_keeps_going() {
    let filter = manual(60, 100, Overflow::Error);
    let mut full_at = None;
    for i in 0..10_000u64 {
        match filter.insert(&i) {
            Ok(()) => {}
            Err(InsertError::Full) => {
                full_at = Some(i);
                break;
            }
            Err(err) => panic!("{err}"),
        }
    }
    let full_at = full_at.expect("a time window past its capacity fills");
    assert!(full_at >= 100, "full after {full_at} of capacity 100");
    let bytes = filter.to_bytes();
    assert_eq!(filter.insert(&full_at), Err(InsertError::Full));
    assert_eq!(
        filter.to_bytes(),
        bytes,
        "a failed insert changed the filter"
    );
    for i in 0..full_at {
        assert!(filter.contains(&i));
    }

    let filter = manual(60, 100, Overflow::ExpireEarly);
    for i in 0..10_000u64 {
        filter.insert(&i).unwrap();
        assert!(filter.contains(&i));
    }
    assert!(filter.stats().early_expiries > 0);
    assert!(filter.len() <= 400);
}

#[test]
fn advance_to_needs_a_manual_clock() {
    let count = ExpiringCuckooFilter::builder(Window::Items(10))
        .build()
        .unwrap();
    assert_eq!(
        count.advance_to(Duration::from_secs(1)),
        Err(AdvanceError::NotManual)
    );
    let monotonic = ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(10)))
        .capacity(10)
        .build()
        .unwrap();
    assert_eq!(
        monotonic.advance_to(Duration::from_secs(1)),
        Err(AdvanceError::NotManual)
    );
    monotonic.insert(&1).unwrap();
    assert!(monotonic.contains(&1));
}

/// The monotonic clock: a short window forgets a key once it has passed (a wait, not a timing
/// assertion: the key must be gone after at least the bound, however slow the machine), and with
/// no write since to publish the generation it is absent to every call: `remove` finds nothing to
/// remove, as `contains` and `count` find nothing.
#[test]
fn the_monotonic_clock_forgets_after_the_bound() {
    let filter = ExpiringCuckooFilter::builder(Window::Time(Duration::from_millis(40)))
        .capacity(100)
        .generations(4)
        .build()
        .unwrap();
    filter.insert(&"a").unwrap();
    std::thread::sleep(Duration::from_millis(60));
    assert!(!filter.contains(&"a"));
    assert_eq!(filter.count(&"a"), 0);
    assert!(!filter.remove(&"a"), "removed an item that was not found");
    // A live item is still removed.
    filter.insert(&"b").unwrap();
    assert!(filter.remove(&"b"));
    assert!(!filter.contains(&"b"));
}

/// A copy of a monotonic clock's filter keeps the generations its early expiries moved it on,
/// also when it is made after an idle spell that published no generation: a key is forgotten
/// within `D·(1 + 1/G)` of its insert by the copy too (waits, not timing assertions: the key
/// must be gone after at least the bound, however slow the machine).
#[test]
fn a_copy_after_an_idle_spell_keeps_the_early_expiries() {
    // D = 200 ms, G = 8: a generation is 25 ms, and a key is gone 225 ms after its insert.
    let filter = ExpiringCuckooFilter::builder(Window::Time(Duration::from_millis(200)))
        .capacity(100)
        .overflow(Overflow::ExpireEarly)
        .build()
        .unwrap();
    for i in 0..5_000u64 {
        filter.insert(&i).unwrap();
    }
    let early = filter.stats().early_expiries;
    assert!(early > 20, "{early} early expiries");
    filter.insert(&"x").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let copies = [
        ExpiringCuckooFilter::from_bytes(&filter.to_bytes()).unwrap(),
        filter.clone(),
    ];
    assert!(!filter.contains(&"x"));
    for copy in &copies {
        assert!(!copy.contains(&"x"), "a copy kept a key past D·(1 + 1/G)");
    }
}

/// A time window holds `capacity·(1 + 1/G)` items inserted within any `D·(1 + 1/G)`: bursts that
/// fill that bound, each in one second, never answer `Full`, and every key is found for `D`.
#[test]
fn bursts_within_the_capacity_never_fill_a_time_window() {
    // D = 80 s, G = 8: any 90 s hold at most 900 inserts.
    let filter = manual(80, 800, Overflow::Error);
    let mut inserted: Vec<(u64, u64)> = Vec::new(); // (key, time in seconds)
    let mut key = 0u64;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for second in 0..1500u64 {
        filter.advance_to(Duration::from_secs(second)).unwrap();
        let recent = inserted
            .iter()
            .rev()
            .take_while(|&&(_, at)| at + 90 > second)
            .count() as u64;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Mostly idle seconds, and bursts of whatever the last 90 s leave.
        let burst = if rng % 8 == 0 { 900 - recent } else { 0 };
        for _ in 0..burst {
            filter
                .insert(&key)
                .unwrap_or_else(|e| panic!("{e} at {second} with {recent} in the last 90 s"));
            inserted.push((key, second));
            key += 1;
        }
        assert_found_within(&filter, &inserted, second, 80);
    }
    assert!(key > 10_000, "only {key} inserts");
}

/// Past its capacity an `ExpireEarly` window forgets early, but what it keeps it still forgets
/// within `D·(1 + 1/G)`: early expiries do not push later generations' ends out.
#[test]
fn early_expiries_keep_the_retention_bound() {
    let filter = manual(80, 100, Overflow::ExpireEarly);
    filter.advance_to(Duration::from_secs(1)).unwrap();
    for i in 0..10_000u64 {
        filter.insert(&i).unwrap();
    }
    assert!(filter.stats().early_expiries > 0);
    filter.advance_to(Duration::from_secs(2)).unwrap();
    let later: Vec<u64> = (1_000_000..1_000_050).collect();
    for k in &later {
        filter.insert(k).unwrap();
    }
    // A decoded copy is as far ahead as the filter.
    let copy = ExpiringCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    for filter in [&filter, &copy] {
        filter.advance_to(Duration::from_secs(81)).unwrap();
        assert!(
            later.iter().all(|k| filter.contains(k)),
            "a key lost inside the window"
        );
        // Inserted at 2 s: gone by 2 + 90 s, but for false positives.
        filter.advance_to(Duration::from_secs(92)).unwrap();
        let kept = later.iter().filter(|k| filter.contains(*k)).count();
        assert!(kept <= 1, "{kept} of 50 keys kept past D·(1 + 1/G)");
    }
}

/// Three times its capacity, steadily: each early expiry forgets the oldest generation, and the
/// keys of the last generation's time are always found (no early expiry empties the table).
#[test]
fn a_steady_overflow_forgets_the_oldest_generations_only() {
    // D = 80 s, G = 8, capacity 800: 10 keys a second; 30 arrive.
    let filter = manual(80, 800, Overflow::ExpireEarly);
    let mut key = 0u64;
    for second in 0..600u64 {
        filter.advance_to(Duration::from_secs(second)).unwrap();
        for _ in 0..30 {
            filter.insert(&key).unwrap();
            key += 1;
        }
        let recent = (key.saturating_sub(300)..key)
            .filter(|k| !filter.contains(k))
            .count();
        assert_eq!(recent, 0, "keys of the last 10 s lost at {second} s");
    }
    assert!(filter.stats().early_expiries > 10);
}

/// A manual clock run to its end on a window of one nanosecond per generation: the generation
/// arithmetic saturates (a clock early expiries moved ahead included), and once no generation
/// is left to move on to, an overflowing `ExpireEarly` insert answers `Full` instead of looping.
#[test]
fn a_clock_at_its_end_saturates_and_answers_full() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let nanosecond_generations = || {
            ExpiringCuckooFilter::builder(Window::Time(Duration::from_nanos(8)))
                .capacity(100)
                .overflow(Overflow::ExpireEarly)
                .clock(Clock::Manual)
                .build()
                .unwrap()
        };
        let ahead = nanosecond_generations();
        for key in 0..1000u64 {
            ahead.insert(&key).unwrap();
        }
        assert!(ahead.stats().early_expiries > 0);
        ahead.advance_to(Duration::MAX).unwrap();
        assert_eq!(ahead.stats().generation, u64::MAX);
        assert!(ahead.is_empty(), "the end of time expired every key");

        let filter = nanosecond_generations();
        filter
            .advance_to(Duration::from_nanos(u64::MAX - 5))
            .unwrap();
        filter
            .advance_to(Duration::from_nanos(u64::MAX - 4))
            .unwrap();
        filter.advance_to(Duration::MAX).unwrap();
        assert_eq!(filter.stats().generation, u64::MAX);
        let mut inserted = Vec::new();
        for key in 0..1000u64 {
            match filter.insert(&key) {
                Ok(()) => inserted.push(key),
                Err(InsertError::Full) => {}
                Err(err) => panic!("{err}"),
            }
        }
        assert!(
            inserted.len() >= 100 && inserted.len() < 1000,
            "{}",
            inserted.len()
        );
        assert!(inserted.iter().all(|key| filter.contains(key)));
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(120))
        .expect("a filter at the end of its clock answered every insert");
}
