//! What a child process does: this binary run again with `CCF_SHARED_CHILD` set, so that the
//! test filter `child::child` runs only here.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command};

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter, MergeError};

/// Starts this test binary as a child doing `role` on the file at `path`, with `vars`.
pub fn spawn(role: &str, path: &Path, vars: &[(&str, String)]) -> Child {
    command(role, path, vars).spawn().unwrap()
}

/// Lets `child` run for `least` plus a random part of `spread` microseconds (from `seed`, an
/// xorshift state moved on), then kills it (SIGKILL) and checks that the kill ended it.
pub fn kill_after(child: &mut Child, seed: &mut u64, least: u64, spread: u64) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    std::thread::sleep(std::time::Duration::from_micros(least + *seed % spread));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child ran until killed: {status:?}");
}

/// The command [`spawn`] starts, to adjust before starting it.
pub fn command(role: &str, path: &Path, vars: &[(&str, String)]) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child::child",
            "--test-threads=1",
            "--quiet",
            "--nocapture",
        ])
        .env("CCF_SHARED_CHILD", role)
        .env("CCF_SHARED_PATH", path)
        .stdout(std::process::Stdio::null());
    for (name, value) in vars {
        command.env(name, value);
    }
    command
}

fn var(name: &str) -> u64 {
    std::env::var(name).unwrap().parse().unwrap()
}

/// Keys of process `p`, thread `t`: disjoint ranges.
pub fn keys_of(p: u64, t: u64, n: u64) -> std::ops::Range<u64> {
    let base = (p * 16 + t) << 32;
    base..base + n
}

#[test]
fn child() {
    let Ok(role) = std::env::var("CCF_SHARED_CHILD") else {
        return;
    };
    let path = std::env::var("CCF_SHARED_PATH").unwrap();
    if role == "refused_read_write" {
        // Run as a user the file gives no write permission: the kernel refuses, and so must we.
        let err = ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite).unwrap_err();
        assert!(err.to_string().contains("ReadOnly"), "{err}");
        let reader = ConcurrentCuckooFilter::open_shared(&path, Access::ReadOnly).unwrap();
        assert!(reader.contains(&3u64), "a read-only opener misses a key");
        return;
    }
    if role == "creator" {
        return creator(&path, &std::env::var("CCF_ACKS").unwrap());
    }
    if role == "read_only_without_memory" {
        return read_only_without_memory(&path);
    }
    let filter = ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite).unwrap();
    match role.as_str() {
        "mixed" => mixed(&filter, var("CCF_P"), var("CCF_N")),
        "writer" => writer(
            &filter,
            var("CCF_BASE"),
            &std::env::var("CCF_ACKS").unwrap(),
        ),
        "survivor" => survivor(
            &filter,
            var("CCF_BASE"),
            &std::env::var("CCF_ACKS").unwrap(),
            var("CCF_MILLIS"),
        ),
        other => panic!("no role {other}"),
    }
}

/// Two threads, each inserting its keys, removing every other one, and looking up the ones
/// it kept (and others') meanwhile: a miss panics, which fails the child and so the test.
fn mixed(filter: &ConcurrentCuckooFilter, p: u64, n: u64) {
    std::thread::scope(|scope| {
        for t in 0..2 {
            scope.spawn(move || {
                let keys = keys_of(p, t, n);
                for (i, key) in keys.clone().enumerate() {
                    filter.insert(&key).unwrap();
                    if i % 2 == 1 {
                        assert!(filter.remove(&(key - 1)), "remove {key}");
                    }
                    if i % 7 == 0 && i > 0 {
                        // The last odd index so far: odd ones are kept.
                        let kept = keys.start + (i as u64 - 1 + (i as u64 & 1));
                        assert!(filter.contains(&kept), "false negative {kept}");
                    }
                }
                for (i, key) in keys.enumerate() {
                    if i % 2 == 1 {
                        assert!(filter.contains(&key), "false negative {key}");
                    }
                }
            });
        }
    });
}

