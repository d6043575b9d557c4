//! What the criterion benches (`benches/filter.rs`) and the paper reproduction
//! (`examples/paper.rs`) share: the keys, a small random number generator, and one interface
//! over this crate's filter and the concurrent Rust peers, so every filter runs the same loop.

#![allow(dead_code)] // each of the two targets uses its own subset

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::hash_map::DefaultHasher as SipHasher;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `i`-th key: a bijective mix of `i` (the splitmix64 finalizer), so keys look random, the
/// keys of different indices never collide, and no key list has to be stored.
#[inline]
pub fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Indices at and above this are never inserted: their keys are the negative queries.
pub const ABSENT: u64 = 1 << 62;

/// wyrand: a fast generator for choosing queries and operations.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(key(seed))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (t as u64) ^ ((t >> 64) as u64)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-high.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// A filter as the benches drive it: keys are `u64`, every operation takes `&self`.
pub trait Subject: Send + Sync + Sized + 'static {
    /// Name in bench ids, tables and plot legends.
    const NAME: &'static str;
    /// Whether it can remove items (the Bloom filter cannot).
    const DELETES: bool = true;
    /// An empty filter sized for `items` items the way a user would ask for it.
    fn with_capacity(items: usize) -> Self;
    fn contains(&self, key: u64) -> bool;
    /// `false` when the filter is full.
    fn insert(&self, key: u64) -> bool;
    fn remove(&self, key: u64) -> bool;
    /// Bytes of the filter's table.
    fn memory(&self) -> usize;
}

/// This crate, default configuration (12-bit fingerprints, 4-slot buckets, xxh3), sized for
/// `PERCENT`% of the items asked for.
pub struct OursSized<const PERCENT: usize>(pub ConcurrentCuckooFilter);

/// This crate's filter as a user sizes it: run at its capacity it is 95% full.
pub type Ours = OursSized<100>;
/// This crate's filter given the headroom the power-of-two peers get: sized for 1.5 times the
/// items, so it runs about 63% full.
pub type OursRoomy = OursSized<150>;

