//! One run of one filter for Table 3 and Figures 5–8: filled from empty to full with lookups
//! probed on the way, then its false positive rate and lookups when full, then emptied.

use ccf_benches::keys::{key, Rng, ABSENT};
use ccf_benches::measure::median;
use ccf_benches::peers::Peer;
use std::time::Instant;

/// A filter of Table 3 with the item count its occupancy is measured against (slots or
/// entries; the target for the Bloom filters) and the most items to insert (the filters that
/// cannot fail stop at their target).
pub struct Budgeted<F> {
    pub filter: F,
    pub nominal: usize,
    pub stop: usize,
}

/// Occupancy steps of the insert and delete curves (Figures 7 and 8).
const STEPS: usize = 20;
/// Lookups per point of Figure 6 at most, for hits and for misses each.
const PROBE: usize = 1 << 18;
/// Lookups per point of Figure 5 at most.
const LOOKUPS: usize = 1 << 20;
/// How long a lookup measurement runs at least (unless it runs out of keys first): short
/// measurements on a busy machine are at the mercy of the scheduler.
const MIN_LOOKUP_SECONDS: f64 = 0.03;
/// Never-inserted keys looked up to measure the false positive rate.
const FPR_QUERIES: usize = 1 << 20;
/// Shares of positive lookups in Figure 5.
const SHARES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// What one run measures of one filter. Curves are `(occupancy, million operations/s)`.
#[derive(Clone, Default)]
pub struct Run {
    pub items: f64,
    pub memory: f64,
    pub bits_per_item: f64,
    pub false_positive_rate: f64,
    pub construction: f64,
    pub lookup_by_share: Vec<(f64, f64)>,
    pub negative_by_load: Vec<(f64, f64)>,
    pub positive_by_load: Vec<(f64, f64)>,
    pub insert_by_load: Vec<(f64, f64)>,
    pub delete_by_load: Vec<(f64, f64)>,
}

/// `n` lookup keys, each an inserted key (of the first `inserted` of this run) with
/// probability `share`, else a never-inserted one.
fn lookup_keys(rng: &mut Rng, base: u64, inserted: usize, share: f64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            if (rng.next_u64() as f64) < share * u64::MAX as f64 {
                key(base + rng.below(inserted as u64))
            } else {
                key(ABSENT | rng.next_u64() >> 2)
            }
        })
        .collect()
}

/// Million lookups per second over `keys`, in order, stopping at the end of a block of keys once
/// `MIN_LOOKUP_SECONDS` have passed (the slow filters need not go through all of them).
fn lookup_rate<F: Peer>(filter: &F, keys: &[u64]) -> f64 {
    let began = Instant::now();
    let (mut done, mut found) = (0, 0);
    for block in keys.chunks(1 << 13) {
        found += block.iter().filter(|&&k| filter.contains(k)).count();
        done += block.len();
        if began.elapsed().as_secs_f64() >= MIN_LOOKUP_SECONDS {
            break;
        }
    }
    std::hint::black_box(found);
    done as f64 / began.elapsed().as_secs_f64() / 1e6
}

