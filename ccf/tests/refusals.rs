//! Input refused before any work is written, with a message that says what to do instead:
//! numbers out of range, integers given as hashes, filters too small to merge.

mod common;

use std::path::Path;
use std::process::Output;

use common::{assert_fails, ccf, lines, number_before, path, scratch, stderr, write_lines};

use concurrent_cuckoo_filter::DefaultHashBuilder;
use core::hash::BuildHasher;

/// Clap's refusal of an argument's value: status 2, the value named, our words after it.
fn assert_refused(args: &[&str], value: &str, words: &str) {
    let output = ccf(args, b"a\n");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(&format!("invalid value '{value}'")), "{err}");
    assert!(err.contains(words), "{args:?}: {err}");
}

#[test]
fn numbers_out_of_range_are_refused_in_words() {
    let dir = scratch("ranges");
    let out = dir.join("out.ccf");
    let out = path(&out);
    for command in ["build", "dedup"] {
        let with = |extra: &[&'static str]| {
            let mut args = vec![command];
            args.extend_from_slice(extra);
            if command == "build" {
                args.extend_from_slice(&["-o", out]);
            }
            args
        };
        assert_refused(
            &with(&["--capacity", "0"]),
            "0",
            "a filter must hold at least 1 key",
        );
        assert_refused(&with(&["--grow", "--capacity", "0"]), "0", "at least 1 key");
        assert_refused(
            &with(&["--capacity", "-5"]),
            "-5",
            "a count of keys is a whole number from 1",
        );
        assert_refused(&with(&["--capacity", "1e6"]), "1e6", "whole number");
        assert_refused(
            &with(&["--grow", "--max-capacity", "-1"]),
            "-1",
            "whole number from 1",
        );
        for rate in ["-0.1", "0", "1", "1.5", "NaN", "inf"] {
            assert_refused(
                &with(&["--capacity", "10", "--fpr", rate]),
                rate,
                "greater than 0 and less than 1",
            );
        }
        assert_refused(
            &with(&["--capacity", "10", "--fpr", "often"]),
            "often",
            "a false positive rate is a number",
        );
    }
    assert!(!dir.join("out.ccf").exists());
    // In range, they work.
    let built = ccf(
        &["build", "--capacity", "1", "--fpr", "1e-4", "-o", out],
        b"a\n",
    );
    assert!(built.status.success(), "{}", stderr(&built));
}

#[test]
fn integers_given_as_hashes_are_refused_unless_insisted_on() {
    let dir = scratch("unmixed");
    let filter = dir.join("seq.ccf");
    // `seq 100000` in hexadecimal.
    let seq: String = (1..=100_000u64).map(|i| format!("{i:x}\n")).collect();
    let refused = ccf(
        &[
            "build",
            "--hex64",
            "--capacity",
            "100000",
            "-o",
            path(&filter),
        ],
        seq.as_bytes(),
    );
    assert_fails(&refused, "do not look like 64-bit hashes");
    let err = stderr(&refused);
    assert!(
        err.contains("without --hex64") && err.contains("--hex64-unmixed-ok"),
        "{err}"
    );
    assert!(!filter.exists(), "nothing is written");
    assert_fails(
        &ccf(&["build", "--hex64", "--capacity", "10"], b"1\n2\n3\n"),
        "do not look like 64-bit hashes",
    );
    // Insisted on, they go in, as many as their collisions let.
    let insisted = ccf(
        &[
            "build",
            "--hex64",
            "--hex64-unmixed-ok",
            "--capacity",
            "100000",
            "-o",
            path(&filter),
        ],
        seq.as_bytes(),
    );
    assert!(insisted.status.success(), "{}", stderr(&insisted));
    assert_fails(
        &ccf(&["query", "--hex64", path(&filter)], seq.as_bytes()),
        "do not look like 64-bit hashes",
    );
    let queried = ccf(
        &["query", "--hex64", "--hex64-unmixed-ok", path(&filter)],
        b"1\n",
    );
    assert_eq!(lines(&queried), ["1"]);
    // Hashed by ccf, the same numbers as text lines are stored one each.
    let text = ccf(
        &["build", "--capacity", "100000", "-o", path(&filter)],
        seq.as_bytes(),
    );
    assert!(text.status.success(), "{}", stderr(&text));
    let report = stderr(&text);
    assert!(number_before(&report, " keys stored") > 99_500, "{report}");
    // Real hashes pass, many or few.
    let hasher = DefaultHashBuilder::new();
    for count in [1u64, 3, 50_000] {
        let hashes: String = (0..count)
            .map(|i| format!("{:x}\n", hasher.hash_one(i)))
            .collect();
        let built = ccf(
            &[
                "build",
                "--hex64",
                "--capacity",
                "50000",
                "-o",
                path(&filter),
            ],
            hashes.as_bytes(),
        );
        assert!(built.status.success(), "{count}: {}", stderr(&built));
    }
    // The flag belongs to --hex64.
    let usage = ccf(&["build", "--hex64-unmixed-ok", "-o", path(&filter)], b"");
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn a_merge_that_would_fill_the_target_names_the_capacity_and_writes_nothing() {
    let dir = scratch("merge-full");
    // Two filters, each sized by its own lines; 30,000 keys of each, 10,000 in both.
    let mut filters = Vec::new();
    for (part, start) in [(0, 0), (1, 20_000)] {
        let keys = dir.join(format!("{part}.txt"));
        write_lines(&keys, (start..start + 30_000).map(|i| format!("k{i}")));
        let filter = dir.join(format!("{part}.ccf"));
        let built = ccf(&["build", "-o", path(&filter), path(&keys)], b"");
        assert!(built.status.success(), "{}", stderr(&built));
        filters.push((keys, filter));
    }
    let union = dir.join("union.ccf");
    write_marker(&union);
    let merged = merge(&filters[0].1, &filters[1].1, &union);
    assert_fails(&merged, "merging would need a filter of capacity >= ");
    let err = stderr(&merged);
    // The items of both (a few of the 60,000 lines were false positives of keys stored before).
    let needed: u64 = err
        .split("capacity >= ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((59_800..=60_000).contains(&needed), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert!(
        err.contains(&format!("Rebuild every filter with --capacity {needed}")),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&union).unwrap(),
        MARKER,
        "the output is untouched"
    );

    // Doing what it says works: 50,000 distinct keys.
    let needed = needed.to_string();
    for (keys, filter) in &filters {
        let built = ccf(
            &[
                "build",
                "--capacity",
                &needed,
                "-o",
                path(filter),
                path(keys),
            ],
            b"",
        );
        assert!(built.status.success(), "{}", stderr(&built));
    }
    let merged = merge(&filters[0].1, &filters[1].1, &union);
    assert!(merged.status.success(), "{}", stderr(&merged));
    for (keys, _) in &filters {
        let absent = ccf(&["query", "-v", path(&union), path(keys)], b"");
        assert_eq!(absent.status.code(), Some(1), "every key is in the union");
    }
}

/// `ccf merge a b -o union`.
fn merge(a: &Path, b: &Path, union: &Path) -> Output {
    ccf(&["merge", path(a), path(b), "-o", path(union)], b"")
}

const MARKER: &[u8] = b"an older file\n";

fn write_marker(file: &Path) {
    std::fs::write(file, MARKER).unwrap();
}
