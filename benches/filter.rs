//! Throughput of this crate's filter against the concurrent Rust peers, for 1 to
//! `available_parallelism` threads sharing one filter through an `Arc`.
//!
//! ```text
//! cargo bench --bench filter                     # everything, about 12 minutes on 2 cores
//! cargo bench --bench filter -- 1MiB             # the L2-sized filters only, about 4 minutes
//! cargo bench --bench filter -- issue2           # the core issue's three figures
//! cargo bench --bench filter -- 'contains/1MiB'  # any criterion filter (a regex on the ids)
//! CCF_BENCH_BIG_MIB=64 cargo bench --bench filter -- 'contains/64MiB'
//! CCF_BENCH_FULL=1 cargo bench --bench filter    # adds insert/delete on the big filters
//! ```
//!
//! Groups, each with `Throughput::Elements` = operations, so criterion prints operations/s:
//!
//! - `contains/{size}/p={p}`: lookups on a filter filled to its capacity, a share `p` of them of
//!   inserted keys, the rest of never-inserted keys, one key per call.
//! - `insert/{size}`: an empty filter filled with its capacity, the keys split among the threads.
//! - `delete/{size}`: a full filter emptied, the keys split among the threads.
//! - `mixed_read/{size}` (90% contains, 5% insert, 5% remove) and `mixed_write/{size}`
//!   (50/25/25): the filter stays at its capacity; each thread removes the oldest of its own keys
//!   and inserts new ones, and looks up its live keys and never-inserted keys half and half.
//! - `issue2_64MiB`: the core issue's speed figures for this crate's default filter.
//!
//! Bench ids are `{filter}/{threads}t`. Every filter is sized for the same number of items with
//! its crate's own `with_capacity` (what a user writes), so memory differs: the sizes name this
//! crate's filter (1 MiB fits the 2 MiB L2; 192 MiB is the paper's size, beyond the L3). The
//! peers round their tables up to a power of two. The big filters are filled once and reused:
//! the mixed workloads keep them at their capacity.

mod common;

use common::{key, Acf, CfMutex, CfRwLock, FastBloom, Ours, Rng, Subject, ABSENT};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use criterion::measurement::WallTime;
use criterion::{black_box, Bencher, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use crossbeam_utils::CachePadded;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lookups per thread per criterion iteration.
const BATCH: usize = 1024;
/// Precomputed lookup keys per bench (a power of two), walked in order by every thread from
/// its own offset and never restarted between iterations.
const QUERIES: usize = 1 << 20;
/// Operations per thread per iteration of a mixed workload: one pass over its operation table.
const MIXED_OPS: usize = 1000;

/// Items this crate's default filter holds when it takes `mib` MiB (12-bit fingerprints at 95%).
fn items_for_mib(mib: usize) -> usize {
    ((mib << 20) as f64 * 8.0 * 0.95 / 12.0) as usize
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} must be a number"))
        })
        .unwrap_or(default)
}

/// One rayon pool per thread count, `pools[t - 1]` with `t` threads.
struct Pools(Vec<ThreadPool>);

impl Pools {
    fn new(max: usize) -> Self {
        Self(
            (1..=max)
                .map(|t| ThreadPoolBuilder::new().num_threads(t).build().unwrap())
                .collect(),
        )
    }
    fn max(&self) -> &ThreadPool {
        self.0.last().unwrap()
    }
}

/// Positions `lo..hi` of a lane's keys in the filter: the lane-`l` key at position `j` is
/// `key(j * lanes + l)`. Lanes let each thread remove and insert keys of its own.
#[derive(Default)]
struct Lane {
    lo: AtomicU64,
    hi: AtomicU64,
}

/// A filter holding the keys of its lanes, shared through an `Arc`.
struct Loaded<F> {
    filter: Arc<F>,
    lanes: Vec<CachePadded<Lane>>,
}

