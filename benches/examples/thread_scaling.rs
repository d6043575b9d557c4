//! How the mixed workloads of this crate's default filter scale with threads, for tables of
//! several sizes at several loads.
//!
//! ```text
//! cargo run --release -p ccf-benches --example thread_scaling [-- --threads 1,2,4,8,16
//!     --writes 0,50,250 --mib 1,64 --load 50,90 --rounds 9 --ms 200 --layout packed]
//! ```
//!
//! For each size (`--mib`, MiB of table), load (`--load`, percent of the slots filled) and mix
//! (`--writes`, inserts per thousand operations, as many removes, the rest lookups: 0 is lookups
//! only, 50 the read-heavy 90/5/5, 250 the write-heavy 50/25/25), a filter sized by
//! `with_capacity` is filled to that load, then the mixed workload of
//! `ccf_benches::measure::time_mixed` (each thread inserts new keys of its own, removes its
//! oldest, so the load stays put, and looks up its live keys and never-inserted keys half and
//! half) runs on each thread count of `--threads` (default 1 and every power of two up to the
//! machine's cores) in turns, `--rounds` times for about `--ms` milliseconds each. Each thread
//! is pinned to its own core of those the process may run on (Linux, `sched_setaffinity`) when
//! there are as many. It prints each count's median operations/s, its ratio to one thread, and
//! the spread of that ratio over the rounds. `--layout word` builds the filters with
//! `TableLayout::BucketWord` (a third more memory for the same items) instead of the default.
//!
//! On a machine other processes share, a 2-thread run often gets one core, and then measures the
//! other process rather than the filter; a run beside a busy process shares the caches with it.
//! So each run reads the CPU time its threads and the rest of the machine used
//! (`ccf_benches::measure::time_on_own_cores`) and is repeated, up to 20 times, until it had a
//! core per thread and the machine to itself; the last column counts the runs that did ("clean").
//! A count above the cores gets one run per round. Figures with few clean runs describe the
//! machine's load, not the filter.

use ccf_benches::measure::{machine, median, op_table, time_mixed, time_on_own_cores, Loaded};
use ccf_benches::peers::items_for_mib;
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::time::Duration;

const USAGE: &str = "usage: cargo run --release -p ccf-benches --example thread_scaling -- \
                     [--threads 1,2,4] [--writes 0,50,250] [--mib 1,64] [--load 50,90] \
                     [--rounds 9] [--ms 200] [--layout packed|word]";

/// Tries per timed run to get a core per thread.
const ATTEMPTS: usize = 20;

struct Args {
    threads: Vec<usize>,
    writes: Vec<usize>,
    mibs: Vec<usize>,
    loads: Vec<usize>,
    rounds: usize,
    ms: u64,
    layout: TableLayout,
}

