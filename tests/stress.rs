//! A long stress run near full load: threads on every core insert, remove, re-insert and look up
//! items at once, checking every answer they can know.
//!
//! Ignored by default; run it with
//!
//! ```text
//! STRESS_SECS=600 cargo test --release -- --ignored stress --nocapture
//! ```
//!
//! `STRESS_SECS` (default 10) is the whole run, shared by the configurations below; each
//! configuration's operation counts are printed. Every thread owns a pool of keys and knows which
//! of them are in the filter, so it can assert that each of those is found and that removing one
//! succeeds. A stable set inserted before the threads start, never removed, is looked up by all
//! threads, so a fingerprint that another thread's displacement lost would show up too. At the end
//! `len` must equal the stable set plus every thread's present keys.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, InsertError, TableLayout};

/// One table shape to stress.
struct Config {
    name: &'static str,
    capacity: usize,
    bucket_size: usize,
    fingerprint_bits: u32,
    /// 0 for the default stripe count; a few stripes make writers collide far more often.
    stripes: usize,
    layout: TableLayout,
}

const CONFIGS: [Config; 6] = [
    Config {
        name: "b=4 f=12, 4 stripes, small (collisions)",
        capacity: 4_000,
        bucket_size: 4,
        fingerprint_bits: 12,
        stripes: 4,
        layout: TableLayout::Packed,
    },
    Config {
        name: "b=4 f=12, default stripes, 1M items",
        capacity: 1 << 20,
        bucket_size: 4,
        fingerprint_bits: 12,
        stripes: 0,
        layout: TableLayout::Packed,
    },
    Config {
        name: "b=2 f=8, 2 stripes, small (long paths)",
        capacity: 4_000,
        bucket_size: 2,
        fingerprint_bits: 8,
        stripes: 2,
        layout: TableLayout::Packed,
    },
    Config {
        name: "b=8 f=20, 8 stripes, wide buckets",
        capacity: 30_000,
        bucket_size: 8,
        fingerprint_bits: 20,
        stripes: 8,
        layout: TableLayout::Packed,
    },
    Config {
        name: "b=4 f=12 bucket words, 4 stripes, small (collisions)",
        capacity: 4_000,
        bucket_size: 4,
        fingerprint_bits: 12,
        stripes: 4,
        layout: TableLayout::BucketWord,
    },
    Config {
        name: "b=4 f=12 bucket words, default stripes, 1M items",
        capacity: 1 << 20,
        bucket_size: 4,
        fingerprint_bits: 12,
        stripes: 0,
        layout: TableLayout::BucketWord,
    },
];

/// Share of the slots filled by the stable set.
const STABLE_LOAD: f64 = 0.80;
/// Share of the slots each run of churn keys may add on top, over all threads: near full load.
const CHURN_LOAD: f64 = 0.14;

/// Operation counts of one thread, summed over threads at the end.
#[derive(Default, Clone, Copy, Debug)]
struct Counts {
    stable_lookups: u64,
    own_lookups: u64,
    inserts: u64,
    inserts_full: u64,
    removes: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.stable_lookups += other.stable_lookups;
        self.own_lookups += other.own_lookups;
        self.inserts += other.inserts;
        self.inserts_full += other.inserts_full;
        self.removes += other.removes;
    }

    fn total(&self) -> u64 {
        self.stable_lookups + self.own_lookups + self.inserts + self.inserts_full + self.removes
    }
}

/// SplitMix64: a small, good enough generator, seeded per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

fn stable_key(i: usize) -> u64 {
    (1 << 63) | i as u64
}

fn own_key(thread: usize, i: usize) -> u64 {
    ((thread as u64 + 1) << 40) | i as u64
}

/// A thread's keys, split into the ones it has in the filter and the ones it has not.
struct Pool {
    present: Vec<usize>,
    absent: Vec<usize>,
}

impl Pool {
    fn take(from: &mut Vec<usize>, rng: &mut Rng) -> usize {
        let at = rng.below(from.len());
        from.swap_remove(at)
    }
}

