//! The crates.io sliding-window filters as [`WindowFilter`]s, each configured for a
//! [`WindowSpec`] with its crate's documented settings, and driven by the count of inserts.
//!
//! Each hashes keys with its own crate's hasher (`expiring-atomic-filter`, `cuckoo-clock`:
//! SipHash-1-3; `rotating-bloom-filter`: fastbloom's seeded SipHash; `probabilistic-rs`: its
//! own hash of the key's 8 little-endian bytes).

use super::{WindowFilter, WindowSpec};
use cuckoo_clock::config::{CuckooConfiguration, TtlConfig};
use expiring_atomic_filter::ExpiringAtomicFilter;
use parking_lot::RwLock;
use probabilistic_rs::ebloom::{ExpiringBloomFilter, ExpiringBloomFilterOps, ExpiringFilterConfig};
use rotating_bloom_filter::RotatingBloomFilter;
use std::collections::hash_map::RandomState;
use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, the clock `expiring-atomic-filter` reads.
fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
}

/// `expiring-atomic-filter`: a ring of `G + 2` `atomic-cuckoo-filter`s, one per period of the
/// wall clock (whole seconds), lock-free inserts into the current one, lookups that probe all of
/// them, and an `expire()` the caller must call each period to clear the one after the current.
///
/// Its insert picks the current filter from the wall clock, `(now − created) mod (G + 2)` with
/// `created` a public field, so the adapter makes a generation of inserts one period: each
/// [`WindowFilter::tick`] sets `created` to `now − generation` and calls `expire_as_of(now)`,
/// and waits for the next second first when the current one may end before the generation's
/// inserts do. Settings: `ttl = G`, `expiration_period = 1` (a key lives `G` to `G + 1`
/// periods), `capacity = G·⌈W/G⌉` (each filter holds one generation), 16-bit fingerprints, the
/// smallest of its sizes (4, 8, 16, 32) whose `G + 1` live filters stay near ε; 4-slot buckets.
pub struct ExpiringAtomic {
    filter: ExpiringAtomicFilter,
    generations: u64,
    generation: u64,
    /// The second `created` was last pinned in.
    pinned: u64,
    /// When inserts last started, and the longest run of them so far.
    started: Instant,
    longest: Duration,
    /// Runs of inserts during which the second changed, so some went into the next filter.
    crossed: u64,
}

/// Fingerprint bits of the `expiring-atomic-filter` adapter.
const EXPIRING_ATOMIC_FINGERPRINT_BITS: usize = 16;

impl ExpiringAtomic {
    /// Points `created` at this second minus the generation, first waiting for the next second
    /// when less than twice the longest run of inserts is left of this one; the time waited.
    fn pin(&mut self) -> Duration {
        let margin = (self.longest * 2 + Duration::from_millis(20)).min(Duration::from_millis(900));
        let now = unix_now();
        let left = Duration::from_secs(now.as_secs() + 1).saturating_sub(now);
        let mut waited = Duration::ZERO;
        if left < margin {
            waited = left + Duration::from_millis(1);
            std::thread::sleep(waited);
        }
        self.pinned = unix_now().as_secs();
        self.filter.created = self.pinned - self.generation;
        self.started = Instant::now();
        waited
    }

    /// Ends a run of inserts.
    fn stop(&mut self) {
        self.longest = self.longest.max(self.started.elapsed());
        self.crossed += u64::from(unix_now().as_secs() != self.pinned);
    }
}

impl WindowFilter for ExpiringAtomic {
    const NAME: &'static str = "expiring-atomic-filter";
    const TICKS: bool = true;

