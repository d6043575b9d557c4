//! The measuring binaries refuse bad flags with a message naming the flag and exit status 2,
//! never a panic, each run with its working directory in a temporary one.

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::Command;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "ccf-use-cases-binaries-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `binary` with `args` in `dir`: it must exit with status 2 and a message that names
/// every one of `named`, and not panic.
fn refused(binary: &str, dir: &TempDir, args: &[&str], named: &[&str]) {
    let output = Command::new(binary)
        .args(args)
        .current_dir(&dir.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for name in named {
        assert!(
            stderr.contains(name),
            "{args:?} does not name {name}: {stderr}"
        );
    }
}

const TOO_MANY: &str = "18446744073709551615";

#[test]
fn dedup_refuses_bad_flags_naming_them() {
    let dir = TempDir::new("dedup");
    let dedup = env!("CARGO_BIN_EXE_dedup");
    refused(dedup, &dir, &["--records", "x"], &["--records", "x"]);
    refused(dedup, &dir, &["--records"], &["--records"]);
    refused(
        dedup,
        &dir,
        &["--records", "10", "--capacity", "99999999999999999999"],
        &["--capacity"],
    );
    refused(
        dedup,
        &dir,
        &["--records", "10", "--capacity", TOO_MANY],
        &["--capacity", TOO_MANY],
    );
}

#[test]
fn filter_server_refuses_bad_flags_and_a_port_in_use_naming_them() {
    let dir = TempDir::new("server");
    let server = env!("CARGO_BIN_EXE_filter-server");
    refused(server, &dir, &["--port", "x"], &["--port", "x"]);
    refused(
        server,
        &dir,
        &["--capacity", TOO_MANY],
        &["--capacity", TOO_MANY],
    );
    refused(
        server,
        &dir,
        &["--capacity", "10", "--prefill", "1000"],
        &["--prefill", "--capacity"],
    );
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    refused(
        server,
        &dir,
        &["--port", &port, "--capacity", "10"],
        &[&port],
    );
}

#[test]
fn negative_cache_refuses_no_keys_and_a_database_it_cannot_open_naming_them() {
    let dir = TempDir::new("negative-cache");
    let bench = env!("CARGO_BIN_EXE_negative-cache");
    let store = dir.0.join("store");
    let store = store.to_str().unwrap();
    refused(bench, &dir, &["--keys", "0", "--dir", store], &["--keys"]);
    std::fs::create_dir_all(dir.0.join("store")).unwrap();
    let db = dir.0.join("store").join("store.redb");
    std::fs::write(&db, b"not a database").unwrap();
    refused(
        bench,
        &dir,
        &["--keys", "10", "--dir", store],
        &["store.redb"],
    );
    assert_eq!(std::fs::read(&db).unwrap(), b"not a database");
}
