//! The sliding-window filters side by side: the crates.io peers (and this crate's
//! `ExpiringCuckooFilter`), each configured for the same
//! window of `W` inserts and false positive rate, through the same checker and timing loops.
//!
//! ```text
//! cargo run --release -p ccf-benches --example window_peers [-- --window 1000000
//!     --threads 1,2 --plot DIR --windows 100 --checkpoints 20 --rounds 3 --generations 8
//!     --fpr 0.001 --only cuckoo-clock,probabilistic-rs]
//! ```
//!
//! For each filter: `ccf_benches::window::checker::check` (a stream of `--windows` windows,
//! probed at `--checkpoints` points: false negatives inside the window, retention, false
//! positive rate, fraction found by age) and `ccf_benches::window::speed::measure` on each
//! thread count of `--threads` (median of `--rounds` rounds). Prints a Markdown table; with
//! `--plot DIR` also writes `window_peers.md` (the table), `window_peers.csv` (fraction found by
//! age), `window_peers_summary.csv` and `window_peers.png` (fraction found against age / W)
//! there.

use ccf_benches::measure::machine;
use ccf_benches::plot::{draw, register_font, Plot, Series};
use ccf_benches::window::checker::{check, Check, CheckSpec};
use ccf_benches::window::peers::{CuckooClock, ExpiringAtomic, ProbabilisticRs, RotatingBloom};
use ccf_benches::window::speed::{measure, Speed};
use ccf_benches::window::{WindowFilter, WindowSpec};
use plotters::prelude::SeriesLabelPosition;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

const USAGE: &str = "usage: cargo run --release -p ccf-benches --example window_peers -- \
                     [--window 1000000] [--threads 1,2] [--plot DIR] [--windows 100] \
                     [--checkpoints 20] [--rounds 3] [--generations 8] [--fpr 0.001] \
                     [--only NAME,NAME]";

/// Curves whose fractions found differ by less than this at every age are drawn as one line.
const SAME_CURVE: f64 = 0.005;

struct Args {
    spec: WindowSpec,
    check: CheckSpec,
    threads: Vec<usize>,
    rounds: usize,
    plot: Option<PathBuf>,
    only: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        spec: WindowSpec {
            items: 1_000_000,
            generations: 8,
            false_positive_rate: 0.001,
        },
        check: CheckSpec::default(),
        threads: vec![1, 2],
        rounds: 3,
        plot: None,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = || format!("{flag} does not take {value:?}\n{USAGE}");
        let number = || value.parse::<u64>().map_err(|_| bad());
        match flag.as_str() {
            "--window" => args.spec.items = number()?,
            "--generations" => {
                args.spec.generations = u32::try_from(number()?).map_err(|_| bad())?
            }
            "--fpr" => args.spec.false_positive_rate = value.parse().map_err(|_| bad())?,
            "--threads" => {
                args.threads = value
                    .split(',')
                    .map(|t| t.parse().map_err(|_| bad()))
                    .collect::<Result<_, _>>()?
            }
            "--plot" => args.plot = Some(PathBuf::from(&value)),
            "--windows" => args.check.windows = number()?,
            "--checkpoints" => args.check.checkpoints = number()?,
            "--rounds" => args.rounds = number()? as usize,
            "--only" => args.only = value.split(',').map(str::to_string).collect(),
            _ => return Err(USAGE.into()),
        }
    }
    let eps = args.spec.false_positive_rate;
    if args.spec.items < 64 || args.spec.generations == 0 || args.spec.generations > 64 {
        return Err(format!(
            "a window of 64 or more, 1 to 64 generations\n{USAGE}"
        ));
    }
    if !(eps > 0.0 && eps < 0.5) {
        return Err(format!(
            "a false positive rate above 0 and below 0.5\n{USAGE}"
        ));
    }
    if args.threads.iter().any(|&t| t == 0 || t > 256) || args.rounds == 0 {
        return Err(format!("threads 1 to 256, rounds at least 1\n{USAGE}"));
    }
    if args.check.windows < 3 || args.check.checkpoints == 0 {
        return Err(format!(
            "windows at least 3, checkpoints at least 1\n{USAGE}"
        ));
    }
    Ok(args)
}

/// One filter's checker results and speeds, one per thread count.
struct Row {
    check: Check,
    speeds: Vec<Speed>,
}

fn run<F: WindowFilter>(args: &Args, pools: &[ThreadPool]) -> Result<Row, String> {
    eprintln!(
        "{}: checking a stream of {} windows",
        F::NAME,
        args.check.windows
    );
    let check = check::<F>(&args.spec, &args.check)?;
    let mut speeds = Vec::new();
    for pool in pools {
        eprintln!("{}: timing {} threads", F::NAME, pool.current_num_threads());
        speeds.push(measure::<F>(&args.spec, pool, args.rounds)?);
    }
    Ok(Row { check, speeds })
}

/// The Markdown table of `rows`.
fn table(args: &Args, rows: &[Row]) -> String {
    let mut text = String::new();
    let threads = |what: &str| {
        args.threads
            .iter()
            .map(|t| format!(" {what}, {t} thr. |"))
            .collect::<String>()
    };
    let _ = writeln!(
        text,
        "| filter |{}{} failed inserts | false negatives inside W | retention (× W) | FPR (worst point) | bytes per window item |",
        threads("insert M ops/s"),
        threads("contains M ops/s")
    );
    let columns = 7 + 2 * args.threads.len();
    let _ = writeln!(text, "|{}", "---|".repeat(columns - 1));
    for row in rows {
        let c = &row.check;
        let rates = |f: fn(&Speed) -> f64| {
            row.speeds
                .iter()
                .map(|s| format!(" {:.2} |", f(s) / 1e6))
                .collect::<String>()
        };
        let _ = writeln!(
            text,
            "| {} |{}{} {} of {} | {} of {} | {}{:.3} | {:.3}% ({:.3}%) | {:.2} |",
            c.name,
            rates(|s| s.inserts_per_second),
            rates(|s| s.lookups_per_second),
            c.failed_inserts,
            c.inserts,
            c.false_negatives,
            c.inside_probed,
            if c.retention_capped { "≥ " } else { "" },
            c.retention,
            c.false_positive_rate * 100.0,
            c.worst_false_positive_rate * 100.0,
            c.bytes as f64 / c.window as f64,
        );
    }
    text
}

