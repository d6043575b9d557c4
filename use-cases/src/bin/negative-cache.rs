//! Absent-key `get` throughput and latency of a redb store, with and without the filter in front.
//!
//! `cargo run --release -p ccf-use-cases --bin negative-cache -- [--keys N] [--ops N]
//! [--rounds N] [--dir PATH]`
//!
//! Builds (or reuses) a database of `--keys` keys in `--dir`, opens it with a rebuilt filter and
//! then with a snapshot, and times `--ops` gets of absent keys per thread on 1 and 2 threads,
//! alternating the bare database and the filtered store in each of `--rounds` rounds.

use std::path::PathBuf;
use std::time::Instant;

use ccf_use_cases::measure::{fail, flag, median, quantile, SplitMix};
use ccf_use_cases::negative_cache::{Answer, FilterSource, NegativeCache, Options};

/// Keys stored per transaction while the database is built.
const LOAD_BATCH: u64 = 200_000;

fn present_key(i: u64) -> [u8; 8] {
    (2 * i).to_be_bytes()
}

fn absent_key(i: u64) -> [u8; 8] {
    (2 * i + 1).to_be_bytes()
}

/// One timed run: `threads` threads each doing `ops` gets through `get`, which says whether the
/// filter answered. Returns gets per second, per-get latencies in ns, and filter answers.
fn run(
    threads: usize,
    ops: u64,
    keys: u64,
    get: &(dyn Fn(&[u8]) -> bool + Sync),
) -> (f64, Vec<u32>, u64) {
    let start = Instant::now();
    let results: Vec<(Vec<u32>, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut rng = SplitMix(t as u64 + 1);
                    let mut latencies = Vec::with_capacity(ops as usize);
                    let mut by_filter = 0u64;
                    for _ in 0..ops {
                        let key = absent_key(rng.next_u64() % keys);
                        let began = Instant::now();
                        by_filter += u64::from(get(&key));
                        latencies.push(began.elapsed().as_nanos().min(u32::MAX as u128) as u32);
                    }
                    (latencies, by_filter)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let mut latencies = Vec::with_capacity(threads * ops as usize);
    let mut by_filter = 0;
    for (lat, filtered) in results {
        latencies.extend(lat);
        by_filter += filtered;
    }
    (
        (threads as u64 * ops) as f64 / seconds,
        latencies,
        by_filter,
    )
}

fn main() {
    let keys: u64 = flag("--keys", 1_000_000);
    if keys == 0 {
        fail("--keys must be at least 1: the absent keys asked for lie between stored ones");
    }
    let ops: u64 = flag("--ops", 1_000_000);
    let rounds: usize = flag("--rounds", 3);
    let dir: PathBuf = flag(
        "--dir",
        std::env::temp_dir().join(format!("ccf-negative-cache-{keys}")),
    );
    if let Err(err) = std::fs::create_dir_all(&dir) {
        fail(format_args!("--dir {}: {err}", dir.display()));
    }
    let db_path = dir.join("store.redb");
    let snapshot = dir.join("filter.snapshot");

    let bare = Options {
        filter: false,
        ..Options::default()
    };
    {
        let store = NegativeCache::open(&db_path, bare)
            .unwrap_or_else(|err| fail(format_args!("{}: {err}", db_path.display())));
        let stored = store.len().expect("count keys");
        if stored != keys {
            if stored != 0 {
                fail(format_args!(
                    "{} holds {stored} keys, not --keys {keys}: use another --dir",
                    db_path.display()
                ));
            }
            let began = Instant::now();
            for batch in (0..keys).step_by(LOAD_BATCH as usize) {
                let pairs: Vec<([u8; 8], [u8; 8])> = (batch..(batch + LOAD_BATCH).min(keys))
                    .map(|i| (present_key(i), i.to_le_bytes()))
                    .collect();
                store
                    .put_all(pairs.iter().map(|(k, v)| (&k[..], &v[..])))
                    .expect("load keys");
            }
            println!(
                "built a database of {keys} keys in {:.1} s",
                began.elapsed().as_secs_f64()
            );
        }
    }

    let _ = std::fs::remove_file(&snapshot);
    let options = Options {
        snapshot: Some(snapshot.clone()),
        progress: true,
        ..Options::default()
    };
    let began = Instant::now();
    let store = NegativeCache::open(&db_path, options.clone()).expect("open with a filter");
    let rebuilt = began.elapsed().as_secs_f64();
    assert!(matches!(store.source(), FilterSource::Rebuilt { keys: k, .. } if *k == keys));
    let began = Instant::now();
    store.write_snapshot().expect("write the snapshot");
    let written = began.elapsed().as_secs_f64();
    drop(store);
    let began = Instant::now();
    let store = NegativeCache::open(&db_path, options).expect("open from the snapshot");
    let loaded = began.elapsed().as_secs_f64();
    assert!(matches!(store.source(), FilterSource::Snapshot { .. }));
    let filter = store.filter().expect("a filter");
    println!(
        "filter: rebuilt from the database on all cores in {rebuilt:.2} s, snapshot written in \
         {written:.2} s, opened from the snapshot in {loaded:.2} s; {} keys, {:.1} MiB, load {:.2}",
        filter.len(),
        filter.memory_usage() as f64 / (1 << 20) as f64,
        filter.load_factor()
    );
    for i in (0..keys).step_by((keys / 1000).max(1) as usize) {
        assert!(
            store.get(&present_key(i)).unwrap().is_some(),
            "key {i} lost"
        );
    }

    let bare_get = |key: &[u8]| {
        assert!(store.get_from_database(key).unwrap().is_none());
        false
    };
    let filtered_get = |key: &[u8]| {
        let (value, answer) = store.get_answered(key).unwrap();
        assert!(value.is_none());
        answer == Answer::Filter
    };
    println!(
        "\nabsent-key gets, {keys} keys stored, {ops} gets per thread, median of {rounds} rounds"
    );
    println!(
        "{:<8} {:<16} {:>12} {:>8} {:>8} {:>18}",
        "threads", "store", "gets/s", "p50 ns", "p99 ns", "db reads avoided"
    );
    for threads in [1, 2] {
        let mut rows = [
            (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            Default::default(),
        ];
        for _ in 0..rounds {
            for (row, get) in rows
                .iter_mut()
                .zip([&bare_get as &(dyn Fn(&[u8]) -> bool + Sync), &filtered_get])
            {
                let (rate, mut latencies, by_filter) = run(threads, ops, keys, get);
                row.0.push(rate);
                row.1.push(f64::from(quantile(&mut latencies, 0.5)));
                row.2.push(f64::from(quantile(&mut latencies, 0.99)));
                row.3.push(by_filter as f64 / latencies.len() as f64);
            }
        }
        let mut rates = [0.0; 2];
        for ((name, row), rate) in ["redb alone", "filter + redb"]
            .iter()
            .zip(rows.iter_mut())
            .zip(rates.iter_mut())
        {
            *rate = median(&mut row.0);
            println!(
                "{:<8} {:<16} {:>12.0} {:>8.0} {:>8.0} {:>17.3}%",
                threads,
                name,
                *rate,
                median(&mut row.1),
                median(&mut row.2),
                100.0 * median(&mut row.3)
            );
        }
        println!(
            "{:<8} {:<16} {:>11.1}x",
            threads,
            "speedup",
            rates[1] / rates[0]
        );
    }
}