/// Builds the filter from empty to full, probing lookups every 10%, then measures the false
/// positive rate and the lookups of Figure 5, then deletes everything (if it can).
fn run_filter<F: Peer>(budgeted: Budgeted<F>, seed: u64) -> Run {
    let Budgeted {
        filter,
        nominal,
        stop,
    } = budgeted;
    let base = seed << 40;
    let mut rng = Rng::new(seed);
    let mut run = Run {
        memory: filter.memory() as f64,
        ..Run::default()
    };
    let keys: Vec<u64> = (0..nominal.min(stop) as u64 + nominal as u64 / 10)
        .map(|i| key(base + i))
        .collect();
    let mut inserted = 0usize;
    let mut insert_time = 0.0;
    let mut full = false;
    for step in 1..=STEPS {
        let target = (nominal * step / STEPS).min(stop).min(keys.len());
        let began = Instant::now();
        let from = inserted;
        while inserted < target {
            if !filter.insert(keys[inserted]) {
                full = true;
                break;
            }
            inserted += 1;
        }
        let seconds = began.elapsed().as_secs_f64();
        insert_time += seconds;
        let load = inserted as f64 / nominal as f64;
        if inserted > from {
            run.insert_by_load
                .push((load, (inserted - from) as f64 / seconds / 1e6));
        }
        if step % 2 == 0 || full || inserted >= stop {
            let hits = lookup_keys(&mut rng, base, inserted.max(1), 1.0, PROBE);
            let misses = lookup_keys(&mut rng, base, 1, 0.0, PROBE);
            run.positive_by_load
                .push((load, lookup_rate(&filter, &hits)));
            run.negative_by_load
                .push((load, lookup_rate(&filter, &misses)));
        }
        if full || inserted >= stop || inserted >= keys.len() {
            break;
        }
    }
    // The cuckoo filters of this crate and the dl-CBF fill past their nominal slot count only
    // if every slot is taken; `keys` holds 10% more than that, which is never reached.
    run.items = inserted as f64;
    run.bits_per_item = run.memory * 8.0 / inserted as f64;
    run.construction = inserted as f64 / insert_time / 1e6;

    let absent = lookup_keys(&mut rng, base, 1, 0.0, FPR_QUERIES);
    run.false_positive_rate =
        absent.iter().filter(|&&k| filter.contains(k)).count() as f64 / absent.len() as f64;
    for share in SHARES {
        let keys = lookup_keys(&mut rng, base, inserted, share, LOOKUPS);
        run.lookup_by_share
            .push((share, lookup_rate(&filter, &keys)));
    }

    if F::DELETES {
        filter.remove(keys[0]);
        let mut removed = 1usize;
        let chunk = (nominal / STEPS).max(1);
        while removed < inserted {
            let load = (inserted - removed) as f64 / nominal as f64;
            let end = (removed + chunk).min(inserted);
            let began = Instant::now();
            for &k in &keys[removed..end] {
                filter.remove(k);
            }
            let rate = (end - removed) as f64 / began.elapsed().as_secs_f64() / 1e6;
            run.delete_by_load.push((load, rate));
            removed = end;
        }
    }
    run
}

/// Point-wise medians of curves measured at the same steps (as many points as the shortest).
fn median_curve(curves: &[&Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let len = curves.iter().map(|c| c.len()).min().unwrap_or(0);
    (0..len)
        .map(|i| {
            let mut xs: Vec<f64> = curves.iter().map(|c| c[i].0).collect();
            let mut ys: Vec<f64> = curves.iter().map(|c| c[i].1).collect();
            (median(&mut xs), median(&mut ys))
        })
        .collect()
}

/// The medians of several runs.
fn median_run(runs: &[Run]) -> Run {
    let scalar = |f: fn(&Run) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
    let curve =
        |f: fn(&Run) -> &Vec<(f64, f64)>| median_curve(&runs.iter().map(f).collect::<Vec<_>>());
    Run {
        items: scalar(|r| r.items),
        memory: scalar(|r| r.memory),
        bits_per_item: scalar(|r| r.bits_per_item),
        false_positive_rate: scalar(|r| r.false_positive_rate),
        construction: scalar(|r| r.construction),
        lookup_by_share: curve(|r| &r.lookup_by_share),
        negative_by_load: curve(|r| &r.negative_by_load),
        positive_by_load: curve(|r| &r.positive_by_load),
        insert_by_load: curve(|r| &r.insert_by_load),
        delete_by_load: curve(|r| &r.delete_by_load),
    }
}

/// One row of Table 3: a filter's name, what it is, and the medians of its runs.
pub struct Row {
    pub name: &'static str,
    pub what: String,
    pub run: Run,
}

pub fn measure<F: Peer>(
    name: &'static str,
    what: &str,
    make: impl Fn() -> Budgeted<F>,
    runs: usize,
) -> Row {
    let began = Instant::now();
    let results: Vec<Run> = (0..runs as u64)
        .map(|r| run_filter(make(), r + 1))
        .collect();
    let run = median_run(&results);
    eprintln!(
        "  {name}: {:.2} M items, {:.2} bits/item, {:.3}% false positives, {:.2} M inserts/s ({:.1} s)",
        run.items / 1e6,
        run.bits_per_item,
        run.false_positive_rate * 100.0,
        run.construction,
        began.elapsed().as_secs_f64()
    );
    Row {
        name,
        what: what.to_string(),
        run,
    }
}
