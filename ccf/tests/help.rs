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
