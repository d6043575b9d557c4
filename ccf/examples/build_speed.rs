//! `ccf build` against the library's `try_par_extend` on the same keys held in memory:
//! `build_speed FILE [ROUNDS] [grow]`, FILE holding one distinct key per line (see `gen_lines`).
//!
//! Each round times both, in alternation, each into a fresh filter of capacity = the line count:
//! `try_par_extend` over the lines already split in memory (hashing and inserting only), and the
//! whole `ccf build --capacity N -o OUT FILE` (reading, splitting, hashing, inserting with a
//! duplicate check, writing and syncing the filter file). Prints each round and the medians.
//! With `grow`, both fill a growable filter from a first level of `ccf build --grow`'s default
//! size instead: the growable's `try_par_extend`, and `ccf build --grow -o OUT FILE`.

use std::time::Instant;

use ccf::cli::Cli;
use ccf::growing::DEFAULT_FIRST_LEVEL;
use clap::Parser;
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
use rayon::prelude::*;

fn median(mut seconds: Vec<f64>) -> f64 {
    seconds.sort_by(f64::total_cmp);
    seconds[seconds.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: build_speed FILE [ROUNDS] [grow]");
    let rounds: usize = args.next().map_or(3, |n| n.parse().expect("ROUNDS"));
    let grow = args.next().is_some_and(|mode| mode == "grow");
    let text = std::fs::read_to_string(&path).expect("FILE: readable UTF-8");
    let keys: Vec<&str> = text.lines().collect();
    let capacity = keys.len().to_string();
    let first_level = DEFAULT_FIRST_LEVEL as usize;
    let out = std::env::temp_dir().join(format!("build_speed-{}.ccf", std::process::id()));
    let (mut library, mut tool) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Each filter is made before its clock starts and dropped after it stops.
        let elapsed = if grow {
            let filter = GrowableCuckooFilter::with_capacity(first_level);
            let start = Instant::now();
            filter.try_par_extend(keys.par_iter()).expect("no limit");
            start.elapsed()
        } else {
            let filter = ConcurrentCuckooFilter::with_capacity(keys.len());
            let start = Instant::now();
            filter
                .try_par_extend(keys.par_iter())
                .expect("sized for every key");
            start.elapsed()
        };
        library.push(elapsed.as_secs_f64());

        let sizing: Vec<&str> = if grow {
            vec!["--grow"]
        } else {
            vec!["--capacity", &capacity]
        };
        let output = ["-o", out.to_str().expect("a UTF-8 temporary path"), &path];
        let cli = Cli::parse_from(["ccf", "build"].iter().chain(&sizing).chain(&output));
        let start = Instant::now();
        ccf::run(cli.command).expect("ccf build");
        tool.push(start.elapsed().as_secs_f64());
        println!(
            "round {round}: try_par_extend {:.3} s, ccf build {:.3} s",
            library[round], tool[round]
        );
    }
    let _ = std::fs::remove_file(&out);
    let (library, tool) = (median(library), median(tool));
    let mkeys = |s: f64| keys.len() as f64 / s / 1e6;
    println!(
        "{} keys, {} threads: try_par_extend {:.2} M keys/s, ccf build {:.2} M keys/s, ratio {:.2}",
        keys.len(),
        rayon::current_num_threads(),
        mkeys(library),
        mkeys(tool),
        library / tool
    );
}