/// The CPUs this process may run on, in order (empty where the OS does not say).
fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `set` is a plain bit set that `sched_getaffinity` fills, of the size passed.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is a valid, writable `cpu_set_t` of `size` bytes; pid 0 is this thread.
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return Vec::new();
        }
        // SAFETY: `CPU_ISSET` reads bit `cpu` of `set`, below `CPU_SETSIZE`.
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// Pins the calling thread to `cpu`; false where the OS refuses or cannot.
fn pin_to(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: as in `allowed_cpus`; `CPU_SET` sets bit `cpu` below `CPU_SETSIZE`, which
        // `allowed_cpus` returned.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut set) };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is a valid `cpu_set_t` of `size` bytes; pid 0 is this thread.
        unsafe { libc::sched_setaffinity(0, size, &set) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// A pool of `threads` threads, each pinned to its own CPU of `cpus` when there are as many;
/// whether they all were.
fn pinned_pool(threads: usize, cpus: &[usize]) -> (ThreadPool, bool) {
    let pinned = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut builder = ThreadPoolBuilder::new().num_threads(threads);
    if threads <= cpus.len() {
        let (cpus, pinned) = (cpus.to_vec(), std::sync::Arc::clone(&pinned));
        builder = builder.start_handler(move |i| {
            if pin_to(cpus[i]) {
                pinned.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    let pool = builder.build().expect("a thread pool");
    // The start handlers have run once every thread took a job.
    pool.broadcast(|_| ());
    let all = pinned.load(std::sync::atomic::Ordering::Relaxed) == threads;
    (pool, all)
}

fn parse() -> Result<Args, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut args = Args {
        threads: std::iter::successors(Some(1), |t| Some(t * 2))
            .take_while(|&t| t <= cores)
            .collect(),
        writes: vec![0, 50, 250],
        mibs: vec![1, 64],
        loads: vec![50, 90],
        rounds: 9,
        ms: 200,
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
            "--threads" => args.threads = list(&value)?,
            "--writes" => args.writes = list(&value)?,
            "--mib" => args.mibs = list(&value)?,
            "--load" => args.loads = list(&value)?,
            "--rounds" => args.rounds = one()?,
            "--ms" => args.ms = one()? as u64,
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
    let threads = args.threads.iter().any(|&t| t == 0 || t > 1024);
    if zero || threads || args.loads.iter().any(|&l| l == 0 || l > 95) {
        return Err(format!(
            "sizes, rounds and ms at least 1, threads 1 to 1024, loads 1 to 95\n{USAGE}"
        ));
    }
    if args.writes.iter().any(|&w| w > 500) {
        return Err(format!("writes at most 500 per 1000 operations\n{USAGE}"));
    }
    // Every ratio is to one thread's rate, measured first in each round.
    args.threads.push(1);
    args.threads.sort_unstable();
    args.threads.dedup();
    Ok(args)
}

/// One thread count's median operations/s, the ratios of its rounds to one thread's, and how
/// many of its runs had their cores.
struct Scaling {
    threads: usize,
    rate: f64,
    ratios: Vec<f64>,
    clean: usize,
}

fn measure(
    loaded: &Loaded<ConcurrentCuckooFilter>,
    pools: &[ThreadPool],
    args: &Args,
    writes: usize,
) -> Vec<Scaling> {
    let ops = op_table(writes, 1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut seed = 0;
    let mut time = |p: usize, iters: u64| {
        let t = args.threads[p];
        let attempts = if t <= cores { ATTEMPTS } else { 1 };
        let (took, own) = time_on_own_cores(t, attempts, || {
            seed += 1;
            time_mixed(&pools[p], loaded, &ops, seed, iters)
        });
        let rate = (t * ops.len()) as f64 * iters as f64 / took.as_secs_f64();
        (rate, usize::from(own))
    };
    let target = Duration::from_millis(args.ms).as_secs_f64();
    // Calibrated on each thread count; the passes also take the freshly filled table to the
    // workload's steady state before anything counts.
    let iters: Vec<u64> = (0..pools.len())
        .map(|p| {
            let (rate, _) = time(p, 16);
            let t = args.threads[p];
            ((target * rate / (t * ops.len()) as f64) as u64).max(16)
        })
        .collect();
    let mut rates = vec![Vec::new(); pools.len()];
    let mut clean = vec![0; pools.len()];
    for _ in 0..args.rounds {
        for p in 0..pools.len() {
            let (rate, had_cores) = time(p, iters[p]);
            rates[p].push(rate);
            clean[p] += had_cores;
        }
    }
    let one = rates[0].clone();
    rates
        .into_iter()
        .zip(clean)
        .zip(&args.threads)
        .map(|((mut rates, clean), &threads)| {
            let mut ratios: Vec<f64> = rates.iter().zip(&one).map(|(r, o)| r / o).collect();
            ratios.sort_by(f64::total_cmp);
            Scaling {
                threads,
                rate: median(&mut rates),
                ratios,
                clean,
            }
        })
        .collect()
}

fn main() {
    let args = parse().unwrap_or_else(|err| {
        eprintln!("{err}");
        std::process::exit(2)
    });
    let cpus = allowed_cpus();
    let (pools, pinned): (Vec<ThreadPool>, Vec<bool>) =
        args.threads.iter().map(|&t| pinned_pool(t, &cpus)).unzip();
    let max = *args.threads.iter().max().expect("one thread at least");
    let fill_pool = &pools[args.threads.iter().position(|&t| t == max).unwrap()];
    println!("machine: {}, layout {}", machine(), args.layout);
    println!(
        "threads {:?}, each pinned to its own core: {}; median of {} rounds of about {} ms, the counts in turns\n",
        args.threads,
        if pinned.iter().all(|&p| p) { "all" } else { "not all (fewer cores, or refused)" },
        args.rounds,
        args.ms
    );
    println!("| table | load | inserts, removes per 1000 | threads | M ops/s | ÷ 1 thread | of a round | clean runs |");
    println!("|---|---|---|---|---|---|---|---|");
    for &mib in &args.mibs {
        for &load in &args.loads {
            for &writes in &args.writes {
                let filter = ConcurrentCuckooFilter::builder()
                    .capacity(items_for_mib(mib))
                    .layout(args.layout)
                    .build()
                    .expect("a filter of a few MiB");
                let slots = filter.bucket_count() * filter.bucket_size();
                let loaded = Loaded::fill_into(filter, slots * load / 100, max, fill_pool, false);
                // The mix keeps the load: each thread removes one of its keys per insert.
                let held = loaded.filter.load_factor();
                let table = loaded.filter.memory_usage() as f64 / f64::from(1 << 20);
                for s in measure(&loaded, &pools, &args, writes) {
                    println!(
                        "| {table:.2} MiB | {:.0}% | {writes} | {} | {:.1} | {:.2} | {:.2}–{:.2} | {} of {} |",
                        held * 100.0,
                        s.threads,
                        s.rate / 1e6,
                        median(&mut s.ratios.clone()),
                        s.ratios[0],
                        s.ratios[s.ratios.len() - 1],
                        s.clean,
                        args.rounds
                    );
                }
            }
        }
    }
}
