//! The one checker every sliding-window filter goes through: a stream of distinct keys, and at
//! checkpoints the fraction of keys of each age the filter still finds.
//!
//! The stream inserts `key(0), key(1), …` ([`crate::keys::key`]: distinct, random-looking
//! `u64`s), `windows · W` of them, ticking the filters that need it once per generation. At
//! [`CheckSpec::checkpoints`] points, each at a random offset inside its share of the stream
//! after the first `2W` inserts (so the points fall at every phase of a filter's rotation), it
//! probes every key of age `0..2W` (the age of a key is the count of keys inserted after it) and
//! `W` never-inserted keys (`key(ABSENT + j)`, fresh at each point). From these:
//!
//! - the fraction found by age, in buckets of `W / buckets_per_window` ages, summed over the
//!   points;
//! - the false negatives inside the window: keys of age below `W` not found;
//! - the false positive rate: never-inserted keys found, over all points and at the worst one;
//! - the retention: at each point, the upper end of the oldest age bucket found more often than
//!   a lookup of a never-inserted key would be (its count above `n·p + 6·√(n·p) + 3`, with `p`
//!   the rate measured at that point), in windows; the largest over the points. It is at most
//!   `2`, the oldest age probed: [`Check::retention_capped`] says when the filter still found
//!   keys there.

use super::{WindowFilter, WindowSpec};
use crate::keys::{key, Rng, ABSENT};

/// How long the stream is and where it is probed.
#[derive(Clone, Copy, Debug)]
pub struct CheckSpec {
    /// The stream's length in windows (at least 3).
    pub windows: u64,
    /// Points at which the filter is probed (at least 1).
    pub checkpoints: u64,
    /// Age buckets per window of ages (at least 1).
    pub buckets_per_window: u64,
    /// Seed of the checkpoints' offsets.
    pub seed: u64,
}

impl Default for CheckSpec {
    fn default() -> Self {
        Self {
            windows: 100,
            checkpoints: 20,
            buckets_per_window: 64,
            seed: 1,
        }
    }
}

/// Keys of ages `lo..hi` probed and found, summed over the checkpoints.
#[derive(Clone, Copy, Debug)]
pub struct AgeBucket {
    pub lo: u64,
    pub hi: u64,
    pub probed: u64,
    pub found: u64,
}

impl AgeBucket {
    pub fn fraction(&self) -> f64 {
        self.found as f64 / self.probed.max(1) as f64
    }
}

/// What the checker measured of one filter.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: &'static str,
    pub window: u64,
    pub inserts: u64,
    /// Inserts the filter reported as failed or as having pushed a key out.
    pub failed_inserts: u64,
    pub buckets: Vec<AgeBucket>,
    /// Keys of age below `W` probed, and those not found.
    pub inside_probed: u64,
    pub false_negatives: u64,
    /// The oldest age still found above the false positive level, in windows (see the module).
    pub retention: f64,
    /// Whether keys of the oldest ages probed (`2W`) were still found.
    pub retention_capped: bool,
    /// Never-inserted keys probed, the rate found over all of them and at the worst checkpoint.
    pub negatives: u64,
    pub false_positive_rate: f64,
    pub worst_false_positive_rate: f64,
    /// Bytes of the filter at the end of the stream.
    pub bytes: usize,
    pub remarks: String,
}

/// Whether `found` of `n` probes is more than a rate `p` of false positives explains.
fn above_false_positives(found: u64, n: u64, p: f64) -> bool {
    let expected = n as f64 * p;
    found as f64 > expected + 6.0 * expected.sqrt() + 3.0
}

