//! Errors that say what to do: the smallest reachable rate, and the other filter type's bytes.

use concurrent_cuckoo_filter::{
    BuildError, ConcurrentCuckooFilter, DecodeError, ExpiringCuckooFilter, GrowableCuckooFilter,
    Window,
};

#[test]
fn a_rate_too_small_for_32_bit_fingerprints_names_the_smallest_reachable() {
    let err = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(1e-10)
        .build()
        .unwrap_err();
    let BuildError::FalsePositiveRateTooSmall { rate, smallest } = err else {
        panic!("{err:?}")
    };
    assert_eq!(rate, 1e-10);
    // The smallest is reachable, and a little less is not.
    let reached = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(smallest)
        .build()
        .unwrap();
    assert_eq!(reached.fingerprint_bits(), 32);
    assert!(ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(smallest * 0.999)
        .build()
        .is_err());
    assert_eq!(
        err.to_string(),
        "false_positive_rate must be at least 9.314e-10, the smallest the widest fingerprints \
         reach with these settings, got 0.0000000001"
    );
    // The rate the message names, given back, builds.
    assert!(smallest <= 9.314e-10);
    assert!(ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(9.314e-10)
        .build()
        .is_ok());
    // With the bucket size fixed, the smallest for that size.
    let err = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .bucket_size(8)
        .false_positive_rate(1e-10)
        .build()
        .unwrap_err();
    let BuildError::FalsePositiveRateTooSmall {
        smallest: for_8, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert!(for_8 > smallest);
    // A rate outside (0, 1) is the other error.
    let err = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(0.0)
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::FalsePositiveRate { rate: 0.0 });
}

#[test]
fn a_growable_target_too_small_names_the_users_rate_and_the_smallest_target() {
    for rate in [1e-10, 6e-9] {
        let err = GrowableCuckooFilter::builder()
            .capacity(1000)
            .false_positive_rate(rate)
            .build()
            .unwrap_err();
        let BuildError::FalsePositiveRateTooSmall {
            rate: said,
            smallest,
        } = err
        else {
            panic!("{rate}: {err:?}")
        };
        assert_eq!(said, rate);
        // The smallest builds, and a little less does not.
        let built = |rate: f64| {
            GrowableCuckooFilter::builder()
                .capacity(1000)
                .false_positive_rate(rate)
                .build()
        };
        assert!(built(smallest).is_ok(), "{smallest}");
        assert!(built(smallest * 0.999).is_err(), "{smallest}");
    }
}

#[test]
fn each_decoder_says_when_it_is_given_the_other_filter_types_bytes() {
    let growable = GrowableCuckooFilter::with_capacity(100).to_bytes();
    let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    let err = ConcurrentCuckooFilter::from_bytes(&growable).unwrap_err();
    assert_eq!(
        err,
        DecodeError::OtherFilterType {
            found: "GrowableCuckooFilter"
        }
    );
    assert_eq!(
        err.to_string(),
        "these are the bytes of a GrowableCuckooFilter: read them with \
         GrowableCuckooFilter::from_bytes"
    );
    assert_eq!(
        ConcurrentCuckooFilter::read_from(&growable[..]).unwrap_err(),
        err
    );
    let err = GrowableCuckooFilter::from_bytes(&fixed).unwrap_err();
    assert_eq!(
        err,
        DecodeError::OtherFilterType {
            found: "ConcurrentCuckooFilter"
        }
    );
    assert_eq!(
        GrowableCuckooFilter::read_from(&fixed[..]).unwrap_err(),
        err
    );
    // Anything else is still not a filter at all.
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(b"\x89PNG\r\n\x1a\n").unwrap_err(),
        DecodeError::BadMagic
    );
}

#[test]
fn each_decoder_says_when_it_is_given_an_expiring_filters_bytes_and_back() {
    let expiring = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap()
        .to_bytes();
    let found = |found| DecodeError::OtherFilterType { found };
    let errors = [
        ConcurrentCuckooFilter::from_bytes(&expiring).err(),
        ConcurrentCuckooFilter::read_from(&expiring[..]).err(),
        GrowableCuckooFilter::from_bytes(&expiring).err(),
        GrowableCuckooFilter::read_from(&expiring[..]).err(),
    ];
    for error in errors {
        assert_eq!(error, Some(found("ExpiringCuckooFilter")));
    }
    let fixed = ConcurrentCuckooFilter::with_capacity(100).to_bytes();
    let growable = GrowableCuckooFilter::with_capacity(100).to_bytes();
    for (bytes, name) in [
        (fixed, "ConcurrentCuckooFilter"),
        (growable, "GrowableCuckooFilter"),
    ] {
        assert_eq!(
            ExpiringCuckooFilter::from_bytes(&bytes).unwrap_err(),
            found(name)
        );
        assert_eq!(
            ExpiringCuckooFilter::read_from(&bytes[..]).unwrap_err(),
            found(name)
        );
    }
    assert_eq!(
        ExpiringCuckooFilter::from_bytes(b"\x89PNG\r\n\x1a\n").unwrap_err(),
        DecodeError::BadMagic
    );
}
