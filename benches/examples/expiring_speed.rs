//! The expiring filter's speed against the plain filter's, one window held full.
//!
//! ```text
//! cargo run --release -p ccf-benches --example expiring_speed [-- --window 20000000 --passes 5
//!     --ops 1000000]
//! ```
//!
//! An `ExpiringCuckooFilter` over the last `--window` inserts (ε = 0.1%, `G = 8`) is filled with
//! two windows of keys, so its table holds what a full window in steady state holds (`len`:
//! live slots and the expired ones not yet freed). Beside it, at that same item count `n`: the
//! plain filter of the same layout (packed with stripe stamps, 4-slot buckets of 13-bit
//! fingerprints, ε = 0.1%) and the default filter (bucket words, 12-bit). Rows, each the median
//! of `--passes` passes of `--ops` operations, the filters taking turns pass by pass:
//! - `contains` of members (the last window's keys) and of never-inserted keys;
//! - steady-state `insert`: new keys into the expiring filter, each moving its window on; the
//!   plain filters' inserts into their tables sized for `n` plus a chunk (`n/64`, at most 65,536)
//!   and holding `n`, each chunk of keys removed again after it (untimed) so the load stays put;
//! - the expiring filter's inserts and lookups from 2 threads against 1 (each run repeated until
//!   its threads had a core each, `ccf_benches::measure::time_on_own_cores`), and the plain
//!   filter's inserts the same way (`--ops` of them into a table sized for `n` plus them);
//! - the p99.9 of single inserts, each timed with its own pair of `Instant::now()` (whose cost is
//!   printed), over at least two generation advances of the expiring filter, the plain filter's
//!   inserts timed the same way in alternating chunks.
//!
//! `--only contains --passes 1` runs just one pass of the `contains` rows, for
//! `valgrind --tool=callgrind --toggle-collect='*lookups*'` (instructions per lookup: the count
//! divided by the lookups made, printed); `--only insert` the steady-state insert row and the
//! latencies, for `--toggle-collect='*inserts_expiring*'` (or `'*inserts_plain*'`,
//! `'*inserts_default*'`); `--only threads` the rows of 1 and 2 threads.

use ccf_benches::keys::{key, Rng, ABSENT};
use ccf_benches::measure::{median, time_on_own_cores};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, ExpiringCuckooFilter, TableLayout, Window};
use std::hint::black_box;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo run --release -p ccf-benches --example expiring_speed -- \
                     [--window N] [--passes P] [--ops M] [--only contains|insert|threads]";

/// Tries per timed 2-thread run to get a core per thread.
const ATTEMPTS: usize = 10;
/// The most inserts the plain filters take before they are removed again, and a chunk of the
/// latency run, the filters taking turns chunk by chunk.
const MAX_CHUNK: u64 = 1 << 16;

struct Args {
    window: u64,
    passes: usize,
    ops: u64,
    only: Only,
}

/// Which rows run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    All,
    Contains,
    Insert,
    Threads,
}

fn fail() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        window: 20_000_000,
        passes: 5,
        ops: 1_000_000,
        only: Only::All,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut number = || -> u64 {
            let value: u64 = it
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| fail());
            if value == 0 {
                fail()
            }
            value
        };
        match flag.as_str() {
            "--window" => args.window = number(),
            "--passes" => args.passes = number() as usize,
            "--ops" => args.ops = number(),
            "--only" => match it.next().as_deref() {
                Some("contains") => args.only = Only::Contains,
                Some("insert") => args.only = Only::Insert,
                Some("threads") => args.only = Only::Threads,
                _ => fail(),
            },
            _ => fail(),
        }
    }
    args
}

