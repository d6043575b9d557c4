//! Choosing a filter's shape (fingerprint width, bucket size, semi-sorting) from explicit
//! settings or a target false positive rate ε (paper Section 5): [`Shape::for_rate`] prices every
//! configuration at its whole-bit `f ≥ log2(2b/ε)` (eq. 6), `f/α` bits per item at load α
//! (`(f − 1)/α` semi-sorted, `64/(b·α)` in bucket words), and takes the cheapest.

use crate::error::BuildError;
use crate::raw::{fits_bucket_word, Shape};

pub(crate) const MIN_FINGERPRINT_BITS: u32 = 4;
pub(crate) const MAX_FINGERPRINT_BITS: u32 = 32;
/// A semi-sorted fingerprint needs a remainder below its 4 prefix bits.
pub(crate) const MIN_SEMI_SORTED_BITS: u32 = 5;

/// Fingerprint width of the paper's default configuration.
const DEFAULT_FINGERPRINT_BITS: u32 = 12;
/// Slots per bucket of the paper's default configuration.
const DEFAULT_BUCKET_SIZE: usize = 4;

/// The load a filter is sized for, in thousandths: what the search reliably reaches (paper Fig. 2).
pub(crate) fn target_load_permille(bucket_size: usize) -> u64 {
    match bucket_size {
        2 => 840,
        4 => 950,
        _ => 970,
    }
}

/// Slack for small tables (docs/benchmarks.md, "Space and false positive rates"): room for
/// `extra_items` more items at a load of `load_permille` thousandths.
fn small_table_slack(bucket_size: usize) -> (u128, u128) {
    match bucket_size {
        2 => (250, 850),
        4 => (52, 1000),
        _ => (17, 1000),
    }
}

/// Buckets for `capacity` items at the target load and with the slack; monotone, saturating.
pub(crate) fn bucket_count_for(capacity: u64, bucket_size: usize) -> u64 {
    let size = bucket_size as u128;
    let at_target = (u128::from(capacity) * 1000)
        .div_ceil(size * u128::from(target_load_permille(bucket_size)));
    let (extra_items, load_permille) = small_table_slack(bucket_size);
    let with_slack = ((u128::from(capacity) + extra_items) * 1000).div_ceil(size * load_permille);
    u64::try_from(at_target.max(with_slack)).unwrap_or(u64::MAX)
}

/// Items `bucket_count` buckets are sized for, exactly [`bucket_count_for`]'s inverse.
pub(crate) fn capacity_of(bucket_count: u64, bucket_size: usize) -> u64 {
    let slots = u128::from(bucket_count) * bucket_size as u128;
    let at_target = slots * u128::from(target_load_permille(bucket_size)) / 1000;
    let (extra_items, load_permille) = small_table_slack(bucket_size);
    let with_slack = (slots * load_permille / 1000).saturating_sub(extra_items);
    u64::try_from(at_target.min(with_slack)).unwrap_or(u64::MAX)
}

/// What the user asked for, `None` where the rate or the default decides (again at each level).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Request {
    pub(crate) fingerprint_bits: Option<u32>,
    pub(crate) bucket_size: Option<usize>,
    pub(crate) semi_sorted: Option<bool>,
    pub(crate) false_positive_rate: Option<f64>,
    /// A rate is met at the least memory in bucket words, by shapes a word holds if any does.
    pub(crate) bucket_words: bool,
}

impl Shape {
    /// Table bits per item at the target load, in thousandths of a bit per item per permille.
    fn cost(&self) -> u64 {
        self.codec().bucket_bits() as u64 * 1_000_000
            / (self.bucket_size as u64 * target_load_permille(self.bucket_size))
    }

    /// The false positive rate when filled to the target load.
    pub(crate) fn expected_false_positive_rate(&self) -> f64 {
        let load = target_load_permille(self.bucket_size) as f64 / 1000.0;
        self.false_positive_rate_at(load)
    }

    /// The false positive rate at `load`: `2·b·load` fingerprints, each matching at `1/(2^f − 1)`.
    pub(crate) fn false_positive_rate_at(&self, load: f64) -> f64 {
        let compared = 2.0 * self.bucket_size as f64 * load;
        let fingerprints = ((1u64 << self.fingerprint_bits) - 1) as f64;
        1.0 - (1.0 - 1.0 / fingerprints).powf(compared)
    }

