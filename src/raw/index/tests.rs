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
                table.store_bits(bucket, bucket as u64 % 7 + 1);
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
        let stamps = stripes.stamps();
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
