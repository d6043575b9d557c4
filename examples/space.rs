//! Prints docs/benchmarks.md's space and accuracy tables, measured: each filter is filled to its
//! first failed insert, then probed with keys that were never inserted.
//!
//! ```text
//! cargo run --release --example space [-- ITEMS]
//! ```

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, ConcurrentCuckooFilterBuilder};

struct Measured {
    load: f64,
    bits_per_item: f64,
    false_positive_rate: f64,
}

fn measure(
    builder: ConcurrentCuckooFilterBuilder,
    queries: u64,
) -> (ConcurrentCuckooFilter, Measured) {
    let filter = builder.build().expect("a valid configuration");
    let mut n = 0u64;
    while filter.insert(&n).is_ok() {
        n += 1;
    }
    let absent = (1u64 << 63)..(1u64 << 63) + queries;
    let hits = absent.filter(|key| filter.contains(key)).count();
    let measured = Measured {
        load: filter.load_factor(),
        bits_per_item: filter.memory_usage() as f64 * 8.0 / filter.len() as f64,
        false_positive_rate: hits as f64 / queries as f64,
    };
    (filter, measured)
}

fn main() {
    let items: usize = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("ITEMS must be a whole number"))
        .unwrap_or(4_000_000);
    println!("Filters sized for {items} items, filled to the first failed insert.\n");

    println!("| bucket size b | fingerprint bits f | semi-sorted | load at first failure | bits per item | false positive rate | 2·b·α/2^f |");
    println!("|---|---|---|---|---|---|---|");
    let configurations = [
        (2, 8, false),
        (2, 12, false),
        (4, 8, false),
        (4, 12, false),
        (4, 13, true),
        (4, 16, false),
        (4, 16, true),
        (8, 12, false),
        (8, 16, false),
    ];
    for (b, f, semi_sorted) in configurations {
        let builder = ConcurrentCuckooFilter::builder()
            .capacity(items)
            .bucket_size(b)
            .fingerprint_bits(f)
            .semi_sorted(semi_sorted);
        let (_, m) = measure(builder, 4_000_000);
        let theory = 2.0 * b as f64 * m.load / 2f64.powi(f as i32);
        println!(
            "| {b} | {f} | {} | {:.1}% | {:.2} | {:.4}% | {:.4}% |",
            if semi_sorted { "yes" } else { "no" },
            m.load * 100.0,
            m.bits_per_item,
            m.false_positive_rate * 100.0,
            theory * 100.0
        );
    }

    println!("\nSized by `false_positive_rate(ε)`:\n");
    println!("| target ε | chosen b, f, semi-sorted | bits per item | measured rate | paper bound (log2(1/ε)+3)/0.95 | semi-sorted bound (log2(1/ε)+2)/0.95 | Bloom filter 1.44·log2(1/ε) |");
    println!("|---|---|---|---|---|---|---|");
    for (rate, queries) in [
        (0.03, 1_000_000u64),
        (0.01, 2_000_000),
        (0.001, 4_000_000),
        (0.0001, 10_000_000),
        (0.00001, 20_000_000),
    ] {
        let builder = ConcurrentCuckooFilter::builder()
            .capacity(items)
            .false_positive_rate(rate);
        let (filter, m) = measure(builder, queries);
        let log = (1.0 / rate).log2();
        println!(
            "| {}% | {}, {}, {} | {:.2} | {:.4}% | {:.2} | {:.2} | {:.2} |",
            rate * 100.0,
            filter.bucket_size(),
            filter.fingerprint_bits(),
            if filter.is_semi_sorted() { "yes" } else { "no" },
            m.bits_per_item,
            m.false_positive_rate * 100.0,
            (log + 3.0) / 0.95,
            (log + 2.0) / 0.95,
            1.44 * log
        );
    }
}
