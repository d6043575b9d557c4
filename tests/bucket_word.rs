//! The bucket-word layout keeps the filter's promises: no false negatives (also while other
//! threads insert, remove and move fingerprints; `tests/filter.rs` runs its writers on all
//! cores over both layouts), exact `len`, the false positive rate of its
//! fingerprints, and errors naming the settings it cannot hold.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use concurrent_cuckoo_filter::{BuildError, ConcurrentCuckooFilter, TableLayout};

fn word_filter(capacity: usize, bucket_size: usize, bits: u32) -> ConcurrentCuckooFilter {
    ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .bucket_size(bucket_size)
        .fingerprint_bits(bits)
        .layout(TableLayout::BucketWord)
        .build()
        .unwrap()
}

#[test]
fn the_layout_refuses_buckets_it_cannot_hold_naming_them() {
    let word = || {
        ConcurrentCuckooFilter::builder()
            .capacity(1000)
            .layout(TableLayout::BucketWord)
    };
    for (bucket_size, bits) in [(4, 13), (2, 25), (8, 7), (8, 32)] {
        let err = word()
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            BuildError::LayoutBucketBits {
                layout: TableLayout::BucketWord,
                bucket_size,
                fingerprint_bits: bits
            }
        );
        let message = err.to_string();
        assert!(
            message.contains("BucketWord")
                && message.contains(&format!("= {}", bucket_size as u32 * bits)),
            "{message}"
        );
    }
    for err in [
        word().semi_sorted(true).build().unwrap_err(),
        word()
            .semi_sorted(true)
            .false_positive_rate(0.01)
            .build()
            .unwrap_err(),
        word()
            .semi_sorted(true)
            .false_positive_rate(1e-12)
            .build()
            .unwrap_err(),
    ] {
        assert_eq!(
            err,
            BuildError::LayoutSemiSorted {
                layout: TableLayout::BucketWord
            }
        );
        assert!(err.to_string().contains("semi_sorted"), "{err}");
    }
    // A rate alone picks plain buckets a word holds for this layout (for 0.0001, 2 × 16 bits);
    // a rate none reaches is refused with the smallest one does, a width none holds by name.
    for rate in [0.01, 0.0001] {
        let filter = word().false_positive_rate(rate).build().unwrap();
        assert!(!filter.is_semi_sorted());
        assert_eq!(filter.layout(), TableLayout::BucketWord);
        assert!(filter.expected_false_positive_rate() <= rate);
    }
    assert!(matches!(
        word().false_positive_rate(1e-8).build(),
        Err(BuildError::FalsePositiveRateTooSmall { rate: 1e-8, smallest }) if smallest > 1e-8
    ));
    assert!(matches!(
        word().fingerprint_bits(25).false_positive_rate(0.5).build(),
        Err(BuildError::LayoutBucketBits {
            fingerprint_bits: 25,
            ..
        })
    ));
    for (bucket_size, bits) in [(4, 12), (2, 24), (8, 6), (4, 4)] {
        let filter = word()
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .build()
            .unwrap();
        assert_eq!(filter.layout(), TableLayout::BucketWord);
    }
    // Unnamed, the layout follows the shape and whether a rate was asked for, in any order.
    assert_eq!(
        ConcurrentCuckooFilter::with_capacity(1000).layout(),
        TableLayout::BucketWord
    );
    let layout_of = |builder: concurrent_cuckoo_filter::ConcurrentCuckooFilterBuilder| {
        builder.build().unwrap().layout()
    };
    let builder = || ConcurrentCuckooFilter::builder().capacity(1000);
    assert_eq!(
        layout_of(builder().fingerprint_bits(12)),
        TableLayout::BucketWord
    );
    assert_eq!(
        layout_of(builder().bucket_size(2).fingerprint_bits(24)),
        TableLayout::BucketWord
    );
    assert_eq!(
        layout_of(builder().fingerprint_bits(8)),
        TableLayout::Packed
    );
    assert_eq!(
        layout_of(builder().fingerprint_bits(16)),
        TableLayout::Packed
    );
    assert_eq!(layout_of(builder().semi_sorted(true)), TableLayout::Packed);
    assert_eq!(
        layout_of(builder().false_positive_rate(0.002)),
        TableLayout::Packed
    );
    assert_eq!(
        layout_of(builder().fingerprint_bits(12).false_positive_rate(0.01)),
        layout_of(builder().false_positive_rate(0.01).fingerprint_bits(12))
    );
}

