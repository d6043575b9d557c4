//! Throughput of this crate's filter against the concurrent Rust peers, for 1 to
//! `available_parallelism` threads sharing one filter through an `Arc`.
//!
//! ```text
//! cargo bench -p ccf-benches --bench filter                    # the default suite, 10-14 minutes on 2 cores
//! cargo bench -p ccf-benches --bench filter -- 1MiB            # the L2-sized filters only, about 4 minutes
//! cargo bench -p ccf-benches --bench filter -- ours_64MiB      # this crate alone at 64 MiB, 1 minute
//! cargo bench -p ccf-benches --bench filter -- 'contains/1MiB' # any criterion filter (a regex on the ids)
//! CCF_BENCH_BIG_MIB=64 cargo bench -p ccf-benches --bench filter -- 'contains/64MiB'
//! CCF_BENCH_FULL=1 cargo bench -p ccf-benches --bench filter -- ours_64MiB  # adds the fill to the first failure
//! ```
//!
//! `CCF_BENCH_FULL=1` adds the groups that build a big filter per iteration: the 64 MiB fill to
//! the first failure, one `insert` at a time and by `try_extend` (about 6 minutes), and insert/delete on the big filters (much longer).
//!
//! Groups, each with `Throughput::Elements` = operations, so criterion prints operations/s:
//!
//! - `contains/{size}/p={p}`: lookups on a filter filled to its capacity, a share `p` of them of
//!   inserted keys, the rest of never-inserted keys, one key per call; `ours-batch` answers
//!   each block of 1024 keys with one `contains_batch_into` call.
//! - `insert/{size}`: an empty filter filled with its capacity, the keys split among the threads.
//! - `delete/{size}`: a full filter emptied, the keys split among the threads.
//! - `mixed_read/{size}` (90% contains, 5% insert, 5% remove) and `mixed_write/{size}`
//!   (50/25/25): the filter stays at its capacity; each thread removes the oldest of its own keys
//!   and inserts new ones, and looks up its live keys and never-inserted keys half and half.
//!   `ours-1.5x` is this crate's filter sized for 1.5 times the items: about as full (63%) as
//!   the power-of-two peers are.
//! - `ours_64MiB`: this crate's default filter alone at 64 MiB: lookups of one key per call (all
//!   hits, all misses), the read-heavy mixed workload (90% contains, 10% insert + remove) on 1
//!   and 2 threads, and with `CCF_BENCH_FULL` the fill to the first failure (`insert` per key,
//!   and `try_extend`).
//!
//! Bench ids are `{filter}/{threads}t`. Every filter is sized for the same number of items with
//! its crate's own `with_capacity` (what a user writes), so memory differs: the sizes name this
//! crate's filter (1 MiB is cache-resident; 192 MiB is the paper's size, beyond the L3). The
//! peers round their tables up to a power of two. The big filters are filled once and reused
//! (the `RwLock` one is a copy of the `Mutex` one): the mixed workloads keep them at capacity.

use ccf_benches::args;
use ccf_benches::keys::key;
use ccf_benches::measure::{
    machine, op_table, time_contains, time_lookups, time_mixed, Lane, Loaded, Op, Pools, BATCH,
    MIXED_OPS,
};
use ccf_benches::peers::{items_for_mib, Cuckoofilter, Peer, Roomy};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use criterion::measurement::WallTime;
use criterion::{black_box, Bencher, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};
use rayon::ThreadPool;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Ours = ConcurrentCuckooFilter;
type Acf = atomic_cuckoo_filter::CuckooFilter;
type CfMutex = Mutex<Cuckoofilter>;
type CfRwLock = RwLock<Cuckoofilter>;
type FastBloom = fastbloom::AtomicBloomFilter;

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
    ours_roomy: Option<Loaded<Roomy>>,
    acf: Option<Loaded<Acf>>,
    cf_mutex: Option<Loaded<CfMutex>>,
    cf_rwlock: Option<Loaded<CfRwLock>>,
    fastbloom: Option<Loaded<FastBloom>>,
}

/// Something that yields the [`Loaded`] filter of one type from a [`FilledSet`].
trait Pick: Peer + Send + Sync + Sized {
    fn slot(set: &mut FilledSet) -> &mut Option<Loaded<Self>>;

