//! End-to-end tests of growable filters (`--grow`): the built `ccf` binary, run as a user would.

mod common;

use std::fs;
use std::path::Path;

use common::{
    assert_dedups_in_order, assert_fails, assert_queries_in_order, ccf, fails_on, lines,
    number_before, path, scratch, stderr, write_lines,
};

/// The value of `name: value` lines in `info`'s output.
fn field<'a>(info: &'a str, name: &str) -> &'a str {
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("{name} in {info}"))
}

/// Builds a growable filter of `keys` from standard input into `filter`; its report.
fn build_growing(filter: &Path, keys: &[String], first_level: &str) -> String {
    let input: String = keys.iter().map(|key| format!("{key}\n")).collect();
    let built = ccf(
        &[
            "build",
            "--grow",
            "--capacity",
            first_level,
            "-o",
            path(filter),
        ],
        input.as_bytes(),
    );
    assert!(built.status.success(), "{}", stderr(&built));
    stderr(&built)
}

#[test]
fn build_grow_takes_standard_input_without_a_count_and_query_finds_every_key() {
    let dir = scratch("grow-query");
    let filter = dir.join("grown.ccf");
    // Each key twice, the repeats after all the keys: 1,000 keys in the first level, so it grows
    // (in place, by splitting its chunks).
    let keys: Vec<String> = (0..40_000).map(|i| format!("key-{}", i % 20_000)).collect();
    let report = build_growing(&filter, &keys, "1000");
    assert!(report.contains("40000 lines, "), "{report}");
    let stored = number_before(&report, " keys stored");
    // The 20,000 distinct keys, less the few whose fingerprint some level already showed
    // (a false positive; the target rate is 0.1%).
    assert!((19_960..=20_000).contains(&stored), "{report}");
    assert_eq!(number_before(&report, " found present"), 40_000 - stored);
    // A level grows 64× before the next is added.
    assert_eq!(number_before(&report, " levels"), 1, "{report}");
    assert!(report.contains(" bits per item; "), "{report}");

    let false_positives = assert_queries_in_order(&filter);
    // Under the target 0.1% of 20,000 strangers, with room for chance: 20 expected at most.
    assert!(false_positives < 60, "{false_positives}");
    let none = ccf(&["query", path(&filter)], b"nothing-here\n");
    assert_eq!(none.status.code(), Some(1), "no line selected: status 1");
}

#[test]
fn info_of_a_growable_filter_with_a_limit_says_how_far_it_grows() {
    let dir = scratch("grow-info-limit");
    let input: String = (0..500).map(|i| format!("{i}\n")).collect();
    let capacity = |limit: &[&str]| {
        let filter = dir.join("grown.ccf");
        let build = ["build", "--grow", "--capacity", "100", "-o", path(&filter)];
        let built = ccf(&[&build[..], limit].concat(), input.as_bytes());
        assert!(built.status.success(), "{}", stderr(&built));
        let info = String::from_utf8(ccf(&["info", path(&filter)], b"").stdout).unwrap();
        field(&info, "capacity").to_owned()
    };
    let unlimited = capacity(&[]);
    assert!(unlimited.ends_with(" (grows past it)"), "{unlimited}");
    let limited = capacity(&["--max-capacity", "2000"]);
    assert!(
        limited.ends_with(" (grows up to its limit, 2000)"),
        "{limited}"
    );
}

