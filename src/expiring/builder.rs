//! The expiring filter's builder: a window, its generations, a false positive rate, and for a
//! time window its capacity, overflow choice and clock, checked into a [`Table`].

use std::time::{Duration, Instant};

use super::clock::{Generations, Ticks};
use super::core::{Settings, Table};
use super::slots::{Slots, BUCKET_SIZE};
use super::window::{nanos, Ages, Clock, Overflow, Window, TAG_BITS};
use super::{Expiring, ExpiringCuckooFilter};
use crate::error::BuildError;
use crate::hash::DefaultHashBuilder;
use crate::raw::{default_stripe_count, Placement, Stripes, MAX_BUCKET_COUNT};
use crate::sizing::bucket_count_for;
use crate::sync::AtomicU64;

/// Generations a window is split into unless `generations` says otherwise: an item is kept at
/// most 1/8 of a window longer than the window, with 4-bit tags.
pub const DEFAULT_GENERATIONS: u32 = 8;
/// The false positive rate unless `false_positive_rate` says otherwise.
pub const DEFAULT_FALSE_POSITIVE_RATE: f64 = 0.001;
/// The load the table is sized for when it holds every live item: the plain filter's.
pub(crate) const LOAD: f64 = 0.95;
/// Widest fingerprints: a slot (fingerprint and tag) fits 32 bits.
pub(crate) const MAX_FINGERPRINT_BITS: u32 = 32 - TAG_BITS;
/// Sweep passes per `2^t − G − 1` generations that inserts are sized to make: twice what the
/// tags need, so that racing inserts that claim late leave no debt.
const SWEEP_MARGIN: u64 = 2;

/// Builds an [`ExpiringCuckooFilter`]; from
/// [`ExpiringCuckooFilter::builder`](crate::ExpiringCuckooFilter::builder).
#[derive(Clone, Debug)]
#[must_use]
pub struct ExpiringBuilder<S = DefaultHashBuilder> {
    window: Window,
    generations: u32,
    false_positive_rate: f64,
    capacity: u64,
    overflow: Overflow,
    clock: Clock,
    /// A bucket count that overrides the sizing (0: sized from the window): a test hook.
    buckets: usize,
    hasher: S,
}

impl ExpiringCuckooFilter {
    /// A builder of a filter that remembers items for `window`: the last `n` inserts
    /// (`Window::Items(n)`), or a duration (`Window::Time(d)`, which also needs
    /// [`capacity`](ExpiringBuilder::capacity)).
    pub fn builder(window: Window) -> ExpiringBuilder {
        ExpiringBuilder {
            window,
            generations: DEFAULT_GENERATIONS,
            false_positive_rate: DEFAULT_FALSE_POSITIVE_RATE,
            capacity: 0,
            overflow: Overflow::Error,
            clock: Clock::Monotonic,
            buckets: 0,
            hasher: DefaultHashBuilder::new(),
        }
    }
}

impl<S> ExpiringBuilder<S> {
    /// Generations the window is split into, `G`, from 1 to 14 (default 8): an item is found
    /// for the whole window after its insert and forgotten within `G + 1` generations, `1 + 1/G`
    /// windows where `G` divides a count window (`(G + 1)·ceil(W/G)` inserts otherwise).
    pub fn generations(mut self, generations: u32) -> Self {
        self.generations = generations;
        self
    }

    /// The false positive rate at any point of a stream of any length (default 0.1%).
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.false_positive_rate = rate;
        self
    }

    /// A time window's capacity `C` (required for time windows, refused for count windows,
    /// whose item count is theirs): `C` items per window at a steady rate. The table keeps the
    /// items of the last `G + 1` generations, so what it promises to hold is at most
    /// `C·(1 + 1/G)` inserts within any `window·(1 + 1/G)`, bursts included; more overflows
    /// ([`overflow`](Self::overflow)).
    pub fn capacity(mut self, capacity: u64) -> Self {
        self.capacity = capacity;
        self
    }

    /// What a time window does past its capacity (default [`Overflow::Error`]).
    pub fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = overflow;
        self
    }

    /// The clock a time window reads (default [`Clock::Monotonic`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Items are hashed with `hasher`.
    pub fn hasher<T>(self, hasher: T) -> ExpiringBuilder<T> {
        ExpiringBuilder {
            window: self.window,
            generations: self.generations,
            false_positive_rate: self.false_positive_rate,
            capacity: self.capacity,
            overflow: self.overflow,
            clock: self.clock,
            buckets: self.buckets,
            hasher,
        }
    }

    test_hook! {
        /// A table of exactly `buckets` buckets (at least 1), whatever the window: the tiny
        /// tables of the loom models. Its false positive rate and `Full` promises are void.
        fn debug_buckets(mut self, buckets: usize) -> Self {
            self.buckets = buckets.max(1);
            self
        }
    }

    /// The filter.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the value at fault: `generations` out of `1..=14`
    /// ([`BuildError::Generations`]), an empty or unaddressable window
    /// ([`BuildError::WindowItems`], [`BuildError::WindowDuration`]), a time window without a
    /// capacity or a count window with one ([`BuildError::WindowCapacity`]), a rate out of
    /// `(0, 1)` or below what 28-bit fingerprints reach, a table too large, or no memory.
    pub fn build(self) -> Result<ExpiringCuckooFilter<S>, BuildError> {
        let settings = self.settings()?;
        let table = Table::new(settings, 0, 0, 0)?;
        Ok(ExpiringCuckooFilter::from_parts(
            Expiring { table },
            self.hasher,
        ))
    }

    /// The settings these choices give, or the first value at fault.
    pub(crate) fn settings(&self) -> Result<Settings, BuildError> {
        let too_large = |capacity: u64| BuildError::CapacityTooLarge {
            capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
            // Any window of up to this many items sizes a table under the bucket limit.
            max: usize::try_from(MAX_BUCKET_COUNT).unwrap_or(usize::MAX),
        };
        let generations = self.generations;
        if generations == 0 || generations > Ages::MAX_GENERATIONS {
            return Err(BuildError::Generations {
                generations,
                max: Ages::MAX_GENERATIONS,
            });
        }
        let capacity = match self.window {
            Window::Items(items) => {
                if self.capacity != 0 {
                    return Err(BuildError::WindowCapacity {
                        capacity: self.capacity,
                        time_window: false,
                    });
                }
                if items == 0 || items > MAX_BUCKET_COUNT {
                    return Err(BuildError::WindowItems { items });
                }
                items
            }
            Window::Time(duration) => {
                if duration.as_nanos() < u128::from(generations)
                    || duration.as_nanos() > u128::from(u64::MAX)
                {
                    return Err(BuildError::WindowDuration { duration });
                }
                if self.capacity == 0 {
                    return Err(BuildError::WindowCapacity {
                        capacity: 0,
                        time_window: true,
                    });
                }
                // Past this no table holds it; bounded before the sizing multiplies it.
                if self.capacity > MAX_BUCKET_COUNT {
                    return Err(too_large(self.capacity));
                }
                self.capacity
            }
        };
        let rate = self.false_positive_rate;
        let fingerprint_bits = fingerprint_bits_for(rate)?;
        let live = per_generation(capacity, generations) * (u64::from(generations) + 1);
        let buckets = match self.buckets {
            0 => bucket_count_for(live, BUCKET_SIZE),
            buckets => buckets as u64,
        };
        if buckets > MAX_BUCKET_COUNT
            || usize::try_from(buckets).is_err()
            || buckets.checked_mul(BUCKET_SIZE as u64 * 32).is_none()
        {
            return Err(too_large(capacity));
        }
        Ok(Settings {
            window: self.window,
            overflow: self.overflow,
            clock: self.clock,
            capacity,
            fingerprint_bits,
            bucket_count: buckets as usize,
            generations,
        })
    }
}

