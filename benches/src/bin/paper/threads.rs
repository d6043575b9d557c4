//! Throughput against threads for mixed workloads, this crate against the concurrent Rust peers
//! (a figure the paper does not have).

use ccf_benches::measure::{median, op_table, time_mixed, time_on_own_cores, Loaded, Op, Pools};
use ccf_benches::peers::{items_for_mib, Cuckoofilter, Peer, Roomy};
use ccf_benches::plot::{Plot, Series};
use ccf_benches::report::{Report, Res};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use parking_lot::{Mutex, RwLock};
use rayon::ThreadPool;
use std::fmt::Write as _;

const READ_HEAVY: &str = "read-heavy 90/5/5";
const WRITE_HEAVY: &str = "write-heavy 50/25/25";

/// `(workload, filter, threads, million operations/s)`.
type ThreadPoint = (&'static str, &'static str, usize, f64);

/// Tries per timed run to get a core per thread (see [`time_on_own_cores`]).
const ATTEMPTS: usize = 20;

/// Fills a filter of type `F` with `items` keys, then runs each mixed workload on it with every
/// pool, `runs` times, for about a quarter of a second each.
fn thread_sweep<F: Peer + Send + Sync>(
    items: usize,
    pools: &Pools,
    workloads: &[(&'static str, Vec<Op>)],
    runs: usize,
    out: &mut Vec<ThreadPoint>,
) {
    let loaded = &Loaded::<F>::fill(items, pools.0.len(), pools.max(), true);
    let mut seed = 0;
    let mut time = |pool: &ThreadPool, ops: &[Op], iters: u64| {
        let threads = pool.current_num_threads();
        let (took, own) = time_on_own_cores(threads, ATTEMPTS, || {
            seed += 1;
            time_mixed(pool, loaded, ops, seed, iters)
        });
        // A filter whose threads sleep on a lock (the `Mutex` peer) never keeps its cores busy.
        if !own {
            eprintln!(
                "  {}: no run of {threads} threads kept {threads} cores busy on an idle machine",
                F::NAME
            );
        }
        took.as_secs_f64()
    };
    for (name, ops) in workloads {
        // Calibrate each pool to about 0.25 s per measurement; the first passes also take the
        // freshly filled filter to the steady state of the workload before anything counts.
        let iters: Vec<u64> = pools
            .0
            .iter()
            .map(|pool| {
                let probe = time(pool, ops, 8);
                ((0.25 / probe * 8.0) as u64).max(8)
            })
            .collect();
        time(pools.max(), ops, iters[iters.len() - 1]);
        // Thread counts take turns within each run, so a change in the machine's load hits all.
        let mut rates = vec![Vec::new(); pools.0.len()];
        for _ in 0..runs {
            for (i, pool) in pools.0.iter().enumerate() {
                let ops_done = (pool.current_num_threads() * ops.len()) as f64 * iters[i] as f64;
                rates[i].push(ops_done / time(pool, ops, iters[i]) / 1e6);
            }
        }
        for (pool, rates) in pools.0.iter().zip(&mut rates) {
            out.push((name, F::NAME, pool.current_num_threads(), median(rates)));
        }
    }
}

fn thread_figure(mib: usize, max_threads: usize, runs: usize) -> Vec<ThreadPoint> {
    let pools = Pools::new(max_threads);
    let items = items_for_mib(mib);
    let workloads = [
        (READ_HEAVY, op_table(50, 1)),
        (WRITE_HEAVY, op_table(250, 2)),
    ];
    let mut out = Vec::new();
    thread_sweep::<ConcurrentCuckooFilter>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<Roomy>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<atomic_cuckoo_filter::CuckooFilter>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<Mutex<Cuckoofilter>>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<RwLock<Cuckoofilter>>(items, &pools, &workloads, runs, &mut out);
    out
}

/// The mixed workloads on 1 to `max_threads` threads, filters of `mib` MiB.
pub fn report(report: &mut Report, mib: usize, max_threads: usize, runs: usize) -> Res<()> {
    let points = thread_figure(mib, max_threads, runs);
    let mut t = String::new();
    writeln!(t, "## Mixed workloads against threads ({mib} MiB of this crate's filter at its capacity; the peers hold as many items)\n")?;
    write!(t, "| workload | filter |")?;
    for n in 1..=max_threads {
        write!(
            t,
            " {n} thread{} (M ops/s) |",
            if n == 1 { "" } else { "s" }
        )?;
    }
    writeln!(t, " {max_threads} / 1 |")?;
    writeln!(t, "|---|---|{}---|", "---|".repeat(max_threads))?;
    let mut series: Vec<(&str, Series)> = Vec::new();
    for &(workload, filter, threads, rate) in &points {
        match series
            .iter_mut()
            .find(|(w, s)| *w == workload && s.name == filter)
        {
            Some((_, s)) => s.points.push((threads as f64, rate)),
            None => series.push((
                workload,
                Series {
                    name: filter.to_string(),
                    points: vec![(threads as f64, rate)],
                },
            )),
        }
    }
    for (workload, s) in &series {
        write!(t, "| {workload} | {} |", s.name)?;
        for (_, rate) in &s.points {
            write!(t, " {rate:.2} |")?;
        }
        writeln!(
            t,
            " {:.2} |",
            s.points[s.points.len() - 1].1 / s.points[0].1
        )?;
    }
    report.table("threads.md", &t)?;
    let rows: Vec<String> = points
        .iter()
        .map(|(w, f, n, r)| format!("{w},{f},{n},{r:.3}"))
        .collect();
    report.csv("threads.csv", "workload,filter,threads,mops", &rows)?;
    for (workload, file) in [
        (READ_HEAVY, "threads_read_heavy.png"),
        (WRITE_HEAVY, "threads_write_heavy.png"),
    ] {
        let lines = series
            .iter()
            .filter(|(w, _)| *w == workload)
            .map(|(_, s)| Series {
                name: s.name.clone(),
                points: s.points.clone(),
            })
            .collect();
        let title = format!("Mixed workload against threads: {workload}");
        let mut plot = Plot::new(file, title, "threads", "operations (million/s)").series(lines);
        plot.whole_x = true;
        report.plot(
            &plot,
            &format!("{mib} MiB filter shared through an Arc"),
            None,
        )?;
    }
    Ok(())
}