fn write_files(
    dir: &std::path::Path,
    args: &Args,
    rows: &[Row],
    text: &str,
) -> Result<(), Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("window_peers.md"), text)?;
    let mut csv = String::from("filter,age_lo_windows,age_hi_windows,probed,found,fraction\n");
    let mut summary = String::from(
        "filter,window,generations,target_fpr,inserts,failed_inserts,inside_probed,false_negatives,retention_windows,retention_capped,negatives,fpr,worst_fpr,bytes",
    );
    for t in &args.threads {
        let _ = write!(summary, ",insert_ops_{t}t,contains_ops_{t}t");
    }
    summary.push('\n');
    let mut series = Vec::new();
    for row in rows {
        let c = &row.check;
        let w = c.window as f64;
        for b in &c.buckets {
            let (lo, hi) = (b.lo as f64 / w, b.hi as f64 / w);
            writeln!(
                csv,
                "{},{lo},{hi},{},{},{}",
                c.name,
                b.probed,
                b.found,
                b.fraction()
            )?;
        }
        write!(
            summary,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.name,
            c.window,
            args.spec.generations,
            args.spec.false_positive_rate,
            c.inserts,
            c.failed_inserts,
            c.inside_probed,
            c.false_negatives,
            c.retention,
            c.retention_capped,
            c.negatives,
            c.false_positive_rate,
            c.worst_false_positive_rate,
            c.bytes
        )?;
        for s in &row.speeds {
            write!(
                summary,
                ",{:.0},{:.0}",
                s.inserts_per_second, s.lookups_per_second
            )?;
        }
        summary.push('\n');
        let points: Vec<(f64, f64)> = c
            .buckets
            .iter()
            .map(|b| ((b.lo + b.hi) as f64 / 2.0 / w, b.fraction()))
            .collect();
        // Filters whose curves coincide share a line, or only the last drawn would show.
        let same = |s: &&mut Series| {
            let close = |(a, b): (&(f64, f64), &(f64, f64))| (a.1 - b.1).abs() < SAME_CURVE;
            s.points.len() == points.len() && s.points.iter().zip(&points).all(close)
        };
        match series.iter_mut().find(same) {
            Some(line) => line.name = format!("{} = {}", line.name, c.name),
            None => series.push(Series {
                name: c.name.to_string(),
                points,
            }),
        }
    }
    std::fs::write(dir.join("window_peers.csv"), csv)?;
    std::fs::write(dir.join("window_peers_summary.csv"), summary)?;
    register_font()?;
    let mut plot = Plot::new(
        "window_peers.png",
        format!(
            "Keys found by age: window W = {}, ε = {}, G = {}",
            args.spec.items, args.spec.false_positive_rate, args.spec.generations
        ),
        "age / W (inserts since the key's insert, in windows)",
        "fraction of keys found",
    )
    .series(series);
    plot.y_range = Some((0.0, 1.05));
    plot.legend = SeriesLabelPosition::LowerLeft;
    let caption = format!(
        "{} · {} checkpoints over a stream of {} windows",
        machine(),
        args.check.checkpoints,
        args.check.windows
    );
    draw(&plot, dir, &caption)
}

fn main() {
    let args = parse().unwrap_or_else(|err| {
        eprintln!("{err}");
        std::process::exit(2)
    });
    let pools: Vec<ThreadPool> = args
        .threads
        .iter()
        .map(|&t| {
            ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("a thread pool")
        })
        .collect();
    let wants = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    let mut rows = Vec::new();
    macro_rules! each {
        ($($filter:ty),* $(,)?) => {$(
            if wants(<$filter>::NAME) {
                match run::<$filter>(&args, &pools) {
                    Ok(row) => rows.push(row),
                    Err(e) => eprintln!("{}: not measured: {e}", <$filter>::NAME),
                }
            }
        )*};
    }
    each!(ccf_benches::window::ours::Ours);
    each!(ExpiringAtomic, CuckooClock, RotatingBloom, ProbabilisticRs);

    println!(
        "machine: {}; window W = {} inserts, G = {}, ε = {}; checker: {} windows, {} checkpoints; speeds: median of {} rounds\n",
        machine(),
        args.spec.items,
        args.spec.generations,
        args.spec.false_positive_rate,
        args.check.windows,
        args.check.checkpoints,
        args.rounds
    );
    let text = table(&args, &rows);
    println!("{text}");
    for row in &rows {
        let clean: Vec<String> = row
            .speeds
            .iter()
            .map(|s| format!("{} of {} at {} thr.", s.clean, s.phases, s.threads))
            .collect();
        println!(
            "{}: timed phases with a core per thread and the machine to themselves: {}",
            row.check.name,
            clean.join(", ")
        );
        if !row.check.remarks.is_empty() {
            println!("{}: {}", row.check.name, row.check.remarks);
        }
    }
    if let Some(dir) = &args.plot {
        if let Err(e) = write_files(dir, &args, &rows, &text) {
            eprintln!("could not write into {}: {e}", dir.display());
            std::process::exit(1);
        }
    }
}
