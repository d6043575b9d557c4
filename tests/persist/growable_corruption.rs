//! Growable filters from damaged or hostile bytes: every one a `DecodeError` naming the fault,
//! never a panic, never an allocation the input does not justify.

use super::allocation::largest_allocation;
use super::growable::*;
use super::*;
use concurrent_cuckoo_filter::{BuildError, GrowableCuckooFilter};

fn growable_err(bytes: &[u8]) -> DecodeError {
    let err = GrowableCuckooFilter::from_bytes(bytes).unwrap_err();
    assert!(!err.to_string().is_empty());
    // The stream reader agrees.
    assert_eq!(GrowableCuckooFilter::read_from(bytes).unwrap_err(), err);
    err
}

/// Recomputes the growable header's checksum.
fn reseal_growable_header(bytes: &mut [u8]) {
    let checksum = xxh3_64(&bytes[..G_HEADER_CHECKSUM_AT]);
    set_u64(bytes, G_HEADER_CHECKSUM_AT, checksum);
}

/// A small filter of three levels.
fn small() -> Vec<u8> {
    let bytes = grown(30, 0.01, 200).to_bytes();
    assert_eq!(get_u64(&bytes, G_LEVEL_COUNT_AT), 3);
    bytes
}

#[test]
fn a_growable_filter_truncated_at_any_length_is_refused() {
    let bytes = small();
    let spans = level_spans(&bytes);
    for len in 0..bytes.len() {
        let err = growable_err(&bytes[..len]);
        let expected = if len < G_HEADER_LEN {
            DecodeError::Truncated {
                needed: G_HEADER_LEN as u64,
                found: len as u64,
            }
        } else {
            DecodeError::Truncated {
                needed: bytes.len() as u64,
                found: len as u64,
            }
        };
        assert_eq!(err, expected, "length {len}");
    }
    assert!(spans.len() == 3 && spans[0].0 == G_HEADER_LEN);
}

#[test]
fn every_bit_flip_of_a_growable_filter_is_refused() {
    let bytes = small();
    let spans = level_spans(&bytes);
    for bit in 0..bytes.len() * 8 {
        let mut damaged = bytes.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let err = growable_err(&damaged);
        let byte = bit / 8;
        if byte >= G_HEADER_LEN {
            let level = spans
                .iter()
                .position(|(at, len)| (*at..at + len).contains(&byte));
            assert!(
                matches!(err, DecodeError::Level { level: l, .. } if Some(l as usize) == level),
                "bit {bit}: {err}"
            );
        } else if byte >= 8 {
            // The version, or a field under the header checksum, or the checksum itself.
            assert!(
                matches!(
                    err,
                    DecodeError::UnsupportedVersion { .. }
                        | DecodeError::HeaderChecksumMismatch { .. }
                ),
                "bit {bit}: {err}"
            );
        } else {
            assert_eq!(err, DecodeError::BadMagic, "bit {bit}");
        }
    }
}

#[test]
fn a_level_whose_geometry_is_not_the_plans_is_refused_naming_the_field() {
    let bytes = small();
    let spans = level_spans(&bytes);
    let (at, len) = spans[1];
    // Level 1 given level 2's bucket count, with its own checksums made right.
    let mut damaged = bytes.clone();
    let buckets = get_u64(&bytes, at + BUCKETS_AT);
    let wrong = get_u64(&bytes, spans[2].0 + BUCKETS_AT);
    set_u64(&mut damaged[at..at + len], BUCKETS_AT, wrong);
    reseal(&mut damaged[at..at + len]);
    assert_eq!(
        growable_err(&damaged),
        DecodeError::Level {
            level: 1,
            error: Box::new(DecodeError::PlanMismatch {
                field: "buckets",
                expected: buckets,
                found: wrong,
            })
        }
    );
    // Level 0 with level 1's fingerprint width.
    let (at, len) = spans[0];
    let mut damaged = bytes.clone();
    damaged[at + FINGERPRINT_BITS_AT] += 1;
    reseal(&mut damaged[at..at + len]);
    let err = growable_err(&damaged);
    assert!(
        matches!(&err, DecodeError::Level { level: 0, error } if matches!(**error, DecodeError::PlanMismatch { field: "fingerprint_bits", .. })),
        "{err}"
    );
    assert!(err.to_string().contains("fingerprint_bits"), "{err}");
    // Levels swapped: each in the other's place.
    let mut swapped = bytes[..G_HEADER_LEN].to_vec();
    swapped.extend_from_slice(&bytes[spans[1].0..spans[1].0 + spans[1].1]);
    swapped.extend_from_slice(&bytes[spans[0].0..spans[0].0 + spans[0].1]);
    swapped.extend_from_slice(&bytes[spans[2].0..]);
    assert!(matches!(
        growable_err(&swapped),
        DecodeError::Level { level: 0, .. }
    ));
    // A level's item count that its table does not hold.
    let (at, len) = spans[2];
    let mut damaged = bytes.clone();
    let items = get_u64(&bytes, at + ITEMS_AT);
    set_u64(&mut damaged[at..at + len], ITEMS_AT, items + 1);
    reseal(&mut damaged[at..at + len]);
    assert_eq!(
        growable_err(&damaged),
        DecodeError::Level {
            level: 2,
            error: Box::new(DecodeError::ItemCountMismatch {
                header: items + 1,
                table: items
            })
        }
    );
}

