//! Operations per second of a sliding-window filter held full, from a pool of threads.
//!
//! A new filter takes `2W` keys (ticked once per generation), so it holds a full window and its
//! rotation or aging is in its steady state. Then each round times, in turn:
//!
//! - inserts: windows of new keys, generation by generation; each generation's keys are split
//!   evenly between the threads, which insert their share at once, and the tick that ends the
//!   generation counts too (its cost is the window's upkeep), less any time it spent waiting for
//!   a clock;
//! - lookups: `W` keys, half of them inside the window (ages below `W`) and half never inserted,
//!   in random order, split evenly between the threads.
//!
//! Each phase repeats its windows of inserts or passes of lookups for at least 200 ms, and is
//! run again, up to 5 times, until it had a core per thread and the machine to itself
//! ([`time_on_own_cores`]). Each figure is the median over the rounds.

use super::{WindowFilter, WindowSpec};
use crate::keys::{key, Rng, ABSENT};
use crate::measure::{median, time_on_own_cores};
use rayon::ThreadPool;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median operations per second of one filter on one pool.
#[derive(Clone, Copy, Debug)]
pub struct Speed {
    pub threads: usize,
    pub inserts_per_second: f64,
    pub lookups_per_second: f64,
    /// Timed phases (an insert and a lookup phase per round) that had a core per thread and
    /// the machine to themselves ([`time_on_own_cores`]), of `phases`.
    pub clean: usize,
    pub phases: usize,
}

/// The least time a timed phase runs for: whole windows of inserts, whole passes of lookups.
const PHASE: Duration = Duration::from_millis(200);
/// Tries per timed phase to get a core per thread and the machine to itself.
const ATTEMPTS: usize = 5;

/// The part of `0..len` that thread `index` of `threads` takes.
fn share(len: u64, index: usize, threads: usize) -> std::ops::Range<u64> {
    let at = |i: usize| len * i as u64 / threads as u64;
    at(index)..at(index + 1)
}

/// Times inserts and lookups of a new `F` built for `spec` on every thread of `pool`, `rounds`
/// times (at least 1). An error when `F` cannot be built for `spec`.
pub fn measure<F: WindowFilter>(
    spec: &WindowSpec,
    pool: &ThreadPool,
    rounds: usize,
) -> Result<Speed, String> {
    let threads = pool.current_num_threads();
    let generation = spec.generation_len();
    let generations = spec.items.div_ceil(generation);
    let mut filter = F::build(spec)?;
    let mut next = 0u64;
    for _ in 0..2 * generations {
        for i in next..next + generation {
            filter.insert(key(i));
        }
        next += generation;
        if F::TICKS {
            filter.tick();
        }
    }
    let mut rng = Rng::new(spec.items);
    let (mut inserts, mut lookups, mut clean) = (Vec::new(), Vec::new(), 0);
    for round in 0..rounds.max(1) as u64 {
        let mut inserted = 0;
        let (took, own) = time_on_own_cores(threads, ATTEMPTS, || {
            let mut took = Duration::ZERO;
            inserted = 0;
            while took < PHASE {
                for _ in 0..generations {
                    let began = Instant::now();
                    let shared = &filter;
                    pool.broadcast(|ctx| {
                        for i in share(generation, ctx.index(), threads) {
                            shared.insert(key(next + i));
                        }
                    });
                    let waited = if F::TICKS {
                        filter.tick()
                    } else {
                        Duration::ZERO
                    };
                    took += began.elapsed().saturating_sub(waited);
                    next += generation;
                }
                inserted += generations * generation;
            }
            took
        });
        clean += usize::from(own);
        inserts.push(inserted as f64 / took.as_secs_f64());

        let mut queries: Vec<u64> = (0..spec.items)
            .map(|j| match j % 2 {
                0 => key(next - 1 - rng.below(spec.items)),
                _ => key(ABSENT + round * spec.items + j),
            })
            .collect();
        rng.shuffle(&mut queries);
        filter.pause();
        let mut probed = 0;
        let (took, own) = time_on_own_cores(threads, ATTEMPTS, || {
            let began = Instant::now();
            probed = 0;
            while began.elapsed() < PHASE {
                let shared = &filter;
                pool.broadcast(|ctx| {
                    let range = share(queries.len() as u64, ctx.index(), threads);
                    let part = &queries[range.start as usize..range.end as usize];
                    black_box(part.iter().filter(|&&k| shared.contains(k)).count());
                });
                probed += queries.len();
            }
            began.elapsed()
        });
        clean += usize::from(own);
        lookups.push(probed as f64 / took.as_secs_f64());
        filter.resume();
    }
    Ok(Speed {
        threads,
        inserts_per_second: median(&mut inserts),
        lookups_per_second: median(&mut lookups),
        clean,
        phases: 2 * rounds.max(1),
    })
}
