//! Benches of the features beyond the core: semi-sorted buckets against plain ones, batched
//! lookups against one at a time, and a parallel fill on 1 and 2 threads.
//!
//! ```text
//! cargo bench -p ccf-benches --bench features                        # all, about 6 minutes on 2 cores
//! cargo bench -p ccf-benches --bench features -- semi_sorted         # one group
//! CCF_BENCH_BIG_MIB=64 cargo bench -p ccf-benches --bench features   # a smaller large filter (default 192 MiB)
//! ```
//!
//! Compare ratios within one run: absolute rates move with the machine's load.

use ccf_benches::args::big_mib;
use ccf_benches::peers::{items_for_mib, Peer, SemiSorted};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const QUERIES: usize = 1 << 20;

/// An empty filter for `items`: 12-bit plain or 13-bit semi-sorted fingerprints, both 12 bits a
/// slot.
fn build(items: usize, semi_sorted: bool) -> ConcurrentCuckooFilter {
    match semi_sorted {
        true => SemiSorted::with_capacity(items).0,
        false => ConcurrentCuckooFilter::with_capacity(items),
    }
}

/// `QUERIES` keys of which a share `hits` were inserted (keys below `items` were).
fn queries(items: usize, hits: f64) -> Vec<u64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..QUERIES)
        .map(|i| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let member = (i as f64 + 0.5) / QUERIES as f64 <= hits;
            let key = (state >> 16) % items as u64;
            if member {
                key
            } else {
                key + (1 << 48)
            }
        })
        .collect()
}

fn semi_sorted(c: &mut Criterion) {
    // Equal memory: 12-bit plain and 13-bit semi-sorted fingerprints both take 12 bits a slot.
    for mib in [1, 16] {
        let items = items_for_mib(mib);
        let mut group = c.benchmark_group(format!("semi_sorted/{mib}MiB"));
        // One fill per sample: a fill takes seconds.
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(3))
            .sampling_mode(SamplingMode::Flat);
        for semi_sorted in [false, true] {
            let name = if semi_sorted {
                "ss-CF 13-bit"
            } else {
                "CF 12-bit"
            };
            let filter = build(items, semi_sorted);
            filter
                .try_par_extend((0..items as u64).into_par_iter())
                .unwrap();
            let keys = queries(items, 0.5);
            group.throughput(Throughput::Elements(QUERIES as u64));
            group.bench_function(BenchmarkId::new("contains p=0.5", name), |b| {
                b.iter(|| keys.iter().filter(|k| filter.contains(k)).count())
            });
            group.throughput(Throughput::Elements(items as u64));
            group.bench_function(BenchmarkId::new("insert empty to 95%", name), |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        let fresh = build(items, semi_sorted);
                        let start = Instant::now();
                        for key in 0..items as u64 {
                            fresh.insert(&key).unwrap();
                        }
                        spent += start.elapsed();
                        black_box(&fresh);
                    }
                    spent
                })
            });
        }
        group.finish();
    }
}

fn large_full_filter() -> &'static (ConcurrentCuckooFilter, usize) {
    static FILTER: OnceLock<(ConcurrentCuckooFilter, usize)> = OnceLock::new();
    FILTER.get_or_init(|| {
        let items = items_for_mib(big_mib());
        let filter = ConcurrentCuckooFilter::with_capacity(items);
        filter
            .try_par_extend((0..items as u64).into_par_iter())
            .unwrap();
        (filter, items)
    })
}

fn contains_batch(c: &mut Criterion) {
    let (filter, items) = large_full_filter();
    let mut group = c.benchmark_group(format!("contains_batch/{}MiB", big_mib()));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(QUERIES as u64));
    let mut answers = vec![false; QUERIES];
    for hits in [0.0, 0.5, 1.0] {
        let keys = queries(*items, hits);
        group.bench_function(
            BenchmarkId::new("contains one at a time", format!("p={hits}")),
            |b| b.iter(|| keys.iter().filter(|k| filter.contains(k)).count()),
        );
        group.bench_function(
            BenchmarkId::new("contains_batch_into", format!("p={hits}")),
            |b| {
                b.iter(|| {
                    filter.contains_batch_into(&keys, &mut answers);
                    answers.iter().filter(|&&a| a).count()
                })
            },
        );
    }
    group.finish();
}

fn parallel_fill(c: &mut Criterion) {
    let mib = big_mib();
    let items = items_for_mib(mib);
    let mut group = c.benchmark_group(format!("fill/{mib}MiB"));
    // One fill per sample: a fill takes seconds.
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(items as u64));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    for t in 1..=threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap();
        group.bench_function(
            BenchmarkId::new("try_par_extend empty to 95%", format!("{t} threads")),
            |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        let fresh = ConcurrentCuckooFilter::with_capacity(items);
                        let start = Instant::now();
                        pool.install(|| fresh.try_par_extend((0..items as u64).into_par_iter()))
                            .unwrap();
                        spent += start.elapsed();
                    }
                    spent
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, semi_sorted, contains_batch, parallel_fill);
criterion_main!(benches);
