use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::time::Instant;
fn main() {
    let mib: usize = std::env::args().nth(1).map_or(64, |s| s.parse().unwrap());
    let n = mib * 1024 * 1024 * 8 * 95 / 100 / 12;
    for _ in 0..3 {
        let f = ConcurrentCuckooFilter::with_capacity(n);
        let t = Instant::now();
        let mut i = 0u64;
        let mut marks = vec![];
        while f.insert(&i).is_ok() {
            i += 1;
            if i % (n as u64 / 10) == 0 {
                marks.push((f.load_factor(), t.elapsed().as_secs_f64()));
            }
        }
        let el = t.elapsed().as_secs_f64();
        println!(
            "fill {} items {:.2} M/s load {:.3} mem {} MB",
            i,
            i as f64 / el / 1e6,
            f.load_factor(),
            f.memory_usage() >> 20
        );
        let mut prev = 0.0;
        println!(
            "  {}",
            marks
                .iter()
                .map(|(l, s)| {
                    let r = format!("{:.2}:{:.2}", l, (n as f64 / 10.0) / (s - prev) / 1e6);
                    prev = *s;
                    r
                })
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