/// Runs the stream of `check` through a new `F` built for `spec`. An error when `F` cannot be
/// built for `spec` or `check` is out of its bounds.
pub fn check<F: WindowFilter>(spec: &WindowSpec, check: &CheckSpec) -> Result<Check, String> {
    if check.windows < 3 || check.checkpoints == 0 || check.buckets_per_window == 0 {
        return Err("a stream of 3 windows or more, 1 checkpoint or more, 1 bucket or more".into());
    }
    let window = spec.items;
    let width = window.div_ceil(check.buckets_per_window).max(1);
    let max_age = 2 * window;
    let mut buckets: Vec<AgeBucket> = (0..max_age.div_ceil(width))
        .map(|b| AgeBucket {
            lo: b * width,
            hi: ((b + 1) * width).min(max_age),
            probed: 0,
            found: 0,
        })
        .collect();
    let mut filter = F::build(spec)?;
    let total = check.windows * window;
    let share = (total - max_age) / check.checkpoints;
    let mut rng = Rng::new(check.seed);
    let points: Vec<u64> = (0..check.checkpoints)
        .map(|c| max_age + c * share + 1 + rng.below(share.max(1)))
        .collect();
    let generation = spec.generation_len();
    let mut result = Check {
        name: F::NAME,
        window,
        inserts: total,
        failed_inserts: 0,
        buckets: Vec::new(),
        inside_probed: 0,
        false_negatives: 0,
        retention: 0.0,
        retention_capped: false,
        negatives: 0,
        false_positive_rate: 0.0,
        worst_false_positive_rate: 0.0,
        bytes: 0,
        remarks: String::new(),
    };
    let mut next_point = points.iter().copied().peekable();
    let mut false_positives = 0;
    for i in 0..total {
        result.failed_inserts += u64::from(!filter.insert(key(i)));
        let inserted = i + 1;
        if F::TICKS && inserted % generation == 0 {
            filter.tick();
        }
        if next_point.peek() != Some(&inserted) {
            continue;
        }
        next_point.next();
        filter.pause();
        let mut found = vec![0u64; buckets.len()];
        for age in 0..max_age {
            if filter.contains(key(inserted - 1 - age)) {
                found[(age / width) as usize] += 1;
            } else if age < window {
                result.false_negatives += 1;
            }
        }
        result.inside_probed += window;
        let negatives = (0..window)
            .filter(|j| filter.contains(key(ABSENT + result.negatives + j)))
            .count() as u64;
        result.negatives += window;
        false_positives += negatives;
        let rate = negatives as f64 / window as f64;
        result.worst_false_positive_rate = result.worst_false_positive_rate.max(rate);
        for (bucket, &found) in buckets.iter_mut().zip(&found) {
            bucket.probed += bucket.hi - bucket.lo;
            bucket.found += found;
            if above_false_positives(found, bucket.hi - bucket.lo, rate) {
                let age = bucket.hi as f64 / window as f64;
                result.retention = result.retention.max(age);
                result.retention_capped |= bucket.hi == max_age;
            }
        }
        filter.resume();
    }
    result.false_positive_rate = false_positives as f64 / result.negatives.max(1) as f64;
    result.buckets = buckets;
    result.bytes = filter.bytes();
    result.remarks = filter.remarks();
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::peers::{CuckooClock, ExpiringAtomic, ProbabilisticRs, RotatingBloom};
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// An exact window of `W / DIV` keys: each key with the count of inserts before it.
    struct Exact<const DIV: u64> {
        window: u64,
        seen: Mutex<(u64, HashMap<u64, u64>)>,
    }

    impl<const DIV: u64> WindowFilter for Exact<DIV> {
        const NAME: &'static str = "exact";
        const TICKS: bool = false;

        fn build(spec: &WindowSpec) -> Result<Self, String> {
            Ok(Self {
                window: spec.items / DIV,
                seen: Mutex::new((0, HashMap::new())),
            })
        }

        fn insert(&self, key: u64) -> bool {
            let mut seen = self.seen.lock().unwrap();
            let at = seen.0;
            seen.1.insert(key, at);
            seen.0 += 1;
            true
        }

        fn contains(&self, key: u64) -> bool {
            let seen = self.seen.lock().unwrap();
            seen.1
                .get(&key)
                .is_some_and(|&at| seen.0 - 1 - at < self.window)
        }

        fn bytes(&self) -> usize {
            0
        }
    }

    const SPEC: WindowSpec = WindowSpec {
        items: 4096,
        generations: 8,
        false_positive_rate: 0.001,
    };

    const SHORT: CheckSpec = CheckSpec {
        windows: 8,
        checkpoints: 6,
        buckets_per_window: 64,
        seed: 3,
    };

    #[test]
    fn an_exact_window_is_found_whole_and_nothing_older() {
        let c = check::<Exact<1>>(&SPEC, &SHORT).unwrap();
        assert_eq!(c.inserts, 8 * 4096);
        assert_eq!((c.false_negatives, c.inside_probed), (0, 6 * 4096));
        assert_eq!((c.retention, c.retention_capped), (1.0, false));
        assert_eq!(c.false_positive_rate, 0.0);
        assert_eq!(c.buckets.len(), 128);
        for b in &c.buckets {
            let expected = if b.hi <= 4096 { 1.0 } else { 0.0 };
            assert_eq!((b.probed, b.fraction()), (6 * 64, expected), "{b:?}");
        }
    }

    #[test]
    fn keys_forgotten_inside_the_window_are_each_counted() {
        let c = check::<Exact<2>>(&SPEC, &SHORT).unwrap();
        assert_eq!(c.false_negatives, 6 * 2048);
        assert_eq!(c.retention, 0.5);
    }

    #[test]
    fn bad_stream_lengths_are_errors() {
        let short = CheckSpec {
            windows: 2,
            ..SHORT
        };
        assert!(check::<Exact<1>>(&SPEC, &short).is_err());
        let none = CheckSpec {
            checkpoints: 0,
            ..SHORT
        };
        assert!(check::<Exact<1>>(&SPEC, &none).is_err());
    }

    /// A peer keeps its whole window, forgets by `max_retention` windows (plus one age bucket),
    /// and stays near its false positive rate (`SHORT` probes 18000 never-inserted keys). The
    /// window is one whose generations fill a power-of-two table to 73%, below the 95% at which
    /// `expiring-atomic-filter`'s inserts may fail.
    fn peer_keeps_its_window<F: WindowFilter>(max_retention: f64) {
        let spec = WindowSpec {
            items: 3000,
            ..SPEC
        };
        let c = check::<F>(&spec, &SHORT).unwrap();
        assert_eq!(c.failed_inserts, 0, "{}", F::NAME);
        assert_eq!(c.false_negatives, 0, "{}", F::NAME);
        assert!(c.retention >= 1.0, "{}: {}", F::NAME, c.retention);
        assert!(
            c.retention <= max_retention + 2.0 / 64.0,
            "{}: {}",
            F::NAME,
            c.retention
        );
        assert!(
            c.false_positive_rate < 0.003,
            "{}: {}",
            F::NAME,
            c.false_positive_rate
        );
        assert!(c.bytes > 0);
    }

    #[test]
    fn the_peers_keep_their_windows() {
        peer_keeps_its_window::<ExpiringAtomic>(1.125);
        peer_keeps_its_window::<CuckooClock>(1.125);
        peer_keeps_its_window::<ProbabilisticRs>(1.125);
        peer_keeps_its_window::<RotatingBloom>(2.0);
    }
}
