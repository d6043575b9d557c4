//! Measures the growable filter against a fixed-size one sized up front for the same items:
//! space and false positive rate at every point of a growth from 1× to 1,000×, the rate after
//! growing 1,000×, lookup speed, batched against one key at a time, and a fill by growth on one
//! and two threads. Speeds are medians of rounds that alternate the two sides compared.
//!
//! ```text
//! cargo run --release --example growable [-- space|rate|lookup|batch|fill|all]
//! ```

use std::hint::black_box;
use std::time::Instant;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};

/// The first level of a filter that, grown 64×, fits in the last-level cache (2.5 to 4.5 MB).
const SMALL_INITIAL: usize = 1 << 15;
/// The first level of a filter that, grown 64×, about fills the share of the last-level cache
/// a busy host leaves (5 to 9 MB).
const INITIAL: usize = 1 << 16;
/// The first level of a filter that, grown 64×, does not (about 100 MB).
const LARGE_INITIAL: usize = 1 << 20;
/// How far those filters grow.
const GROWTH: usize = 64;
const ROUNDS: usize = 5;
/// Rounds of the fill, which takes seconds each.
const FILL_ROUNDS: usize = 3;
/// The first capacity of the space curve, and the growths it is measured at.
const CURVE_INITIAL: usize = 10_000;
const CURVE: [f64; 11] = [
    1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 37.0, 64.0, 100.0, 300.0, 1000.0,
];

/// A growable filter of the default split depth, grown from `initial` to `items`.
fn split_from(initial: usize, rate: f64, items: usize) -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(initial)
        .false_positive_rate(rate)
        .build()
        .unwrap();
    filter.try_extend(0..items as u64).unwrap();
    filter
}

fn fixed(rate: f64, items: usize) -> ConcurrentCuckooFilter {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(items)
        .false_positive_rate(rate)
        .build()
        .unwrap();
    filter.try_extend(0..items as u64).unwrap();
    filter
}

fn absent(i: u64) -> u64 {
    i | 1 << 62
}

fn rate_of(contains: impl Fn(&u64) -> bool, queries: u64) -> f64 {
    (0..queries).filter(|&i| contains(&absent(i))).count() as f64 / queries as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn bits_per_item(memory: usize, items: usize) -> f64 {
    memory as f64 * 8.0 / items as f64
}

/// Bits per item and false positive rate at each point of a growth from [`CURVE_INITIAL`]
/// items, against a fixed filter sized for the items at that point; and the filter's estimate
/// of its own rate.
fn space() {
    println!("Growing from {CURVE_INITIAL} items: bits per item and false positive rate (1,000,000 absent keys) at each growth, against a ConcurrentCuckooFilter sized for the same items and ε.\n");
    println!("| ε | growth | items | levels | bits per item | fixed, sized | ÷ fixed | false positive rate | ÷ ε | estimate | estimate ÷ measured |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for rate in [0.01, 0.001] {
        let filter = split_from(CURVE_INITIAL, rate, 0);
        let mut inserted = 0u64;
        for growth in CURVE {
            let items = (CURVE_INITIAL as f64 * growth) as u64;
            filter.try_extend(inserted..items).unwrap();
            inserted = items;
            let reference = fixed(rate, items as usize);
            let ours = bits_per_item(filter.memory_usage(), filter.len());
            let theirs = bits_per_item(reference.memory_usage(), reference.len());
            let measured = rate_of(|k| filter.contains(k), 1_000_000);
            let estimate = filter.expected_false_positive_rate();
            println!(
                "| {rate} | {growth}× | {items} | {} | {ours:.2} | {theirs:.2} | {:.2} | {measured:.5} | {:.2} | {estimate:.5} | {:.2} |",
                filter.level_count(),
                ours / theirs,
                measured / rate,
                estimate / measured,
            );
        }
    }
}

/// Nanoseconds per lookup of `keys`, back to back: no lookup waits for the one before, so the
/// CPU overlaps the cache misses of consecutive lookups (a batch job, a scan).
fn time_lookups(contains: impl Fn(&u64) -> bool, keys: &[u64]) -> f64 {
    let start = Instant::now();
    let mut hits = 0usize;
    for key in keys {
        hits += usize::from(contains(black_box(key)));
    }
    black_box(hits);
    start.elapsed().as_nanos() as f64 / keys.len() as f64
}

/// Nanoseconds per lookup of `keys`, one at a time: each key depends on the answer before it,
/// as when a request branches on the answer before it asks the next, so a lookup's cache misses
/// cannot hide behind another lookup's. The keys are even, and `key ^ 1` is a key of the same
/// kind (present or absent), so the dependence changes which key is asked, never its kind.
fn time_dependent_lookups(contains: impl Fn(&u64) -> bool, keys: &[u64]) -> f64 {
    let start = Instant::now();
    let mut last = 0u64;
    for key in keys {
        last = u64::from(contains(&(key ^ last)));
    }
    black_box(last);
    start.elapsed().as_nanos() as f64 / keys.len() as f64
}

/// How lookups are asked.
#[derive(Clone, Copy)]
enum Regime {
    BackToBack,
    OneAtATime,
}

impl Regime {
    fn name(self) -> &'static str {
        match self {
            Self::BackToBack => "back to back",
            Self::OneAtATime => "one at a time",
        }
    }

    fn time(self, contains: impl Fn(&u64) -> bool, keys: &[u64]) -> f64 {
        match self {
            Self::BackToBack => time_lookups(contains, keys),
            Self::OneAtATime => time_dependent_lookups(contains, keys),
        }
    }
}

