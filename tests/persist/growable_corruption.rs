//! Growable filters' headers from damaged or hostile bytes: every one a `DecodeError` naming the
//! fault, never a panic, never an allocation the input does not justify. Damage to the levels
//! themselves is in `growable_split.rs`.

use super::growable_split::{small, G_HEADER_CHECKSUM_AT, G_INITIAL_CAPACITY_AT, G_STRIPES_AT};
use super::*;
use concurrent_cuckoo_filter::GrowableCuckooFilter;

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

#[test]
fn plan_fields_out_of_range_are_refused_by_name() {
    let bytes = small();
    let rate_bits = |rate: f64| rate.to_bits();
    let cases: [(usize, u64, &str); 8] = [
        (G_INITIAL_CAPACITY_AT, 0, "initial_capacity"),
        (32, 1, "growth_factor"),
        (32, 3, "growth_factor"),
        (32, 1 << 11, "growth_factor"),
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