impl<F: Subject> Loaded<F> {
    /// `filter` holding the keys of indices `0..items`.
    fn holding(filter: F, items: u64, lanes: usize) -> Self {
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
    fn fill(items: usize, lanes: usize, pool: &ThreadPool, report: bool) -> Self {
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
    fn queries(&self, p: f64, seed: u64) -> Vec<u64> {
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

/// Times `iters` batches of lookups on each thread of `pool`, walking `queries` from `cursor`.
fn time_contains<F: Subject>(
    pool: &ThreadPool,
    filter: &F,
    queries: &[u64],
    cursor: &mut usize,
    iters: u64,
) -> Duration {
    let threads = pool.current_num_threads();
    let per_thread = iters as usize * BATCH;
    let start = *cursor;
    *cursor = (*cursor + per_thread) % QUERIES;
    let began = Instant::now();
    pool.broadcast(|ctx| {
        let mut at = (start + ctx.index() * QUERIES / threads) % QUERIES;
        let mut found = 0usize;
        for _ in 0..per_thread {
            found += usize::from(filter.contains(queries[at]));
            at = (at + 1) % QUERIES;
        }
        black_box(found);
    });
    began.elapsed()
}

/// An operation of a mixed workload.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Contains,
    Insert,
    Remove,
}

/// `MIXED_OPS` operations, `insert_permille` of them inserts and as many removes, shuffled.
fn op_table(insert_permille: usize, seed: u64) -> Vec<Op> {
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
fn time_mixed<F: Subject>(
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

/// Times `iters` rounds of `op` on each of the keys `0..items`, split among the threads of
/// `pool`, each round on a new filter made by `setup` (not timed).
fn time_each_key<T: Sync>(
    pool: &ThreadPool,
    items: usize,
    iters: u64,
    setup: impl Fn() -> T,
    op: impl Fn(&T, u64) -> bool + Sync,
) -> Duration {
    let threads = pool.current_num_threads();
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let filter = setup();
        let began = Instant::now();
        pool.broadcast(|ctx| {
            for i in (ctx.index()..items).step_by(threads) {
                black_box(op(&filter, key(i as u64)));
            }
        });
        total += began.elapsed();
    }
    total
}

/// The filled filters of one size, each filled the first time a bench needs it.
struct FilledSet {
    items: usize,
    lanes: usize,
    ours: Option<Loaded<Ours>>,
    acf: Option<Loaded<Acf>>,
    cf_mutex: Option<Loaded<CfMutex>>,
    cf_rwlock: Option<Loaded<CfRwLock>>,
    fastbloom: Option<Loaded<FastBloom>>,
}

/// Something that yields the [`Loaded`] filter of one type from a [`FilledSet`].
trait Pick: Subject {
    fn slot(set: &mut FilledSet) -> &mut Option<Loaded<Self>>;
}

macro_rules! pick {
    ($ty:ty, $field:ident) => {
        impl Pick for $ty {
            fn slot(set: &mut FilledSet) -> &mut Option<Loaded<Self>> {
                &mut set.$field
            }
        }
    };
}
pick!(Ours, ours);
pick!(Acf, acf);
pick!(CfMutex, cf_mutex);
pick!(CfRwLock, cf_rwlock);
pick!(FastBloom, fastbloom);

impl FilledSet {
    fn new(items: usize, lanes: usize) -> Self {
        Self {
            items,
            lanes,
            ours: None,
            acf: None,
            cf_mutex: None,
            cf_rwlock: None,
            fastbloom: None,
        }
    }

    fn get<F: Pick>(&mut self, pool: &ThreadPool) -> &Loaded<F> {
        let (items, lanes) = (self.items, self.lanes);
        F::slot(self).get_or_insert_with(|| Loaded::fill(items, lanes, pool, true))
    }
}

/// The thread sweep of one bench: `{filter}/{t}t` for every thread count, with `elements(t)`
/// operations per iteration.
fn sweep<F: Subject>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    elements: impl Fn(usize) -> usize,
    mut run: impl FnMut(&mut Bencher<'_>, &ThreadPool),
) {
    for pool in &pools.0 {
        let threads = pool.current_num_threads();
        group.throughput(Throughput::Elements(elements(threads) as u64));
        group.bench_function(format!("{}/{threads}t", F::NAME), |b| run(b, pool));
    }
}

fn contains_sweep<F: Pick>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    set: &mut FilledSet,
    p: f64,
) {
    let mut queries: Option<Vec<u64>> = None;
    let mut cursor = 0usize;
    sweep::<F>(
        group,
        pools,
        |t| t * BATCH,
        |b, pool| {
            let loaded = set.get::<F>(pools.max());
            let queries = queries.get_or_insert_with(|| loaded.queries(p, 7));
            b.iter_custom(|iters| {
                time_contains(pool, &*loaded.filter, queries, &mut cursor, iters)
            });
        },
    );
}

fn mixed_sweep<F: Pick>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    set: &mut FilledSet,
    ops: &[Op],
) {
    let mut calls = 0u64;
    sweep::<F>(
        group,
        pools,
        |t| t * MIXED_OPS,
        |b, pool| {
            let loaded = set.get::<F>(pools.max());
            b.iter_custom(|iters| {
                calls += 1;
                time_mixed(pool, loaded, ops, calls, iters)
            });
        },
    );
}

fn insert_sweep<F: Subject>(group: &mut BenchmarkGroup<'_, WallTime>, pools: &Pools, items: usize) {
    sweep::<F>(
        group,
        pools,
        |_| items,
        |b, pool| {
            b.iter_custom(|iters| {
                time_each_key(pool, items, iters, || F::with_capacity(items), F::insert)
            })
        },
    );
}

fn delete_sweep<F: Subject>(group: &mut BenchmarkGroup<'_, WallTime>, pools: &Pools, items: usize) {
    let lanes = pools.0.len();
    sweep::<F>(
        group,
        pools,
        |_| items,
        |b, pool| {
            // The filling, by all threads, is not timed.
            let setup = || Loaded::<F>::fill(items, lanes, pools.max(), false).filter;
            b.iter_custom(|iters| time_each_key(pool, items, iters, setup, |f, k| f.remove(k)))
        },
    );
}

/// Every group on filters of `mib` MiB (this crate's size; the peers hold as many items).
/// `writes`: also the insert and delete groups, which build a filter per iteration.
fn bench_size(c: &mut Criterion, pools: &Pools, mib: usize, writes: bool) {
    let items = items_for_mib(mib);
    let mut set = FilledSet::new(items, pools.0.len());
    let size = format!("{mib}MiB");

    for p in [0.0, 0.5, 1.0] {
        let mut group = c.benchmark_group(format!("contains/{size}/p={p}"));
        contains_sweep::<Ours>(&mut group, pools, &mut set, p);
        contains_sweep::<Acf>(&mut group, pools, &mut set, p);
        contains_sweep::<CfMutex>(&mut group, pools, &mut set, p);
        contains_sweep::<CfRwLock>(&mut group, pools, &mut set, p);
        contains_sweep::<FastBloom>(&mut group, pools, &mut set, p);
        group.finish();
    }

    for (name, permille) in [("mixed_read", 50), ("mixed_write", 250)] {
        let ops = op_table(permille, permille as u64);
        let mut group = c.benchmark_group(format!("{name}/{size}"));
        mixed_sweep::<Ours>(&mut group, pools, &mut set, &ops);
        mixed_sweep::<Acf>(&mut group, pools, &mut set, &ops);
        mixed_sweep::<CfMutex>(&mut group, pools, &mut set, &ops);
        mixed_sweep::<CfRwLock>(&mut group, pools, &mut set, &ops);
        group.finish();
    }
    drop(set);
    if !writes {
        return;
    }

    let mut group = c.benchmark_group(format!("insert/{size}"));
    group.sampling_mode(SamplingMode::Flat);
    insert_sweep::<Ours>(&mut group, pools, items);
    insert_sweep::<Acf>(&mut group, pools, items);
    insert_sweep::<CfMutex>(&mut group, pools, items);
    insert_sweep::<CfRwLock>(&mut group, pools, items);
    insert_sweep::<FastBloom>(&mut group, pools, items);
    group.finish();

    let mut group = c.benchmark_group(format!("delete/{size}"));
    group.sampling_mode(SamplingMode::Flat);
    delete_sweep::<Ours>(&mut group, pools, items);
    delete_sweep::<Acf>(&mut group, pools, items);
    delete_sweep::<CfMutex>(&mut group, pools, items);
    delete_sweep::<CfRwLock>(&mut group, pools, items);
    group.finish();
}

/// The core issue's speed figures, on this crate's default filter of 64 MiB: lookups of one key
/// per call (all hits, all misses) and filling from empty to the first failed insert, on one
/// thread; the read-heavy mixed workload (90% contains, 10% insert + remove) on 1 and 2 threads.
fn bench_issue2(c: &mut Criterion, pools: &Pools) {
    let mib = 64;
    let items = items_for_mib(mib);
    let mut set = FilledSet::new(items, pools.0.len());
    let mut group = c.benchmark_group(format!("issue2_{mib}MiB"));
    let one = &pools.0[0];

    // Elements are the capacity; the fill goes on to the first failure, about 1% further, so
    // the rate shown is that much below the true one.
    group.throughput(Throughput::Elements(items as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("fill_to_first_failure/1t", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let filter = ConcurrentCuckooFilter::with_capacity(items);
                let began = Instant::now();
                let mut n = 0u64;
                while filter.insert(&key(n)).is_ok() {
                    n += 1;
                }
                total += began.elapsed();
                assert!(
                    n >= items as u64,
                    "first failure after {n} < {items} inserts"
                );
            }
            total
        })
    });
    group.measurement_time(Duration::from_secs(2));
    group.sampling_mode(SamplingMode::Auto);