    fn build(spec: &WindowSpec) -> Result<Self, String> {
        let generations = u64::from(spec.generations);
        let filter = ExpiringAtomicFilter::builder()
            .capacity((spec.generation_len() * generations) as usize)
            .fingerprint_size(EXPIRING_ATOMIC_FINGERPRINT_BITS)
            .ttl(generations)
            .expiration_period(1)
            .build()
            .map_err(|e| e.to_string())?;
        let mut adapter = Self {
            filter,
            generations,
            generation: 0,
            pinned: 0,
            started: Instant::now(),
            longest: Duration::ZERO,
            crossed: 0,
        };
        adapter.pin();
        Ok(adapter)
    }

    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.filter.insert(&key).is_ok()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }

    fn tick(&mut self) -> Duration {
        self.stop();
        self.generation += 1;
        let waited = self.pin();
        self.filter.expire_as_of(self.pinned);
        waited
    }

    fn pause(&mut self) {
        self.stop();
    }

    fn resume(&mut self) -> Duration {
        self.pin()
    }

    fn bytes(&self) -> usize {
        // `capacity()` counts the slots of all filters but the one waiting to be cleared.
        let filters = self.generations as usize + 2;
        let slots = self.filter.capacity() / (filters - 1) * filters;
        slots * EXPIRING_ATOMIC_FINGERPRINT_BITS / 8
    }

    fn remarks(&self) -> String {
        match self.crossed {
            0 => String::new(),
            n => format!("{n} runs of inserts crossed a second: part went a generation late"),
        }
    }
}

/// Bits a value up to `max` takes.
fn bits_for(max: u32) -> usize {
    (u32::BITS - max.leading_zeros()) as usize
}

/// Fingerprint bits for a false positive rate `eps` of a table of 4-slot buckets: `2·4/2^f ≤ ε`.
fn cuckoo_fingerprint_bits(eps: f64) -> usize {
    (8.0 / eps).log2().ceil() as usize
}

/// `cuckoo-clock`: a cuckoo filter of per-bucket mutexes whose slots carry a TTL counter; each
/// `scan_and_update_ttl` (a pass over every bucket) counts every TTL down and frees the slots
/// that reach zero. Settings: a scan per generation and `ttl = G + 1` (a key lives `G` to
/// `G + 1` generations), 4-slot buckets (its default), room for `(G + 1)·⌈W/G⌉` keys, the
/// smallest TTL field that holds `G + 1`, and the fingerprint ε needs widened to fill the
/// slot's whole bytes (its slots are whole bytes: the wider fingerprint costs nothing).
pub struct CuckooClock(cuckoo_clock::CuckooFilter<RandomState>);

impl WindowFilter for CuckooClock {
    const NAME: &'static str = "cuckoo-clock";
    const TICKS: bool = true;

    fn build(spec: &WindowSpec) -> Result<Self, String> {
        let ttl = spec.generations + 1;
        let ttl_bits = bits_for(ttl);
        let needed = cuckoo_fingerprint_bits(spec.false_positive_rate);
        let fingerprint_bits = ((needed + ttl_bits).div_ceil(8) * 8 - ttl_bits).min(32);
        let entries = spec.generation_len() * u64::from(ttl);
        let error = |e: cuckoo_clock::config::ConfigError| format!("{e:?}");
        let config = CuckooConfiguration::builder(entries as usize)
            .fingerprint_bits(fingerprint_bits.try_into().map_err(error)?)
            .with_ttl(TtlConfig {
                ttl: ttl.try_into().map_err(|_| "a TTL of 0")?,
                ttl_bits: ttl_bits.try_into().map_err(error)?,
            })
            .build()
            .map_err(error)?;
        Ok(Self(cuckoo_clock::CuckooFilter::new_random(config)))
    }

    /// `insert` returns the fingerprint it pushed out when the kicks ran out: a key lost.
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_none()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    fn tick(&mut self) -> Duration {
        self.0.scan_and_update_ttl();
        Duration::ZERO
    }

    fn bytes(&self) -> usize {
        self.0.get_memory_usage()
    }
}

/// The seed source `rotating-bloom-filter` asks for, from the harness's generator.
struct Seeds(crate::keys::Rng);

