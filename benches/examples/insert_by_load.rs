//! How fast one `insert` per call runs at each load of a filling table: the default filter sized
//! for N keys, filled with N random keys, timed a tenth of the keys at a time.
//!
//! ```text
//! cargo run --release -p ccf-benches --example insert_by_load [-- N]
//! ```
//!
//! The filter is sized for N (default 20,000,000) and so ends about 95% full. The first tenths
//! show inserts into a table with room in most first buckets; the last ones, inserts that find
//! both buckets full and search for a path. A table sized as the paper authors' C++ benchmark
//! sizes its own, the next power of two of buckets, ends 60% full at 20M keys: the first six
//! tenths here are the loads its inserts see. Prints the whole fill's rate and each tenth's, in
//! million inserts per second, for each of `RUNS` fills (the first tenth includes the kernel's
//! faults on the table's first touch).

use ccf_benches::args::count_arg;
use ccf_benches::keys::Rng;
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::time::Instant;

const RUNS: usize = 3;
const PARTS: usize = 10;

fn main() {
    let n: usize = count_arg(
        20_000_000,
        "cargo run --release -p ccf-benches --example insert_by_load -- [N]",
    );
    let mut rng = Rng::new(0x10ad);
    let keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    println!("{n} keys, million inserts per second: the whole fill, then each tenth of it");
    for _ in 0..RUNS {
        let filter = ConcurrentCuckooFilter::with_capacity(n);
        let mut tenths = Vec::with_capacity(PARTS);
        let started = Instant::now();
        for part in keys.chunks(n.div_ceil(PARTS)) {
            let part_started = Instant::now();
            for key in part {
                if filter.insert(key).is_err() {
                    eprintln!("the filter filled at {} keys", filter.len());
                    std::process::exit(1);
                }
            }
            tenths.push(part.len() as f64 / part_started.elapsed().as_secs_f64() / 1e6);
        }
        let whole = n as f64 / started.elapsed().as_secs_f64() / 1e6;
        let tenths: Vec<String> = tenths.iter().map(|rate| format!("{rate:5.1}")).collect();
        println!("{whole:6.2}  | {}", tenths.join(" "));
    }
}
