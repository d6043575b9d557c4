//! A filter named by a path that is a pipe (`/dev/stdin` here, `<(command)` or a FIFO in a
//! shell) can be read once only: every command reads it once, its kind and header included.

mod common;

use std::fs;
use std::path::Path;

use common::{ccf, lines, path, scratch, stderr, write_lines};

/// Builds a filter of `keys` at `filter` with `extra` options; returns its bytes.
fn built(filter: &Path, keys: &Path, extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["build", "-o", path(filter)];
    args.extend_from_slice(extra);
    args.push(path(keys));
    let output = ccf(&args, b"");
    assert!(output.status.success(), "{}", stderr(&output));
    fs::read(filter).unwrap()
}

fn items(info: &[u8]) -> u64 {
    let info = String::from_utf8_lossy(info);
    let items = info.lines().find_map(|line| line.strip_prefix("items: "));
    let items = items.and_then(|items| items.parse().ok());
    items.unwrap_or_else(|| panic!("no items in {info}"))
}

#[cfg(unix)]
#[test]
fn a_filter_from_a_pipe_is_read_once_by_every_command() {
    let dir = scratch("filter-pipe");
    let (a_keys, b_keys) = (dir.join("a.txt"), dir.join("b.txt"));
    write_lines(&a_keys, (0..2000).map(|i| format!("key-{i}")));
    write_lines(&b_keys, (1000..3000).map(|i| format!("key-{i}")));
    let union = dir.join("union.ccf");
    for kind in [
        vec!["--capacity", "5000"],
        vec!["--grow", "--max-capacity", "100000"],
    ] {
        let (a, b) = (dir.join("a.ccf"), dir.join("b.ccf"));
        let a_bytes = built(&a, &a_keys, &kind);
        built(&b, &b_keys, &kind);

        // `info` of the pipe says what it says of the file.
        let from_file = ccf(&["info", path(&a)], b"");
        assert!(from_file.status.success(), "{}", stderr(&from_file));
        let from_pipe = ccf(&["info", "/dev/stdin"], &a_bytes);
        assert!(
            from_pipe.status.success(),
            "{kind:?}: {}",
            stderr(&from_pipe)
        );
        assert_eq!(
            String::from_utf8_lossy(&from_pipe.stdout),
            String::from_utf8_lossy(&from_file.stdout)
        );

        // `merge` with the pipe first: the union the files make.
        let mut unions = Vec::new();
        for first in [path(&a), "/dev/stdin"] {
            let _ = fs::remove_file(&union);
            let merged = ccf(&["merge", first, path(&b), "-o", path(&union)], &a_bytes);
            assert!(merged.status.success(), "{kind:?}: {}", stderr(&merged));
            unions.push(fs::read(&union).unwrap());
        }
        assert_eq!(unions[0], unions[1], "{kind:?}");
        let info = ccf(&["info", path(&union)], b"");
        // 3000 keys; a few of b's may be false positives of a's, found present and not added.
        assert!((2990..=3000).contains(&items(&info.stdout)), "{kind:?}");
    }

    // `query --hex64` looks at the filter's kind before it reads it.
    let hashes = dir.join("hashes.txt");
    write_lines(
        &hashes,
        (0..1000u64).map(|i| format!("{:016x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))),
    );
    let fixed = dir.join("hashes.ccf");
    let bytes = built(&fixed, &hashes, &["--hex64"]);
    let found = ccf(&["query", "--hex64", "/dev/stdin", path(&hashes)], &bytes);
    assert!(found.status.success(), "{}", stderr(&found));
    assert_eq!(lines(&found).len(), 1000);
}
