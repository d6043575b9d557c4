//! Input refused before any work is written, with a message that says what to do instead:
//! numbers out of range, integers given as hashes, filters too small to merge, an output that is
//! an input, a filter larger than the machine's memory, bytes after a filter.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{assert_fails, ccf, lines, number_before, path, scratch, stderr, write_lines};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DefaultHashBuilder, GrowableCuckooFilter, TableLayout,
};
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
    let older = std::fs::read(&filters[0].1).unwrap();
    std::fs::write(&union, &older).unwrap();
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
        older,
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

/// A refusal on one line of standard error.
fn assert_refused_in_one_line(output: &Output, message: &str) {
    assert_fails(output, message);
    assert_eq!(stderr(output).lines().count(), 1, "{}", stderr(output));
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_by_any_name() {
    let dir = scratch("output-is-input");
    let keys = dir.join("keys.txt");
    write_lines(&keys, ["alice".to_string(), "bob".to_string()]);
    let original = std::fs::read(&keys).unwrap();
    let hard = dir.join("hard.txt");
    std::fs::hard_link(&keys, &hard).unwrap();
    let soft = dir.join("soft.txt");
    std::os::unix::fs::symlink("keys.txt", &soft).unwrap();
    let dotted = dir.join(".").join("keys.txt");
    for output in [&keys, &hard, &soft, &dotted] {
        for grow in [false, true] {
            let mut args = vec!["build", "-o", path(output), path(&keys)];
            if grow {
                args.insert(1, "--grow");
            }
            let refused = ccf(&args, b"");
            assert_refused_in_one_line(&refused, "is the same file as the input");
            assert!(
                stderr(&refused).contains(path(output)),
                "{}",
                stderr(&refused)
            );
            assert_eq!(std::fs::read(&keys).unwrap(), original, "{args:?}");
        }
    }
    // Standard input that is the output file.
    let from_stdin = Command::new(env!("CARGO_BIN_EXE_ccf"))
        .args(["build", "--capacity", "10", "-o", path(&hard)])
        .stdin(std::fs::File::open(&keys).unwrap())
        .output()
        .unwrap();
    assert_refused_in_one_line(&from_stdin, "the same file as the input standard input");
    assert_eq!(std::fs::read(&keys).unwrap(), original);

    // A filter merged into itself, and one appended to by the command reading it.
    let filter = dir.join("keys.ccf");
    let other = dir.join("other.ccf");
    for built in [&filter, &other] {
        let done = ccf(&["build", "-o", path(built), path(&keys)], b"");
        assert!(done.status.success(), "{}", stderr(&done));
    }
    let filter_bytes = std::fs::read(&filter).unwrap();
    let merged = ccf(
        &[
            "merge",
            path(&other),
            path(&filter),
            "-o",
            path(&dotted_to(&filter)),
        ],
        b"",
    );
    assert_refused_in_one_line(&merged, "is the same file as the input");
    for args in [
        vec!["query", path(&filter), path(&keys)],
        vec!["info", path(&filter)],
    ] {
        let appended = Command::new(env!("CARGO_BIN_EXE_ccf"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&filter)
                    .unwrap(),
            )
            .output()
            .unwrap();
        assert_refused_in_one_line(&appended, "standard output: is the same file as the input");
        assert_eq!(std::fs::read(&filter).unwrap(), filter_bytes, "{args:?}");
    }
    let appended = Command::new(env!("CARGO_BIN_EXE_ccf"))
        .args(["dedup", "--capacity", "10"])
        .stdin(std::fs::File::open(&keys).unwrap())
        .stdout(
            std::fs::OpenOptions::new()
                .append(true)
                .open(&hard)
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_refused_in_one_line(&appended, "standard output: is the same file as the input");
    assert_eq!(std::fs::read(&keys).unwrap(), original);

    // An output that does not exist yet, or a device, is no input.
    let fresh = dir.join("fresh.ccf");
    let built = ccf(&["build", "-o", path(&fresh), path(&keys)], b"");
    assert!(built.status.success(), "{}", stderr(&built));
    let to_null = ccf(&["build", "-o", "/dev/null", "/dev/null"], b"");
    assert!(to_null.status.success(), "{}", stderr(&to_null));
}

/// `dir/./name` for `dir/name`.
fn dotted_to(file: &Path) -> std::path::PathBuf {
    file.parent()
        .unwrap()
        .join(".")
        .join(file.file_name().unwrap())
}

/// The machine's memory in bytes, as `/proc/meminfo` says: at least what `ccf` finds available.
fn mem_total() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `ccf args` with its address space capped at 4 GiB, so that a filter the check lets through
/// fails to allocate instead of taking the machine's memory.
fn ccf_capped(args: &[&str]) -> Output {
    let command = format!("ulimit -v 4194304 && exec \"$0\" {}", args.join(" "));
    Command::new("sh")
        .args(["-c", &command, env!("CARGO_BIN_EXE_ccf")])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The machine's memory, a file of one key in a scratch directory for `test`, and an output
/// beside it; `None` where there is no `/proc/meminfo`.
fn memory_case(test: &str) -> Option<(u64, PathBuf, PathBuf)> {
    let Some(total) = mem_total() else {
        eprintln!("no /proc/meminfo: ccf checks no memory here");
        return None;
    };
    let dir = scratch(test);
    let keys = dir.join("keys.txt");
    write_lines(&keys, ["alice".to_string()]);
    Some((total, keys, dir.join("out.ccf")))
}

#[test]
fn a_capacity_beyond_the_machines_memory_is_refused_before_allocating() {
    let Some((total, keys, out)) = memory_case("memory") else {
        return;
    };
    // The smallest capacity of a geometric series, as the library sizes it, whose table is larger than
    // all of the machine's memory: for a fixed filter at the default rate and at 1e-9, and for
    // a growable one's first level.
    let fixed = |fpr: Option<f64>| {
        move |capacity: usize| {
            let mut builder = ConcurrentCuckooFilter::builder()
                .capacity(capacity)
                .layout(TableLayout::Packed);
            if let Some(fpr) = fpr {
                builder = builder.false_positive_rate(fpr);
            }
            builder.memory_bytes().ok()
        }
    };
    let growable = |capacity: usize| {
        GrowableCuckooFilter::builder()
            .capacity(capacity)
            .memory_bytes()
            .ok()
    };
    let beyond = |bytes: &dyn Fn(usize) -> Option<u64>| {
        (80..160)
            .map(|step| 1.25f64.powi(step) as usize)
            .find(|&capacity| bytes(capacity).is_some_and(|bytes| bytes > total))
    };
    let cases: [(&[&str], Option<usize>, &str); 3] = [
        (&[], beyond(&fixed(None)), "its table"),
        (&["--fpr", "1e-9"], beyond(&fixed(Some(1e-9))), "its table"),
        (&["--grow"], beyond(&growable), "its first level"),
    ];
    let mut checked = 0;
    for (extra, capacity, what) in cases {
        let Some(capacity) = capacity else { continue };
        let capacity = capacity.to_string();
        for command in ["build", "dedup"] {
            let mut args = vec![command, "--capacity", &capacity];
            args.extend_from_slice(extra);
            if command == "build" {
                args.extend_from_slice(&["-o", path(&out)]);
            }
            args.push(path(&keys));
            let refused = ccf_capped(&args);
            // `build` writes the filter, through a copy of it in memory.
            let what = match command {
                "build" => format!("{what} and the copy of it written out"),
                _ => what.to_string(),
            };
            assert_refused_in_one_line(&refused, &format!("{what} would need "));
            let err = stderr(&refused);
            assert!(
                err.contains("of memory available (MemAvailable in /proc/meminfo)")
                    && err.contains("GiB"),
                "{err}"
            );
            assert!(!out.exists());
            checked += 1;
        }
    }
    assert!(checked > 0, "no capacity whose table passes {total} bytes");
}

#[test]
fn a_filter_file_with_bytes_after_it_is_refused_as_the_library_refuses_it() {
    let dir = scratch("trailing");
    let keys = dir.join("keys.txt");
    write_lines(&keys, (0..100).map(|i| format!("k{i}")));
    for (kind, extra) in [("fixed", &[][..]), ("growable", &["--grow"][..])] {
        let filter = dir.join(format!("{kind}.ccf"));
        let mut args = vec!["build", "-o", path(&filter), path(&keys)];
        args.extend_from_slice(extra);
        assert!(ccf(&args, b"").status.success());
        let mut bytes = std::fs::read(&filter).unwrap();
        bytes.extend_from_slice(&[0u8; 1000]);
        std::fs::write(&filter, &bytes).unwrap();
        let expected = match kind {
            "fixed" => ConcurrentCuckooFilter::from_bytes(&bytes).unwrap_err(),
            _ => GrowableCuckooFilter::from_bytes(&bytes).unwrap_err(),
        }
        .to_string();
        assert!(expected.starts_with("1000 trailing bytes"), "{expected}");
        let copy = dir.join(format!("{kind}-copy.ccf"));
        std::fs::copy(&filter, &copy).unwrap();
        let union = dir.join("union.ccf");
        for args in [
            vec!["info", path(&filter)],
            vec!["query", path(&filter), path(&keys)],
            vec!["merge", path(&filter), path(&copy), "-o", path(&union)],
        ] {
            assert_refused_in_one_line(&ccf(&args, b""), &expected);
        }
        assert!(!union.exists());
        // Read as a stream, whose length is not known before its end.
        assert_refused_in_one_line(&ccf(&["info", "/dev/stdin"], &bytes), &expected);
        bytes.truncate(bytes.len() - 1000);
        assert!(ccf(&["query", "/dev/stdin", path(&keys)], &bytes)
            .status
            .success());
    }
}

#[test]
fn a_rate_below_the_smallest_reachable_names_the_smallest() {
    let dir = scratch("smallest-rate");
    let out = dir.join("out.ccf");
    for extra in [&[][..], &["--grow"][..]] {
        let mut args = vec!["build", "--capacity", "10", "--fpr", "0.0000000001"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", path(&out)]);
        let refused = ccf(&args, b"a\n");
        assert_refused_in_one_line(&refused, "smallest");
        let err = stderr(&refused);
        assert!(!err.contains("above 0 and below 1"), "{err}");
        // The rate it names is one a filter can be built for.
        let smallest = err
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '(' | ')'))
            .map(|word| word.trim_end_matches('.'))
            .filter_map(|word| word.parse::<f64>().ok())
            .find(|&rate| rate > 1e-10 && rate < 1e-6)
            .unwrap_or_else(|| panic!("no smallest rate in {err}"));
        let at = smallest.to_string();
        args[4] = &at;
        let built = ccf(&args, b"a\n");
        assert!(built.status.success(), "{at}: {}", stderr(&built));
    }
}

#[test]
fn an_output_that_holds_something_else_than_a_filter_is_kept_unless_forced() {
    let dir = scratch("foreign-output");
    let keys = dir.join("keys.txt");
    write_lines(&keys, (0..100).map(|i| format!("key-{i}")));
    let notes = dir.join("notes.txt");
    let short = dir.join("short.txt");
    let filter = dir.join("keys.ccf");
    let built = ccf(&["build", "-o", path(&filter), path(&keys)], b"");
    assert!(built.status.success(), "{}", stderr(&built));
    let link = dir.join("link.ccf");
    std::os::unix::fs::symlink("notes.txt", &link).unwrap();
    for output in [&notes, &short, &link] {
        for grow in [false, true] {
            std::fs::write(&notes, "my notes, not a filter\n").unwrap();
            std::fs::write(&short, b"\x89CCF").unwrap();
            let mut args = vec!["build", "-o", path(output), path(&keys)];
            if grow {
                args.insert(1, "--grow");
            }
            let refused = ccf(&args, b"");
            assert_refused_in_one_line(&refused, "exists and is not a filter file");
            assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
            let merged = ccf(
                &["merge", path(&filter), path(&filter), "-o", path(output)],
                b"",
            );
            assert_refused_in_one_line(&merged, "exists and is not a filter file");
            assert_eq!(std::fs::read(&notes).unwrap(), b"my notes, not a filter\n");
            assert_eq!(std::fs::read(&short).unwrap(), b"\x89CCF");
        }
    }
    // Told to, or over a filter or an empty file, it writes.
    let forced = ccf(&["build", "--force", "-o", path(&notes), path(&keys)], b"");
    assert!(forced.status.success(), "{}", stderr(&forced));
    let rebuilt = ccf(&["build", "--grow", "-o", path(&notes), path(&keys)], b"");
    assert!(rebuilt.status.success(), "{}", stderr(&rebuilt));
    let merged = ccf(
        &["merge", path(&filter), path(&filter), "-o", path(&notes)],
        b"",
    );
    assert!(merged.status.success(), "{}", stderr(&merged));
    std::fs::write(&short, b"").unwrap();
    let over_empty = ccf(&["build", "-o", path(&short), path(&keys)], b"");
    assert!(over_empty.status.success(), "{}", stderr(&over_empty));
    let absent = ccf(&["query", "-v", path(&short), path(&keys)], b"");
    assert_eq!(absent.status.code(), Some(1), "{}", stderr(&absent));
}

/// `build` writes its filter through a copy of the table in memory (the library encodes it
/// whole, then writes it): a table that fits in the memory there is but not twice over is
/// refused before anything is allocated, instead of being filled and killed when it is written.
#[test]
fn a_build_whose_table_fits_but_not_with_its_copy_is_refused_before_allocating() {
    let Some((total, keys, out)) = memory_case("memory-written") else {
        return;
    };
    let table = |capacity: usize| {
        ConcurrentCuckooFilter::builder()
            .capacity(capacity)
            .layout(TableLayout::Packed)
            .memory_bytes()
            .ok()
    };
    // The smallest capacity of a geometric series whose table passes half the machine's memory
    // (and stays within it: a table and its copy pass all of it).
    let capacity = (60..160)
        .map(|step| 1.25f64.powi(step) as usize)
        .find(|&capacity| table(capacity).is_some_and(|bytes| 2 * bytes > total))
        .unwrap();
    assert!(table(capacity).unwrap() < total, "{capacity}");
    let capacity = capacity.to_string();
    let refused = ccf_capped(&[
        "build",
        "--capacity",
        &capacity,
        "-o",
        path(&out),
        path(&keys),
    ]);
    assert_refused_in_one_line(
        &refused,
        "its table and the copy of it written out would need ",
    );
    assert!(!out.exists());
}