/// The three filters and where each one's key stream stands.
struct Filters {
    expiring: ExpiringCuckooFilter,
    plain: ConcurrentCuckooFilter,
    default: ConcurrentCuckooFilter,
    /// Keys `0..next` went into the expiring filter; the last window of them is live.
    next: u64,
    /// Items in each plain filter: keys `0..held`.
    held: u64,
    /// Keys the plain filters take before they are removed again: they are sized for
    /// `held + chunk`, so their load stays within a chunk of the expiring filter's item count.
    chunk: u64,
    window: u64,
}

impl Filters {
    fn build(window: u64) -> Self {
        let expiring = ExpiringCuckooFilter::builder(Window::Items(window))
            .build()
            .expect("the window fits");
        for i in 0..2 * window {
            expiring
                .insert(&key(i))
                .expect("a count window never fills");
        }
        let held = expiring.len() as u64;
        let chunk = (held / 64).clamp(1, MAX_CHUNK);
        let plain = plain_packed(held + chunk);
        let default = ConcurrentCuckooFilter::with_capacity((held + chunk) as usize);
        for i in 0..held {
            plain.insert(&key(i)).expect("sized for it");
            default.insert(&key(i)).expect("sized for it");
        }
        Self {
            expiring,
            plain,
            default,
            next: 2 * window,
            held,
            chunk,
            window,
        }
    }

    /// `ops` keys of the expiring filter's live window, or of the plain filters' items.
    fn members(&self, ops: u64, seed: u64, expiring: bool) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let (base, span) = if expiring {
            (self.next - self.window, self.window)
        } else {
            (0, self.held)
        };
        (0..ops).map(|_| key(base + rng.below(span))).collect()
    }
}

/// The plain filter of the expiring filter's layout (packed, 4-slot buckets of 13-bit
/// fingerprints, not semi-sorted), sized for `capacity` items.
fn plain_packed(capacity: u64) -> ConcurrentCuckooFilter {
    ConcurrentCuckooFilter::builder()
        .capacity(capacity as usize)
        .fingerprint_bits(13)
        .bucket_size(4)
        .semi_sorted(false)
        .layout(TableLayout::Packed)
        .build()
        .expect("the plain filter fits")
}

/// Looks every key up; the number found.
#[inline(never)]
fn lookups_expiring(filter: &ExpiringCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| filter.contains(*k)).count()
}

/// Looks every key up; the number found.
#[inline(never)]
fn lookups_plain(filter: &ConcurrentCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| filter.contains(*k)).count()
}

/// Looks every key up; the number found (a function of its own, so callgrind counts it apart).
#[inline(never)]
fn lookups_default(filter: &ConcurrentCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| filter.contains(*k)).count()
}

/// Inserts keys `from..to` into the expiring filter.
#[inline(never)]
fn inserts_expiring(filter: &ExpiringCuckooFilter, from: u64, to: u64) {
    for i in from..to {
        filter.insert(&key(i)).expect("never Full");
    }
}

/// Inserts every key into the plain filter, sized for them.
#[inline(never)]
fn inserts_plain(filter: &ConcurrentCuckooFilter, keys: &[u64]) {
    for k in keys {
        filter
            .insert(k)
            .expect("the plain filter is sized for a chunk more");
    }
}

/// Inserts every key into the default filter, sized for them: a function of its own (its
/// message keeps the linker from folding the two), so that `--toggle-collect='*inserts_plain*'`
/// counts the plain filter's inserts alone.
#[inline(never)]
fn inserts_default(filter: &ConcurrentCuckooFilter, keys: &[u64]) {
    for k in keys {
        filter
            .insert(k)
            .expect("the default filter is sized for a chunk more");
    }
}

/// Millions of operations per second of `ops` operations in `took`.
fn mops(ops: u64, took: Duration) -> f64 {
    ops as f64 / took.as_secs_f64() / 1e6
}

fn timed(run: impl FnOnce()) -> Duration {
    let start = Instant::now();
    run();
    start.elapsed()
}

/// One row: the name and each side's median rate.
struct Row {
    name: &'static str,
    rates: [f64; 3],
}