impl rand_core::TryRng for Seeds {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.next_u64() as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let bytes = self.0.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

/// `rotating-bloom-filter`: two `fastbloom` Bloom filters, each sized for `2W` keys at the
/// false positive rate; every insert sets both, and after each `W` inserts the current one is
/// dropped and the other, cleared, takes its place, so a key lives `W` to `2W` inserts. Its
/// `insert` takes `&mut self`, so threads share it behind a `parking_lot::RwLock` (lookups
/// take it to read). Settings: `new(ε, W, rng)`, ε being the rate its docs give the filter.
pub struct RotatingBloom {
    filter: RwLock<RotatingBloomFilter>,
    bytes: usize,
}

impl WindowFilter for RotatingBloom {
    const NAME: &'static str = "rotating-bloom-filter";
    const TICKS: bool = false;

    fn build(spec: &WindowSpec) -> Result<Self, String> {
        let eps = spec.false_positive_rate;
        let window = spec.items as usize;
        let filter = RotatingBloomFilter::new(eps, window, &mut Seeds(crate::keys::Rng::new(7)));
        // Its two filters are private: one built the same way gives their size.
        let one = fastbloom::BloomFilter::with_false_pos(eps).expected_items(window * 2);
        Ok(Self {
            filter: RwLock::new(filter),
            bytes: 2 * one.num_bits() / 8,
        })
    }

    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.filter.write().insert(&key);
        true
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.filter.read().contains(&key)
    }

    fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Runs a future that never waits (no I/O: `probabilistic-rs` without persistence) to its end.
fn run_to_end<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::yield_now();
    }
}

/// `probabilistic-rs`'s `ExpiringBloomFilter`: levels of Bloom filters behind one `RwLock`
/// (an insert takes it to write, a lookup to read and probes every level), the current level
/// cleared and replaced by the next on `rotate_levels` (its `cleanup_expired_levels` calls it
/// when the level's time is up; here once per generation of inserts). Settings: `G + 1` levels
/// of `⌈W/G⌉` keys (a key lives `G` to `G + 1` generations), each level at the rate its own
/// `calculate_level_fpr` gives for ε over all levels, `1 − (1 − ε)^(1/(G+1))`, no persistence.
/// It builds only with its `fjall` feature (0.6.4 fails to compile without it).
pub struct ProbabilisticRs {
    filter: ExpiringBloomFilter,
    bytes: usize,
    /// The first error `rotate_levels` returned, and how many it did.
    rotate_errors: (u64, String),
}

impl WindowFilter for ProbabilisticRs {
    const NAME: &'static str = "probabilistic-rs";
    const TICKS: bool = true;

    fn build(spec: &WindowSpec) -> Result<Self, String> {
        let levels = spec.generations as usize + 1;
        let per_level = spec.generation_len() as usize;
        let fpr = 1.0 - (1.0 - spec.false_positive_rate).powf(1.0 / levels as f64);
        let config = ExpiringFilterConfig {
            capacity_per_level: per_level,
            target_fpr: fpr,
            level_duration: Duration::from_secs(365 * 24 * 3600),
            num_levels: levels,
            persistence: None,
        };
        let filter = ExpiringBloomFilter::new(config).map_err(|e| e.to_string())?;
        let bits = probabilistic_rs::optimal_bit_vector_size(per_level, fpr);
        Ok(Self {
            filter,
            bytes: levels * bits.div_ceil(8),
            rotate_errors: (0, String::new()),
        })
    }

    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.filter.insert(&key.to_le_bytes()).is_ok()
    }

    /// An error (a poisoned lock) answers "not found", which the checker counts.
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key.to_le_bytes()).unwrap_or(false)
    }

    fn tick(&mut self) -> Duration {
        if let Err(e) = run_to_end(self.filter.rotate_levels()) {
            if self.rotate_errors.0 == 0 {
                self.rotate_errors.1 = e.to_string();
            }
            self.rotate_errors.0 += 1;
        }
        Duration::ZERO
    }

    fn bytes(&self) -> usize {
        self.bytes
    }

    fn remarks(&self) -> String {
        match &self.rotate_errors {
            (0, _) => String::new(),
            (n, first) => format!("{n} rotations failed, the first with: {first}"),
        }
    }
}