/// Items per generation for `capacity` per window.
pub(crate) fn per_generation(capacity: u64, generations: u32) -> u64 {
    capacity.div_ceil(u64::from(generations))
}

/// The false positive rate of `bits`-bit fingerprints at `load`: `2·b·α / (2^f − 1)`.
pub(crate) fn rate_of(bits: u32, load: f64) -> f64 {
    2.0 * BUCKET_SIZE as f64 * load / ((1u64 << bits) - 1) as f64
}

/// The narrowest fingerprint of rate `rate` or less.
fn fingerprint_bits_for(rate: f64) -> Result<u32, BuildError> {
    if !(rate > 0.0 && rate < 1.0) {
        return Err(BuildError::FalsePositiveRate { rate });
    }
    (4..=MAX_FINGERPRINT_BITS)
        .find(|&bits| rate_of(bits, LOAD) <= rate)
        .ok_or(BuildError::FalsePositiveRateTooSmall {
            rate,
            smallest: rate_of(MAX_FINGERPRINT_BITS, LOAD),
        })
}

impl Table {
    /// An empty table of `settings`, its clock at `generation`, `positions` and `elapsed` nanos.
    pub(crate) fn new(
        settings: Settings,
        generation: u64,
        positions: u64,
        elapsed: u64,
    ) -> Result<Self, BuildError> {
        let n = settings.bucket_count;
        let width = settings.fingerprint_bits + TAG_BITS;
        // The plain filter's rule, which keeps the stamps a small share of the memory.
        let table_bytes = Slots::words_for(n, width) * 8;
        let stripe_count =
            default_stripe_count(table_bytes as u64, (n as u64).next_power_of_two()) as usize;
        let out_of_memory = BuildError::OutOfMemory {
            bytes: table_bytes + stripe_count * 8,
        };
        let slots = Slots::new(n, width).ok_or(out_of_memory.clone())?;
        let stripes = Stripes::new(stripe_count, 0, n, BUCKET_SIZE).ok_or(out_of_memory)?;
        let ages = Ages {
            generations: u64::from(settings.generations),
        };
        let per_gen = per_generation(settings.capacity, settings.generations);
        let ticks = match settings.window {
            Window::Items(_) => Ticks::Count {
                per_generation: per_gen,
            },
            Window::Time(duration) => {
                // Rounded up, so that `G` generations are at least the window.
                let nanos = nanos(duration).div_ceil(u64::from(settings.generations));
                match settings.clock {
                    Clock::Manual => Ticks::Manual {
                        now: AtomicU64::new(elapsed),
                        nanos,
                    },
                    Clock::Monotonic => Ticks::Monotonic {
                        start: Instant::now()
                            .checked_sub(Duration::from_nanos(elapsed))
                            .unwrap_or_else(Instant::now),
                        nanos,
                    },
                }
            }
        };
        let sweep_per_insert = (SWEEP_MARGIN * n as u64)
            .div_ceil(ages.sweep_generations() * per_gen)
            .max(1);
        let clock = Generations::new(ticks, generation, positions, sweep_per_insert);
        Ok(Self {
            placement: Placement::new(n, settings.fingerprint_bits),
            stripes,
            inline_lanes: slots
                .lanes_with_tags_beside()
                .filter(|_| !matches!(clock.ticks, Ticks::Monotonic { .. })),
            slots,
            ages,
            clock,
            settings,
            sweep_per_insert,
            early_expiries: AtomicU64::new(0),
            early_counted: AtomicU64::new(0),
        })
    }
}