fn print_rows(rows: &[Row]) {
    println!(
        "| {:<30} | {:>9} | {:>9} | {:>9} | {:>9} | {:>9} |",
        "Mops/s (median)", "expiring", "plain", "default", "exp/plain", "exp/def"
    );
    println!(
        "|{:-<32}|{:->11}|{:->11}|{:->11}|{:->11}|{:->11}|",
        "", "", "", "", "", ""
    );
    for row in rows {
        let [e, p, d] = row.rates;
        let ratio = |x: f64| {
            if x > 0.0 {
                format!("{:.2}", e / x)
            } else {
                "-".into()
            }
        };
        let cell = |x: f64| {
            if x > 0.0 {
                format!("{x:.2}")
            } else {
                "-".into()
            }
        };
        println!(
            "| {:<30} | {:>9} | {:>9} | {:>9} | {:>9} | {:>9} |",
            row.name,
            cell(e),
            cell(p),
            cell(d),
            ratio(p),
            ratio(d)
        );
    }
}

/// `contains` of members and of non-members, the three filters taking turns.
fn contains_rows(f: &Filters, args: &Args) -> Vec<Row> {
    let mut rates = [[0.0; 3]; 2].map(|r: [f64; 3]| r.map(|_| Vec::new()));
    let absent: Vec<u64> = (0..args.ops).map(|i| key(ABSENT + i)).collect();
    for pass in 0..args.passes {
        let seed = pass as u64;
        let members = [
            f.members(args.ops, seed, true),
            f.members(args.ops, seed, false),
            f.members(args.ops, seed, false),
        ];
        for turn in 0..3 {
            let side = (turn + pass) % 3;
            for (kind, keys) in [&members[side], &absent].into_iter().enumerate() {
                let mut found = 0;
                let took = timed(|| {
                    found = match side {
                        0 => lookups_expiring(&f.expiring, keys),
                        1 => lookups_plain(&f.plain, keys),
                        _ => lookups_default(&f.default, keys),
                    }
                });
                if kind == 0 {
                    assert_eq!(found, keys.len(), "a member was not found");
                }
                black_box(found);
                rates[kind][side].push(mops(args.ops, took));
            }
        }
    }
    let [members, absent] = rates.map(|sides| sides.map(|mut v| median(&mut v)));
    vec![
        Row {
            name: "contains, members",
            rates: members,
        },
        Row {
            name: "contains, non-members",
            rates: absent,
        },
    ]
}

/// Steady-state inserts: the expiring filter's window moving on, the plain filters' at load.
fn insert_row(f: &mut Filters, args: &Args) -> Row {
    let mut rates = [Vec::new(), Vec::new(), Vec::new()];
    let mut fresh = ABSENT / 2;
    for pass in 0..args.passes {
        for turn in 0..3 {
            let side = (turn + pass) % 3;
            let took = if side == 0 {
                let start = f.next;
                f.next += args.ops;
                timed(|| inserts_expiring(&f.expiring, start, f.next))
            } else {
                let (filter, insert): (_, fn(&ConcurrentCuckooFilter, &[u64])) = if side == 1 {
                    (&f.plain, inserts_plain)
                } else {
                    (&f.default, inserts_default)
                };
                let mut took = Duration::ZERO;
                let mut done = 0;
                while done < args.ops {
                    let keys: Vec<u64> = (fresh..fresh + f.chunk.min(args.ops - done))
                        .map(key)
                        .collect();
                    fresh += keys.len() as u64;
                    done += keys.len() as u64;
                    took += timed(|| insert(filter, &keys));
                    for k in &keys {
                        assert!(filter.remove(k));
                    }
                }
                took
            };
            rates[side].push(mops(args.ops, took));
        }
    }
    Row {
        name: "insert, steady state",
        rates: rates.map(|mut v| median(&mut v)),
    }
}