impl<const PERCENT: usize> Subject for OursSized<PERCENT> {
    const NAME: &'static str = if PERCENT == 100 { "ours" } else { "ours-1.5x" };
    fn with_capacity(items: usize) -> Self {
        Self(ConcurrentCuckooFilter::with_capacity(items * PERCENT / 100))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn memory(&self) -> usize {
        self.0.memory_usage()
    }
}

/// `atomic-cuckoo-filter`: lock-free reads and simple inserts, a filter-wide lock for evictions
/// and removes. Its defaults: 16-bit fingerprints, 4-slot buckets, a power-of-two bucket count,
/// SipHash-1-3.
pub struct Acf(pub atomic_cuckoo_filter::CuckooFilter);

impl Subject for Acf {
    const NAME: &'static str = "atomic-cuckoo-filter";
    fn with_capacity(items: usize) -> Self {
        Self(atomic_cuckoo_filter::CuckooFilter::with_capacity(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn memory(&self) -> usize {
        // `capacity()` is the slot count; fingerprints are 16 bits.
        self.0.capacity() * 2
    }
}

/// `cuckoofilter` (8-bit fingerprints, 4-slot buckets, power-of-two slot count, SipHash-1-3),
/// the single-threaded filter, as users share it today: behind a `parking_lot::Mutex`.
pub struct CfMutex(pub Mutex<cuckoofilter::CuckooFilter<SipHasher>>);

impl Subject for CfMutex {
    const NAME: &'static str = "cuckoofilter+Mutex";
    fn with_capacity(items: usize) -> Self {
        Self(Mutex::new(cuckoofilter::CuckooFilter::with_capacity(items)))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.lock().contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.lock().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.lock().delete(&key)
    }
    fn memory(&self) -> usize {
        self.0.lock().memory_usage()
    }
}

/// `cuckoofilter` behind a `parking_lot::RwLock`: lookups share the lock.
pub struct CfRwLock(pub RwLock<cuckoofilter::CuckooFilter<SipHasher>>);

impl Subject for CfRwLock {
    const NAME: &'static str = "cuckoofilter+RwLock";
    fn with_capacity(items: usize) -> Self {
        Self(RwLock::new(cuckoofilter::CuckooFilter::with_capacity(
            items,
        )))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.read().contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.write().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.write().delete(&key)
    }
    fn memory(&self) -> usize {
        self.0.read().memory_usage()
    }
}

/// Bits per item of this crate's default filter when full (12-bit fingerprints at 95% load):
/// the Bloom filter gets the same memory.
pub const OURS_BITS_PER_ITEM: f64 = 12.0 / 0.95;

/// `fastbloom::AtomicBloomFilter` with the memory our filter takes for the same items and the
/// best number of hash functions for them (9). Its default hasher: SipHash-1-3. No removes.
pub struct FastBloom(pub fastbloom::AtomicBloomFilter);

impl Subject for FastBloom {
    const NAME: &'static str = "fastbloom";
    const DELETES: bool = false;
    fn with_capacity(items: usize) -> Self {
        let bits = (items as f64 * OURS_BITS_PER_ITEM) as usize;
        Self(fastbloom::AtomicBloomFilter::with_num_bits(bits).expected_items(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("a Bloom filter cannot remove")
    }
    fn memory(&self) -> usize {
        self.0.num_bits() / 8
    }
}

/// The processor's name and the number of cores, for plot captions and reports.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .and_then(|rest| rest.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown CPU");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}

/// Lookups per thread per criterion iteration.
pub const BATCH: usize = 1024;
/// Precomputed lookup keys per bench (a power of two), walked in order by every thread from
/// its own offset and never restarted between iterations.
pub const QUERIES: usize = 1 << 20;
/// Operations per thread per iteration of a mixed workload: one pass over its operation table.
pub const MIXED_OPS: usize = 1000;

/// Items this crate's default filter holds when it takes `mib` MiB (12-bit fingerprints at 95%).
pub fn items_for_mib(mib: usize) -> usize {
    ((mib << 20) as f64 * 8.0 * 0.95 / 12.0) as usize
}

/// One rayon pool per thread count, `pools[t - 1]` with `t` threads.
pub struct Pools(pub Vec<ThreadPool>);

impl Pools {
    pub fn new(max: usize) -> Self {
        Self(
            (1..=max)
                .map(|t| ThreadPoolBuilder::new().num_threads(t).build().unwrap())
                .collect(),
        )
    }
    pub fn max(&self) -> &ThreadPool {
        self.0.last().unwrap()
    }
}

/// Positions `lo..hi` of a lane's keys in the filter: the lane-`l` key at position `j` is
/// `key(j * lanes + l)`. Lanes let each thread remove and insert keys of its own.
#[derive(Default)]
pub struct Lane {
    pub lo: AtomicU64,
    pub hi: AtomicU64,
}

/// A filter holding the keys of its lanes, shared through an `Arc`.
pub struct Loaded<F> {
    pub filter: Arc<F>,
    pub lanes: Vec<CachePadded<Lane>>,
}

impl<F: Subject> Loaded<F> {
    /// `filter` holding the keys of indices `0..items`.
    pub fn holding(filter: F, items: u64, lanes: usize) -> Self {
        let lanes = (0..lanes as u64)
            .map(|l| {
                let lane = Lane::default();
                lane.hi
                    .store((items + lanes as u64 - 1 - l) / lanes as u64, Relaxed);
                CachePadded::new(lane)
            })
            .collect();
        Self {
            filter: Arc::new(filter),
            lanes,
        }
    }

    /// A new filter for `items` items, filled with them by every thread of `pool`, each its own
    /// lanes; a lane stops at its first failed insert. `report`: say how it went on stderr.
    pub fn fill(items: usize, lanes: usize, pool: &ThreadPool, report: bool) -> Self {
        let start = Instant::now();
        let loaded = Self::holding(F::with_capacity(items), items as u64, lanes);
        let threads = pool.current_num_threads();
        pool.broadcast(|ctx| {
            for l in (ctx.index()..lanes).step_by(threads) {
                let lane = &loaded.lanes[l];
                let end = lane.hi.load(Relaxed);
                let mut j = 0;
                while j < end && loaded.filter.insert(key(j * lanes as u64 + l as u64)) {
                    j += 1;
                }
                lane.hi.store(j, Relaxed);
            }
        });
        if !report {
            return loaded;
        }
        let held: u64 = loaded.lanes.iter().map(|l| l.hi.load(Relaxed)).sum();
        eprintln!(
            "  [setup] {}: {held} of {items} items in {:.1} MiB, filled in {:.1} s",
            F::NAME,
            loaded.filter.memory() as f64 / (1 << 20) as f64,
            start.elapsed().as_secs_f64()
        );
        loaded
    }

    /// `QUERIES` lookup keys, each with probability `p` a live key, else a never-inserted one.
    pub fn queries(&self, p: f64, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let lanes = self.lanes.len() as u64;
        let threshold = (p * u64::MAX as f64) as u64;
        (0..QUERIES)
            .map(|_| {
                if p > 0.0 && rng.next_u64() <= threshold {
                    let l = rng.below(lanes);
                    let lane = &self.lanes[l as usize];
                    let (lo, hi) = (lane.lo.load(Relaxed), lane.hi.load(Relaxed));
                    key((lo + rng.below(hi - lo)) * lanes + l)
                } else {
                    key(ABSENT | rng.next_u64() >> 2)
                }
            })
            .collect()
    }
}

/// Times `iters` blocks of `BATCH` lookups on each thread of `pool`, walking `queries` from
/// `cursor`; `lookup(keys, answers)` answers a block.
pub fn time_lookups(
    pool: &ThreadPool,
    queries: &[u64],
    cursor: &mut usize,
    iters: u64,
    lookup: impl Fn(&[u64], &mut [bool]) + Sync,
) -> Duration {
    let threads = pool.current_num_threads();
    let per_thread = iters as usize * BATCH;
    let start = *cursor;
    *cursor = (*cursor + per_thread) % QUERIES;
    let began = Instant::now();
    pool.broadcast(|ctx| {
        let mut at = (start + ctx.index() * QUERIES / threads) / BATCH * BATCH % QUERIES;
        let mut answers = [false; BATCH];
        let mut found = 0usize;
        for _ in 0..iters {
            lookup(&queries[at..at + BATCH], &mut answers);
            found += answers.iter().filter(|&&a| a).count();
            at = (at + BATCH) % QUERIES;
        }
        black_box(found);
    });
    began.elapsed()
}

/// [`time_lookups`] with one `contains` call per key.
pub fn time_contains<F: Subject>(
    pool: &ThreadPool,
    filter: &F,
    queries: &[u64],
    cursor: &mut usize,
    iters: u64,
) -> Duration {
    time_lookups(pool, queries, cursor, iters, |keys, answers| {
        for (key, answer) in keys.iter().zip(answers) {
            *answer = filter.contains(*key);
        }
    })
}

/// An operation of a mixed workload.
#[derive(Clone, Copy, PartialEq)]
pub enum Op {
    Contains,
    Insert,
    Remove,
}

/// `MIXED_OPS` operations, `insert_permille` of them inserts and as many removes, shuffled.
pub fn op_table(insert_permille: usize, seed: u64) -> Vec<Op> {
    let writes = MIXED_OPS * insert_permille / 1000;
    let mut ops: Vec<Op> = (0..MIXED_OPS)
        .map(|i| match i {
            i if i < writes => Op::Insert,
            i if i < 2 * writes => Op::Remove,
            _ => Op::Contains,
        })
        .collect();
    let mut rng = Rng::new(seed);
    for i in (1..ops.len()).rev() {
        ops.swap(i, rng.below(i as u64 + 1) as usize);
    }
    ops
}

/// Times `iters` passes over `ops` on each thread of `pool`. Each thread works on the lanes
/// `l ≡ thread (mod threads)`: inserts the next key of a lane, removes its oldest, looks up one
/// of its live keys or a never-inserted key.
pub fn time_mixed<F: Subject>(
    pool: &ThreadPool,
    loaded: &Loaded<F>,
    ops: &[Op],
    seed: u64,
    iters: u64,
) -> Duration {
    let threads = pool.current_num_threads();
    let lanes = loaded.lanes.len();
    let began = Instant::now();
    pool.broadcast(|ctx| {
        let t = ctx.index();
        let filter = Arc::clone(&loaded.filter);
        let mut own: Vec<(u64, u64, u64)> = (t..lanes)
            .step_by(threads)
            .map(|l| {
                let lane = &loaded.lanes[l];
                (l as u64, lane.lo.load(Relaxed), lane.hi.load(Relaxed))
            })
            .collect();
        let mut rng = Rng::new(seed ^ (t as u64) << 32);
        let (mut next_insert, mut next_remove, mut found) = (0usize, 0usize, 0usize);
        let mut at = t * ops.len() / threads;
        let owned = own.len();
        for _ in 0..iters as usize * ops.len() {
            match ops[at] {
                Op::Contains => {
                    let (l, lo, hi) = own[rng.below(owned as u64) as usize];
                    let hit = rng.next_u64() & 1 == 0 && hi > lo;
                    let item = if hit {
                        key((lo + rng.below(hi - lo)) * lanes as u64 + l)
                    } else {
                        key(ABSENT | rng.next_u64() >> 2)
                    };
                    found += usize::from(filter.contains(item));
                }
                Op::Insert => {
                    let lane = &mut own[next_insert % owned];
                    next_insert += 1;
                    if filter.insert(key(lane.2 * lanes as u64 + lane.0)) {
                        lane.2 += 1;
                    }
                }
                Op::Remove => {
                    let lane = &mut own[next_remove % owned];
                    next_remove += 1;
                    if lane.1 < lane.2 {
                        filter.remove(key(lane.1 * lanes as u64 + lane.0));
                        lane.1 += 1;
                    }
                }
            }
            at = (at + 1) % ops.len();
        }
        black_box(found);
        for (l, lo, hi) in own {
            loaded.lanes[l as usize].lo.store(lo, Relaxed);
            loaded.lanes[l as usize].hi.store(hi, Relaxed);
        }
    });
    began.elapsed()
}
