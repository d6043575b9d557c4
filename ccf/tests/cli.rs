//! End-to-end tests: the built `ccf` binary, run as a user would.

mod common;

use std::fs;

use common::{
    assert_dedups_in_order, assert_fails, assert_queries_in_order, ccf, fails_on, lines,
    number_before, path, scratch, stderr, write_lines,
};

use concurrent_cuckoo_filter::DefaultHashBuilder;
use core::hash::BuildHasher;

#[test]
fn build_then_query_finds_every_key_and_prints_lines_in_input_order() {
    let dir = scratch("query");
    let keys = dir.join("keys.txt");
    write_lines(&keys, (0..20_000).map(|i| format!("key-{i}")));
    let filter = dir.join("keys.ccf");
    let built = ccf(&["build", "-o", path(&filter), path(&keys)], b"");
    assert!(built.status.success(), "{}", stderr(&built));
    // Distinct keys, less the few whose fingerprint was already in their buckets (under 0.2%).
    let report = stderr(&built);
    let stored = number_before(&report, " keys stored");
    assert!(report.contains("20000 lines, "), "{report}");
    assert!((19_960..=20_000).contains(&stored), "{report}");

    let false_positives = assert_queries_in_order(&filter);
    assert!(false_positives < 20_000 / 200, "{false_positives}");

    let none = ccf(&["query", path(&filter)], b"nothing-here\n");
    assert_eq!(none.status.code(), Some(1), "no line selected: status 1");
}

#[test]
fn build_counts_duplicates_and_writes_to_standard_output_when_piped() {
    let input: String = (0..3000).map(|i| format!("{}\n", i % 1000)).collect();
    let built = ccf(&["build", "--capacity", "1000"], input.as_bytes());
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(
        stderr(&built).contains("3000 lines, 1000 keys stored, 2000 found present"),
        "{}",
        stderr(&built)
    );
    let dir = scratch("stdout");
    let filter = dir.join("piped.ccf");
    fs::write(&filter, &built.stdout).unwrap();
    let info = ccf(&["info", path(&filter)], b"");
    assert!(info.status.success());
    let info = String::from_utf8(info.stdout).unwrap();
    for field in [
        "kind: fixed-size\n",
        "items: 1000\n",
        "bucket size: 4\n",
        "fingerprint bits: 12\n",
        "hasher: ccf-xxf8",
        "format version: 1\n",
        "bits per item: ",
        "load: ",
        "expected false positive rate: ",
    ] {
        assert!(info.contains(field), "{field} in {info}");
    }
}

#[test]
fn a_line_is_the_key_the_library_hashes_as_a_str_and_hex64_takes_that_hash() {
    let hashes: Vec<String> = ["apple", "pear"]
        .iter()
        .map(|key| format!("{:x}", DefaultHashBuilder::new().hash_one(key)))
        .collect();
    let dir = scratch("hex");
    let filter = dir.join("hex.ccf");
    let input: String = hashes.iter().map(|h| format!("0x{h}\n")).collect();
    let built = ccf(
        &["build", "--hex64", "--capacity", "100", "-o", path(&filter)],
        input.as_bytes(),
    );
    assert!(built.status.success(), "{}", stderr(&built));
    let found = ccf(&["query", path(&filter)], b"plum\napple\nfig\npear\n");
    assert_eq!(lines(&found), ["apple", "pear"]);
    let by_hash = format!("{}\n{:x}\n", hashes[1], 12345);
    let found = ccf(&["query", "--hex64", path(&filter)], by_hash.as_bytes());
    assert_eq!(lines(&found), [hashes[1].clone()]);
}

#[test]
fn dedup_prints_each_line_once_at_its_first_position_across_segments() {
    // About 7 MB: several 2 MiB segments. 1e-7: about 27-bit fingerprints, so that no unique line
    // is wrongly dropped here.
    let report = assert_dedups_in_order(
        &["dedup", "--capacity", "900000", "--fpr", "1e-7"],
        900_000,
        300_000,
    );
    assert!(!report.contains("levels"), "{report}");
}