#[test]
fn every_inserted_item_is_found_and_len_is_exact() {
    for (b, f) in [(4, 12), (2, 24), (2, 16), (4, 8)] {
        let n = 500_000u64;
        let filter = word_filter(n as usize, b, f);
        for i in 0..n {
            filter
                .insert(&i)
                .unwrap_or_else(|e| panic!("b={b} f={f}: insert {i}: {e}"));
        }
        assert_eq!(filter.len(), n as usize, "b={b} f={f}");
        assert_eq!(
            (0..n).filter(|i| !filter.contains(i)).count(),
            0,
            "b={b} f={f}"
        );
        for i in (0..n).step_by(2) {
            assert!(filter.remove(&i));
        }
        assert_eq!(filter.len(), n as usize / 2);
        assert!((1..n).step_by(2).all(|i| filter.contains(&i)));
    }
}

#[test]
fn fills_as_far_as_the_packed_layout_with_the_same_false_positive_rate() {
    let word = word_filter(1 << 20, 4, 12);
    let packed = ConcurrentCuckooFilter::builder()
        .capacity(1 << 20)
        .build()
        .unwrap();
    let stored = common::fill(&word);
    // The same hashes, buckets and moves: the same first failure.
    assert_eq!(stored, common::fill(&packed));
    let load = word.load_factor();
    assert!(load > 0.95, "{load}");
    // Each lookup of a non-member compares with 2·4·load stored fingerprints, each equal with
    // probability 1/4095.
    let expected = 1.0 - (1.0 - 1.0 / 4095.0f64).powf(8.0 * load);
    let trials = 2_000_000u64;
    let hits = (1u64 << 62..(1u64 << 62) + trials)
        .filter(|key| word.contains(key))
        .count();
    let rate = hits as f64 / trials as f64;
    // About 3900 hits expected: ±10% is over six standard deviations.
    assert!(
        (rate / expected - 1.0).abs() < 0.10,
        "measured {rate:.5}, expected {expected:.5}"
    );
    // A table of 64-bit words: 64/(4·load) bits per item.
    let bits_per_item = word.memory_usage() as f64 * 8.0 / stored as f64;
    assert!(bits_per_item < 64.0 / (4.0 * 0.95) + 0.2, "{bits_per_item}");
}

/// Readers look up a stable set without pause while writers insert and remove keys of their own
/// in a small, nearly full table, so that most inserts move stable fingerprints between their
/// buckets, many times each, under the readers' loads.
#[test]
fn lookups_racing_moves_in_a_small_full_table_never_miss() {
    for stripes in [1, 4, 64] {
        let filter = Arc::new(
            ConcurrentCuckooFilter::builder()
                .buckets(64)
                .stripes(stripes)
                .layout(TableLayout::BucketWord)
                .build()
                .unwrap(),
        );
        let stable: Vec<u64> = (0..200u64).map(|i| 1 << 63 | i).collect();
        for key in &stable {
            filter.insert(key).unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (filter, stop, stable) = (filter.clone(), stop.clone(), stable.clone());
                std::thread::spawn(move || {
                    let mut lookups = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for key in &stable {
                            assert!(filter.contains(key), "false negative: {key:#x}");
                        }
                        lookups += stable.len() as u64;
                    }
                    lookups
                })
            })
            .collect();
        let writer = {
            let filter = filter.clone();
            std::thread::spawn(move || {
                let (mut inserted, mut held) = (0u64, Vec::new());
                let until = std::time::Instant::now() + std::time::Duration::from_millis(400);
                for round in 0u64.. {
                    if round % 1024 == 0 && std::time::Instant::now() > until {
                        break;
                    }
                    let key = round.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1;
                    if filter.insert(&key).is_ok() {
                        held.push(key);
                        inserted += 1;
                    }
                    if held.len() > 40 || (round % 3 == 0 && !held.is_empty()) {
                        assert!(filter.remove(&held.swap_remove(0)));
                    }
                }
                (inserted, held.len())
            })
        };
        let (inserted, held) = writer.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        let lookups: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(inserted > 5_000, "{inserted} inserts");
        assert!(lookups > 0);
        assert_eq!(filter.len(), stable.len() + held);
        assert!(stable.iter().all(|key| filter.contains(key)));
    }
}

