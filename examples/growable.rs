//! Measures the growable filter, with fixed-size levels and with levels that split as they fill,
//! against a fixed-size one sized up front, and against a chain whose levels all keep the first
//! level's fingerprints (as RedisBloom's cuckoo filter does): space and false positive rate after
//! growing 64×, lookup speed, and a fill by growth on one and two threads. Speeds are medians of
//! rounds that alternate the filters compared.
//!
//! ```text
//! cargo run --release --example growable [-- space|rate|lookup|fill|all]
//! ```

use std::hint::black_box;
use std::time::Instant;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};

/// Items of the first level in the space and lookup measurements: grown 64×, a filter of 5 to
/// 9 MB, about the share of the last-level cache a busy host leaves.
const INITIAL: usize = 1 << 16;
/// The first level of a filter that, grown 64×, fits in the last-level cache (2.5 to 4.5 MB).
const SMALL_INITIAL: usize = 1 << 15;
/// The first level of a filter that, grown 64×, does not (about 100 MB).
const LARGE_INITIAL: usize = 1 << 20;
/// How far those filters grow.
const GROWTH: usize = 64;
const ROUNDS: usize = 5;
/// Rounds of the fill, which takes seconds each.
const FILL_ROUNDS: usize = 3;
/// How many times a split level's chunks may split: it grows 64× before the next level.
const SPLIT_DEPTH: u32 = 6;

fn grown(rate: f64, factor: usize, items: usize) -> GrowableCuckooFilter {
    grown_from(INITIAL, rate, factor, items)
}

fn grown_from(initial: usize, rate: f64, factor: usize, items: usize) -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(initial)
        .false_positive_rate(rate)
        .growth_factor(factor)
        .build()
        .unwrap();
    filter.try_extend(0..items as u64).unwrap();
    filter
}

/// A growable filter of split levels grown to `items`.
fn split_from(initial: usize, rate: f64, items: usize) -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(initial)
        .false_positive_rate(rate)
        .split_depth(SPLIT_DEPTH)
        .build()
        .unwrap();
    filter.try_extend(0..items as u64).unwrap();
    filter
}