#[test]
fn a_level_count_past_the_limit_or_the_plan_is_refused() {
    let bytes = small();
    for count in [0, 33, u64::MAX] {
        let mut damaged = bytes.clone();
        set_u64(&mut damaged, G_LEVEL_COUNT_AT, count);
        reseal_growable_header(&mut damaged);
        assert_eq!(
            growable_err(&damaged),
            DecodeError::InvalidGeometry {
                field: "level_count",
                value: count
            }
        );
    }
    // A limit of 100 items: levels of 30 and 60 fit, a third of 120 does not.
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, G_MAX_CAPACITY_AT, 100);
    reseal_growable_header(&mut damaged);
    let err = growable_err(&damaged);
    assert!(
        matches!(
            err,
            DecodeError::InvalidPlan {
                level: 2,
                error: BuildError::CapacityTooLarge { .. }
            }
        ),
        "{err}"
    );
    // One level more than the bytes hold.
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, G_LEVEL_COUNT_AT, 4);
    reseal_growable_header(&mut damaged);
    assert!(matches!(
        growable_err(&damaged),
        DecodeError::Truncated { found, needed } if found == bytes.len() as u64 && needed > found
    ));
    // And the total item count must be the levels' sum.
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, 96, 7);
    reseal_growable_header(&mut damaged);
    assert_eq!(
        growable_err(&damaged),
        DecodeError::ItemCountMismatch {
            header: 7,
            table: 200
        }
    );
}

#[test]
fn plan_fields_out_of_range_are_refused_by_name() {
    let bytes = small();
    let rate_bits = |rate: f64| rate.to_bits();
    let cases: [(usize, u64, &str); 6] = [
        (G_INITIAL_CAPACITY_AT, 0, "initial_capacity"),
        (32, 1, "growth_factor"),
        (40, rate_bits(0.0), "false_positive_rate"),
        (40, rate_bits(f64::NAN), "false_positive_rate"),
        (40, rate_bits(1.5), "false_positive_rate"),
        (64, 1, "max_search_buckets"),
    ];
    for (at, value, field) in cases {
        let mut damaged = bytes.clone();
        set_u64(&mut damaged, at, value);
        reseal_growable_header(&mut damaged);
        assert_eq!(
            growable_err(&damaged),
            DecodeError::InvalidGeometry { field, value },
            "{field}"
        );
    }
    for (at, value, field) in [
        (12, 3u8, "bucket_size"),
        (13, 33, "fingerprint_bits"),
        (14, 3, "semi_sorted"),
        (15, 9, "max_hops"),
    ] {
        let mut damaged = bytes.clone();
        damaged[at] = value;
        reseal_growable_header(&mut damaged);
        assert_eq!(
            growable_err(&damaged),
            DecodeError::InvalidGeometry {
                field,
                value: value.into()
            },
            "{field}"
        );
    }
    let mut damaged = bytes.clone();
    damaged[10] = 1;
    reseal_growable_header(&mut damaged);
    assert_eq!(
        growable_err(&damaged),
        DecodeError::UnsupportedFlags { flags: 1 }
    );
    // Three-slot buckets are refused by the plan's fields; two-slot ones with semi-sorting by the
    // builder the plan runs.
    let mut damaged = bytes.clone();
    damaged[12] = 2;
    damaged[14] = 2;
    reseal_growable_header(&mut damaged);
    assert!(matches!(
        growable_err(&damaged),
        DecodeError::InvalidPlan { level: 0, .. }
    ));
}

#[test]
fn a_growable_header_that_promises_huge_levels_allocates_nothing_big() {
    let mut header = small();
    header.truncate(G_HEADER_LEN);
    // Two levels for 2^32 items and more, in 112 bytes.
    set_u64(&mut header, G_INITIAL_CAPACITY_AT, 1 << 32);
    set_u64(&mut header, G_LEVEL_COUNT_AT, 2);
    reseal_growable_header(&mut header);
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::from_bytes(&header));
    assert!(
        matches!(result, Err(DecodeError::Truncated { found: 112, needed }) if needed > 1 << 32),
        "{result:?}"
    );
    assert!(largest < 4096, "{largest} bytes");
    // A stream is read in chunks of at most 64 KiB.
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::read_from(&header[..]));
    assert!(matches!(result, Err(DecodeError::Truncated { .. })));
    assert!(largest <= 64 << 10, "{largest} bytes");
    // From a stream that delivers 1 MiB after the header: memory follows what arrived.
    let stream = header.as_slice().chain(io::repeat(0).take(1 << 20));
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::read_from(stream));
    assert!(matches!(result, Err(DecodeError::Truncated { .. })));
    assert!(largest <= 4 << 20, "{largest} bytes");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_damage_to_a_growable_filter_is_an_error_or_the_same_filter(
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = small();
        let mut damaged = bytes.clone();
        for (at, value) in edits {
            let at = at.index(damaged.len());
            damaged[at] = value;
        }
        damaged.truncate(cut.index(damaged.len() + 1).max(damaged.len() / 2));
        match GrowableCuckooFilter::from_bytes(&damaged) {
            Ok(copy) => prop_assert_eq!(copy.to_bytes(), damaged),
            Err(err) => prop_assert!(!err.to_string().is_empty()),
        }
    }
}

#[test]
fn a_stripe_count_that_is_not_a_power_of_two_is_refused_by_the_decoder_itself() {
    // Refused before any level is built from the plan: a build without the test hooks does not
    // check the stripes it is given.
    for stripes in [3u64, 6, 4095, u64::MAX] {
        let mut damaged = small();
        set_u64(&mut damaged, G_STRIPES_AT, stripes);
        reseal_growable_header(&mut damaged);
        assert_eq!(
            growable_err(&damaged),
            DecodeError::InvalidGeometry {
                field: "stripes",
                value: stripes
            },
            "{stripes} stripes"
        );
    }
}