/// Medians over the rounds of the fixed filter's ns per lookup, the growable one's, and the
/// per-round ratio of their speeds (timed one right after the other, so a slow round slows both sides).
fn compare_lookups(
    fixed: &ConcurrentCuckooFilter,
    grown: &GrowableCuckooFilter,
    keys: &[u64],
    regime: Regime,
) -> [f64; 3] {
    let mut times: [Vec<f64>; 3] = Default::default();
    for _ in 0..ROUNDS {
        let f = regime.time(|k| fixed.contains(k), keys);
        let g = regime.time(|k| grown.contains(k), keys);
        times[0].push(f);
        times[1].push(g);
        times[2].push(f / g);
    }
    times.map(median)
}

fn lookup() {
    println!("\nLookups after growing {GROWTH}×: ns per lookup and speed ÷ the fixed filter's, medians of {ROUNDS} rounds that time the two filters one right after the other; \"back to back\" lookups do not wait for each other, \"one at a time\" ones each depend on the answer before. Tables that fit in the last-level cache (first level {SMALL_INITIAL} items), about fill it ({INITIAL}) and do not ({LARGE_INITIAL}).\n");
    println!("| items | ε | filter | levels | lookups | present | absent | present ÷ fixed speed | absent ÷ fixed speed |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for initial in [SMALL_INITIAL, INITIAL, LARGE_INITIAL] {
        let items = initial * GROWTH;
        let present: Vec<u64> = (0..2_000_000)
            .map(|_| (next() % items as u64) & !1)
            .collect();
        let missing: Vec<u64> = (0..2_000_000).map(|_| absent(next() >> 2) & !1).collect();
        for rate in [0.01, 0.001] {
            let reference = fixed(rate, items);
            let filter = split_from(initial, rate, items);
            for regime in [Regime::BackToBack, Regime::OneAtATime] {
                let [fp, gp, rp] = compare_lookups(&reference, &filter, &present, regime);
                let [fa, ga, ra] = compare_lookups(&reference, &filter, &missing, regime);
                let regime = regime.name();
                println!(
                    "| {items} | {rate} | fixed | 1 | {regime} | {fp:.1} | {fa:.1} | 1.00 | 1.00 |"
                );
                println!(
                    "| {items} | {rate} | growable | {} | {regime} | {gp:.1} | {ga:.1} | {rp:.2} | {ra:.2} |",
                    filter.level_count(),
                );
            }
        }
    }
}

/// Seconds to insert `items` keys one `insert` at a time on `threads` threads.
fn time_inserts(items: u64, threads: u64, insert: impl Fn(u64) + Sync) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let insert = &insert;
            scope.spawn(move || (t..items).step_by(threads as usize).for_each(insert));
        }
    });
    start.elapsed().as_secs_f64()
}

fn fill() {
    let items = 10_000_000u64;
    println!("\nFilling from 1,000 to {items} items by growth with `insert` (ε = 0.001), against a fixed filter sized for them up front; seconds, median of {FILL_ROUNDS} alternating rounds.\n");
    let mut seconds: [[Vec<f64>; 2]; 2] = Default::default();
    let mut levels = 0;
    for _ in 0..FILL_ROUNDS {
        for (t, threads) in [1, 2].into_iter().enumerate() {
            let filter = split_from(1000, 0.001, 0);
            seconds[0][t].push(time_inserts(items, threads, |key| {
                filter.insert(&key).unwrap()
            }));
            assert_eq!(filter.len(), items as usize);
            levels = filter.level_count();
            let fixed = ConcurrentCuckooFilter::builder()
                .capacity(items as usize)
                .false_positive_rate(0.001)
                .build()
                .unwrap();
            seconds[1][t].push(time_inserts(items, threads, |key| {
                fixed.insert(&key).unwrap()
            }));
        }
    }
    let [[g1, g2], [f1, f2]] = seconds.map(|pair| pair.map(median));
    println!("| filter | 1 thread | 2 threads | 2 threads ÷ 1 thread |");
    println!("|---|---|---|---|");
    println!(
        "| growable, {levels} levels at the end | {g1:.2} | {g2:.2} | {:.2}× |",
        g1 / g2
    );
    println!(
        "| fixed, sized up front | {f1:.2} | {f2:.2} | {:.2}× |",
        f1 / f2
    );
}

