//! How the read-heavy mixed workload (90% contains, 5% insert, 5% remove) of this crate's default
//! filter scales from 1 to 2 threads, for tables of several sizes at several loads.
//!
//! ```text
//! cargo run --release -p ccf-benches --example thread_scaling [-- --mib 1,64 --load 50,90
//!     --rounds 9 --ms 200 --writes 50 --layout packed]
//! ```
//!
//! For each size (`--mib`, MiB of table) and load (`--load`, percent of the slots filled), a
//! filter sized by `with_capacity` is filled to that load, then the mixed workload of
//! `ccf_benches::measure::time_mixed` (each thread inserts new keys of its own, removes its
//! oldest, so the load stays put, and looks up its live keys and never-inserted keys half and
//! half) runs on 1 and on 2 threads in turns, `--rounds` times for about `--ms` milliseconds
//! each. It prints the median operations/s of each thread count, their ratio, and the spread of
//! the ratio over the rounds. `--writes` is the inserts per thousand operations (as many
//! removes): 0 makes the workload lookups only. `--layout word` builds the filters with
//! `TableLayout::BucketWord` (a third more memory for the same items) instead of the default.
//!
//! On a machine other processes share, a 2-thread run often gets one core, and then measures the
//! other process rather than the filter; a run beside a busy process shares the caches with it.
//! So each run reads the CPU time its threads and the rest of the machine used
//! (`ccf_benches::measure::time_on_own_cores`) and is repeated, up to 20 times, until it had a
//! core per thread and the machine to itself; the last column counts the runs that did ("clean").
//! Figures with few clean runs describe the machine's load, not the filter.

use ccf_benches::measure::{
    machine, median, op_table, time_mixed, time_on_own_cores, Loaded, Pools,
};
use ccf_benches::peers::items_for_mib;
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
use std::time::Duration;

const USAGE: &str = "usage: cargo run --release -p ccf-benches --example thread_scaling -- \
                     [--mib 1,64] [--load 50,90] [--rounds 9] [--ms 200] [--writes 50] [--layout packed|word]";

/// Tries per timed run to get a core per thread.
const ATTEMPTS: usize = 20;

struct Args {
    mibs: Vec<usize>,
    loads: Vec<usize>,
    rounds: usize,
    ms: u64,
    writes: usize,
    layout: TableLayout,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        mibs: vec![1, 64],
        loads: vec![50, 90],
        rounds: 9,
        ms: 200,
        writes: 50,
        layout: TableLayout::Packed,
    };
    let list = |v: &str| -> Result<Vec<usize>, String> {
        v.split(',')
            .map(|n| {
                n.parse()
                    .map_err(|_| format!("not a number: {n:?}\n{USAGE}"))
            })
            .collect()
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let one = || list(&value).map(|v| v[0]);
        match flag.as_str() {
            "--mib" => args.mibs = list(&value)?,
            "--load" => args.loads = list(&value)?,
            "--rounds" => args.rounds = one()?,
            "--ms" => args.ms = one()? as u64,
            "--writes" => args.writes = one()?,
            "--layout" => {
                args.layout = match value.as_str() {
                    "packed" => TableLayout::Packed,
                    "word" => TableLayout::BucketWord,
                    _ => return Err(USAGE.into()),
                }
            }
            _ => return Err(USAGE.into()),
        }
    }
    let zero = args.mibs.contains(&0) || args.rounds == 0 || args.ms == 0;
    if zero || args.loads.iter().any(|&l| l == 0 || l > 95) || args.writes > 500 {
        return Err(format!(
            "sizes, rounds and ms at least 1, loads 1 to 95, writes at most 500\n{USAGE}"
        ));
    }
    Ok(args)
}

/// Median operations/s on 1 and on 2 threads, the ratios of the rounds, and how many of the
/// runs had their cores.
fn measure(
    loaded: &Loaded<ConcurrentCuckooFilter>,
    pools: &Pools,
    args: &Args,
) -> (f64, f64, Vec<f64>, usize) {
    let ops = op_table(args.writes, 1);
    let mut seed = 0;
    let mut time = |t: usize, iters: u64| {
        let (took, own) = time_on_own_cores(t, ATTEMPTS, || {
            seed += 1;
            time_mixed(&pools.0[t - 1], loaded, &ops, seed, iters)
        });
        let rate = (t * ops.len()) as f64 * iters as f64 / took.as_secs_f64();
        (rate, usize::from(own))
    };
    let target = Duration::from_millis(args.ms).as_secs_f64();
    // Calibrated on each thread count; the passes also take the freshly filled table to the
    // workload's steady state before anything counts.
    let iters = [1, 2].map(|t| {
        let (rate, _) = time(t, 16);
        ((target * rate / (t * ops.len()) as f64) as u64).max(16)
    });
    let (mut rates, mut own) = ([Vec::new(), Vec::new()], 0);
    for _ in 0..args.rounds {
        for t in [1, 2] {
            let (rate, had_cores) = time(t, iters[t - 1]);
            rates[t - 1].push(rate);
            own += had_cores;
        }
    }
    let ratios = rates[1]
        .iter()
        .zip(&rates[0])
        .map(|(two, one)| two / one)
        .collect();
    let [mut one, mut two] = rates;
    (median(&mut one), median(&mut two), ratios, own)
}

fn main() {
    let args = parse().unwrap_or_else(|err| {
        eprintln!("{err}");
        std::process::exit(2)
    });
    let pools = Pools::new(2);
    println!("machine: {}, layout {}", machine(), args.layout);
    println!(
        "{} inserts, {} removes per 1000 operations, the rest lookups; median of {} rounds of about {} ms, 1 and 2 threads in turns\n",
        args.writes, args.writes, args.rounds, args.ms
    );
    println!("| table | load | 1 thread (M ops/s) | 2 threads (M ops/s) | 2 / 1 | 2 / 1 of a round | clean runs |");
    println!("|---|---|---|---|---|---|---|");
    for &mib in &args.mibs {
        for &load in &args.loads {
            let filter = ConcurrentCuckooFilter::builder()
                .capacity(items_for_mib(mib))
                .layout(args.layout)
                .build()
                .expect("a filter of a few MiB");
            let slots = filter.bucket_count() * filter.bucket_size();
            let loaded = Loaded::fill_into(filter, slots * load / 100, 2, pools.max(), false);
            // The mix keeps the load: each thread removes one of its keys per insert.
            let held = loaded.filter.load_factor();
            let (one, two, mut ratios, own) = measure(&loaded, &pools, &args);
            let table = loaded.filter.memory_usage() as f64 / f64::from(1 << 20);
            ratios.sort_by(f64::total_cmp);
            println!(
                "| {table:.2} MiB | {:.0}% | {:.1} | {:.1} | {:.2} | {:.2}–{:.2} | {own} of {} |",
                held * 100.0,
                one / 1e6,
                two / 1e6,
                two / one,
                ratios[0],
                ratios[ratios.len() - 1],
                2 * args.rounds
            );
        }
    }
}