#[test]
fn dedup_of_files_counts_their_lines_for_its_capacity_and_reports_expected_errors() {
    let dir = scratch("dedup-files");
    let (a, b) = (dir.join("a.txt"), dir.join("b.txt"));
    write_lines(&a, (0..5000).map(|i| format!("{i}")));
    // The last line has no newline: still a line of its own.
    fs::write(&b, "4999\nnew\n17\nlast").unwrap();
    let out = ccf(&["dedup", "--fpr", "1e-7", path(&a), path(&b)], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = lines(&out);
    assert_eq!(printed.len(), 5002);
    assert_eq!(printed[5000..], ["new", "last"]);
    assert!(stderr(&out).contains("expected unique lines wrongly dropped: "));
}

/// A pipe named as a file (`/dev/stdin` here, `<(command)` or a FIFO in a shell) cannot be read
/// twice: it needs --capacity as standard input does, instead of being counted, then found empty.
#[cfg(unix)]
#[test]
fn a_pipe_named_as_a_file_is_not_counted_away() {
    let dir = scratch("pipe-input");
    let filter = dir.join("keys.ccf");
    for args in [
        vec!["build", "-o", path(&filter), "/dev/stdin"],
        vec!["dedup", "/dev/stdin"],
    ] {
        assert_fails(&ccf(&args, b"a\nb\na\n"), "a pipe needs --capacity N");
        assert!(!filter.exists());
    }
    let built = ccf(
        &[
            "build",
            "--capacity",
            "10",
            "-o",
            path(&filter),
            "/dev/stdin",
        ],
        b"a\nb\n",
    );
    assert!(built.status.success(), "{}", stderr(&built));
    let found = ccf(&["query", path(&filter)], b"a\nb\nc\n");
    assert_eq!(lines(&found), ["a", "b"]);
    let deduped = ccf(&["dedup", "--capacity", "10", "/dev/stdin"], b"a\nb\na\n");
    assert_eq!(lines(&deduped), ["a", "b"]);
    let grown = ccf(&["dedup", "--grow", "/dev/stdin"], b"a\nb\na\n");
    assert_eq!(lines(&grown), ["a", "b"]);
}

/// A character device named as a file (a terminal, `/dev/zero`) is read once too: counting its
/// lines first would take what a terminal gives for the count, then wait for it all again,
/// and never end on an endless device. Run with a CPU-time limit so that a count that never
/// ends fails the test rather than hangs it.
#[cfg(unix)]
#[test]
fn a_character_device_named_as_a_file_is_not_counted() {
    let dir = scratch("device-input");
    let filter = dir.join("keys.ccf");
    for command in [
        format!("build -o '{}' /dev/zero", path(&filter)),
        "dedup /dev/zero".to_string(),
    ] {
        let output = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("ulimit -t 20 && exec \"$0\" {command}"),
                env!("CARGO_BIN_EXE_ccf"),
            ])
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_fails(&output, "a pipe needs --capacity N");
        assert!(!filter.exists());
    }
    // `/dev/null` is empty every time: counted.
    let empty = ccf(&["dedup", "/dev/null"], b"");
    assert!(empty.status.success(), "{}", stderr(&empty));
}

