//! What `--help` says of each command matches what the command does.

mod common;

use common::{ccf, stderr};

#[test]
fn merge_help_says_growable_filters_merge_too() {
    let help = ccf(&["merge", "--help"], b"");
    assert!(help.status.success(), "{}", stderr(&help));
    let text = String::from_utf8(help.stdout).unwrap();
    let summary = text.lines().next().unwrap();
    assert!(summary.contains("growable"), "{summary}");
    assert!(!summary.contains("fixed-size filters"), "{summary}");
    let overview = String::from_utf8(ccf(&["--help"], b"").stdout).unwrap();
    let merge = overview
        .lines()
        .find(|line| line.trim_start().starts_with("merge "))
        .unwrap();
    assert!(merge.contains("growable"), "{merge}");
}

/// Help and the version are the output asked for: one that cannot be written is an error, as
/// any other output is.
#[cfg(unix)]
#[test]
fn help_and_version_that_cannot_be_written_are_errors() {
    use std::process::{Command, Stdio};
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here");
        return;
    }
    for args in [
        &["--help"][..],
        &["-h"],
        &["--version"],
        &["help"],
        &["help", "build"],
        &["build", "--help"],
        &["dedup", "-h"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_ccf"))
            .args(args)
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(
                std::fs::File::options()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("ccf: ") && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
    }
    // Written, they succeed.
    for args in [&["--help"][..], &["--version"], &["help", "merge"]] {
        let output = ccf(args, b"");
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert!(!output.stdout.is_empty(), "{args:?}");
    }
}