/// A chain like RedisBloom's: every level with the first level's fingerprint width.
fn same_fingerprint_chain(rate: f64, items: usize) -> GrowableCuckooFilter {
    let first = ConcurrentCuckooFilter::builder()
        .capacity(INITIAL)
        .false_positive_rate(rate / 2.0)
        .build()
        .unwrap();
    let filter = GrowableCuckooFilter::builder()
        .capacity(INITIAL)
        .growth_factor(2)
        .level_shape(first.bucket_count(), 4, first.fingerprint_bits(), 0)
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

fn space() {
    let items = INITIAL * GROWTH;
    println!("Space and false positive rate after growing {GROWTH}× from {INITIAL} items ({items} items).\n");
    println!("| ε | filter | levels | bits per item | ÷ fixed | false positive rate |");
    println!("|---|---|---|---|---|---|");
    for rate in [0.01, 0.001] {
        let reference = fixed(rate, items);
        let bits = |memory: usize, len: usize| memory as f64 * 8.0 / len as f64;
        let fixed_bits = bits(reference.memory_usage(), reference.len());
        let queries = 4_000_000;
        println!(
            "| {rate} | fixed, sized up front | 1 | {fixed_bits:.2} | 1.00 | {:.5} |",
            rate_of(|k| reference.contains(k), queries)
        );
        for factor in [2, 4] {
            let filter = grown(rate, factor, items);
            let b = bits(filter.memory_usage(), filter.len());
            println!(
                "| {rate} | growable, factor {factor} | {} | {b:.2} | {:.2} | {:.5} |",
                filter.level_count(),
                b / fixed_bits,
                rate_of(|k| filter.contains(k), queries)
            );
        }
        let filter = split_from(INITIAL, rate, items);
        let b = bits(filter.memory_usage(), filter.len());
        println!(
            "| {rate} | growable, split levels | {} | {b:.2} | {:.2} | {:.5} |",
            filter.level_count(),
            b / fixed_bits,
            rate_of(|k| filter.contains(k), queries)
        );
        let chain = same_fingerprint_chain(rate, items);
        let b = bits(chain.memory_usage(), chain.len());
        println!(
            "| {rate} | same-fingerprint chain, factor 2 | {} | {b:.2} | {:.2} | {:.5} |",
            chain.level_count(),
            b / fixed_bits,
            rate_of(|k| chain.contains(k), queries)
        );
    }
    println!("\nBits per item over a whole growth, sampled at every whole multiple of the initial capacity from 2× to {GROWTH}× (ε = 0.01): mean and worst.\n");
    println!("| filter | mean bits per item | worst | fixed at the same point, mean |");
    println!("|---|---|---|---|");
    for factor in [2, 4, 0] {
        let filter = match factor {
            0 => split_from(INITIAL, 0.01, 0),
            factor => grown(0.01, factor, 0),
        };
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for multiple in 2..=GROWTH {
            let from = ((multiple - 1) * INITIAL) as u64;
            filter
                .try_extend(from..(multiple * INITIAL) as u64)
                .unwrap();
            ours.push(filter.memory_usage() as f64 * 8.0 / filter.len() as f64);
            let reference = ConcurrentCuckooFilter::builder()
                .capacity(multiple * INITIAL)
                .false_positive_rate(0.01)
                .build()
                .unwrap();
            theirs.push(reference.memory_usage() as f64 * 8.0 / (multiple * INITIAL) as f64);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let name = match factor {
            0 => "growable, split levels".to_string(),
            factor => format!("growable, factor {factor}"),
        };
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} |",
            mean(&ours),
            ours.iter().copied().fold(0.0, f64::max),
            mean(&theirs)
        );
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
    for (initial, factors) in [
        (SMALL_INITIAL, &[][..]),
        (INITIAL, &[2, 4][..]),
        (LARGE_INITIAL, &[2][..]),
    ] {
        let items = initial * GROWTH;
        let present: Vec<u64> = (0..2_000_000)
            .map(|_| (next() % items as u64) & !1)
            .collect();
        let missing: Vec<u64> = (0..2_000_000).map(|_| absent(next() >> 2) & !1).collect();
        for rate in [0.01, 0.001] {
            let reference = fixed(rate, items);
            for (kind, &factor) in factors.iter().chain(&[0]).enumerate() {
                let filter = match factor {
                    0 => split_from(initial, rate, items),
                    factor => grown_from(initial, rate, factor, items),
                };
                let name = match factor {
                    0 => "growable, split levels".to_string(),
                    factor => format!("growable, factor {factor}"),
                };
                for regime in [Regime::BackToBack, Regime::OneAtATime] {
                    let [fp, gp, rp] = compare_lookups(&reference, &filter, &present, regime);
                    let [fa, ga, ra] = compare_lookups(&reference, &filter, &missing, regime);
                    let regime = regime.name();
                    if kind == 0 {
                        println!("| {items} | {rate} | fixed | 1 | {regime} | {fp:.1} | {fa:.1} | 1.00 | 1.00 |");
                    }
                    println!(
                        "| {items} | {rate} | {name} | {} | {regime} | {gp:.1} | {ga:.1} | {rp:.2} | {ra:.2} |",
                        filter.level_count(),
                    );
                }
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
    let mut seconds: [[Vec<f64>; 2]; 3] = Default::default();
    let mut levels = [0; 2];
    for _ in 0..FILL_ROUNDS {
        for (t, threads) in [1, 2].into_iter().enumerate() {
            for (kind, split) in [false, true].into_iter().enumerate() {
                let builder = GrowableCuckooFilter::builder()
                    .capacity(1000)
                    .false_positive_rate(0.001);
                let builder = if split {
                    builder.split_depth(SPLIT_DEPTH)
                } else {
                    builder.growth_factor(2)
                };
                let filter = builder.build().unwrap();
                let index = if split { 2 } else { 0 };
                seconds[index][t].push(time_inserts(items, threads, |key| {
                    filter.insert(&key).unwrap()
                }));
                assert_eq!(filter.len(), items as usize);
                levels[kind] = filter.level_count();
            }
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
    let [[g1, g2], [f1, f2], [s1, s2]] = seconds.map(|pair| pair.map(median));
    println!("| filter | 1 thread | 2 threads | 2 threads ÷ 1 thread |");
    println!("|---|---|---|---|");
    println!(
        "| growable, factor 2, {} levels at the end | {g1:.2} | {g2:.2} | {:.2}× |",
        levels[0],
        g1 / g2
    );
    println!(
        "| growable, split levels, {} levels at the end | {s1:.2} | {s2:.2} | {:.2}× |",
        levels[1],
        s1 / s2
    );
    println!(
        "| fixed, sized up front | {f1:.2} | {f2:.2} | {:.2}× |",
        f1 / f2
    );
}

/// The false positive rate after growing 1,000× from 1,000 items, on 4,000,000 absent keys.
fn rate() {
    println!("\nFalse positive rate after growing 1,000× from 1,000 items (1,000,000 items).\n");
    println!("| ε | filter | levels | fingerprint bits per level | false positive rate |");
    println!("|---|---|---|---|---|");
    for target in [0.01, 0.001] {
        for split in [false, true] {
            let builder = GrowableCuckooFilter::builder()
                .capacity(1000)
                .false_positive_rate(target);
            let (builder, name) = if split {
                (builder.split_depth(SPLIT_DEPTH), "split levels")
            } else {
                (builder.growth_factor(2), "factor 2")
            };
            let filter = builder.build().unwrap();
            filter.try_extend(0..1_000_000u64).unwrap();
            println!(
                "| {target} | {name} | {} | {:?} | {:.5} |",
                filter.level_count(),
                filter.fingerprint_bits(),
                rate_of(|k| filter.contains(k), 4_000_000)
            );
        }
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
    if matches!(what.as_str(), "fill" | "all") {
        fill();
    }
}