/// The expiring filter's inserts and member lookups from `threads` threads, `ops` each.
fn threaded(f: &mut Filters, threads: u64, ops: u64, insert: bool) -> (f64, bool) {
    let start = f.next;
    let members: Vec<Vec<u64>> = (0..threads)
        .map(|t| f.members(ops, 100 + t, true))
        .collect();
    let filter = &f.expiring;
    let mut round = 0;
    let (took, clean) = time_on_own_cores(threads as usize, ATTEMPTS, || {
        let base = start + round * threads * ops;
        round += 1;
        timed(|| {
            std::thread::scope(|s| {
                for (t, keys) in members.iter().enumerate() {
                    s.spawn(move || {
                        if insert {
                            let from = base + t as u64 * ops;
                            for i in from..from + ops {
                                filter.insert(&key(i)).expect("never Full");
                            }
                        } else {
                            black_box(lookups_expiring(filter, keys));
                        }
                    });
                }
            });
        })
    });
    if insert {
        f.next = start + round * threads * ops;
    }
    (mops(threads * ops, took), clean)
}

/// The plain filter's inserts from `threads` threads, `ops` in all, into `filter` holding keys
/// `0..held` and sized for `ops` more; removed again after each timed run (untimed).
fn threaded_plain(filter: &ConcurrentCuckooFilter, threads: u64, ops: u64) -> (f64, bool) {
    let share = ops / threads;
    let (took, clean) = time_on_own_cores(threads as usize, ATTEMPTS, || {
        let took = timed(|| {
            std::thread::scope(|s| {
                for t in 0..threads {
                    s.spawn(move || {
                        let from = ABSENT / 2 + t * share;
                        for i in from..from + share {
                            filter.insert(&key(i)).expect("sized for them");
                        }
                    });
                }
            });
        });
        for i in ABSENT / 2..ABSENT / 2 + threads * share {
            assert!(filter.remove(&key(i)));
        }
        took
    });
    (mops(threads * share, took), clean)
}

fn thread_rows(f: &mut Filters, args: &Args) {
    println!();
    println!(
        "| expiring, Mops/s (median) | 1 thread | 2 threads | 2/1 | clean runs (1, 2 threads) |"
    );
    println!("|---|---|---|---|---|");
    for (name, insert) in [("insert", true), ("contains, members", false)] {
        let mut rates = [Vec::new(), Vec::new()];
        let mut clean = [0, 0];
        for _ in 0..args.passes {
            for threads in [1, 2] {
                let (rate, ok) = threaded(f, threads, args.ops, insert);
                rates[threads as usize - 1].push(rate);
                clean[threads as usize - 1] += usize::from(ok);
            }
        }
        print_thread_row(name, rates, clean, args.passes);
    }
    // The plain filter of the same layout, for what the machine allows two inserting threads.
    let plain = plain_packed(f.held + args.ops);
    for i in 0..f.held {
        plain.insert(&key(i)).expect("sized for it");
    }
    let mut rates = [Vec::new(), Vec::new()];
    let mut clean = [0, 0];
    for _ in 0..args.passes {
        for threads in [1, 2] {
            let (rate, ok) = threaded_plain(&plain, threads, args.ops);
            rates[threads as usize - 1].push(rate);
            clean[threads as usize - 1] += usize::from(ok);
        }
    }
    print_thread_row("plain (packed 13-bit), insert", rates, clean, args.passes);
}

fn print_thread_row(name: &str, rates: [Vec<f64>; 2], clean: [usize; 2], passes: usize) {
    let [one, two] = rates.map(|mut v| median(&mut v));
    println!(
        "| {name} | {one:.2} | {two:.2} | {:.2} | {}/{passes}, {}/{passes} |",
        two / one,
        clean[0],
        clean[1],
    );
}

/// The `q` quantile of `samples` (sorted in place), in nanoseconds.
fn quantile(samples: &mut [u32], q: f64) -> u32 {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * q).round() as usize]
}

