//! The live file against the in-memory filter, in the same run.
//!
//! ```text
//! cargo run --release -p ccf-benches --example shared_files -- [N] [DIR] [KILLS]
//! cargo run --release -p ccf-benches --example shared_files -- open BYTES [DIR]
//! ```
//!
//! The second form measures only step 2, on a filter of about `BYTES` bytes holding a few keys.
//!
//! 1. Two processes on one live file in `DIR` (default `/dev/shm`), each inserting then looking
//!    up its half of `N` random keys (default 20M, the reference's fill), against two threads
//!    doing the same on an in-memory filter of the same shape: rates and their ratio.
//! 2. Opening that file read-only and answering one key, against reading a snapshot of the same
//!    filter from a file in `DIR` and `from_bytes` (page cache warm for both; with
//!    `CCF_BENCH_COLD=1`, dropped before each, which needs root and a `DIR` on disk).
//! 3. `KILLS` (default 0) writer processes killed with SIGKILL at random points while they
//!    insert and remove at 85% load; after each, every acknowledged key must be found, `len`
//!    within 3 per kill, `verify` must pass: counts and the slowest `verify` are printed.
//!
//! Children are this binary run again with `CCF_BENCH_CHILD` set.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};

fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect()
}

/// Inserts then looks up `keys`, after `start`; the seconds of each phase.
fn run_half(filter: &ConcurrentCuckooFilter, keys: &[u64], start: impl FnOnce()) -> (f64, f64) {
    start();
    let t = Instant::now();
    for key in keys {
        filter.insert(key).unwrap();
    }
    let insert = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let found = keys.iter().filter(|key| filter.contains(key)).count();
    let lookup = t.elapsed().as_secs_f64();
    assert_eq!(found, keys.len(), "false negatives");
    (insert, lookup)
}

fn child(role: &str) {
    let path = std::env::var("CCF_BENCH_PATH").unwrap();
    let filter = ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite).unwrap();
    let var = |name: &str| -> u64 { std::env::var(name).unwrap().parse().unwrap() };
    match role {
        "half" => {
            let all = keys(var("CCF_BENCH_N") as usize, 7);
            let half = var("CCF_BENCH_HALF") as usize;
            let mid = all.len() / 2;
            let mine = if half == 0 { &all[..mid] } else { &all[mid..] };
            let (insert, lookup) = run_half(&filter, mine, || {
                println!("ready");
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).unwrap();
            });
            println!("{insert} {lookup}");
        }
        "writer" => {
            let base = var("CCF_BENCH_BASE");
            let mut acks = std::fs::OpenOptions::new()
                .append(true)
                .open(std::env::var("CCF_BENCH_ACKS").unwrap())
                .unwrap();
            for key in base.. {
                if key - base < 30 {
                    filter.insert(&key).unwrap();
                    acks.write_all(&key.to_le_bytes()).unwrap();
                }
                let scratch = key | 1 << 63;
                filter.insert(&scratch).unwrap();
                assert!(filter.remove(&scratch));
            }
        }
        _ => panic!("no role {role}"),
    }
}

