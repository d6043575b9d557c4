//! Where an expiring filter is in time: the published generation, the inserts counted or the
//! clock read, and the sweep's progress recorded at each generation, which gates the next one.

use std::time::Instant;

use super::window::{nanos, Ages, TAG_BITS};
use crate::sync::{AtomicU64, CachePadded, Ordering};

/// A count window refuses inserts from this many inserts or generations on: the threads racing
/// past the check, and early expiries, keep it far below the 2^63 its decoder refuses (146 years
/// at 10^9 inserts a second).
pub(crate) const COUNT_END: u64 = 1 << 62;

/// What counting an insert gave it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tick {
    /// The generation the insert must store in at least.
    pub(crate) generation: u64,
    /// The first sweep bucket its position claimed (a count window's).
    pub(crate) sweep_from: Option<u64>,
}

#[derive(Debug)]
pub(crate) enum Ticks {
    /// A count window: generation `p / per_generation` for the `p`-th insert.
    Count { per_generation: u64 },
    /// A time window on the monotonic clock since `start`, `nanos` a generation.
    Monotonic { start: Instant, nanos: u64 },
    /// A time window on the caller's clock, at `now` nanoseconds.
    Manual { now: AtomicU64, nanos: u64 },
}

impl Ticks {
    /// Nanoseconds a time window's clock has run (0 for a count window).
    pub(crate) fn elapsed(&self) -> u64 {
        match self {
            Self::Count { .. } => 0,
            Self::Monotonic { start, .. } => nanos(start.elapsed()),
            Self::Manual { now, .. } => now.load(Ordering::Acquire),
        }
    }

    /// The generation of a time window's time alone; `None` for a count window.
    fn generation(&self) -> Option<u64> {
        match self {
            Self::Count { .. } => None,
            Self::Monotonic { nanos, .. } | Self::Manual { nanos, .. } => {
                Some(self.elapsed() / nanos)
            }
        }
    }
}

#[derive(Debug)]
pub(crate) struct Generations {
    /// Moved only by [`Self::publish`]; on a line apart from `positions`, which inserts write.
    generation: CachePadded<AtomicU64>,
    /// Inserts counted: a count window's clock and sweep cursor (position `p` claims the
    /// `per_insert` buckets from `(p − first) · per_insert`).
    positions: CachePadded<AtomicU64>,
    /// `positions` when the table was built or decoded.
    first: u64,
    /// Sweep buckets each position claims (0 for a time window, whose inserts claim `swept`).
    per_insert: u64,
    /// Sweep buckets claimed apart from positions: a time window's inserts' and publishers'.
    swept: AtomicU64,
    /// [`Self::claimed`] when each generation was published, by generation mod 16.
    marks: [AtomicU64; 1 << TAG_BITS],
    /// 1 while a thread publishes a generation.
    advancing: AtomicU64,
    /// The generation last emptied in: no tag stored since returns before `base + 16`.
    base: AtomicU64,
    /// Generations a time window's early expiries moved its clock on by (docs/expiry.md).
    ahead: CachePadded<AtomicU64>,
    pub(crate) ticks: Ticks,
}

impl Generations {
    /// At `generation` after `positions` inserts, each claiming `per_insert` sweep buckets.
    pub(crate) fn new(ticks: Ticks, generation: u64, positions: u64, per_insert: u64) -> Self {
        let per_insert = match ticks {
            Ticks::Count { .. } => per_insert,
            _ => 0,
        };
        // A decoded time window ahead of its time stays as far ahead.
        let ahead = ticks
            .generation()
            .map_or(0, |time| generation.saturating_sub(time));
        Self {
            generation: CachePadded::new(AtomicU64::new(generation)),
            positions: CachePadded::new(AtomicU64::new(positions)),
            first: positions,
            per_insert,
            swept: AtomicU64::new(0),
            // As if a generation were published with one position's claims counted: those of
            // the insert that publishes the next, which sweeps after it publishes. The claims a
            // pass needs are then the positions' that are swept, as a publisher's mark makes them.
            marks: core::array::from_fn(|_| AtomicU64::new(per_insert)),
            advancing: AtomicU64::new(0),
            base: AtomicU64::new(0),
            ahead: CachePadded::new(AtomicU64::new(ahead)),
            ticks,
        }
    }