/// Single-insert latencies over at least two generation advances of the expiring filter.
fn latency_rows(f: &mut Filters) {
    let per_generation = f.window.div_ceil(8);
    let chunk = f.chunk;
    let total = (2 * per_generation + chunk).max(4 * chunk);
    let overhead = {
        let mut samples: Vec<u32> = (0..100_000)
            .map(|_| {
                let t = Instant::now();
                t.elapsed().as_nanos() as u32
            })
            .collect();
        quantile(&mut samples, 0.5)
    };
    let generation_before = f.expiring.stats().generation;
    let mut samples = [Vec::new(), Vec::new()];
    let mut fresh = ABSENT / 4;
    let mut done = 0;
    while done < total {
        for i in f.next..f.next + chunk {
            let k = key(i);
            let t = Instant::now();
            f.expiring.insert(&k).expect("never Full");
            samples[0].push(t.elapsed().as_nanos() as u32);
        }
        f.next += chunk;
        let keys: Vec<u64> = (fresh..fresh + chunk).map(key).collect();
        fresh += chunk;
        for k in &keys {
            let t = Instant::now();
            f.plain.insert(k).expect("sized for a chunk more");
            samples[1].push(t.elapsed().as_nanos() as u32);
        }
        for k in &keys {
            assert!(f.plain.remove(k));
        }
        done += chunk;
    }
    let advances = f.expiring.stats().generation - generation_before;
    println!();
    println!(
        "single inserts, ns (each timed by its own Instant pair, median cost {overhead} ns, \
         included); {} inserts each, {advances} generation advances of the expiring filter",
        samples[0].len()
    );
    println!("| insert latency, ns | p50 | p99 | p99.9 | max |");
    println!("|---|---|---|---|---|");
    let mut p999 = [0; 2];
    for (side, name) in [(0, "expiring"), (1, "plain")] {
        let s = &mut samples[side];
        let row = [0.5, 0.99, 0.999, 1.0].map(|q| quantile(s, q));
        p999[side] = row[2];
        println!(
            "| {name} | {} | {} | {} | {} |",
            row[0], row[1], row[2], row[3]
        );
    }
    println!(
        "p99.9 expiring / plain: {:.2}",
        f64::from(p999[0]) / f64::from(p999[1])
    );
}

fn main() {
    let args = parse_args();
    let build = Instant::now();
    let mut f = Filters::build(args.window);
    let stats = f.expiring.stats();
    println!(
        "window {} (G = {}), expiring: {} slots in use of {}, {}-bit fingerprints, {:.2} bits/window item; \
         plain: packed {}-bit, {} items, load {:.3}; default: {}-bit, load {:.3}; built in {:.1?}",
        args.window,
        stats.generations,
        stats.len,
        stats.bucket_count * 4,
        stats.fingerprint_bits,
        stats.bits_per_window_item,
        f.plain.fingerprint_bits(),
        f.held,
        f.held as f64 / (f.plain.bucket_count() * 4) as f64,
        f.default.fingerprint_bits(),
        f.held as f64 / (f.default.bucket_count() * f.default.bucket_size()) as f64,
        build.elapsed()
    );
    println!(
        "{} passes of {} operations, medians; the filters take turns pass by pass",
        args.passes, args.ops
    );
    if args.only == Only::Threads {
        thread_rows(&mut f, &args);
        return;
    }
    if args.only == Only::Insert {
        print_rows(&[insert_row(&mut f, &args)]);
        println!("inserts per filter: {}", args.ops * args.passes as u64);
        latency_rows(&mut f);
        return;
    }
    let mut rows = contains_rows(&f, &args);
    if args.only == Only::Contains {
        print_rows(&rows);
        println!("lookups per filter: {}", 2 * args.ops * args.passes as u64);
        return;
    }
    rows.push(insert_row(&mut f, &args));
    print_rows(&rows);
    thread_rows(&mut f, &args);
    latency_rows(&mut f);
}