#[test]
fn merge_writes_the_union_of_compatible_filters() {
    let dir = scratch("merge");
    let mut filters = Vec::new();
    for part in 0..3 {
        let keys = dir.join(format!("{part}.txt"));
        write_lines(
            &keys,
            (part * 1000..part * 1000 + 1500).map(|i| format!("{i}")),
        );
        let filter = dir.join(format!("{part}.ccf"));
        let built = ccf(
            &[
                "build",
                "--capacity",
                "5000",
                "-o",
                path(&filter),
                path(&keys),
            ],
            b"",
        );
        assert!(built.status.success(), "{}", stderr(&built));
        filters.push(filter);
    }
    let union = dir.join("union.ccf");
    let merged = ccf(
        &[
            "merge",
            path(&filters[0]),
            path(&filters[1]),
            path(&filters[2]),
            "-o",
            path(&union),
        ],
        b"",
    );
    assert!(merged.status.success(), "{}", stderr(&merged));
    let all: String = (0..3500).map(|i| format!("{i}\n")).collect();
    let absent = ccf(&["query", "-v", path(&union)], all.as_bytes());
    assert_eq!(absent.status.code(), Some(1), "every key is found");
    let info = String::from_utf8(ccf(&["info", path(&union)], b"").stdout).unwrap();
    // 3500 distinct keys, less any merged fingerprint that collided with one already there.
    let items: usize = info
        .lines()
        .find_map(|line| line.strip_prefix("items: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((3490..=3500).contains(&items), "{items}");
}

#[test]
fn incompatible_filters_are_refused_and_no_output_is_written() {
    let dir = scratch("incompatible");
    let (small, big, out) = (dir.join("s.ccf"), dir.join("b.ccf"), dir.join("o.ccf"));
    assert!(
        ccf(&["build", "--capacity", "100", "-o", path(&small)], b"a\n")
            .status
            .success()
    );
    assert!(
        ccf(&["build", "--capacity", "100000", "-o", path(&big)], b"b\n")
            .status
            .success()
    );
    let merged = ccf(&["merge", path(&small), path(&big), "-o", path(&out)], b"");
    assert_fails(&merged, "cannot merge: the filters differ in buckets");
    assert!(!out.exists());
}

#[test]
fn missing_and_corrupt_files_are_named_in_words() {
    let dir = scratch("corrupt");
    let missing = dir.join("missing.ccf");
    assert_fails(&ccf(&["info", path(&missing)], b""), "No such file");
    assert_fails(
        &ccf(
            &["build", "-o", path(&dir.join("x.ccf")), path(&missing)],
            b"",
        ),
        "missing.ccf: No such file",
    );
    let text = dir.join("text.txt");
    fs::write(&text, "not a filter\n").unwrap();
    assert_fails(
        &ccf(&["query", path(&text)], b"a\n"),
        "not a readable filter: not a serialized cuckoo filter",
    );
    // An expiring filter's file is named as such, by every command that reads filters.
    let expiring = dir.join("expiring.bin");
    let window = concurrent_cuckoo_filter::ExpiringCuckooFilter::builder(
        concurrent_cuckoo_filter::Window::Items(100),
    )
    .build()
    .unwrap();
    fs::write(&expiring, window.to_bytes()).unwrap();
    for args in [
        vec!["query", path(&expiring)],
        vec!["info", path(&expiring)],
        vec![
            "merge",
            path(&expiring),
            path(&expiring),
            "-o",
            path(&dir.join("union.ccf")),
        ],
    ] {
        assert_fails(
            &ccf(&args, b"a\n"),
            "expiring.bin: an expiring filter's file: ccf reads fixed-size and growable filters",
        );
    }
    let filter = dir.join("f.ccf");
    assert!(ccf(
        &["build", "--capacity", "1000", "-o", path(&filter)],
        b"a\nb\n"
    )
    .status
    .success());
    let mut bytes = fs::read(&filter).unwrap();
    bytes[120] ^= 0x10;
    fails_on(&filter, &bytes, "info", b"", "corrupted cuckoo filter");
    fails_on(
        &filter,
        &bytes[..100],
        "info",
        b"",
        "truncated cuckoo filter",
    );
}

#[test]
fn a_full_filter_names_the_line_and_how_many_went_in() {
    let input: String = (0..1000).map(|i| format!("k{i}\n")).collect();
    let dir = scratch("full");
    let filter = dir.join("full.ccf");
    let out = ccf(
        &["build", "--capacity", "10", "-o", path(&filter)],
        input.as_bytes(),
    );
    assert_fails(&out, "the filter is full at line ");
    assert!(stderr(&out).contains("items stored; give a larger --capacity"));
    assert!(!filter.exists(), "no filter is written");
    assert_fails(
        &ccf(&["dedup", "--capacity", "10"], input.as_bytes()),
        "the filter is full at line ",
    );
}

#[test]
fn bad_arguments_and_keys_are_errors_not_panics() {
    assert_fails(
        &ccf(&["build", "-o", "/dev/null"], b"a\n"),
        "needs --capacity",
    );
    assert_fails(&ccf(&["dedup"], b"a\n"), "needs --capacity");
    assert_fails(
        &ccf(&["build", "--hex64", "--capacity", "10"], b"12ab\nxyz\n"),
        "line 2: \"xyz\" is not a 64-bit hexadecimal number",
    );
    let usage = ccf(&["merge", "only-one.ccf", "-o", "x"], b"");
    assert_eq!(usage.status.code(), Some(2));
}
