use super::super::bucket::BucketForm;
use super::*;

#[test]
fn buckets_do_not_disturb_their_neighbours() {
    for (bucket_size, fingerprint_bits) in
        [(2, 5), (4, 12), (4, 13), (4, 32), (8, 20), (8, 32), (2, 31)]
    {
        let codec = BucketCodec::new(bucket_size, fingerprint_bits, false);
        let bucket_count = 37;
        let table = Table::new(bucket_count, &codec).unwrap();
        let pattern = |i: usize| -> RawBucket {
            let mut raw = [0u128; 2];
            for slot in 0..bucket_size {
                assert!(codec.insert(&mut raw, ((i * 7 + slot) as u32 % 13) + 1));
            }
            raw
        };
        for i in 0..bucket_count {
            table.store(i, &pattern(i));
        }
        for i in 0..bucket_count {
            assert_eq!(
                table.load(i),
                pattern(i),
                "b={bucket_size} f={fingerprint_bits} bucket {i}"
            );
        }
        for i in (0..bucket_count).step_by(2) {
            table.store(i, &[0, 0]);
        }
        for i in 0..bucket_count {
            let want = if i % 2 == 0 { [0, 0] } else { pattern(i) };
            assert_eq!(table.load(i), want);
        }
    }
}

#[test]
fn every_bucket_loads_and_prefetches_in_bounds_and_narrow_loads_agree() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        u128::from(seed) << 64 | u128::from(seed.rotate_left(29))
    };
    for bucket_size in [2, 4, 8] {
        for fingerprint_bits in 4..=32 {
            for semi_sorted in [false, true] {
                if semi_sorted && (bucket_size != 4 || fingerprint_bits < 5) {
                    continue;
                }
                let codec = BucketCodec::new(bucket_size, fingerprint_bits, semi_sorted);
                let mask = low_bits(codec.limb_bits());
                let narrow =
                    codec.form == BucketForm::Narrow || codec.semi_sorted_lanes().is_some();
                // Counts around word and line boundaries, so that the last bucket ends
                // anywhere in its word.
                for bucket_count in (1..=24).chain([63, 64, 65, 127, 128, 129]) {
                    let table = Table::new(bucket_count, &codec).unwrap();
                    let stored: Vec<RawBucket> = (0..bucket_count)
                        .map(|_| {
                            let second = if codec.limbs() == 2 {
                                random() & mask
                            } else {
                                0
                            };
                            [random() & mask, second]
                        })
                        .collect();
                    for (bucket, raw) in stored.iter().enumerate() {
                        table.store(bucket, raw);
                    }
                    for (bucket, raw) in stored.iter().enumerate() {
                        table.prefetch(bucket);
                        assert_eq!(table.load(bucket), *raw);
                        if narrow {
                            assert_eq!(
                                u128::from(table.load_narrow(bucket)) & mask,
                                raw[0],
                                "b={bucket_size} f={fingerprint_bits} semi={semi_sorted} \
                                 n={bucket_count} bucket {bucket}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_most_buckets_in_a_budget_fit_it_and_one_more_does_not() {
    for (bucket_size, fingerprint_bits) in [(2, 4), (2, 32), (4, 12), (8, 32), (8, 7)] {
        let codec = BucketCodec::new(bucket_size, fingerprint_bits, false);
        // Budgets of a 32-bit target (isize::MAX), of 2^40 and of a 64-bit one.
        for bytes in [1000u64, i32::MAX as u64, 1 << 40, i64::MAX as u64] {
            let most = Table::max_bucket_count_in(bytes, &codec);
            let words = Table::words_for(most, &codec).unwrap();
            assert!(
                words * 8 <= bytes,
                "b={bucket_size} f={fingerprint_bits} {bytes}"
            );
            let more = Table::words_for(most + 1, &codec).unwrap();
            assert!(
                more * 8 > bytes,
                "b={bucket_size} f={fingerprint_bits} {bytes}"
            );
        }
    }
    let codec = BucketCodec::new(8, 32, false);
    assert_eq!(Table::words_for(u64::MAX, &codec), None);
    assert_eq!(Table::words_for(1 << 32, &codec), Some((1 << 34) + 2));
}

#[test]
fn a_table_read_from_bytes_holds_them_and_refuses_a_wrong_length() {
    let codec = BucketCodec::new(4, 12, false);
    let source = Table::new(37, &codec).unwrap();
    for i in 0..37 {
        let mut raw = [0u128; 2];
        assert!(codec.insert(&mut raw, i as u32 + 1));
        source.store(i, &raw);
    }
    let mut words = vec![0; source.data_words()];
    source.read_words(0, &mut words);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let geometry = crate::raw::Geometry {
        shape: crate::raw::Shape {
            bucket_count: 37,
            bucket_size: 4,
            fingerprint_bits: 12,
            semi_sorted: false,
            bucket_words: false,
        },
        stripes: 0,
        limits: crate::raw::SearchLimits {
            max_hops: 5,
            max_search_buckets: 500,
        },
    };
    let from_bytes = |bytes| crate::raw::RawFilter::from_le_bytes(&geometry, bytes);
    let copy = from_bytes(&bytes).unwrap();
    assert!((0..37).all(|i| copy.table.load(i) == source.load(i)));
    assert_eq!(copy.len(), 37, "the stripes count what the words hold");
    assert!(from_bytes(&bytes[8..]).is_none());
    assert!(from_bytes(&bytes[1..]).is_none());
}

/// Resident bytes of this process, from `/proc/self/statm` (in 4 KiB pages).
#[cfg(target_os = "linux")]
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
#[cfg(target_os = "linux")]
fn a_new_table_leaves_its_pages_untouched_until_written() {
    // 512 MiB of 48-bit buckets.
    let codec = BucketCodec::new(4, 12, false);
    let bucket_count = (512 << 20) / 6;
    let before = resident_bytes();
    let table = Table::new(bucket_count, &codec).unwrap();
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "{grown} bytes resident after building");
    // Every bucket reads as empty, and a write far in is kept.
    let last = bucket_count - 1;
    assert_eq!(table.load(last), [0, 0]);
    let mut raw = [0u128; 2];
    assert!(codec.insert(&mut raw, 7));
    table.store(last, &raw);
    assert_eq!(table.load(last), raw);
    assert_eq!(table.load(last - 1), [0, 0]);
}

#[test]
fn lock_groups_end_on_word_boundaries() {
    for bucket_size in [2, 4, 8] {
        for fingerprint_bits in 4..=32 {
            let codec = BucketCodec::new(bucket_size, fingerprint_bits, false);
            let group = 1u64 << Table::lock_group_shift(&codec);
            let bits = codec.bucket_bits() as u64;
            assert_eq!(group * bits % 64, 0);
            // ...and no smaller group does.
            assert!((1..group).all(|g| g * bits % 64 != 0));
        }
    }
}