/// Batched calls against one key per call on a growable filter grown 64× from 1,048,576 items
/// (67,108,864 items, in memory): `contains_batch` against `contains`; `try_extend` against
/// `insert`, growing from 1,048,576 items and into a first level sized for the keys; medians of
/// alternating rounds.
fn batch() {
    let items = LARGE_INITIAL * GROWTH;
    println!("\nBatched calls on a growable filter grown {GROWTH}× to {items} items (ε = 0.001): million keys per second, median of {ROUNDS} alternating rounds.\n");
    let filter = split_from(LARGE_INITIAL, 0.001, items);
    let keys: Vec<u64> = (0..4_000_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % items as u64)
        .collect();
    let mut rates: [Vec<f64>; 3] = Default::default();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let hits = keys
            .iter()
            .filter(|k| filter.contains(black_box(*k)))
            .count();
        let single = keys.len() as f64 / start.elapsed().as_secs_f64() / 1e6;
        let start = Instant::now();
        let batched = filter.contains_batch(black_box(&keys));
        let batch = keys.len() as f64 / start.elapsed().as_secs_f64() / 1e6;
        assert_eq!(hits, keys.len());
        assert!(batched.iter().all(|&hit| hit));
        rates[0].push(single);
        rates[1].push(batch);
        rates[2].push(batch / single);
    }
    let [single, batched, ratio] = rates.map(median);
    println!("| call | M keys/s | ÷ one key per call |");
    println!("|---|---|---|");
    println!("| `contains` | {single:.1} | 1.00 |");
    println!("| `contains_batch` | {batched:.1} | {ratio:.2} |");
    let fresh = 20_000_000u64;
    let [single, batched, ratio] = compare_fills(LARGE_INITIAL, fresh);
    println!("| `insert`, {fresh} keys from {LARGE_INITIAL} | {single:.1} | 1.00 |");
    println!("| `try_extend`, the same | {batched:.1} | {ratio:.2} |");
    // The same keys into a first level sized for them: no split, the inserts alone.
    let [single, batched, ratio] = compare_fills(fresh as usize, fresh);
    println!("| `insert`, {fresh} keys into a first level sized for them | {single:.1} | 1.00 |");
    println!("| `try_extend`, the same | {batched:.1} | {ratio:.2} |");
}

/// Million keys per second of `insert` one key at a time and of `try_extend`, each filling a
/// filter of first capacity `initial` with `keys` keys, and their ratio: medians of
/// [`FILL_ROUNDS`] alternating rounds.
fn compare_fills(initial: usize, keys: u64) -> [f64; 3] {
    let mut rates: [Vec<f64>; 3] = Default::default();
    for _ in 0..FILL_ROUNDS {
        let filter = split_from(initial, 0.001, 0);
        let start = Instant::now();
        for key in 0..keys {
            filter.insert(&key).unwrap();
        }
        let single = keys as f64 / start.elapsed().as_secs_f64() / 1e6;
        let filter = split_from(initial, 0.001, 0);
        let start = Instant::now();
        filter.try_extend(0..keys).unwrap();
        let batch = keys as f64 / start.elapsed().as_secs_f64() / 1e6;
        rates[0].push(single);
        rates[1].push(batch);
        rates[2].push(batch / single);
    }
    rates.map(median)
}

/// The false positive rate after growing 1,000× from 1,000 items, on 4,000,000 absent keys.
fn rate() {
    println!("\nFalse positive rate after growing 1,000× from 1,000 items (1,000,000 items).\n");
    println!("| ε | levels | core fingerprint bits per level | false positive rate | estimate |");
    println!("|---|---|---|---|---|");
    for target in [0.01, 0.001] {
        let filter = split_from(1000, target, 1_000_000);
        println!(
            "| {target} | {} | {:?} | {:.5} | {:.5} |",
            filter.level_count(),
            filter.level_fingerprint_bits(),
            rate_of(|k| filter.contains(k), 4_000_000),
            filter.expected_false_positive_rate(),
        );
    }
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    if matches!(what.as_str(), "space" | "all") {
        space();
    }
    if matches!(what.as_str(), "rate" | "all") {
        rate();
    }
    if matches!(what.as_str(), "lookup" | "all") {
        lookup();
    }
    if matches!(what.as_str(), "batch" | "all") {
        batch();
    }
    if matches!(what.as_str(), "fill" | "all") {
        fill();
    }
}
