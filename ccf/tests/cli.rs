//! End-to-end tests: the built `ccf` binary, run as a user would.

mod common;

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use common::{assert_fails, ccf, lines, number_before, path, scratch, stderr, write_lines};

use concurrent_cuckoo_filter::DefaultHashBuilder;
use core::hash::BuildHasher;

/// Writes `bytes` as `filter`, then checks that `ccf COMMAND filter` on `stdin` fails, saying
/// `message`.
fn fails_on(filter: &Path, bytes: &[u8], command: &str, stdin: &[u8], message: &str) {
    fs::write(filter, bytes).unwrap();
    assert_fails(&ccf(&[command, path(filter)], stdin), message);
}

/// Queries `filter`, which holds `key-0` to `key-19999`, with those keys and 20,000 strangers
/// interleaved (the keys in descending order), with and without `-v`: checks that each line is
/// printed by exactly one of the two, in input order, and that no key is missing. Returns the
/// false positives.
fn assert_queries_in_order(filter: &Path) -> usize {
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

/// Runs `ccf args` (a dedup) on `count` lines of 7 digits, repeats among them both within a
/// 2 MiB segment and across segments, and checks that it prints each line once, at its first
/// position, and reports the counts. Returns the report.
fn assert_dedups_in_order(args: &[&str], count: u64, cycle: u64) -> String {
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