#[test]
fn growable_filters_whose_union_passes_their_limit_are_refused_naming_the_limit() {
    // Each holds 1,500 keys under --max-capacity 2000: their union does not fit the limit, and
    // no larger --capacity under the same limit would make it fit.
    let dir = scratch("grow-merge-limit");
    let limit = ["--capacity", "100", "--max-capacity", "2000"];
    let built = |part: usize| {
        let filter = dir.join(format!("{part}.ccf"));
        let input: String = (0..1500).map(|i| format!("{part}-{i}\n")).collect();
        let build = [&["build", "--grow", "-o", path(&filter)][..], &limit].concat();
        let out = ccf(&build, input.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        filter
    };
    let filters: Vec<_> = (0..2).map(built).collect();
    let union = dir.join("union.ccf");
    let mut merge = vec!["merge", "-o", path(&union)];
    merge.extend(filters.iter().map(|filter| path(filter)));
    let merged = ccf(&merge, b"");
    assert_fails(&merged, "nothing was written");
    assert!(
        stderr(&merged).contains("larger --max-capacity"),
        "{}",
        stderr(&merged)
    );
    assert!(!union.exists());
}

#[test]
fn info_of_a_growable_filter_describes_each_level() {
    let dir = scratch("grow-info");
    let filter = dir.join("grown.ccf");
    let keys: Vec<String> = (0..10_000).map(|i| format!("{i}")).collect();
    let report = build_growing(&filter, &keys, "500");
    let info = ccf(&["info", path(&filter)], b"");
    assert!(info.status.success(), "{}", stderr(&info));
    let info = String::from_utf8(info.stdout).unwrap();
    assert_eq!(field(&info, "kind"), "growable");
    assert!(
        field(&info, "format version").ends_with(" (growable)"),
        "{info}"
    );
    assert!(field(&info, "hasher").starts_with("ccf-xxf8"), "{info}");
    let levels: usize = field(&info, "levels").parse().unwrap();
    assert_eq!(levels, number_before(&report, " levels"));
    let items: usize = field(&info, "items").parse().unwrap();
    assert_eq!(items, number_before(&report, " keys stored"));
    let serialized: u64 = field(&info, "serialized bytes").parse().unwrap();
    assert_eq!(serialized, fs::metadata(&filter).unwrap().len());
    // One line per level, oldest first: a level holds what it has grown to in place, each later
    // level's fingerprints one bit wider, the items adding up to the whole.
    let (mut sum, mut last) = (0, None::<u32>);
    for level in 0..levels {
        let line = field(&info, &format!("level {level}"));
        let value = |name: &str| -> usize {
            line.split(", ")
                .find_map(|part| part.strip_prefix(name)?.strip_prefix(' '))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {line}"))
        };
        let (capacity, bits) = (value("capacity"), value("fingerprint bits") as u32);
        assert!(capacity >= value("items"), "{info}");
        if let Some(bits_before) = last {
            assert_eq!(bits, bits_before + 1, "{info}");
        }
        last = Some(bits);
        sum += value("items");
    }
    assert_eq!(sum, items, "{info}");
    assert!(!info.contains(&format!("level {levels}:")), "{info}");
}

#[test]
fn merge_unites_growable_filters_and_refuses_to_mix_kinds() {
    let dir = scratch("grow-merge");
    let (a, b, fixed, out) = (
        dir.join("a.ccf"),
        dir.join("b.ccf"),
        dir.join("f.ccf"),
        dir.join("o.ccf"),
    );
    let keys = |range: std::ops::Range<u32>| range.map(|i| format!("key {i}")).collect::<Vec<_>>();
    build_growing(&a, &keys(0..3_000), "1000");
    build_growing(&b, &keys(2_000..20_000), "1000");
    let merged = ccf(&["merge", path(&a), path(&b), "-o", path(&out)], b"");
    assert!(merged.status.success(), "{}", stderr(&merged));
    // Every key of both answers from the union; the 1,000 shared ones are stored once.
    let query: String = keys(0..20_000).iter().map(|k| format!("{k}\n")).collect();
    let found = ccf(&["query", path(&out)], query.as_bytes());
    assert!(found.status.success(), "{}", stderr(&found));
    assert_eq!(
        String::from_utf8(found.stdout).unwrap().lines().count(),
        20_000
    );
    let info = String::from_utf8(ccf(&["info", path(&out)], b"").stdout).unwrap();
    assert!(info.contains("growable"), "{info}");
    assert!(
        ccf(&["build", "--capacity", "100", "-o", path(&fixed)], b"x\n")
            .status
            .success()
    );
    fs::remove_file(&out).unwrap();
    for (first, second) in [(&fixed, &a), (&a, &fixed)] {
        let mixed = ccf(&["merge", path(first), path(second), "-o", path(&out)], b"");
        assert_fails(
            &mixed,
            "a fixed-size filter and a growable one cannot be merged: give files of one kind",
        );
        assert!(!out.exists());
    }
}

#[test]
fn a_corrupt_or_truncated_growable_file_is_a_decode_error_in_words() {
    let dir = scratch("grow-corrupt");
    let filter = dir.join("g.ccf");
    let keys: Vec<String> = (0..3000).map(|i| format!("{i}")).collect();
    build_growing(&filter, &keys, "1000");
    let good = fs::read(&filter).unwrap();
    // A byte of level 0's table (after the 112-byte header and the level's 88-byte header).
    let mut bytes = good.clone();
    bytes[112 + 88 + 40] ^= 0x10;
    fs::write(&filter, &bytes).unwrap();
    for command in ["info", "query"] {
        assert_fails(
            &ccf(&[command, path(&filter)], b"1\n"),
            "g.ccf: not a readable filter: level 0 of the growable cuckoo filter: corrupted \
             cuckoo filter",
        );
    }
    // The growable header's checksum covers its fields.
    let mut bytes = good.clone();
    bytes[20] ^= 1;
    fails_on(&filter, &bytes, "info", b"", "not a readable filter: ");
    fails_on(
        &filter,
        &good[..good.len() - 1],
        "query",
        b"1\n",
        "not a readable filter: truncated cuckoo filter",
    );
    fails_on(
        &filter,
        &good[..9],
        "info",
        b"",
        "not a readable filter: truncated cuckoo filter",
    );
}

#[test]
fn a_growable_filter_full_at_its_max_capacity_names_the_line_and_writes_nothing() {
    let dir = scratch("grow-full");
    let filter = dir.join("g.ccf");
    let input: String = (0..10_000).map(|i| format!("k{i}\n")).collect();
    // One chunk, raised from 100 keys to the about 2,000 the limit allows; a split or a next
    // level would pass it. Lines are inserted in parts on every core, and the count is of the
    // lines before the first that found no room.
    let out = ccf(
        &[
            "build",
            "--grow",
            "--capacity",
            "100",
            "--max-capacity",
            "2000",
            "-o",
            path(&filter),
        ],
        input.as_bytes(),
    );
    assert_fails(&out, "the filter is full at line ");
    let err = stderr(&out);
    let stored = number_before(&err, " items stored");
    assert!((1000..=2100).contains(&stored), "{err}");
    assert!(err.contains("give a larger --max-capacity"), "{err}");
    assert!(!filter.exists(), "no filter is written");
    assert_fails(
        &ccf(
            &[
                "dedup",
                "--grow",
                "--capacity",
                "100",
                "--max-capacity",
                "2000",
            ],
            input.as_bytes(),
        ),
        "the filter is full at line ",
    );
    // The limit belongs to --grow.
    let usage = ccf(&["build", "--max-capacity", "10", "-o", path(&filter)], b"");
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn a_max_capacity_below_the_default_first_level_bounds_it_instead_of_failing() {
    // No --capacity: the first level is a default (1,000,000 keys from standard input, a 62nd
    // of the lines of files), which --max-capacity, the only size given, must bound.
    let dir = scratch("grow-max-default");
    let filter = dir.join("g.ccf");
    let keys = dir.join("keys.txt");
    write_lines(&keys, (0..100_000).map(|i| format!("k{i}")));
    let input: String = (0..1000).map(|i| format!("k{i}\n")).collect();
    let grow = |max: &str, inputs: &[&str], stdin: &[u8]| {
        let args = [
            "build",
            "--grow",
            "--max-capacity",
            max,
            "-o",
            path(&filter),
        ];
        ccf(&[&args[..], inputs].concat(), stdin)
    };
    let piped = grow("500000", &[], input.as_bytes());
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let counted = grow("1000", &[path(&keys)], b"");
    assert_fails(&counted, "the filter is full at line ");
    assert!(stderr(&counted).contains("give a larger --max-capacity"));
}

#[test]
fn dedup_grow_prints_each_line_once_from_standard_input_without_a_capacity() {
    // About 5 MB. 1e-7 over every level: no unique line is wrongly dropped here. A first level
    // of 10,000 makes it grow several times.
    let report = assert_dedups_in_order(
        &["dedup", "--grow", "--capacity", "10000", "--fpr", "1e-7"],
        700_000,
        250_000,
    );
    // 475,000 distinct lines. At 1e-7 the first level's fingerprints have 28 core bits, so it
    // splits 4 deep (32 bits at most) and grows 16×, to about 160,000; the second, from there,
    // 8×.
    assert!(report.contains(" 475000 printed"), "{report}");
    assert!(report.ends_with(" (2 levels)\n"), "{report}");
}

#[test]
fn hashes_from_elsewhere_are_refused_for_a_growable_filter() {
    let dir = scratch("grow-hex");
    let filter = dir.join("g.ccf");
    build_growing(&filter, &["apple".to_string()], "100");
    assert_fails(
        &ccf(&["query", "--hex64", path(&filter)], b"12ab\n"),
        "g.ccf: a growable filter is queried by keys: --hex64 needs a fixed-size filter",
    );
    let usage = ccf(
        &["build", "--grow", "--hex64", "-o", path(&filter)],
        b"12ab\n",
    );
    assert_eq!(usage.status.code(), Some(2));
    // A growable filter's text lines are the keys a Rust program inserts as `&str`.
    let found = ccf(&["query", path(&filter)], b"pear\napple\n");
    assert_eq!(lines(&found), ["apple"]);
}

#[test]
fn build_grow_of_files_sizes_the_first_level_from_their_lines_and_stays_compact() {
    let dir = scratch("grow-counted");
    let keys = dir.join("keys.txt");
    let n = 400_000;
    write_lines(&keys, (0..n).map(|i| format!("user-{i}@example.org")));
    let bits = |args: &[&str]| -> f64 {
        let filter = dir.join("keys.ccf");
        let mut all = vec!["build", "--fpr", "0.001", "-o", path(&filter)];
        all.extend_from_slice(args);
        all.push(path(&keys));
        let built = ccf(&all, b"");
        assert!(built.status.success(), "{}", stderr(&built));
        let info = ccf(&["info", path(&filter)], b"");
        let info = String::from_utf8(info.stdout).unwrap();
        if args.contains(&"--grow") {
            assert_eq!(field(&info, "levels"), "1", "{info}");
            // Found by any line of the file, as every filter must be.
            let found = ccf(&["query", path(&filter), path(&keys)], b"");
            assert_eq!(lines(&found).len(), n, "{}", stderr(&found));
        }
        field(&info, "bits per item").parse().unwrap()
    };
    let (grown, sized) = (bits(&["--grow"]), bits(&[]));
    // The lines fill the first level's last split: within 1.5 times a filter sized for them.
    assert!(
        grown <= 1.5 * sized,
        "grown {grown} bits per item, sized {sized}"
    );
    // Not so from a first level of a 40th of them, between two of its splits.
    let guessed = bits(&["--grow", "--capacity", "10000"]);
    assert!(
        guessed > 1.5 * sized,
        "from a 40th: {guessed}, sized {sized}"
    );
}
