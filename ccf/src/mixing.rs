//! Whether `--hex64` values look like 64-bit hashes, or like plain integers given by mistake.
//!
//! A good 64-bit hash sets each bit with probability 1/2, independently: over `n` values the
//! bits set number `32n ± 4√n`, and each bit position is set in `n/2 ± √n/2` of them. Integers
//! (`seq 100000` in hexadecimal) set few bits, always the low ones. Two tests, each refusing
//! only past six standard deviations or further, so that hashes are refused less than once
//! in 10⁸ segments: the bits set in all, and a chi-square over the 64 positions.

use std::fmt;

/// Values judged per segment: plenty for the tests, and a bound on their cost.
const SAMPLE: usize = 1 << 16;

/// Standard deviations the count of bits set may stray from its mean.
const POPCOUNT_SIGMAS: f64 = 6.0;

/// The chi-square statistic over 64 positions (63 degrees of freedom for a known mean of 1/2
/// each, 64 here) above which values are refused: its mean is 64 and its standard deviation
/// about 11.3, so this is 12 standard deviations out. Values few enough cannot reach it.
const CHI_SQUARE_LIMIT: f64 = 200.0;

/// What gave values away as unmixed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unmixed {
    /// Values judged.
    pub values: usize,
    /// Bits set per value, on average (about 32 for hashes).
    pub mean_bits_set: f64,
    /// Bit positions equal in every value judged.
    pub constant_bits: u32,
}

impl fmt::Display for Unmixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "of {} lines, {:.1} of 64 bits set on average where hashes set about 32, and {} of \
             the 64 bits the same in every line",
            self.values, self.mean_bits_set, self.constant_bits
        )
    }
}

/// `Err` with what gave them away if `values` (at most the first `SAMPLE` of them) do not
/// look like 64-bit hashes. An empty slice passes.
pub fn check(values: &[u64]) -> Result<(), Unmixed> {
    let values = &values[..values.len().min(SAMPLE)];
    if values.is_empty() {
        return Ok(());
    }
    let n = values.len() as f64;
    let mut ones = [0u32; 64];
    let mut bits_set = 0u64;
    for &value in values {
        bits_set += u64::from(value.count_ones());
        for (bit, count) in ones.iter_mut().enumerate() {
            *count += ((value >> bit) & 1) as u32;
        }
    }
    let popcount_off = (bits_set as f64 - 32.0 * n).abs() > POPCOUNT_SIGMAS * 4.0 * n.sqrt();
    let chi_square: f64 = ones
        .iter()
        .map(|&count| (2.0 * f64::from(count) - n).powi(2) / n)
        .sum();
    if !popcount_off && chi_square <= CHI_SQUARE_LIMIT {
        return Ok(());
    }
    Err(Unmixed {
        values: values.len(),
        mean_bits_set: bits_set as f64 / n,
        constant_bits: ones
            .iter()
            .filter(|&&count| count == 0 || count as usize == values.len())
            .count() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use concurrent_cuckoo_filter::DefaultHashBuilder;
    use core::hash::BuildHasher;

    fn hashes(range: std::ops::Range<u64>) -> Vec<u64> {
        let hasher = DefaultHashBuilder::new();
        range.map(|key| hasher.hash_one(key)).collect()
    }

    #[test]
    fn hashes_pass_at_every_count() {
        for count in [1, 2, 3, 10, 100, 1000, 70_000] {
            for start in [0, 1 << 20, 1 << 40] {
                let values = hashes(start..start + count);
                assert_eq!(check(&values), Ok(()), "{count} from {start}");
            }
        }
        // Lines each on its own, as the last segment of an input may be.
        let one_at_a_time = hashes(0..20_000)
            .iter()
            .filter(|&&h| check(&[h]).is_err())
            .count();
        assert_eq!(one_at_a_time, 0);
    }

    #[test]
    fn integers_are_refused_however_few() {
        for count in [1u64, 5, 100, 100_000] {
            let values: Vec<u64> = (1..=count).collect();
            let signs = check(&values).unwrap_err();
            assert!(signs.mean_bits_set < 10.0, "{signs}");
        }
        let seq: Vec<u64> = (1..=100_000).collect();
        let signs = check(&seq).unwrap_err();
        assert_eq!(signs.values, SAMPLE);
        assert_eq!(signs.constant_bits, 64 - 17);
    }

    #[test]
    fn integers_under_a_constant_prefix_or_inverted_are_refused() {
        let prefixed: Vec<u64> = (0..1000u64).map(|i| 0xdead_beef_0000_0000 | i).collect();
        assert!(check(&prefixed).is_err());
        let inverted: Vec<u64> = (0..1000u64).map(|i| !i).collect();
        assert!(check(&inverted).is_err());
        // Popcounts near 32, but the same 32 bits every time.
        let half: Vec<u64> = (0..1000u64)
            .map(|i| 0xffff_ffff_0000_0000 | (i & 1))
            .collect();
        assert!(check(&half).is_err());
    }
}
