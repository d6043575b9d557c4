//! The placement's and the unchecked reads' unit tests.
use super::*;
use crate::raw::bucket::{BucketCodec, WORD_FINGERPRINTS};
use crate::raw::stripe::Stripes;
use crate::raw::table::Table;
use crate::sync::table_words;

#[test]
fn alternate_is_an_involution_for_every_bucket() {
    for bucket_count in [1usize, 2, 3, 7, 64, 1000, 4099] {
        let placement = Placement::new(bucket_count, 12);
        for bucket in 0..bucket_count {
            for fp in [1u32, 2, 3, 100, 4095] {
                let other = placement.alternate(bucket, fp);
                assert!(other < bucket_count);
                assert_eq!(
                    placement.alternate(other, fp),
                    bucket,
                    "n={bucket_count} i={bucket} fp={fp}"
                );
            }
        }
    }
}

#[test]
fn fingerprints_are_nonzero_and_in_range() {
    for fingerprint_bits in [4u32, 8, 12, 16, 32] {
        let placement = Placement::new(1000, fingerprint_bits);
        for hash in [0u64, u64::MAX, 0xffff_ffff, 1 << 32, 12345] {
            let c = placement.candidates(hash);
            assert!(c.fp >= 1 && (c.fp as u64) < (1u64 << fingerprint_bits));
            assert!(c.first < 1000 && c.second < 1000);
        }
    }
}

#[test]
fn largest_table_stays_in_range() {
    let placement = Placement::new(MAX_BUCKET_COUNT as usize, 32);
    let c = placement.candidates(u64::MAX);
    assert!((c.first as u64) < MAX_BUCKET_COUNT && (c.second as u64) < MAX_BUCKET_COUNT);
    assert_eq!(placement.alternate(c.second, c.fp), c.first);
}

#[test]
fn level_zero_keeps_the_hash_and_later_levels_remix_it() {
    assert_eq!(level_hash(12345, 0), 12345);
    let remixed: Vec<u64> = (1..8).map(|level| level_hash(12345, level)).collect();
    for (i, a) in remixed.iter().enumerate() {
        assert_ne!(*a, 12345);
        assert!(remixed[i + 1..].iter().all(|b| b != a));
    }
}

#[test]
fn unchecked_reads_take_the_words_checked_indexing_names_up_to_the_last_bucket() {
    let word_codec = BucketCodec::word(4, 12);
    let codecs = [
        word_codec,
        BucketCodec::new(4, 12, false),
        BucketCodec::new(2, 5, false),
        BucketCodec::new(8, 8, false),
        BucketCodec::new(2, 31, false),
    ];
    for codec in &codecs {
        for bucket_count in (1..=20).chain([63, 64, 65, 127, 128, 129, 1000]) {
            let table = Table::new(bucket_count, codec).unwrap();
            let buckets = table.words.buckets();
            for bucket in 0..bucket_count {
                let bit = bucket as u64 * codec.bucket_bits() as u64;
                let word = (bit / 64) as usize;
                let pair = buckets.words_of(bucket, word);
                assert!(core::ptr::eq(&pair[0], &table.words[word]));
                assert!(core::ptr::eq(&pair[1], &table.words[word + 1]));
                // The last bucket's window reads into the spare words, no further.
                assert!(word + 2 <= table.words.len());
                let both = u128::from(table.words[word].load(Ordering::Relaxed))
                    | u128::from(table.words[word + 1].load(Ordering::Relaxed)) << 64;
                assert_eq!(buckets.bits(bucket), both >> (bit % 64));
                if codec.is_word() {
                    assert!(core::ptr::eq(buckets.word(bucket), &table.words[bucket]));
                }
            }
            // What the reads return, after a store to every bucket.
            for bucket in 0..bucket_count {
                table.store(bucket, &[u128::from(bucket as u64 % 7 + 1), 0]);
            }
            for a in 0..bucket_count {
                let b = bucket_count - 1 - a;
                if codec.is_word() {
                    let fingerprints = buckets.word(a).load(Ordering::Relaxed) & WORD_FINGERPRINTS;
                    assert_eq!(fingerprints, a as u64 % 7 + 1);
                } else {
                    let [first, second] = buckets.narrow_pair(a, b);
                    let mask = u64::MAX >> (64 - codec.bucket_bits());
                    assert_eq!(first & mask, a as u64 % 7 + 1);
                    assert_eq!(second & mask, b as u64 % 7 + 1);
                }
            }
        }
    }
}

