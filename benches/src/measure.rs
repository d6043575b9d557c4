//! Timing loops: lookups, mixed workloads and fills, from one thread or from every thread of a
//! pool sharing one filter through an `Arc`.

use crate::keys::{key, Rng, ABSENT};
use crate::peers::Peer;
use crossbeam_utils::CachePadded;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// The median of `values` (sorted in place); the mean of the middle two for an even count.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// CPU time of every thread of this process so far, from the scheduler's account of each
/// thread (Linux's `/proc/self/task/*/schedstat`); `None` where that cannot be read.
pub fn cpu_seconds() -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        ns += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e9)
}

/// CPU time every core of the machine has spent busy or stolen by the hypervisor so far
/// (Linux's `/proc/stat`, in ticks of 10 ms); `None` where that cannot be read.
pub fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    let busy = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum::<u64>();
    Some(busy as f64 / 100.0)
}

/// Times `run`, which keeps `threads` threads busy, until a run had the machine to itself, at
/// most `attempts` times. On a machine other processes share, a run of 2 threads that got one
/// core measures the other process, not the filter, and a run beside another busy process
/// shares the caches with it: a run counts when its threads were on a core 90% of the time
/// and everything else on the machine kept less than a quarter of a core busy. The time of the
/// last run, and whether it counted (also when the CPU times cannot be read).
pub fn time_on_own_cores(
    threads: usize,
    attempts: usize,
    mut run: impl FnMut() -> Duration,
) -> (Duration, bool) {
    let mut last = (Duration::ZERO, false);
    for _ in 0..attempts.max(1) {
        let before = (cpu_seconds(), machine_busy_seconds());
        let took = run();
        let seconds = took.as_secs_f64();
        last = match (before, (cpu_seconds(), machine_busy_seconds())) {
            ((Some(own0), Some(all0)), (Some(own1), Some(all1))) => {
                let own = (own1 - own0) / seconds;
                let others = (all1 - all0) / seconds - own;
                (took, own >= 0.9 * threads as f64 && others < 0.25)
            }
            _ => (took, true),
        };
        if last.1 {
            break;
        }
    }
    last
}

/// Lookups per thread per criterion iteration.
pub const BATCH: usize = 1024;
/// Precomputed lookup keys per bench (a power of two), walked in order by every thread from
/// its own offset and never restarted between iterations.
pub const QUERIES: usize = 1 << 20;
/// Operations per thread per iteration of a mixed workload: one pass over its operation table.
pub const MIXED_OPS: usize = 1000;

/// One rayon pool per thread count, `pools[t - 1]` with `t` threads.
#[derive(Debug)]
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
#[derive(Debug, Default)]
pub struct Lane {
    pub lo: AtomicU64,
    pub hi: AtomicU64,
}

/// A filter holding the keys of its lanes, shared through an `Arc`.
pub struct Loaded<F> {
    pub filter: Arc<F>,
    pub lanes: Vec<CachePadded<Lane>>,
}

impl<F: Peer + Send + Sync> Loaded<F> {
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
        Self::fill_into(F::with_capacity(items), items, lanes, pool, report)
    }

    /// [`Self::fill`] of a given empty `filter`, which may have room for more than `items`.
    pub fn fill_into(
        filter: F,
        items: usize,
        lanes: usize,
        pool: &ThreadPool,
        report: bool,
    ) -> Self {
        let start = Instant::now();
        let loaded = Self::holding(filter, items as u64, lanes);
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
pub fn time_contains<F: Peer + Sync>(
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
#[derive(Clone, Copy, Debug, PartialEq)]
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
    Rng::new(seed).shuffle(&mut ops);
    ops
}

/// Times `iters` passes over `ops` on each thread of `pool`. Each thread works on the lanes
/// `l ≡ thread (mod threads)`: inserts the next key of a lane, removes its oldest, looks up one
/// of its live keys or a never-inserted key.
pub fn time_mixed<F: Peer + Send + Sync>(
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