fn spawn(role: &str, path: &Path, vars: &[(&str, String)]) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env("CCF_BENCH_CHILD", role)
        .env("CCF_BENCH_PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    for (name, value) in vars {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

fn processes_against_threads(n: usize, dir: &Path) -> PathBuf {
    let all = keys(n, 7);
    let memory = ConcurrentCuckooFilter::with_capacity(n);
    let barrier = Barrier::new(2);
    let (threads_insert, threads_lookup) = std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .chunks(n.div_ceil(2))
            .map(|half| {
                scope.spawn(|| {
                    run_half(&memory, half, || {
                        barrier.wait();
                    })
                })
            })
            .collect();
        let times: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        times
            .iter()
            .fold((0f64, 0f64), |(a, b), &(i, l)| (a.max(i), b.max(l)))
    });
    drop(memory);

    let path = dir.join(format!("ccf-bench-{}.live", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let shared = ConcurrentCuckooFilter::builder()
        .capacity(n)
        .create_shared(&path)
        .unwrap();
    let mut children: Vec<_> = (0..2)
        .map(|half| {
            spawn(
                "half",
                &path,
                &[
                    ("CCF_BENCH_N", n.to_string()),
                    ("CCF_BENCH_HALF", half.to_string()),
                ],
            )
        })
        .collect();
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|child| std::io::BufReader::new(child.stdout.take().unwrap()))
        .collect();
    for out in &mut outputs {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
    }
    for child in &mut children {
        writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
    }
    let (mut files_insert, mut files_lookup) = (0f64, 0f64);
    for (child, out) in children.iter_mut().zip(&mut outputs) {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let mut parts = line.split_whitespace().map(|x| x.parse::<f64>().unwrap());
        files_insert = files_insert.max(parts.next().unwrap());
        files_lookup = files_lookup.max(parts.next().unwrap());
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(shared.len(), n, "len exact at quiescence");
    let rate = |secs: f64| n as f64 / secs / 1e6;
    println!("{n} keys, file in {}", dir.display());
    println!(
        "inserts: two threads in memory {:.2} M/s, two processes on the file {:.2} M/s: {:.2}x",
        rate(threads_insert),
        rate(files_insert),
        threads_insert / files_insert
    );
    println!(
        "lookups: two threads in memory {:.2} M/s, two processes on the file {:.2} M/s: {:.2}x",
        rate(threads_lookup),
        rate(files_lookup),
        threads_lookup / files_lookup
    );
    path
}

fn open_against_load(path: &Path, dir: &Path) {
    let filter = ConcurrentCuckooFilter::open_shared(path, Access::ReadOnly).unwrap();
    let snapshot = dir.join(format!("ccf-bench-{}.ccf", std::process::id()));
    std::fs::write(&snapshot, filter.to_bytes()).unwrap();
    drop(filter);
    let key = keys(1, 7)[0];
    let mut best = [f64::MAX; 2];
    // `CCF_BENCH_COLD=1`: each side starts from a dropped page cache (root only, a file on disk).
    let cold = std::env::var_os("CCF_BENCH_COLD").is_some();
    for _ in 0..3 {
        if cold {
            drop_page_cache();
        }
        let t = Instant::now();
        let opened = ConcurrentCuckooFilter::open_shared(path, Access::ReadOnly).unwrap();
        assert!(opened.contains(&key));
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        drop(opened);
        if cold {
            drop_page_cache();
        }
        let t = Instant::now();
        let loaded =
            ConcurrentCuckooFilter::from_bytes(&std::fs::read(&snapshot).unwrap()).unwrap();
        assert!(loaded.contains(&key));
        best[1] = best[1].min(t.elapsed().as_secs_f64());
    }
    let bytes = std::fs::metadata(path).unwrap().len();
    println!(
        "first answer from a {:.0} MB file{}: open_shared {:.3} ms, read + from_bytes {:.1} ms: {:.0}x",
        bytes as f64 / 1e6,
        if cold { ", page cache dropped" } else { "" },
        best[0] * 1e3,
        best[1] * 1e3,
        best[1] / best[0]
    );
    std::fs::remove_file(snapshot).unwrap();
}

/// Writes back dirty pages and drops the clean ones, so the next read comes from the disk.
fn drop_page_cache() {
    let synced = std::process::Command::new("sync").status();
    assert!(synced.is_ok_and(|status| status.success()), "sync failed");
    std::fs::write("/proc/sys/vm/drop_caches", "1").expect("dropping the page cache needs root");
}

fn kills(count: u64, dir: &Path) {
    let path = dir.join(format!("ccf-bench-kills-{}.live", std::process::id()));
    let acks = dir.join(format!("ccf-bench-acks-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(200_000 + count as usize * 40)
        .create_shared(&path)
        .unwrap();
    let prefill = filter.capacity() as u64 * 85 / 100 - count * 30;
    for key in 0..prefill {
        filter.insert(&(key | 1 << 62)).unwrap();
    }
    let (mut acked, mut slowest, mut seed) = (Vec::new(), Duration::ZERO, 0x9e37_79b9u64);
    for round in 0..count {
        std::fs::write(&acks, b"").unwrap();
        let mut child = spawn(
            "writer",
            &path,
            &[
                ("CCF_BENCH_BASE", ((round + 1) << 40).to_string()),
                ("CCF_BENCH_ACKS", acks.display().to_string()),
            ],
        );
        seed = keys(1, seed)[0];
        std::thread::sleep(Duration::from_micros(2_000 + seed % 10_000));
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = std::fs::read(&acks).unwrap();
        acked.extend(
            bytes
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
        );
        let t = Instant::now();
        filter.verify().unwrap();
        slowest = slowest.max(t.elapsed());
        assert!(
            acked.iter().all(|key| filter.contains(key)),
            "round {round}"
        );
        let floor = prefill + acked.len() as u64;
        let len = filter.len() as u64;
        assert!(
            (floor..=floor + 3 * (round + 1)).contains(&len),
            "len {len}, floor {floor}"
        );
    }
    println!(
        "{count} kills: {} acknowledged keys all found, len {} over them (bound {}), \
         slowest verify {slowest:?}",
        acked.len(),
        filter.len() as u64 - prefill - acked.len() as u64,
        3 * count
    );
    let _ = std::fs::remove_file(&acks);
    let _ = std::fs::remove_file(&path);
}

fn main() {
    if let Ok(role) = std::env::var("CCF_BENCH_CHILD") {
        return child(&role);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("open") {
        let bytes: usize = args.get(1).map_or(1 << 30, |a| a.parse().unwrap());
        let dir = PathBuf::from(args.get(2).map_or("/dev/shm", String::as_str));
        let path = dir.join(format!("ccf-bench-open-{}.live", std::process::id()));
        let _ = std::fs::remove_file(&path);
        // Bucket words: 16 bits a slot, filled to 95% at capacity.
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(bytes / 2 * 95 / 100)
            .create_shared(&path)
            .unwrap();
        for key in keys(1000, 7) {
            filter.insert(&key).unwrap();
        }
        drop(filter);
        open_against_load(&path, &dir);
        std::fs::remove_file(path).unwrap();
        return;
    }
    let n = args.first().map_or(20_000_000, |a| a.parse().unwrap());
    let dir = PathBuf::from(args.get(1).map_or("/dev/shm", String::as_str));
    let kill_count = args.get(2).map_or(0, |a| a.parse().unwrap());
    let path = processes_against_threads(n, &dir);
    open_against_load(&path, &dir);
    std::fs::remove_file(path).unwrap();
    if kill_count > 0 {
        kills(kill_count, &dir);
    }
}