#[test]
fn a_rate_gets_the_smallest_filter_of_the_layout_asked_for() {
    // The rate's shape against every other the builder's rule (eq. 6, `f = ⌈log2(2b/ε)⌉`) gives
    // for ε that the layout holds: none may take less memory.
    let built = |layout, shape: Option<(usize, u32, bool)>, rate: f64| {
        let builder = ConcurrentCuckooFilter::builder()
            .capacity(100_000)
            .layout(layout);
        match shape {
            Some((size, bits, semi)) => builder
                .bucket_size(size)
                .fingerprint_bits(bits)
                .semi_sorted(semi),
            None => builder.false_positive_rate(rate),
        }
        .build()
        .ok()
    };
    for layout in [TableLayout::Packed, TableLayout::BucketWord] {
        for rate in [0.3, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-6] {
            let shapes = [(2, false), (4, false), (4, true), (8, false)].map(|(size, semi)| {
                let bits = (2.0 * size as f64 / rate)
                    .log2()
                    .ceil()
                    .max(4.0 + f64::from(semi));
                (size, bits as u32, semi)
            });
            let others: Vec<_> = shapes
                .into_iter()
                .filter_map(|shape| built(layout, Some(shape), rate).map(|f| (shape, f)))
                .filter(|(_, f)| f.expected_false_positive_rate() <= rate)
                .collect();
            let Some(chosen) = built(layout, None, rate) else {
                assert!(
                    others.is_empty(),
                    "{layout} at {rate}: refused, {others:?} hold it"
                );
                continue;
            };
            assert_eq!(chosen.layout(), layout);
            assert!(chosen.expected_false_positive_rate() <= rate);
            for (shape, other) in &others {
                assert!(
                    chosen.memory_usage() <= other.memory_usage(),
                    "{layout} at {rate}: {} × {} bits take {} bytes, {shape:?} {}",
                    chosen.bucket_size(),
                    chosen.fingerprint_bits(),
                    chosen.memory_usage(),
                    other.memory_usage()
                );
            }
        }
    }
}

#[test]
fn the_smallest_rate_the_layout_names_builds_in_it() {
    for bucket_size in [None, Some(2), Some(4), Some(8)] {
        let word = |rate: f64| {
            let builder = ConcurrentCuckooFilter::builder()
                .capacity(1000)
                .layout(TableLayout::BucketWord)
                .false_positive_rate(rate);
            match bucket_size {
                Some(size) => builder.bucket_size(size),
                None => builder,
            }
        };
        let smallest = match word(1e-12).build() {
            Err(BuildError::FalsePositiveRateTooSmall { smallest, .. }) => smallest,
            other => panic!("{bucket_size:?}: {other:?}"),
        };
        let filter = word(smallest)
            .build()
            .unwrap_or_else(|err| panic!("{bucket_size:?}: {err}"));
        assert_eq!(filter.layout(), TableLayout::BucketWord);
        assert!(filter.expected_false_positive_rate() <= smallest);
    }
}
