//! Reproduces the evaluation of "Cuckoo Filter: Practically Better Than Bloom" (Fan, Andersen,
//! Kaminsky, Mitzenmacher, CoNEXT 2014): Table 3, Figures 2 to 8 and the article's Table 2, plus
//! a figure the paper does not have: throughput against threads for mixed workloads, this crate
//! against the concurrent Rust peers.
//!
//! ```text
//! cargo run --release -p ccf-benches --bin paper -- --out DIR [--mib N] [--threads T] [--runs R]
//!     [--only table3,fig2,fig3,fig4,threads]
//! ```
//!
//! Writes Markdown tables (`DIR/results.md` has them all, with the plots), CSV files and PNG
//! plots into DIR, and prints the tables. `--mib` is the memory of each filter of Table 3 and
//! Figures 5–8 (default 8; the paper used 192), `--threads` the largest thread count of the
//! mixed-workload figure (default: every core), `--runs` how many times each measurement is
//! repeated (default 3); every number is the median of the runs. `--only` runs some parts (Table
//! 3 with Figures 5–8, Figure 2 with Table 2, Figures 3 and 4, the thread figure). The default
//! scale takes 2 to 3.5 minutes on 2 cores.
//!
//! The filters of Table 3 (`table3.rs`), each given at most `--mib` MiB, configured as in the paper:
//!
//! - CF: this crate, 12-bit fingerprints, 4-slot buckets, filled to its first failed insert.
//! - ss-CF: this crate, semi-sorted 4-slot buckets, 13-bit fingerprints stored in 12 bits.
//! - BF: standard Bloom filters (`bloomfilter`, `fastbloom`) at 13 bits per item, the best
//!   number of hash functions for that (9).
//! - blk-BF: `sbbf-rs-safe`, the split block Bloom filter (256-bit blocks, 8 bits set per item),
//!   at 13 bits per item.
//! - QF: `qfilter` (a rank-select quotient filter), 9-bit remainders as in the paper, filled to
//!   90%, with the largest power-of-two slot count that fits.
//! - dl-CBF: a d-left counting Bloom filter (`ccf_benches::dlcbf`; no crate has one): 4 tables of 4-cell
//!   buckets, 12-bit cells (10-bit remainder, 2-bit counter), as many cells as the CF has slots.
//! - The Rust cuckoo peers: `atomic-cuckoo-filter` (16-bit fingerprints) and `cuckoofilter`
//!   (8-bit), each with the largest power-of-two table that fits, filled to the first failure.
//!
//! Each filter hashes keys with its own crate's hasher (`ccf_benches::peers` lists them); the
//! paper hashed every key with CityHash. Keys are distinct pseudo-random 64-bit integers,
//! computed before each timed loop.

mod run;
mod space;
mod table3;
mod threads;

use ccf_benches::args::PaperArgs;
use ccf_benches::plot::register_font;
use ccf_benches::report::{Report, Res};
use std::time::Instant;

fn main() -> Res<()> {
    let args = match PaperArgs::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(2);
        }
    };
    register_font()?;
    let started = Instant::now();
    let command = format!(
        "cargo run --release -p ccf-benches --bin paper -- --out {} --mib {} --threads {} --runs {}",
        args.out.display(),
        args.mib,
        args.threads,
        args.runs
    );
    let mut report = Report::new(&args.out, args.runs, &command)?;
    // Whether to run a part (`--only`), saying so with the time so far.
    let stage = |part: &str, what: String| {
        let run = args.runs_part(part);
        if run {
            eprintln!("[{:4.0} s] {what}", started.elapsed().as_secs_f64());
        }
        run
    };

    let (mib, runs) = (args.mib, args.runs);
    if stage(
        "table3",
        format!("Table 3, Figures 5-8: {mib} MiB filters, {runs} runs each"),
    ) {
        table3::report(&mut report, mib, runs)?;
    }
    if stage(
        "fig2",
        format!(
            "Figure 2: load factor at the first failure, {} runs",
            space::FIG2_RUNS
        ),
    ) {
        space::report_figure2(&mut report)?;
    }
    if stage("fig3", "Figure 3: bits per item against measured ε".into()) {
        space::report_figure3(&mut report, runs)?;
    }
    if stage("fig4", "Figure 4: bits per item against target ε".into()) {
        space::report_figure4(&mut report, runs)?;
    }
    if stage(
        "threads",
        format!("Mixed workloads, 1 to {} threads", args.threads),
    ) {
        threads::report(&mut report, mib, args.threads, runs)?;
    }

    let done = report.finish()?;
    eprintln!(
        "[{:4.0} s] done: {}",
        started.elapsed().as_secs_f64(),
        done.display()
    );
    Ok(())
}
