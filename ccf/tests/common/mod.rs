//! What every end-to-end test file needs: the built `ccf` binary, run as a user would, and
//! scratch directories.
// Each test file uses some of these.
#![allow(dead_code)]

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
