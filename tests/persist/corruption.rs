//! Random corruptions never panic and are always rejected.

use super::*;

/// Valid encodings of several configurations, built once.
pub(super) fn samples() -> &'static [Vec<u8>] {
    static SAMPLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut samples = Vec::new();
        for (i, (slots, bits, capacity)) in [
            (2, 8, 200),
            (4, 12, 300),
            (4, 13, 100),
            (8, 16, 250),
            (8, 20, 120),
            (4, 32, 60),
            (2, 5, 40),
        ]
        .into_iter()
        .enumerate()
        {
            let filter = build(slots, bits, capacity, i as u64);
            fill(&filter, capacity * 3 / 4, i as u64);
            samples.push(filter.to_bytes());
        }
        let tiny = ConcurrentCuckooFilter::builder()
            .buckets(1)
            .bucket_size(2)
            .fingerprint_bits(4)
            .build()
            .unwrap();
        tiny.insert(&1u64).unwrap();
        samples.push(tiny.to_bytes());
        let words = ConcurrentCuckooFilter::builder()
            .capacity(200)
            .layout(concurrent_cuckoo_filter::TableLayout::BucketWord)
            .build()
            .unwrap();
        fill(&words, 150, 9);
        samples.push(words.to_bytes());
        samples
    })
}

#[derive(Clone, Debug)]
enum Corruption {
    /// Flip these bits (positions taken modulo the input's bits).
    Flip(Vec<usize>),
    /// Keep only this many bytes (modulo the length).
    Truncate(usize),
    /// Append these bytes.
    Extend(Vec<u8>),
    /// Overwrite bytes from this position (modulo the length) with these.
    Overwrite(usize, Vec<u8>),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        vec(any::<usize>(), 1..4).prop_map(Corruption::Flip),
        any::<usize>().prop_map(Corruption::Truncate),
        vec(any::<u8>(), 1..64).prop_map(Corruption::Extend),
        (any::<usize>(), vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Corruption::Overwrite(at, bytes)),
    ]
}

fn corrupt(good: &[u8], corruption: &Corruption) -> Vec<u8> {
    let mut bytes = good.to_vec();
    match corruption {
        Corruption::Flip(bits) => {
            for &bit in bits {
                let bit = bit % (bytes.len() * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
        }
        Corruption::Truncate(len) => bytes.truncate(len % bytes.len()),
        Corruption::Extend(more) => bytes.extend_from_slice(more),
        Corruption::Overwrite(at, with) => {
            let at = at % bytes.len();
            let end = (at + with.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&with[..end - at]);
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_encodings_are_rejected(sample in 0..8usize, damage in corruption()) {
        let good = &samples()[sample];
        let bad = corrupt(good, &damage);
        prop_assume!(bad != *good);
        let err = ConcurrentCuckooFilter::from_bytes(&bad);
        prop_assert!(err.is_err(), "{damage:?} was accepted");
        let streamed = ConcurrentCuckooFilter::read_from(&bad[..]);
        if let Corruption::Extend(_) = damage {
            // A stream may go on after the filter: read_from reads the filter and stops.
            let trailing = matches!(err, Err(DecodeError::TrailingBytes { .. }));
            prop_assert!(trailing, "{:?}", err);
            prop_assert_eq!(&streamed.unwrap().to_bytes(), good);
        } else {
            prop_assert_eq!(streamed.err(), err.err());
        }
    }

    #[test]
    fn random_bytes_are_rejected(bytes in vec(any::<u8>(), 0..600)) {
        prop_assert!(ConcurrentCuckooFilter::from_bytes(&bytes).is_err());
        prop_assert!(ConcurrentCuckooFilter::read_from(&bytes[..]).is_err());
    }

    #[test]
    fn random_bytes_after_a_valid_start_are_rejected(
        sample in 0..8usize,
        keep in 0..=HEADER_LEN + 8,
        tail in vec(any::<u8>(), 0..600),
    ) {
        let good = &samples()[sample];
        let mut bytes = good[..keep.min(good.len())].to_vec();
        bytes.extend_from_slice(&tail);
        prop_assume!(!bytes.starts_with(good));
        prop_assert!(ConcurrentCuckooFilter::from_bytes(&bytes).is_err());
        prop_assert!(ConcurrentCuckooFilter::read_from(&bytes[..]).is_err());
    }
}
