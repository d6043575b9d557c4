//! The load test's script, `loadtest/run.sh`, with a `wrk` of its own on `PATH` that does
//! nothing: what it does before the load generator runs.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "run.sh builds and runs the release binaries"
)]
fn run_sh_stops_with_the_servers_message_when_a_server_does_not_start() {
    let dir = std::env::temp_dir().join(format!("ccf-use-cases-loadtest-{}", std::process::id()));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrk = bin.join("wrk");
    std::fs::write(&wrk, "#!/bin/sh\nexit 0\n").unwrap();
    let mut permissions = std::fs::metadata(&wrk).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrk, permissions).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script: PathBuf = [env!("CARGO_MANIFEST_DIR"), "loadtest", "run.sh"]
        .iter()
        .collect();
    // More keys than the filter holds: the server refuses to start.
    let mut child = Command::new("bash")
        .arg(&script)
        .env("PATH", path)
        .env("PREFILL", "1000")
        .env("CAPACITY", "10")
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if began.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    let status = status
        .unwrap_or_else(|| panic!("run.sh waited for ever for a server that stopped: {stderr}"));
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("--prefill 1000"), "{stderr}");
}