    /// The filled filter of this type for `set`, filled by every thread of `pool`.
    fn build(set: &FilledSet, pool: &ThreadPool) -> Loaded<Self> {
        Loaded::fill(set.items, set.lanes, pool, true)
    }
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
pick!(Roomy, ours_roomy);
pick!(Acf, acf);
pick!(CfMutex, cf_mutex);
pick!(FastBloom, fastbloom);

impl Pick for CfRwLock {
    fn slot(set: &mut FilledSet) -> &mut Option<Loaded<Self>> {
        &mut set.cf_rwlock
    }

    /// A copy of the `Mutex` one when it is filled: the same table and keys, without filling
    /// a big filter a second time.
    fn build(set: &FilledSet, pool: &ThreadPool) -> Loaded<Self> {
        let Some(mutex) = &set.cf_mutex else {
            return Loaded::fill(set.items, set.lanes, pool, true);
        };
        let table = Cuckoofilter::from(mutex.filter.lock().export());
        let lanes = mutex.lanes.iter().map(|lane| {
            let (lo, hi) = (lane.lo.load(Relaxed), lane.hi.load(Relaxed));
            CachePadded::new(Lane {
                lo: AtomicU64::new(lo),
                hi: AtomicU64::new(hi),
            })
        });
        Loaded {
            filter: Arc::new(RwLock::new(table)),
            lanes: lanes.collect(),
        }
    }
}

impl FilledSet {
    fn new(items: usize, lanes: usize) -> Self {
        Self {
            items,
            lanes,
            ours: None,
            ours_roomy: None,
            acf: None,
            cf_mutex: None,
            cf_rwlock: None,
            fastbloom: None,
        }
    }