    for (name, p) in [("contains_hit", 1.0), ("contains_miss", 0.0)] {
        let mut queries: Option<Vec<u64>> = None;
        let mut cursor = 0;
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function(format!("{name}/1t"), |b| {
            let loaded = set.get::<Ours>(pools.max());
            let queries = queries.get_or_insert_with(|| loaded.queries(p, 11));
            b.iter_custom(|iters| time_contains(one, &*loaded.filter, queries, &mut cursor, iters))
        });
    }
    let ops = op_table(50, 50);
    let mut calls = 0;
    for pool in &pools.0 {
        let threads = pool.current_num_threads();
        group.throughput(Throughput::Elements((threads * MIXED_OPS) as u64));
        group.bench_function(format!("mixed_90_10/{threads}t"), |b| {
            let loaded = set.get::<Ours>(pools.max());
            b.iter_custom(|iters| {
                calls += 1;
                time_mixed(pool, loaded, &ops, calls, iters)
            })
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
        .configure_from_args();
    let max_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pools = Pools::new(max_threads);
    eprintln!("machine: {}", common::machine());

    bench_size(&mut c, &pools, env_usize("CCF_BENCH_SMALL_MIB", 1), true);
    bench_issue2(&mut c, &pools);
    let full = std::env::var_os("CCF_BENCH_FULL").is_some_and(|v| v != "0");
    bench_size(&mut c, &pools, env_usize("CCF_BENCH_BIG_MIB", 192), full);
    c.final_summary();
}
