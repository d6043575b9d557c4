use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use rayon::prelude::*;
use std::time::Instant;
fn main() {
    let mib: usize = std::env::args().nth(1).map_or(192, |s| s.parse().unwrap());
    let n = mib * 1024 * 1024 * 8 * 95 / 100 / 12;
    for round in 0..2 {
        let mut r = [0.0; 2];
        for t in 1..=2 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap();
            let f = ConcurrentCuckooFilter::with_capacity(n);
            let s = Instant::now();
            pool.install(|| f.try_par_extend((0..n as u64).into_par_iter()))
                .unwrap();
            r[t - 1] = n as f64 / s.elapsed().as_secs_f64() / 1e6;
            let s = Instant::now();
            let f2 = ConcurrentCuckooFilter::with_capacity(n);
            f2.try_extend(0..n as u64).unwrap();
            let seq = n as f64 / s.elapsed().as_secs_f64() / 1e6;
            println!(
                "round {round} threads {t}: par {:.2} M/s (try_extend {:.2})",
                r[t - 1],
                seq
            );
        }
        println!("ratio {:.2}", r[1] / r[0]);
    }
}