    /// The published generation.
    #[inline(always)]
    pub(crate) fn current(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Generations a reader of `g` is behind the clock: only the monotonic clock runs ahead.
    #[inline(always)]
    pub(crate) fn lag(&self, g: u64) -> u64 {
        match &self.ticks {
            Ticks::Monotonic { .. } => self.clock_generation().saturating_sub(g),
            _ => 0,
        }
    }

    /// A time window's clock's generation, early expiries included (else the published one).
    pub(crate) fn clock_generation(&self) -> u64 {
        match self.ticks.generation() {
            Some(time) => time.saturating_add(self.ahead.load(Ordering::Acquire)),
            None => self.current(),
        }
    }

    /// Moves a time window's clock on to generation `g` at least, for an early expiry.
    pub(crate) fn move_ahead(&self, g: u64) {
        if let Some(time) = self.ticks.generation() {
            self.ahead
                .fetch_max(g.saturating_sub(time), Ordering::AcqRel);
        }
    }

    /// Counts one insert; `None`, counting nothing, once a count window is at [`COUNT_END`].
    #[inline(always)]
    pub(crate) fn tick(&self) -> Option<Tick> {
        Some(match &self.ticks {
            Ticks::Count { per_generation } => {
                if self.exhausted() {
                    return None;
                }
                // A claim of sweep buckets: `SeqCst`, as `claim_sweep`.
                let p = self.positions.fetch_add(1, Ordering::SeqCst);
                Tick {
                    generation: p / per_generation,
                    sweep_from: Some((p - self.first) * self.per_insert),
                }
            }
            _ => Tick {
                generation: self.clock_generation(),
                sweep_from: None,
            },
        })
    }

    /// Whether a count window has reached [`COUNT_END`] inserts or generations.
    pub(crate) fn exhausted(&self) -> bool {
        let count = self.positions.load(Ordering::Relaxed) | self.current();
        matches!(self.ticks, Ticks::Count { .. }) && count >= COUNT_END
    }

    pub(crate) fn positions(&self) -> u64 {
        self.positions.load(Ordering::Relaxed)
    }

    /// Moves a manual clock to `nanos` (never back); `false` for another clock.
    pub(crate) fn set_now(&self, nanos: u64) -> bool {
        let Ticks::Manual { now, .. } = &self.ticks else {
            return false;
        };
        now.fetch_max(nanos, Ordering::AcqRel);
        true
    }

    /// Claims `count` buckets for the sweep: the first one's number.
    pub(crate) fn claim_sweep(&self, count: u64) -> u64 {
        self.swept.fetch_add(count, Ordering::SeqCst)
    }

    /// Buckets claimed by positions and by `claim_sweep`: read after a claim, it counts it.
    fn claimed(&self) -> u64 {
        let positions = self.positions.load(Ordering::SeqCst) - self.first;
        positions * self.per_insert + self.swept.load(Ordering::SeqCst)
    }

    /// Buckets the sweep must still claim before generation `next` may be published, in a table
    /// of `buckets`: a whole pass since generation `next − (15 − G)` was published, so that
    /// every slot dead by then is cleared before its tag returns.
    pub(crate) fn sweep_debt(&self, next: u64, ages: Ages, buckets: u64) -> u64 {
        let base = self.base.load(Ordering::Relaxed);
        if next < base.saturating_add(1 << TAG_BITS) {
            return 0; // No slot is old enough for its tag to come back.
        }
        let behind = ages.sweep_generations();
        let mark = self.marks[((next - behind) & Ages::TAG_MASK) as usize].load(Ordering::SeqCst);
        match (mark + buckets).saturating_sub(self.claimed()) {
            // Positions and `swept` are two cursors: only a whole pass of one covers the table.
            debt if debt > 0 && self.per_insert != 0 => buckets,
            debt => debt,
        }
    }

    /// Takes the right to publish; `false` if another thread has it.
    pub(crate) fn try_begin_advance(&self) -> bool {
        self.advancing
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Publishes `g`, then marks the claims: one after the mark is swept in `g` or later.
    pub(crate) fn publish(&self, g: u64, reset: bool) {
        self.generation.store(g, Ordering::SeqCst);
        let swept = self.claimed();
        if reset {
            self.base.store(g, Ordering::Relaxed);
            for mark in &self.marks {
                mark.store(swept, Ordering::SeqCst);
            }
        } else {
            self.marks[(g & Ages::TAG_MASK) as usize].store(swept, Ordering::SeqCst);
        }
    }

    /// Gives up the right to publish.
    pub(crate) fn end_advance(&self) {
        self.advancing.store(0, Ordering::Release);
    }
}