    fn get<F: Pick>(&mut self, pool: &ThreadPool) -> &Loaded<F> {
        if F::slot(self).is_none() {
            let loaded = F::build(self, pool);
            *F::slot(self) = Some(loaded);
        }
        F::slot(self).as_ref().unwrap()
    }
}

/// The thread sweep of one bench: `{name}/{t}t` for every thread count, with `elements(t)`
/// operations per iteration.
fn sweep(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    name: &str,
    elements: impl Fn(usize) -> usize,
    mut run: impl FnMut(&mut Bencher<'_>, &ThreadPool),
) {
    for pool in &pools.0 {
        let threads = pool.current_num_threads();
        group.throughput(Throughput::Elements(elements(threads) as u64));
        group.bench_function(format!("{name}/{threads}t"), |b| run(b, pool));
    }
}

/// A way to answer a block of lookups.
type Lookup<F> = fn(&F, &[u64], &mut [bool]);

/// One `contains` call per key.
fn per_key<F: Peer>(filter: &F, keys: &[u64], answers: &mut [bool]) {
    for (key, answer) in keys.iter().zip(answers) {
        *answer = filter.contains(*key);
    }
}

/// This crate's `contains_batch_into`, one call per block of `BATCH` keys (`ours-batch`).
fn batched(filter: &Ours, keys: &[u64], answers: &mut [bool]) {
    filter.contains_batch_into(keys, answers);
}

fn contains_sweep<F: Pick>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    set: &mut FilledSet,
    p: f64,
    (name, lookup): (&str, Lookup<F>),
) {
    let mut queries: Option<Vec<u64>> = None;
    let mut cursor = 0usize;
    sweep(
        group,
        pools,
        name,
        |t| t * BATCH,
        |b, pool| {
            let loaded = set.get::<F>(pools.max());
            let queries = queries.get_or_insert_with(|| loaded.queries(p, 7));
            let filter = &*loaded.filter;
            b.iter_custom(|iters| {
                time_lookups(pool, queries, &mut cursor, iters, |keys, answers| {
                    lookup(filter, keys, answers)
                })
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
    sweep(
        group,
        pools,
        F::NAME,
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

fn insert_sweep<F: Peer + Sync>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    items: usize,
) {
    sweep(
        group,
        pools,
        F::NAME,
        |_| items,
        |b, pool| {
            b.iter_custom(|iters| {
                time_each_key(pool, items, iters, || F::with_capacity(items), F::insert)
            })
        },
    );
}

fn delete_sweep<F: Peer + Send + Sync>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pools: &Pools,
    items: usize,
) {
    let lanes = pools.0.len();
    sweep(
        group,
        pools,
        F::NAME,
        |_| items,
        |b, pool| {
            // The filling, by all threads, is not timed.
            let setup = || Loaded::<F>::fill(items, lanes, pools.max(), false).filter;
            b.iter_custom(|iters| time_each_key(pool, items, iters, setup, |f, k| f.remove(k)))
        },
    );
}

/// Every group on filters of `mib` MiB (this crate's size; the peers hold as many items).
/// `roomy`: the mixed workloads also on this crate's filter sized for 1.5 times the items.
/// `writes`: also the insert and delete groups, which build a filter per iteration.
fn bench_size(c: &mut Criterion, pools: &Pools, mib: usize, roomy: bool, writes: bool) {
    let items = items_for_mib(mib);
    let mut set = FilledSet::new(items, pools.0.len());
    let size = format!("{mib}MiB");

    for p in [0.0, 0.5, 1.0] {
        let mut group = c.benchmark_group(format!("contains/{size}/p={p}"));
        let (g, set) = (&mut group, &mut set);
        contains_sweep(g, pools, set, p, (Ours::NAME, per_key::<Ours>));
        contains_sweep(g, pools, set, p, ("ours-batch", batched));
        contains_sweep(g, pools, set, p, (Acf::NAME, per_key::<Acf>));
        contains_sweep(g, pools, set, p, (CfMutex::NAME, per_key::<CfMutex>));
        contains_sweep(g, pools, set, p, (CfRwLock::NAME, per_key::<CfRwLock>));
        contains_sweep(g, pools, set, p, (FastBloom::NAME, per_key::<FastBloom>));
        group.finish();
    }

    for (name, permille) in [("mixed_read", 50), ("mixed_write", 250)] {
        let ops = op_table(permille, permille as u64);
        let mut group = c.benchmark_group(format!("{name}/{size}"));
        mixed_sweep::<Ours>(&mut group, pools, &mut set, &ops);
        if roomy {
            mixed_sweep::<Roomy>(&mut group, pools, &mut set, &ops);
        }
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

/// A way to fill a filter until an insert fails; returns how many went in.
type FillWith<'a> = &'a dyn Fn(&ConcurrentCuckooFilter) -> u64;

/// Filling an empty filter for `items` items until its first failed insert, on one thread: one
/// `insert` per key, and one `try_extend` over all the keys (which pipelines the inserts' memory
/// loads and stops at the first failure). A first fill counts the inserts (the same every time:
/// the hasher's seed is fixed and one thread inserts the keys in order), so the throughput counts
/// every insert that went in.
fn bench_fill_to_first_failure(group: &mut BenchmarkGroup<'_, WallTime>, items: usize) {
    let one_by_one = |filter: &ConcurrentCuckooFilter| {
        let mut n = 0u64;
        while filter.insert(&key(n)).is_ok() {
            n += 1;
        }
        n
    };
    let bulk = |filter: &ConcurrentCuckooFilter| match filter.try_extend((0..).map(key)) {
        Ok(_) => unreachable!("an endless iterator fills the filter"),
        Err(err) => err.inserted() as u64,
    };
    let fill = |how: FillWith| {
        let filter = ConcurrentCuckooFilter::with_capacity(items);
        let began = Instant::now();
        let n = how(&filter);
        (n, began.elapsed())
    };
    let (inserted, took) = fill(&one_by_one);
    eprintln!(
        "  [setup] ours: first failure after {inserted} inserts ({:.2}% of the capacity), {:.1} s",
        inserted as f64 * 100.0 / items as f64,
        took.as_secs_f64()
    );
    group.throughput(Throughput::Elements(inserted));
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(60));
    let ways: [(&str, FillWith); 2] = [("insert", &one_by_one), ("try_extend", &bulk)];
    for (name, how) in ways {
        group.bench_function(format!("fill_to_first_failure/{name}/1t"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (n, took) = fill(how);
                        assert_eq!(n, inserted, "the fill is deterministic");
                        took
                    })
                    .sum()
            })
        });
    }
}

/// This crate's default filter alone at 64 MiB: lookups of one key per call (all hits, all
/// misses) on one thread; the read-heavy mixed workload (90% contains, 10% insert + remove) on 1
/// and 2 threads. `full`: also the fill from empty to the first failed insert, on one thread
/// (11 fills of 64 MiB, several minutes).
fn bench_ours_alone(c: &mut Criterion, pools: &Pools, full: bool) {
    let mib = 64;
    let items = items_for_mib(mib);
    let mut set = FilledSet::new(items, pools.0.len());
    let mut group = c.benchmark_group(format!("ours_{mib}MiB"));
    let one = &pools.0[0];

    if full {
        bench_fill_to_first_failure(&mut group, items);
    }
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
    eprintln!("machine: {}", machine());

    let full = args::full();
    bench_size(&mut c, &pools, args::small_mib(), true, true);
    bench_ours_alone(&mut c, &pools, full);
    bench_size(&mut c, &pools, args::big_mib(), false, full);
    c.final_summary();
}