/// One thread's work until `stop`: lookups of stable keys (40%) and of its own present keys
/// (10%), inserts of its absent keys (30%, while fewer than `quota` are present; a remove
/// otherwise) and removes of its present keys (20%), so that its present keys hover at `quota`.
fn churn(
    filter: &ConcurrentCuckooFilter,
    thread: usize,
    stable: usize,
    quota: usize,
    stop: &AtomicBool,
) -> (Counts, Vec<usize>) {
    let mut rng = Rng(0x5eed ^ ((thread as u64) << 32));
    let mut pool = Pool {
        present: Vec::with_capacity(quota),
        absent: (0..quota * 2).collect(),
    };
    let mut counts = Counts::default();
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..256 {
            match rng.below(10) {
                0..=3 => {
                    let i = rng.below(stable);
                    assert!(
                        filter.contains(&stable_key(i)),
                        "false negative: stable key {i}"
                    );
                    counts.stable_lookups += 1;
                }
                4 if !pool.present.is_empty() => {
                    let i = pool.present[rng.below(pool.present.len())];
                    assert!(
                        filter.contains(&own_key(thread, i)),
                        "false negative: thread {thread}'s key {i}"
                    );
                    counts.own_lookups += 1;
                }
                5..=7 if pool.present.len() < quota => {
                    let i = Pool::take(&mut pool.absent, &mut rng);
                    match filter.insert(&own_key(thread, i)) {
                        Ok(()) => {
                            pool.present.push(i);
                            counts.inserts += 1;
                        }
                        Err(err) => {
                            assert_eq!(err, InsertError::Full);
                            pool.absent.push(i);
                            counts.inserts_full += 1;
                        }
                    }
                }
                _ if !pool.present.is_empty() => {
                    let i = Pool::take(&mut pool.present, &mut rng);
                    assert!(
                        filter.remove(&own_key(thread, i)),
                        "remove of thread {thread}'s present key {i} returned false"
                    );
                    pool.absent.push(i);
                    counts.removes += 1;
                }
                _ => {}
            }
        }
    }
    (counts, pool.present)
}

fn stress_one(config: &Config, threads: usize, duration: Duration) -> Counts {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(config.capacity)
        .bucket_size(config.bucket_size)
        .fingerprint_bits(config.fingerprint_bits)
        .stripes(config.stripes)
        .layout(config.layout)
        .build()
        .unwrap();
    let slots = filter.bucket_count() * filter.bucket_size();
    let stable = (slots as f64 * STABLE_LOAD) as usize;
    let quota = ((slots as f64 * CHURN_LOAD) as usize / threads).max(1);
    for i in 0..stable {
        filter.insert(&stable_key(i)).expect("the stable set fits");
    }

    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let (counts, present) = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (filter, stop, start) = (&filter, &stop, &start);
                scope.spawn(move || {
                    start.wait();
                    churn(filter, t, stable, quota, stop)
                })
            })
            .collect();
        start.wait();
        thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let mut counts = Counts::default();
        let mut present = Vec::new();
        for worker in workers {
            let (thread_counts, thread_present) = worker.join().unwrap();
            counts.add(&thread_counts);
            present.push(thread_present);
        }
        (counts, present)
    });

    let own: usize = present.iter().map(Vec::len).sum();
    assert_eq!(filter.len(), stable + own, "len after the run");
    assert!((0..stable).all(|i| filter.contains(&stable_key(i))));
    for (t, keys) in present.iter().enumerate() {
        assert!(keys.iter().all(|&i| filter.contains(&own_key(t, i))));
    }
    println!(
        "{}: {} buckets x {}, {threads} threads, {:.0?}: {} ops ({:.1} M/s): \
         {} stable lookups, {} own lookups, {} inserts, {} inserts Full, {} removes; \
         final load {:.3}",
        config.name,
        filter.bucket_count(),
        filter.bucket_size(),
        duration,
        counts.total(),
        counts.total() as f64 / duration.as_secs_f64() / 1e6,
        counts.stable_lookups,
        counts.own_lookups,
        counts.inserts,
        counts.inserts_full,
        counts.removes,
        filter.load_factor(),
    );
    counts
}

#[test]
#[ignore = "long: run with `cargo test --release -- --ignored stress`"]
fn stress_near_full_load() {
    let secs: f64 = std::env::var("STRESS_SECS")
        .map(|s| s.parse().expect("STRESS_SECS is a number of seconds"))
        .unwrap_or(10.0);
    let threads = thread::available_parallelism().map_or(2, |n| n.get());
    let each = Duration::from_secs_f64(secs / CONFIGS.len() as f64);
    let mut total = Counts::default();
    for config in &CONFIGS {
        total.add(&stress_one(config, threads, each));
    }
    println!("all configurations: {} ops, {total:?}", total.total());
}
