//! Where a filter's table lives in memory: how much of it the kernel backs with huge pages, and
//! how many page faults filling it takes. Linux only (it reads `/proc/self/smaps`).
//!
//! ```text
//! cargo run --release -p ccf-benches --example placement [-- ITEMS]
//! ```
//!
//! Builds a filter for `ITEMS` items (default 8M) with `ConcurrentCuckooFilter::with_capacity`,
//! then fills it from all cores as the crate's demo does. Before and after the fill it prints
//! every anonymous mapping large enough to hold the table: its start's offset from a 2 MiB
//! boundary, its size, how much of it is resident and how much of that is on transparent huge
//! pages (`AnonHugePages`), and the minor page faults the process took meanwhile. A table on
//! huge pages has one TLB entry per 2 MiB instead of per 4 KiB, which a lookup that reads two
//! random buckets of a table larger than the TLB's reach (a few MB) pays for on nearly every key.

use ccf_benches::args::count_arg;
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::sync::Arc;
use std::time::Instant;

const HUGE_PAGE: u64 = 2 << 20;

/// One mapping of `/proc/self/smaps`, sizes in KiB.
#[derive(Debug)]
struct Mapping {
    start: u64,
    size_kib: u64,
    rss_kib: u64,
    huge_kib: u64,
}

fn main() {
    let items: u64 = count_arg(
        8_000_000,
        "cargo run --release -p ccf-benches --example placement -- [ITEMS]",
    );
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let faults = minor_faults();
    let filter = Arc::new(ConcurrentCuckooFilter::with_capacity(items as usize));
    let table_kib = filter.memory_usage() as u64 / 1024;
    println!(
        "filter: {items} items, {:.1} MB, {threads} threads",
        filter.memory_usage() as f64 / 1e6
    );
    report("built", table_kib, minor_faults() - faults);

    let faults = minor_faults();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let filter = Arc::clone(&filter);
            scope.spawn(move || {
                for key in t * items / threads..(t + 1) * items / threads {
                    filter.insert(&key).expect("sized for these items");
                }
            });
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    report("filled", table_kib, minor_faults() - faults);
    println!("fill: {:.2} M items/s", items as f64 / seconds / 1e6);
}

fn report(when: &str, table_kib: u64, faults: u64) {
    println!("{when}: {faults} minor page faults");
    for mapping in mappings()
        .into_iter()
        .filter(|m| m.size_kib >= table_kib * 9 / 10)
    {
        println!(
            "  mapping {:#x} (+{} KiB past a 2 MiB boundary): {} KiB, resident {} KiB, huge pages {} KiB ({:.1}% of resident)",
            mapping.start,
            (mapping.start % HUGE_PAGE) / 1024,
            mapping.size_kib,
            mapping.rss_kib,
            mapping.huge_kib,
            mapping.huge_kib as f64 * 100.0 / mapping.rss_kib.max(1) as f64,
        );
    }
}

/// The process's anonymous mappings (no file behind them), from `/proc/self/smaps`.
fn mappings() -> Vec<Mapping> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut found = Vec::new();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if let Some((start, _end)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            found.extend(current.take());
            // An anonymous mapping has five fields: no path (or a bracketed name like [heap]).
            let path = line.split_whitespace().nth(5);
            if path.unwrap_or("[").starts_with('[') {
                current = u64::from_str_radix(start, 16).ok().map(|start| Mapping {
                    start,
                    size_kib: 0,
                    rss_kib: 0,
                    huge_kib: 0,
                });
            }
            continue;
        }
        let value = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        if let Some(mapping) = current.as_mut() {
            match first {
                "Size:" => mapping.size_kib = value,
                "Rss:" => mapping.rss_kib = value,
                "AnonHugePages:" => mapping.huge_kib = value,
                _ => {}
            }
        }
    }
    found.extend(current);
    found
}

/// Minor page faults of this process so far (`/proc/self/stat`, field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
