use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use rayon::prelude::*;
use std::time::Instant;
fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(192);
    let cap = mb * 1024 * 1024 * 8 * 95 / 100 / 12;
    let a = ConcurrentCuckooFilter::with_capacity(cap);
    a.try_par_extend((0..cap as u64).into_par_iter()).unwrap();
    let mut x = 1u64;
    let keys: Vec<u64> = (0..4_000_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 20) % (2 * cap as u64)
        })
        .collect();
    let mut out = vec![false; keys.len()];
    let mut best_b = f64::MAX;
    let mut best_s = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let f1 = keys.iter().filter(|k| a.contains(k)).count();
        best_s = best_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        a.contains_batch_into(&keys, &mut out);
        best_b = best_b.min(t.elapsed().as_secs_f64());
        std::hint::black_box(f1);
    }
    println!(
        "{mb}MB single {:.2} M/s batch {:.2} M/s ratio {:.2}",
        4.0 / best_s,
        4.0 / best_b,
        best_s / best_b
    );
}