#[test]
fn unchecked_stamps_are_the_ones_checked_indexing_names_and_counts_are_powers_of_two() {
    for (count, group_shift) in [(1, 0), (2, 0), (8, 2), (64, 3), (1024, 0)] {
        let stripes = Stripes::new(count, group_shift, 5000, 4).unwrap();
        let stamps = stripes.stamps.stamps();
        for bucket in (0..5000).chain([usize::MAX, usize::MAX >> 1, 1 << 40]) {
            assert!(core::ptr::eq(
                stamps.of(bucket),
                &stripes.stamps[stripes.stamps.stripe_of(bucket)]
            ));
        }
    }
    for count in [0, 3, 6, 1000] {
        assert!(Stripes::new(count, 0, 5000, 4).is_none(), "{count} stripes");
    }
}

#[test]
fn words_too_short_for_their_buckets_are_refused() {
    // 10 buckets of 48 bits: the last starts in word 6 (bit 432), and its window reads word 7.
    assert!(Words::new(table_words(8, false).unwrap(), 48, 10).is_some());
    assert!(Words::new(table_words(7, false).unwrap(), 48, 10).is_none());
    assert!(Words::new(table_words(0, false).unwrap(), 48, 0).is_some());
    assert!(StampWords::new(table_words(8, false).unwrap(), 2).is_some());
    assert!(StampWords::new(table_words(6, false).unwrap(), 2).is_none());
}

#[test]
fn every_lane_matches_exactly_its_own_fingerprint() {
    for (count, f) in (4..=16).map(|f| (4, f)).chain((1..=8).map(|f| (8, f))) {
        let lanes = Lanes::new(count, f);
        let mask = (1u64 << f) - 1;
        // Neighbouring lanes that differ from the key by one bit, a borrow's worth, or not.
        let key = (0x5a5a_5a5a & mask as u32).max(1);
        for fill in [0, 1, mask, u64::from(key) ^ 1, (u64::from(key) + 1) & mask] {
            for target in 0..count {
                // Ones above the lanes: the test must ignore them.
                let mut window = u64::MAX.checked_shl(count as u32 * f).unwrap_or(0);
                for i in 0..count {
                    let value = if i == target { u64::from(key) } else { fill };
                    window |= value << (i as u32 * f);
                }
                let hits = lanes.matches(window, key);
                let expected: Vec<usize> = (0..count)
                    .filter(|&i| i == target || fill == u64::from(key))
                    .collect();
                let mut found = Vec::new();
                let mut rest = hits;
                while rest != 0 {
                    found.push((rest.trailing_zeros() / f) as usize);
                    rest &= rest - 1;
                }
                assert_eq!(found, expected, "f {f} fill {fill:#x} target {target}");
                let pattern = lanes.broadcast(key);
                let other = lanes.broadcast(key) ^ lanes.low;
                assert!(lanes.zero_lane_pair(window ^ pattern, window ^ other));
            }
        }
    }
}

#[test]
fn zero_lanes_finds_a_zero_lane_exactly_when_there_is_one_and_its_lowest_is_one() {
    for f in 4..=6 {
        let lanes = Lanes::new(4, f);
        let values = 1u64 << f;
        // Every bucket of four lanes, with the bits above them set or not.
        for bucket in 0..values.pow(4) {
            let mut window = 0;
            for i in 0..4 {
                window |= (bucket / values.pow(i) % values) << (i * f);
            }
            for above in [0, u64::MAX.checked_shl(4 * f).unwrap_or(0)] {
                let x = window | above;
                let zeros = lanes.zero_lanes(x);
                let exact = lanes.zeros(x);
                assert_eq!(zeros == 0, exact == 0, "f {f} window {window:#x}");
                assert_eq!(lanes.zero_lane_pair(x, u64::MAX), exact != 0);
                if zeros != 0 {
                    assert_eq!(zeros & zeros.wrapping_neg(), exact & exact.wrapping_neg());
                }
                // What it reports past the lowest are lanes of 1 above a zero one.
                let mut rest = zeros & !exact;
                while rest != 0 {
                    let lane = (rest.trailing_zeros() / f) as usize;
                    assert_eq!(x >> (lane as u32 * f) & (values - 1), 1);
                    assert!(exact & ((1 << (lane as u32 * f)) - 1) != 0);
                    rest &= rest - 1;
                }
            }
        }
    }
}

#[test]
fn slots_gathers_every_set_of_lane_tops() {
    for (count, f) in (4..=16).map(|f| (4, f)).chain([(2, 4), (2, 31), (3, 21)]) {
        let lanes = Lanes::new(count, f);
        for set in 0..1u32 << count {
            let tops = (0..count as u32)
                .filter(|i| set >> i & 1 == 1)
                .fold(0u64, |acc, i| acc | 1 << ((i + 1) * f - 1));
            assert_eq!(lanes.slots(tops), set, "{count} lanes of {f}");
        }
    }
}

#[test]
fn lanes_past_64_bits_are_left_out() {
    assert_eq!(Lanes::new(4, 17).high.count_ones(), 3);
    assert_eq!(Lanes::new(8, 32).high.count_ones(), 2);
}
