//! What every end-to-end test file needs: the built `ccf` binary, run as a user would, and
//! scratch directories.
// Each test file uses some of these.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;

/// A fresh directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccf-e2e-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts `ccf args` with every stream piped.
pub fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ccf"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts `ccf args` with every stream piped, and a thread writing `stdin` to its input.
pub fn spawn(args: &[&str], stdin: Vec<u8>) -> (Child, JoinHandle<()>) {
    let mut child = start(args);
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    (child, writer)
}

/// Runs `ccf args` with `stdin` as its input.
pub fn ccf(args: &[&str], stdin: &[u8]) -> Output {
    let (child, writer) = spawn(args, stdin.to_vec());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn lines(output: &Output) -> Vec<String> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Writes `lines` to `path`, one per line.
pub fn write_lines(path: &Path, lines: impl IntoIterator<Item = String>) {
    let text: String = lines.into_iter().map(|line| line + "\n").collect();
    fs::write(path, text).unwrap();
}

pub fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A failed run: exit status 2, the message on standard error, no panic.
pub fn assert_fails(output: &Output, message: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.starts_with("ccf: ") && err.contains(message), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

/// The number before `name` in a report, e.g. `5` in `...; 5 levels; ...` for `" levels"`.
pub fn number_before(report: &str, name: &str) -> usize {
    report
        .split(name)
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

/// Writes `bytes` as `filter`, then checks that `ccf COMMAND filter` on `stdin` fails, saying
/// `message`.
pub fn fails_on(filter: &Path, bytes: &[u8], command: &str, stdin: &[u8], message: &str) {
    fs::write(filter, bytes).unwrap();
    assert_fails(&ccf(&[command, path(filter)], stdin), message);
}

/// Queries `filter`, which holds `key-0` to `key-19999`, with those keys and 20,000 strangers
/// interleaved (the keys in descending order), with and without `-v`: checks that each line is
/// printed by exactly one of the two, in input order, and that no key is missing. Returns the
/// false positives.
pub fn assert_queries_in_order(filter: &Path) -> usize {
    let queries: Vec<String> = (0..40_000)
        .map(|i| match i % 2 {
            0 => format!("key-{}", 19_999 - i / 2),
            _ => format!("stranger-{i}"),
        })
        .collect();
    let input: String = queries.iter().map(|q| format!("{q}\n")).collect();
    let found = ccf(&["query", path(filter)], input.as_bytes());
    assert!(found.status.success(), "{}", stderr(&found));
    let found = lines(&found);
    let absent = lines(&ccf(&["query", "-v", path(filter)], input.as_bytes()));
    let (mut a, mut b) = (found.iter().peekable(), absent.iter().peekable());
    for query in &queries {
        let in_found = a.next_if(|line| *line == query).is_some();
        let in_absent = b.next_if(|line| *line == query).is_some();
        assert!(in_found != in_absent, "{query}");
        assert!(
            in_found || query.starts_with("stranger"),
            "false negative {query}"
        );
    }
    assert!(a.next().is_none() && b.next().is_none());
    found.len() - 20_000
}

/// Runs `ccf args` (a dedup) on `count` lines of 7 digits, repeats among them both within a
/// 2 MiB segment and across segments, and checks that it prints each line once, at its first
/// position, and reports the counts. Returns the report.
pub fn assert_dedups_in_order(args: &[&str], count: u64, cycle: u64) -> String {
    let input: Vec<String> = (0..count)
        .map(|i| format!("{:07}", (i * 7919) % cycle + (i % 3) * 1_000_000 * (i % 2)))
        .collect();
    let mut seen = HashSet::new();
    let expected: Vec<String> = input
        .iter()
        .filter(|line| seen.insert(*line))
        .cloned()
        .collect();
    let text: String = input.iter().map(|line| format!("{line}\n")).collect();
    let out = ccf(args, text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lines(&out), expected);
    let dropped = input.len() - expected.len();
    assert!(
        stderr(&out).contains(&format!(
            "{} lines, {} printed, {dropped} dropped",
            input.len(),
            expected.len()
        )),
        "{}",
        stderr(&out)
    );
    stderr(&out)
}
