//! Live files (the library's `create_shared`) in `ccf query` and `ccf info`: mapped read-only,
//! answering as the library does, described with their regions and writers.
#![cfg(target_os = "linux")]

mod common;

use std::fs;

use common::{assert_fails, ccf, lines, path, scratch, stderr};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};

/// `count` keys `key-N` in a new live file at `file`, packed if `packed`; the filter stays open.
fn live_file(file: &std::path::Path, count: usize, packed: bool) -> ConcurrentCuckooFilter {
    let mut builder = ConcurrentCuckooFilter::builder().capacity(count * 2);
    if packed {
        builder = builder
            .layout(TableLayout::Packed)
            .false_positive_rate(0.001);
    }
    let filter = builder.create_shared(file).unwrap();
    for i in 0..count {
        filter.insert(format!("key-{i}").as_str()).unwrap();
    }
    filter
}

#[test]
fn query_maps_a_live_file_and_finds_every_key_while_a_writer_has_it_open() {
    let dir = scratch("live-query");
    for packed in [false, true] {
        let file = dir.join(format!("keys-{packed}.live"));
        let writer = live_file(&file, 2_000, packed);
        let input: String = (0..4_000).map(|i| format!("key-{i}\n")).collect();
        let found = ccf(&["query", path(&file)], input.as_bytes());
        assert!(found.status.success(), "{}", stderr(&found));
        let found = lines(&found);
        assert!((0..2_000).all(|i| found.contains(&format!("key-{i}"))));
        let false_positives = found.len() - 2_000;
        assert!(
            false_positives < 40,
            "{false_positives} of 2000 absent keys"
        );
        // The query wrote nothing to the file; a key the writer adds after is seen by the next.
        let before = fs::read(&file).unwrap();
        let again = ccf(&["query", path(&file)], b"key-0\n");
        assert_eq!(lines(&again), ["key-0"]);
        assert!(fs::read(&file).unwrap() == before);
        writer.insert("late").unwrap();
        let late = ccf(&["query", path(&file)], b"late\n");
        assert_eq!(lines(&late), ["late"]);
    }
}

#[test]
fn info_describes_a_live_file_its_writers_and_its_lock_region() {
    let dir = scratch("live-info");
    let file = dir.join("keys.live");
    let writer = live_file(&file, 1_000, false);
    let info = ccf(&["info", path(&file)], b"");
    assert!(info.status.success(), "{}", stderr(&info));
    let info = String::from_utf8(info.stdout).unwrap();
    let expected = writer.live_info().unwrap();
    for field in [
        "kind: fixed-size, live file (mapped read-only)\n".to_owned(),
        "items: 1000\n".to_owned(),
        "registration slots: 1 in use of 128".to_owned(),
        format!(
            "lock region: {} stripe records of 192 bytes at byte {}",
            expected.stripes, expected.lock_records_offset
        ),
        "stripes held: 0".to_owned(),
        format!(
            "table: {} bytes at byte {}",
            expected.table_bytes, expected.table_offset
        ),
        format!(
            "file length: {} bytes\n",
            fs::metadata(&file).unwrap().len()
        ),
    ] {
        assert!(info.contains(&field), "{field} in {info}");
    }
    drop(writer);
    // Its slot lock can outlive it for a moment: a `ccf` that another test thread is spawning
    // holds a copy of every descriptor until its `exec` closes them.
    let released = (0..100).any(|_| {
        let info = String::from_utf8(ccf(&["info", path(&file)], b"").stdout).unwrap();
        info.contains("registration slots: 0 in use of 128")
    });
    assert!(released);
}

#[test]
fn a_live_file_merges_as_a_copy_and_bad_live_files_are_refused() {
    let dir = scratch("live-merge");
    let file = dir.join("keys.live");
    drop(live_file(&file, 500, true));
    let union = dir.join("union.ccf");
    let merged = ccf(
        &["merge", path(&file), path(&file), "-o", path(&union)],
        b"",
    );
    assert!(merged.status.success(), "{}", stderr(&merged));
    let found = ccf(&["query", path(&union)], b"key-1\nkey-499\n");
    assert_eq!(lines(&found), ["key-1", "key-499"]);
    // The live file itself was not written: still 500 items.
    let info = String::from_utf8(ccf(&["info", path(&file)], b"").stdout).unwrap();
    assert!(info.contains("items: 500\n"), "{info}");

    let bytes = fs::read(&file).unwrap();
    let truncated = dir.join("truncated.live");
    fs::write(&truncated, &bytes[..bytes.len() - 4096]).unwrap();
    assert_fails(
        &ccf(&["query", path(&truncated)], b"key-1\n"),
        "not a readable filter",
    );
    assert_fails(
        &ccf(&["info", path(&truncated)], b""),
        "not a readable filter",
    );
    let mut flipped = bytes.clone();
    flipped[20] ^= 1;
    fs::write(&truncated, &flipped).unwrap();
    assert_fails(
        &ccf(&["info", path(&truncated)], b""),
        "not a readable filter",
    );
}

#[test]
fn a_live_file_through_a_pipe_is_read_as_a_stream_and_refused_in_words() {
    let dir = scratch("live-pipe");
    let file = dir.join("keys.live");
    drop(live_file(&file, 100, false));
    let bytes = fs::read(&file).unwrap();
    // Only a regular file is mapped; a pipe's bytes go to the snapshot decoder, which names them.
    assert_fails(
        &ccf(&["info", "/dev/stdin"], &bytes),
        "not a readable filter",
    );
}

#[test]
fn a_live_file_given_as_the_output_is_not_replaced_unless_forced() {
    let dir = scratch("live-output");
    let file = dir.join("keys.live");
    let filter = live_file(&file, 100, false);
    let keys = dir.join("keys.txt");
    fs::write(&keys, "a\nb\n").unwrap();
    let snapshot = dir.join("snapshot.ccf");
    assert!(ccf(&["build", "-o", path(&snapshot), path(&keys)], b"")
        .status
        .success());
    let bytes = fs::read(&file).unwrap();
    for args in [
        vec!["build", "-o", path(&file), path(&keys)],
        vec!["merge", path(&snapshot), path(&snapshot), "-o", path(&file)],
    ] {
        assert_fails(&ccf(&args, b""), "exists and is a live filter file");
        assert_eq!(fs::read(&file).unwrap(), bytes, "{args:?}");
    }
    filter.insert("still live").unwrap();
    assert!(
        ConcurrentCuckooFilter::open_shared(&file, concurrent_cuckoo_filter::Access::ReadOnly)
            .unwrap()
            .contains("still live")
    );
    let forced = ccf(&["build", "--force", "-o", path(&file), path(&keys)], b"");
    assert!(forced.status.success(), "{}", stderr(&forced));
}
