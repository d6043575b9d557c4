//! Exactly-once ingestion of a generated stream with duplicates, on all cores.
//!
//! `cargo run --release -p ccf-use-cases --bin dedup -- [--records N] [--ids N]
//! [--capacity N] [--exact]`
//!
//! Streams `--records` records drawn from `--ids` ids (default: half the records, at least 1)
//! through a filter sized for `--capacity` (default: `--ids`) with `insert_unique` as the gate,
//! on all of rayon's threads. With `--exact`, then counts the distinct records with a `HashSet`
//! on one thread, and so the unique records the filter wrongly dropped.

use std::time::Instant;

use ccf_use_cases::ingest::{dedup_exact, dedup_with_filter, Stream};
use ccf_use_cases::measure::{cpu_seconds, fail, flag, peak_memory, switch};

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() {
    let records: u64 = flag("--records", 100_000_000);
    let ids: u64 = flag("--ids", (records / 2).max(1));
    if ids == 0 {
        fail("--ids must be at least 1: records are drawn from the ids");
    }
    let capacity: usize = flag("--capacity", ids as usize);
    let stream = Stream {
        records,
        ids,
        seed: flag("--seed", 1),
    };
    let threads = rayon::current_num_threads();

    let began = Instant::now();
    let cpu = cpu_seconds().unwrap_or(0.0);
    let (passed, gate) = dedup_with_filter(stream, capacity)
        .unwrap_or_else(|err| fail(format_args!("--capacity {capacity}: {err}")));
    let seconds = began.elapsed().as_secs_f64();
    let cpu = cpu_seconds().unwrap_or(0.0) - cpu;
    let peak = peak_memory().unwrap_or(0);
    println!(
        "filter gate: {records} records from {ids} ids on {threads} threads in {seconds:.2} s \
         ({:.1} M records/s; {cpu:.1} CPU s, {:.1} M records per CPU second); let through {}, \
         no room for {}; filter {:.1} MiB at load {:.3}; peak memory {:.1} MiB",
        records as f64 / seconds / 1e6,
        records as f64 / cpu / 1e6,
        passed.unique,
        passed.full,
        mib(gate.memory_usage() as u64),
        gate.load_factor(),
        mib(peak)
    );
    drop(gate);
    if switch("--exact") {
        let began = Instant::now();
        let cpu = cpu_seconds().unwrap_or(0.0);
        let distinct = dedup_exact(stream);
        let seconds = began.elapsed().as_secs_f64();
        let cpu = cpu_seconds().unwrap_or(0.0) - cpu;
        println!(
            "exact HashSet: {distinct} distinct records on 1 thread in {seconds:.2} s \
             ({:.1} M records/s; {cpu:.1} CPU s); peak memory of the process {:.1} MiB",
            records as f64 / seconds / 1e6,
            mib(peak_memory().unwrap_or(0))
        );
        let dropped = distinct - passed.unique;
        println!(
            "unique records wrongly dropped by the filter: {dropped} ({:.4}% of {distinct})",
            100.0 * dropped as f64 / distinct as f64
        );
    }
    if passed.full > 0 {
        std::process::exit(1);
    }
}
