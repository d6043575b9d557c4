//! The crate's main demonstration: several million items inserted and looked up from all cores
//! through one shared filter.
//!
//! ```text
//! cargo run --release --example demo [-- ITEMS]
//! ```
//!
//! Prints insert and lookup rates on all cores, the load factor reached, the memory per item and
//! the measured false positive rate, next to what the paper predicts.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let items: u64 = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("ITEMS must be a whole number"))
        .unwrap_or(8_000_000);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let filter = Arc::new(ConcurrentCuckooFilter::with_capacity(items as usize));
    println!(
        "filter: {} buckets of {} slots, {}-bit fingerprints, {:.1} MB, {threads} threads",
        filter.bucket_count(),
        filter.bucket_size(),
        filter.fingerprint_bits(),
        filter.memory_usage() as f64 / 1e6,
    );

    let seconds = on_all_threads(
        threads,
        items,
        |filter: &ConcurrentCuckooFilter, range| {
            for key in range {
                filter
                    .insert(&key)
                    .expect("the filter was sized for these items");
            }
        },
        &filter,
    );
    println!("insert:   {:>7.2} M items/s", items as f64 / seconds / 1e6);

    let seconds = on_all_threads(
        threads,
        items,
        |filter: &ConcurrentCuckooFilter, range| {
            for key in range {
                assert!(filter.contains(&key), "false negative for {key}");
            }
        },
        &filter,
    );
    println!(
        "contains: {:>7.2} M lookups/s (all members, every one found)",
        items as f64 / seconds / 1e6
    );

    let absent = items..2 * items;
    let false_positives = absent.clone().filter(|key| filter.contains(key)).count();
    let rate = false_positives as f64 / items as f64;
    let load = filter.load_factor();
    let f = filter.fingerprint_bits() as f64;
    let b = filter.bucket_size() as f64;
    println!("items:    {} (len), load factor {load:.3}", filter.len());
    // Bits a slot takes: a fingerprint packed, or a share of a bucket's 64-bit word.
    let slot_bits = match filter.layout() {
        TableLayout::BucketWord => 64.0 / b,
        _ => f,
    };
    println!(
        "memory:   {:.2} bits per item ({} layout: {slot_bits}/α = {:.2} at α = 0.95; the \
         paper's packed f/α = {:.2})",
        filter.memory_usage() as f64 * 8.0 / filter.len() as f64,
        filter.layout(),
        slot_bits / 0.95,
        f / 0.95
    );
    println!(
        "false positive rate: {:.4}% measured over {items} absent keys, {:.4}% expected (2·b·α/2^f)",
        rate * 100.0,
        2.0 * b * load / 2f64.powf(f) * 100.0
    );
}

/// Runs `work` on `threads` threads, each over its share of `0..items`, and returns the seconds
/// the slowest took.
fn on_all_threads(
    threads: u64,
    items: u64,
    work: impl Fn(&ConcurrentCuckooFilter, std::ops::Range<u64>) + Sync,
    filter: &Arc<ConcurrentCuckooFilter>,
) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (filter, work) = (Arc::clone(filter), &work);
            scope.spawn(move || work(&filter, t * items / threads..(t + 1) * items / threads));
        }
    });
    start.elapsed().as_secs_f64()
}
