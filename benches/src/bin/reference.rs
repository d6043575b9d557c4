//! The paper authors' `bulk-insert-and-query` benchmark (efficient-cuckoofilter, its
//! `benchmarks/bulk-insert-and-query.cc`) run on this crate's filter, printing the same table, so
//! the two outputs can be read side by side on one machine:
//!
//! ```text
//! cargo run --release -p ccf-benches --bin reference -- 127780000   # the paper's 192 MB scale
//! cargo run --release -p ccf-benches --bin reference -- 660000      # about 1 MB, cache-resident
//! ```
//!
//! As there: N random 64-bit keys and 1M random lookup keys drawn before anything is timed; an
//! empty filter sized for N by its constructor, the N keys added one per call (a failed add
//! aborts the run), then 1M lookups, one per call, with 0, 25, 50, 75 and 100% of them of added
//! keys (drawn with repetition, shuffled); ε is the share of the 0% lookups found; bits per item
//! are the filter's bytes × 8 ÷ N. Each figure is one timed pass.
//!
//! Rows: `Ours12`, 12-bit fingerprints in 4-slot buckets packed end to end
//! (`TableLayout::Packed`), `insert` and `contains`; `OursWord12`, the default filter: the same
//! buckets one 64-bit word each, fingerprints and a version (`TableLayout::BucketWord`);
//! `OursSemi13`, semi-sorted buckets with 13-bit fingerprints stored in 12 bits; `Ours12 bulk`
//! and `OursWord12 bulk`, the two layouts filled by one `try_extend` and queried by one
//! `contains_batch_into` per share. This crate's bytes count the stripe words too
//! (`memory_usage`); its table is not rounded up to a power of two.

use ccf_benches::keys::Rng;
use ccf_benches::peers::{Peer, SemiSorted};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
use std::hint::black_box;
use std::time::Instant;

/// Lookups per share of positive queries.
const SAMPLE_SIZE: usize = 1000 * 1000;
/// Shares of lookups of added keys.
const SHARES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// Width of the row names, as in the C++ table.
const NAME_WIDTH: usize = 15;

/// What one row measures.
struct Statistics {
    adds_per_second: f64,
    finds_per_second: [f64; SHARES.len()],
    false_positive_rate: f64,
    bits_per_item: f64,
}

/// `count` random keys.
fn random_keys(count: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| rng.next_u64()).collect()
}

/// `lookups` with a share `share` of its entries replaced by keys drawn from `added`, shuffled.
fn mix_in(lookups: &[u64], added: &[u64], share: f64, rng: &mut Rng) -> Vec<u64> {
    let mut mixed = lookups.to_vec();
    let replaced = (share * lookups.len() as f64) as usize;
    for slot in &mut mixed[..replaced] {
        *slot = added[rng.below(added.len() as u64) as usize];
    }
    rng.shuffle(&mut mixed);
    mixed
}

/// Adds every key of `to_add` to `filter` (`false`: an add failed), then answers the lookups
/// with `find`, which returns how many it found.
fn benchmark<F: Peer>(
    filter: F,
    to_add: &[u64],
    to_lookup: &[u64],
    add: impl Fn(&F, &[u64]) -> bool,
    find: impl Fn(&F, &[u64], &mut [bool]) -> usize,
) -> Result<Statistics, String> {
    let started = Instant::now();
    if !add(&filter, to_add) {
        return Err("The filter is too small to hold all of the elements".into());
    }
    let adds_per_second = to_add.len() as f64 / started.elapsed().as_secs_f64();
    let bits_per_item = (8 * filter.memory()) as f64 / to_add.len() as f64;

    let mut rng = Rng::new(0x10c4);
    let mut answers = vec![false; to_lookup.len()];
    let mut finds_per_second = [0.0; SHARES.len()];
    let mut false_positive_rate = 0.0;
    for (rate, share) in finds_per_second.iter_mut().zip(SHARES) {
        let mixed = mix_in(to_lookup, to_add, share, &mut rng);
        let started = Instant::now();
        let found = black_box(find(&filter, &mixed, &mut answers));
        *rate = mixed.len() as f64 / started.elapsed().as_secs_f64();
        if share == 0.0 {
            false_positive_rate = found as f64 / mixed.len() as f64;
        }
    }
    Ok(Statistics {
        adds_per_second,
        finds_per_second,
        false_positive_rate,
        bits_per_item,
    })
}

// The add and find loops are functions of their own (`inline(never)`: one call per pass) so a
// profiler can attribute instructions to them: `valgrind --tool=callgrind
// --toggle-collect='*find_each*'` counts the lookups alone.

