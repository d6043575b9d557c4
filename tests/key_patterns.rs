//! Integer keys with structure (sequential, strided, in a few high bits) spread as random ones do
//! under the default hasher's mix for eight-byte keys: every pattern fills the filter to its
//! capacity, and absent keys of every pattern are false positives at the rate the theory gives.

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::collections::HashSet;

const N: u64 = 1_000_000;

/// splitmix64's output function: random-looking keys with no structure the mix could share.
fn scrambled(i: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851_f42d_4c95_7f2d;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A key pattern: its name, and the `i`-th key of a set `offset` apart from another.
type Pattern = (&'static str, fn(u64, u64) -> u64);

fn patterns() -> [Pattern; 5] {
    [
        ("sequential", |i, offset| offset << 40 | i),
        ("stride 64", |i, offset| (offset << 40 | i) << 6),
        ("stride 2^32", |i, offset| (offset << 24 | i) << 32),
        ("high bits only", |i, offset| (i << 44) ^ offset),
        ("random", |i, offset| scrambled(i ^ offset << 50)),
    ]
}

#[test]
fn structured_integer_keys_fill_the_filter_and_give_the_expected_false_positive_rate() {
    for (stored_name, stored) in patterns() {
        let filter = ConcurrentCuckooFilter::with_capacity(N as usize);
        let keys: HashSet<u64> = (0..N).map(|i| stored(i, 0)).collect();
        assert_eq!(keys.len(), N as usize, "{stored_name}: distinct keys");
        for (i, key) in keys.iter().enumerate() {
            filter
                .insert(key)
                .unwrap_or_else(|e| panic!("{stored_name}: insert {i} of {N}: {e}"));
        }
        assert_eq!(filter.len(), N as usize);
        assert!(keys.iter().all(|key| filter.contains(key)), "{stored_name}");
        let expected = filter.stats().false_positive_rate_at_load;
        for (asked_name, asked) in patterns() {
            let absent: Vec<u64> = (0..2 * N)
                .map(|i| asked(i, 3))
                .filter(|key| !keys.contains(key))
                .collect();
            let hits = absent.iter().filter(|key| filter.contains(*key)).count();
            let measured = hits as f64 / absent.len() as f64;
            // About 3,700 expected hits: 10% is six standard deviations.
            assert!(
                (measured / expected - 1.0).abs() < 0.10,
                "{stored_name} stored, {asked_name} asked: measured {measured:.5}, \
                 expected {expected:.5}"
            );
        }
    }
}
