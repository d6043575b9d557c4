//! How many random cache lines per second this machine's memory serves, with no filter in the
//! way: the ceiling of any lookup that reads lines at random from a table far larger than the
//! caches.
//!
//! ```text
//! cargo run --release -p ccf-benches --example line_rate [-- MB]
//! ```
//!
//! A buffer of `MB` megabytes (default 192, the size of the 127.78M-key filters of the `reference`
//! benchmark), backed by huge pages where the kernel grants them, as the crate's tables are, is
//! read at random: one line per lookup (as a blocked Bloom filter reads), then two independent
//! lines per lookup (as a cuckoo filter reads its two buckets). The addresses are drawn before the
//! timing and every load is independent of the others, so the core keeps as many misses in flight
//! as it can: no lookup that reads as many lines can go faster. Prints the median of 7 passes of
//! 1M lookups each, in million lookups per second.

use ccf_benches::args::count_arg;
use ccf_benches::huge_pages::advise_huge_pages;
use ccf_benches::keys::Rng;
use ccf_benches::measure::median;
use std::hint::black_box;
use std::time::Instant;

const LOOKUPS: usize = 1_000_000;
const PASSES: usize = 7;
/// u64 words per 64-byte line.
const LINE_WORDS: usize = 8;

fn main() {
    let megabytes: usize = count_arg(
        192,
        "cargo run --release -p ccf-benches --example line_rate -- [MB]",
    );
    let words = megabytes << 17;
    let mut buffer = vec![0u64; words];
    advise_huge_pages(&mut buffer);
    // Touch every page, so that no pass pays for the first fault.
    for (i, word) in buffer.iter_mut().enumerate().step_by(512) {
        *word = i as u64;
    }
    let mut rng = Rng::new(0x11e5);
    let lines = (words / LINE_WORDS) as u64;
    let starts: Vec<usize> = (0..2 * LOOKUPS)
        .map(|_| rng.below(lines) as usize * LINE_WORDS)
        .collect();

    let one = rate(|| {
        starts[..LOOKUPS]
            .iter()
            .fold(0u64, |sum, &i| sum.wrapping_add(buffer[i]))
    });
    let two = rate(|| {
        starts.chunks_exact(2).fold(0u64, |sum, pair| {
            sum.wrapping_add(buffer[pair[0]] ^ buffer[pair[1]])
        })
    });
    println!("random lines from {megabytes} MB, million lookups per second (median of {PASSES} passes of 1M)");
    println!(
        "  one line per lookup   {one:8.2}   ({:.2} million lines/s)",
        one
    );
    println!(
        "  two lines per lookup  {two:8.2}   ({:.2} million lines/s)",
        2.0 * two
    );
}

/// Median rate over [`PASSES`] runs of `pass`, which looks up [`LOOKUPS`] keys.
fn rate(pass: impl Fn() -> u64) -> f64 {
    let mut rates: Vec<f64> = (0..PASSES)
        .map(|_| {
            let started = Instant::now();
            black_box(pass());
            LOOKUPS as f64 / started.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    median(&mut rates)
}