/// One `insert` per key.
#[inline(never)]
fn add_each<F: Peer>(filter: &F, keys: &[u64]) -> bool {
    keys.iter().all(|&key| filter.insert(key))
}

/// One `contains` per key.
#[inline(never)]
fn find_each<F: Peer>(filter: &F, keys: &[u64], _: &mut [bool]) -> usize {
    keys.iter().filter(|&&key| filter.contains(key)).count()
}

/// All keys by one `try_extend`.
#[inline(never)]
fn add_bulk(filter: &ConcurrentCuckooFilter, keys: &[u64]) -> bool {
    filter.try_extend(keys).is_ok()
}

/// All keys by one `contains_batch_into`.
#[inline(never)]
fn find_batch(filter: &ConcurrentCuckooFilter, keys: &[u64], answers: &mut [bool]) -> usize {
    filter.contains_batch_into(keys, answers);
    answers.iter().filter(|&&found| found).count()
}

/// The two header lines of the C++ table (its `ε` column is padded by bytes, so one short).
fn header() -> String {
    let pad = " ".repeat(NAME_WIDTH);
    let mut first = format!("{pad}{:>12}", "Million");
    let mut second = format!("{pad}{:>12}", "adds/sec");
    for (i, _) in SHARES.iter().enumerate() {
        first.push_str(&format!("{:>8}", "Find"));
        second.push_str(&format!("{:>7}%", 100 * i / (SHARES.len() - 1)));
    }
    first.push_str(&format!(
        "{:>8}{:>11}{:>11}{:>8}",
        "", "", "optimal", "wasted"
    ));
    second.push_str(&format!(
        "{:>8}{:>11}{:>11}{:>8}",
        "ε", "bits/item", "bits/item", "space"
    ));
    format!("{first}\n{second}")
}

/// A row of the table, in the C++ layout.
fn row(name: &str, stats: &Statistics) -> String {
    let mut line = format!("{name:>NAME_WIDTH$}{:>12.2}", stats.adds_per_second / 1e6);
    for rate in stats.finds_per_second {
        line.push_str(&format!("{:>8.2}", rate / 1e6));
    }
    let optimal = (1.0 / stats.false_positive_rate).log2();
    line.push_str(&format!(
        "{:>7.3}%{:>11.2}{:>11.2}{:>7.1}%",
        stats.false_positive_rate * 100.0,
        stats.bits_per_item,
        optimal,
        100.0 * (stats.bits_per_item / optimal - 1.0)
    ));
    line
}

fn main() {
    let usage = "usage: cargo run --release -p ccf-benches --bin reference -- N";
    let mut args = std::env::args().skip(1);
    let (Some(n), None) = (args.next(), args.next()) else {
        eprintln!("{usage}");
        std::process::exit(1);
    };
    let Ok(add_count) = n.parse::<usize>() else {
        eprintln!("Invalid number: {n}\n{usage}");
        std::process::exit(2);
    };
    let to_add = random_keys(add_count, 1);
    let to_lookup = random_keys(SAMPLE_SIZE, 2);

    println!("{}", header());
    let print = |name: &str, stats: Result<Statistics, String>| match stats {
        Ok(stats) => println!("{}", row(name, &stats)),
        Err(err) => {
            eprintln!("{name}: {err}");
            std::process::exit(1);
        }
    };
    let layout = |layout: TableLayout| {
        ConcurrentCuckooFilter::builder()
            .capacity(add_count)
            .layout(layout)
            .build()
            .unwrap_or_else(|err| {
                eprintln!("{layout}: {err}");
                std::process::exit(1);
            })
    };
    let (packed, words) = (
        || layout(TableLayout::Packed),
        || layout(TableLayout::BucketWord),
    );
    let (add, look) = (&to_add, &to_lookup);
    print(
        "Ours12",
        benchmark(packed(), add, look, add_each, find_each),
    );
    // The default filter: `with_capacity` picks bucket words for 12-bit 4-slot buckets.
    let default = ConcurrentCuckooFilter::with_capacity(add_count);
    assert_eq!(default.layout(), TableLayout::BucketWord);
    print(
        "OursWord12",
        benchmark(default, add, look, add_each, find_each),
    );
    let semi_sorted = SemiSorted::with_capacity(add_count);
    print(
        "OursSemi13",
        benchmark(semi_sorted, add, look, add_each, find_each),
    );
    print(
        "Ours12 bulk",
        benchmark(packed(), add, look, add_bulk, find_batch),
    );
    print(
        "OursWord12 bulk",
        benchmark(words(), add, look, add_bulk, find_batch),
    );
}
