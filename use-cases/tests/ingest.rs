//! The ingestion gate against an exact `HashSet` on a small stream.

use ccf_use_cases::ingest::{dedup_exact, dedup_with_filter, Stream};

#[test]
fn the_gate_lets_each_record_through_at_most_once_and_drops_few_unique_ones() {
    let stream = Stream {
        records: 400_000,
        ids: 200_000,
        seed: 7,
    };
    let (passed, gate) = dedup_with_filter(stream, 200_000).unwrap();
    let distinct = dedup_exact(stream);
    assert_eq!(passed.full, 0);
    // Each record let through is one copy in the filter, and no record is let through twice.
    assert_eq!(gate.len() as u64, passed.unique);
    assert!(passed.unique <= distinct, "{} > {distinct}", passed.unique);
    // No false negatives: every record of the stream is in the filter afterwards.
    assert!((0..stream.records).all(|i| gate.contains(&stream.record(i))));
    // Unique records wrongly dropped: false positives, each under the rate at the sized load.
    let dropped = distinct - passed.unique;
    let bound = distinct as f64 * gate.expected_false_positive_rate();
    assert!((dropped as f64) <= bound, "{dropped} dropped > {bound}");
}

#[test]
fn threads_racing_on_few_ids_let_each_through_once() {
    let stream = Stream {
        records: 200_000,
        ids: 500,
        seed: 3,
    };
    // A filter far larger than the ids: a false positive is all but impossible, so the count
    // must match the exact one.
    let (passed, gate) = dedup_with_filter(stream, 1 << 20).unwrap();
    assert_eq!(passed.unique, dedup_exact(stream));
    assert_eq!(gate.len() as u64, passed.unique);
}

#[test]
fn the_dedup_binary_takes_a_one_record_stream_and_refuses_zero_ids() {
    let dedup = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_dedup"))
            .args(args)
            .output()
            .unwrap()
    };
    // Its default --ids is half the records: none of one record.
    let one = dedup(&["--records", "1", "--exact"]);
    let stdout = String::from_utf8_lossy(&one.stdout);
    assert!(one.status.success(), "{one:?}");
    assert!(stdout.contains("let through 1,"), "{stdout}");
    assert!(
        stdout.contains("wrongly dropped by the filter: 0 "),
        "{stdout}"
    );
    let zero = dedup(&["--records", "10", "--ids", "0"]);
    let stderr = String::from_utf8_lossy(&zero.stderr);
    assert_eq!(zero.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--ids") && !stderr.contains("panicked"),
        "{stderr}"
    );
}