/// Inserts `base` to `base + 29` and appends each key to the file `acks` once its insert has
/// returned; between two, inserts and removes a scratch key, so that kills land in removes
/// too. Runs until killed.
fn writer(filter: &ConcurrentCuckooFilter, base: u64, acks: &str) {
    let mut acks = std::fs::OpenOptions::new().append(true).open(acks).unwrap();
    // A few acknowledged keys a round, so that the filter stays near its load; the rest is
    // churn at that load, whose inserts move fingerprints.
    for key in base.. {
        if key - base < 30 {
            filter.insert(&key).unwrap();
            acks.write_all(&key.to_le_bytes()).unwrap();
        }
        let scratch = key | 1 << 63;
        filter.insert(&scratch).unwrap();
        assert!(filter.remove(&scratch));
        if std::env::var_os("CCF_FLUSH").is_some() && key % 16 == 0 {
            filter.flush().unwrap();
        }
    }
}

/// For `millis` ms: inserts `base` up to `base + 399` (each appended to `acks` once its insert
/// returned) with a scratch key inserted and removed after each, then only the scratch churn,
/// looking up its acknowledged keys as it goes. Then appends the slowest single call it made, in
/// microseconds, to `acks` as the last word, and exits.
fn survivor(filter: &ConcurrentCuckooFilter, base: u64, acks: &str, millis: u64) {
    let mut acks = std::fs::OpenOptions::new().append(true).open(acks).unwrap();
    let start = std::time::Instant::now();
    let mut slowest = std::time::Duration::ZERO;
    let mut timed = |call: &mut dyn FnMut()| {
        let began = std::time::Instant::now();
        call();
        slowest = slowest.max(began.elapsed());
    };
    let mut key = base;
    while start.elapsed().as_millis() < u128::from(millis) {
        if key - base < 400 {
            timed(&mut || filter.insert(&key).unwrap());
            acks.write_all(&key.to_le_bytes()).unwrap();
        }
        let scratch = key | 1 << 63;
        timed(&mut || filter.insert(&scratch).unwrap());
        timed(&mut || assert!(filter.remove(&scratch)));
        let kept = base + key.wrapping_mul(7919) % (key - base + 1).min(400);
        timed(&mut || assert!(filter.contains(&kept), "false negative {kept}"));
        key += 1;
    }
    // The marker of a finished run, then the slowest call.
    acks.write_all(&u64::MAX.to_le_bytes()).unwrap();
    acks.write_all(&(slowest.as_micros() as u64).to_le_bytes())
        .unwrap();
}

/// Creates the files `{prefix}0`, `{prefix}1`, ... one after the other, inserting `n` into the
/// `n`-th and appending `n` to the file `acks` once both returned. Runs until killed.
fn creator(prefix: &str, acks: &str) {
    let mut acks = std::fs::OpenOptions::new().append(true).open(acks).unwrap();
    for n in 0u64.. {
        let filter = crate::create(Path::new(&format!("{prefix}{n}")), n % 2 == 0, 4_000_000);
        filter.insert(&n).unwrap();
        acks.write_all(&n.to_le_bytes()).unwrap();
    }
}

/// A read-only opener (whose bytes come from a copy of its table) limited to less memory than
/// that copy: `write_to` and `write_to_slice` return `OutOfMemory` and write nothing, and so
/// does a merge from it (which reads a live file as a copy); with the limit lifted, the bytes
/// are written.
fn read_only_without_memory(path: &str) {
    let reader = ConcurrentCuckooFilter::open_shared(path, Access::ReadOnly).unwrap();
    let writer = ConcurrentCuckooFilter::open_shared(path, Access::ReadWrite).unwrap();
    let items = writer.len();
    let len = reader.serialized_len() as usize;
    let mut slice = vec![0u8; len];
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let limit = |bytes: u64| {
        let limit = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: setrlimit reads the struct we pass, valid for the call.
        #[allow(unsafe_code)]
        let done = unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
        assert_eq!(done, 0);
    };
    limit(vm_kb * 1024 + len as u64 / 2);
    let mut written = Vec::new();
    let to_writer = reader.write_to(&mut written).map_err(|err| err.kind());
    let to_slice = reader.write_to_slice(&mut slice).map_err(|err| err.kind());
    let merged = writer.merge(&reader);
    limit(libc::RLIM_INFINITY);
    assert!(
        matches!(merged, Err(MergeError::OutOfMemory { .. })),
        "{merged:?}"
    );
    assert_eq!(writer.len(), items);
    assert_eq!(to_writer, Err(std::io::ErrorKind::OutOfMemory));
    assert_eq!(to_slice, Err(std::io::ErrorKind::OutOfMemory));
    assert!(written.is_empty());
    assert_eq!(reader.write_to_slice(&mut slice).unwrap(), len);
}
