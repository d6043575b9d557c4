//! `ccf dedup --window`: an endless pipe passed on line by line, a count window that forgets
//! after N·(1 + 1/G) lines, a time window, and bad values refused with exit status 2.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;
use std::time::Duration;

use common::{ccf, lines, start, stderr};

/// How long a kept line may take to come back before the test fails rather than hangs: far
/// above any run's need, a guard, not a measurement.
const STALL: Duration = Duration::from_secs(120);

#[test]
fn each_kept_line_comes_back_before_the_next_is_written() {
    let mut child = start(&["dedup", "--window", "1000", "--fpr", "1e-7"]);
    let mut input = child.stdin.take().unwrap();
    let output = BufReader::new(child.stdout.take().unwrap());
    // Read on a thread of its own, so that a stalled child fails the test after STALL.
    let (sender, kept) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in output.lines() {
            if sender.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // At 1e-7 no new line of these is a false positive (checked: none is).
    for i in 0..300 {
        let line = format!("event-{}", i / 3 * 2 + i % 3 % 2); // each new line, then a repeat
        input.write_all(format!("{line}\n").as_bytes()).unwrap();
        input.flush().unwrap();
        if i % 3 == 2 {
            continue; // a repeat within the window: nothing comes back
        }
        let back = kept
            .recv_timeout(STALL)
            .unwrap_or_else(|_| panic!("{line} did not come back"));
        assert_eq!(
            back, line,
            "the repeat was dropped, the new line kept, in order"
        );
    }
    drop(input);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(status.success());
    assert!(kept.try_recv().is_err(), "nothing more");
}

/// Lines `probe-j`, `d - 1` fillers, `probe-j` again, for each `j` of `trials`: how many of the
/// second `probe-j`s `ccf dedup --window N --generations G` printed.
fn repeats_printed(window: u64, generations: u64, distance: u64, trials: u64) -> usize {
    let mut input = String::new();
    for j in 0..trials {
        input += &format!("probe-{j}\n");
        for i in 1..distance {
            input += &format!("filler-{j}-{i}\n");
        }
        input += &format!("probe-{j}\n");
    }
    let window = window.to_string();
    let generations = generations.to_string();
    let args = [
        "dedup",
        "--window",
        &window,
        "--generations",
        &generations,
        "--fpr",
        "1e-6",
    ];
    let out = ccf(&args, input.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = lines(&out);
    let probes = printed.iter().filter(|l| l.starts_with("probe-")).count();
    probes - trials as usize // each probe's first line is printed
}

#[test]
fn a_count_window_drops_repeats_within_n_lines_and_forgets_after_n_times_1_plus_1_over_g() {
    let (n, trials) = (200u64, 40);
    for g in [1, 4, 8] {
        let per_generation = n.div_ceil(g);
        // No false negatives: a repeat within the window is dropped, every time.
        for distance in [1, n / 2, n] {
            assert_eq!(
                repeats_printed(n, g, distance, trials),
                0,
                "g {g} d {distance}"
            );
        }
        // Forgotten by N·(1 + 1/G) lines (for G dividing N): printed again, but for the
        // false positive rate of 1e-6.
        let retention = (g + 1) * per_generation;
        assert_eq!(retention, n + n / g);
        let printed = repeats_printed(n, g, retention, trials);
        assert_eq!(printed, trials as usize, "g {g}");
    }
}

/// The closing note's "forgotten within X windows" of a `--window N --generations G` run.
fn stated_retention(window: u64, generations: u64) -> f64 {
    let args = [
        "dedup",
        "--window",
        &window.to_string(),
        "--generations",
        &generations.to_string(),
    ];
    let out = ccf(&args, b"x\n");
    let err = stderr(&out);
    let after = err.split("forgotten within ").nth(1).expect(&err);
    after.split(' ').next().unwrap().parse().expect(&err)
}

#[test]
fn the_stated_retention_holds_also_where_g_does_not_divide_n() {
    let trials = 40;
    for (n, g) in [(10u64, 8u64), (3, 8), (200, 8), (1001, 4)] {
        let stated = stated_retention(n, g);
        // A repeat past the stated windows is printed again, but for the rate of 1e-6.
        let distance = (stated * n as f64).ceil() as u64 + 1;
        let printed = repeats_printed(n, g, distance, trials);
        assert_eq!(printed, trials as usize, "n {n} g {g}: stated {stated}");
    }
}

#[test]
fn a_time_window_drops_repeats_within_it_and_forgets_after_it() {
    let out = ccf(&["dedup", "--window", "1h"], b"a\nb\na\nb\nc\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lines(&out), ["a", "b", "c"]);
    // 200ms in 8 generations is forgotten within 225ms: a repeat 600ms later is printed.
    let mut child = start(&["dedup", "--window", "200ms", "--capacity", "100"]);
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"seen\n").unwrap();
    input.flush().unwrap();
    std::thread::sleep(Duration::from_millis(600));
    input.write_all(b"seen\n").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lines(&out), ["seen", "seen"]);
}

#[test]
fn a_time_window_past_its_capacity_forgets_early_and_says_so() {
    let input: String = (0..5000).map(|i| format!("{}\n", i % 2500)).collect();
    let out = ccf(
        &["dedup", "--window", "1h", "--capacity", "100"],
        input.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("forgotten early"), "{}", stderr(&out));
    assert!(lines(&out).len() > 2500);
}

#[test]
fn bad_window_values_are_refused_naming_the_option() {
    for value in ["0", "-5", "10x", "5M", "", "0s", "-1s", "1e3s", "s", "1.5"] {
        let arg = format!("--window={value}");
        let out = ccf(&["dedup", &arg], b"x\n");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{value}: {err}");
        assert!(err.contains("--window"), "{value}: {err}");
        assert!(err.contains("a window"), "{value}: {err}");
        assert!(
            out.stdout.is_empty() && !err.contains("panicked"),
            "{value}: {err}"
        );
    }
    let refused = [
        (
            &["dedup", "--window", "10", "--capacity", "5"][..],
            "--capacity is for",
        ),
        (
            &["dedup", "--window", "10", "--generations", "0"][..],
            "--generations",
        ),
        (
            &["dedup", "--window", "10", "--generations", "15"][..],
            "--generations",
        ),
        (&["dedup", "--generations", "4"][..], "--window"),
        (&["dedup", "--window", "10", "--grow"][..], "--grow"),
        (&["dedup", "--window", "10", "--fpr", "2"][..], "--fpr"),
    ];
    for (args, message) in refused {
        let out = ccf(args, b"x\n");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Windows that parse but that no filter can take (more lines than a table addresses, a duration
/// past 2^64 - 1 nanoseconds, under a nanosecond per generation) are refused naming `--window`,
/// as every other bad window is, not by the library's `Window::Items` or `Window::Time`.
#[test]
fn a_window_no_filter_can_take_is_refused_naming_the_option() {
    for args in [
        &["dedup", "--window", "100000000000"][..],
        &["dedup", "--window", "600000d"][..],
        &["dedup", "--window", "0.000000004s"][..],
        &["dedup", "--window", "0.00000001s", "--generations", "14"][..],
    ] {
        let out = ccf(args, b"x\n");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--window"), "{args:?}: {err}");
        assert!(err.contains("a window"), "{args:?}: {err}");
        assert!(!err.contains("Window::"), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_window_too_long_for_a_duration_says_so() {
    for value in ["213503982334602d", "300000000000000000000s"] {
        let out = ccf(&["dedup", "--window", value], b"x\n");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{value}: {err}");
        assert!(err.contains("at most"), "{value}: {err}");
        assert!(!err.contains("longer than 0"), "{value}: {err}");
    }
}

/// `--fpr`'s help states the smallest rate and the default of a `--window`'s filter (28-bit
/// fingerprints beside 4-bit age tags; 0.1%), which are not the fixed filter's, and they hold.
#[test]
fn the_fpr_help_states_a_windows_smallest_rate_and_default() {
    let help = ccf(&["dedup", "--help"], b"");
    let text = String::from_utf8(help.stdout).unwrap().replace('\n', " ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("3e-8 with --window"), "{text}");
    assert!(text.contains("with --window, 0.1%"), "{text}");
    let out = ccf(&["dedup", "--window", "10", "--fpr", "2.8e-8"], b"x\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("2.832e-8"), "{}", stderr(&out));
    let out = ccf(&["dedup", "--window", "10", "--fpr", "3e-8"], b"x\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ccf(&["dedup", "--window", "10"], b"x\n");
    assert!(stderr(&out).contains("at most 0.0"), "{}", stderr(&out));
}

#[test]
fn dedup_help_documents_the_window() {
    let help = ccf(&["dedup", "--help"], b"");
    let text = String::from_utf8(help.stdout).unwrap();
    for needle in [
        "--window <N|DURATION>",
        "10m",
        "tail -F",
        "--generations <G>",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}