    /// Explicit settings, the rest from the rate or the default, checked; `bucket_count` 0.
    pub(crate) fn resolve(request: &Request) -> Result<Self, BuildError> {
        if let Some(bits) = request.fingerprint_bits {
            if !(MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS).contains(&bits) {
                return Err(BuildError::FingerprintBits { bits });
            }
        }
        if let Some(size) = request.bucket_size {
            if !matches!(size, 2 | 4 | 8) {
                return Err(BuildError::BucketSize { size });
            }
        }
        // Checked before a rate is sized, which no shape these settings allow meets.
        if request.semi_sorted == Some(true) {
            if let Some(size) = request.bucket_size.filter(|&size| size != 4) {
                return Err(BuildError::SemiSortedBucketSize { size });
            }
            if let Some(bits) = request
                .fingerprint_bits
                .filter(|&bits| bits < MIN_SEMI_SORTED_BITS)
            {
                return Err(BuildError::SemiSortedFingerprintBits { bits });
            }
        }
        match request.false_positive_rate {
            Some(rate) => Self::for_rate(rate, request),
            None => Ok(Self {
                bucket_count: 0,
                fingerprint_bits: request.fingerprint_bits.unwrap_or(DEFAULT_FINGERPRINT_BITS),
                bucket_size: request.bucket_size.unwrap_or(DEFAULT_BUCKET_SIZE),
                semi_sorted: request.semi_sorted.unwrap_or(false),
                bucket_words: false,
            }),
        }
    }

    /// The cheapest shape the settings allow whose expected false positive rate is at most `rate`.
    fn for_rate(rate: f64, request: &Request) -> Result<Self, BuildError> {
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::FalsePositiveRate { rate });
        }
        let mut best: Option<Self> = None;
        // In this order, which wins ties; only 4-slot buckets are semi-sorted.
        for (bucket_size, semi_sorted) in [(4, true), (4, false), (2, false), (8, false)] {
            if request.bucket_size.is_some_and(|size| size != bucket_size)
                || request.semi_sorted.is_some_and(|s| s != semi_sorted)
            {
                continue;
            }
            let min_bits = if semi_sorted {
                MIN_SEMI_SORTED_BITS
            } else {
                MIN_FINGERPRINT_BITS
            };
            // Eq. (6), f ≥ log2(2b/ε); a width whose rate at the target load is still above ε
            // is passed over.
            let bits = request.fingerprint_bits.unwrap_or_else(|| {
                let needed = (2.0 * bucket_size as f64 / rate)
                    .log2()
                    .ceil()
                    .max(min_bits as f64);
                needed.min(MAX_FINGERPRINT_BITS as f64 + 1.0) as u32
            });
            let candidate = Self {
                bucket_count: 0,
                fingerprint_bits: bits,
                bucket_size,
                semi_sorted,
                bucket_words: request.bucket_words && fits_bucket_word(bucket_size, bits),
            };
            // A width the rate decides is one a bucket word holds, in that layout.
            if bits > MAX_FINGERPRINT_BITS
                || bits < min_bits
                || (request.fingerprint_bits.is_none()
                    && (candidate.expected_false_positive_rate() > rate
                        || candidate.bucket_words != request.bucket_words))
            {
                continue;
            }
            // An explicit width no word holds is priced packed, to be refused by name if no
            // bucket size fits it.
            let rank = |s: &Self| (request.bucket_words && !s.bucket_words, s.cost());
            if best.map_or(true, |b| rank(&candidate) < rank(&b)) {
                best = Some(candidate);
            }
        }
        best.ok_or_else(|| match request.fingerprint_bits {
            Some(_) => BuildError::FalsePositiveRate { rate },
            None => BuildError::FalsePositiveRateTooSmall {
                rate,
                smallest: Self::smallest_rate(request),
            },
        })
    }

    /// The smallest rate a request's bucket settings reach: `2b/2^f` at the widest `f` (32, or
    /// what a bucket word holds), the least over the bucket sizes allowed.
    fn smallest_rate(request: &Request) -> f64 {
        let allowed = |size: usize| match (request.bucket_size, request.semi_sorted) {
            (Some(asked), _) => size == asked,
            (None, Some(true)) => size == 4,
            (None, _) => true,
        };
        let widest = |size: usize| {
            (MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS)
                .rev()
                .find(|&bits| !request.bucket_words || fits_bucket_word(size, bits))
                .unwrap_or(MIN_FINGERPRINT_BITS)
        };
        [2, 4, 8]
            .into_iter()
            .filter(|&size| allowed(size))
            .map(|size| (2 * size) as f64 / 2f64.powi(widest(size) as i32))
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
#[path = "../tests/unit/sizing.rs"]
mod tests;
