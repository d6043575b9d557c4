//! Every error, by the check that finds it.

use super::*;

/// A valid encoding to break: 2-slot buckets of 12 bits, an odd bucket count, so that the last
/// word has padding bits.
fn sample() -> (ConcurrentCuckooFilter, Vec<u8>) {
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(101)
        .bucket_size(2)
        .fingerprint_bits(12)
        .build()
        .unwrap();
    fill(&filter, 150, 8);
    let bytes = filter.to_bytes();
    // 101 buckets of 24 bits end 56 bits into their last word, leaving 8 bits of padding.
    (filter, bytes)
}

pub(super) fn decode_err(bytes: &[u8]) -> DecodeError {
    let err = ConcurrentCuckooFilter::from_bytes(bytes).unwrap_err();
    assert!(!err.to_string().is_empty());
    err
}

#[test]
fn each_kind_of_damage_gets_its_own_error() {
    let (_, good) = sample();
    let len = good.len() as u64;
    assert_eq!(len, 96 + 8 * get_u64(&good, TABLE_WORDS_AT));

    assert_eq!(decode_err(b"PK\x03\x04 a zip file"), DecodeError::BadMagic);
    assert_eq!(
        decode_err(&[]),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64,
            found: 0
        }
    );
    assert_eq!(
        decode_err(&good[..5]),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64,
            found: 5
        }
    );

    let mut future = good.clone();
    future[VERSION_AT] = 2;
    assert_eq!(
        decode_err(&future),
        DecodeError::UnsupportedVersion { version: 2 }
    );

    let mut flipped = good.clone();
    flipped[BUCKETS_AT] ^= 4;
    assert!(matches!(
        decode_err(&flipped),
        DecodeError::HeaderChecksumMismatch { .. }
    ));

    assert_eq!(
        decode_err(&good[..good.len() - 1]),
        DecodeError::Truncated {
            needed: len,
            found: len - 1
        }
    );
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        decode_err(&longer),
        DecodeError::TrailingBytes {
            expected: len,
            found: len + 1
        }
    );

    let mut table_flip = good.clone();
    table_flip[HEADER_LEN + 3] ^= 0x10;
    assert!(matches!(
        decode_err(&table_flip),
        DecodeError::ChecksumMismatch { .. }
    ));

    let mut padding = good.clone();
    let last = good.len() - 9;
    padding[last] |= 0x80;
    reseal(&mut padding);
    assert_eq!(decode_err(&padding), DecodeError::NonZeroPadding);

    let mut count = good.clone();
    let items = get_u64(&good, ITEMS_AT);
    set_u64(&mut count, ITEMS_AT, items + 1);
    reseal(&mut count);
    assert_eq!(
        decode_err(&count),
        DecodeError::ItemCountMismatch {
            header: items + 1,
            table: items
        }
    );
}

#[test]
fn every_out_of_range_field_is_named() {
    let (_, good) = sample();
    let byte_fields: [(usize, &str, &[u8]); 4] = [
        (BUCKET_SIZE_AT, "bucket_size", &[0, 1, 3, 5, 16, 255]),
        (
            FINGERPRINT_BITS_AT,
            "fingerprint_bits",
            &[0, 3, 33, 64, 255],
        ),
        (MAX_HOPS_AT, "max_hops", &[0, 9, 255]),
        (RESERVED_AT, "reserved", &[1, 128]),
    ];
    for (at, field, values) in byte_fields {
        for &value in values {
            let mut bytes = good.clone();
            bytes[at] = value;
            reseal(&mut bytes);
            assert_eq!(
                decode_err(&bytes),
                DecodeError::InvalidGeometry {
                    field,
                    value: value.into()
                },
            );
        }
    }
    let word_fields: [(usize, &str, &[u64]); 4] = [
        (BUCKETS_AT, "buckets", &[0, (1 << 32) + 1, u64::MAX]),
        (STRIPES_AT, "stripes", &[3, 1 << 40, u64::MAX]),
        // 2-slot buckets, 8 hops: a search reaches at most 2 + 4 + ... + 512 = 1022 buckets.
        (
            MAX_SEARCH_BUCKETS_AT,
            "max_search_buckets",
            &[0, 1, 1023, u64::MAX],
        ),
        (
            TABLE_WORDS_AT,
            "table_words",
            &[0, 1, 39, 1 << 40, u64::MAX],
        ),
    ];
    for (at, field, values) in word_fields {
        for &value in values {
            let mut bytes = good.clone();
            set_u64(&mut bytes, at, value);
            reseal(&mut bytes);
            assert_eq!(
                decode_err(&bytes),
                DecodeError::InvalidGeometry { field, value }
            );
        }
    }
    // One stripe for 2^32 slots: its count would not fit its 32 bits.
    let mut bytes = good.clone();
    set_u64(&mut bytes, BUCKETS_AT, 1 << 31);
    set_u64(&mut bytes, STRIPES_AT, 1);
    reseal(&mut bytes);
    assert_eq!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "stripes",
            value: 1
        }
    );
    // A bucket count that fits the table words of another: the word count must then disagree.
    let mut bytes = good.clone();
    set_u64(&mut bytes, BUCKETS_AT, 200);
    reseal(&mut bytes);
    assert!(matches!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "table_words",
            ..
        }
    ));
    // Capacity is informational: any value that fits a usize is kept.
    let mut bytes = good.clone();
    set_u64(&mut bytes, CAPACITY_AT, 12345);
    reseal(&mut bytes);
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&bytes)
            .unwrap()
            .capacity(),
        12345
    );
}

#[test]
fn unknown_flags_are_unsupported_and_the_semi_sorted_flag_is_checked() {
    let (_, good) = sample();
    for flags in [4u16, 0x8000, 0xffff] {
        let mut bytes = good.clone();
        bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&flags.to_le_bytes());
        reseal(&mut bytes);
        assert_eq!(decode_err(&bytes), DecodeError::UnsupportedFlags { flags });
    }
    // The sample has 2-slot buckets, which cannot be semi-sorted.
    let mut bytes = good.clone();
    bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&1u16.to_le_bytes());
    reseal(&mut bytes);
    assert!(matches!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "bucket_size",
            ..
        }
    ));
}

#[test]
fn a_semi_sorted_bucket_not_in_canonical_form_is_refused() {
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(64)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .build()
        .unwrap();
    fill(&filter, 100, 3);
    let good = filter.to_bytes();
    assert!(ConcurrentCuckooFilter::from_bytes(&good)
        .unwrap()
        .is_semi_sorted());
    // Bucket 5 starts at bit 5 · 48 = 240: its 12-bit prefix code, set past the last of 3876.
    let mut bytes = good.clone();
    let word = HEADER_LEN + 8 * (240 / 64);
    let mut value = get_u64(&bytes, word);
    value |= 0xfff << (240 % 64);
    set_u64(&mut bytes, word, value);
    reseal(&mut bytes);
    assert_eq!(decode_err(&bytes), DecodeError::InvalidBucket { bucket: 5 });
}

#[test]
fn reader_errors_are_passed_on() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "peer went away",
            ))
        }
    }
    let err = ConcurrentCuckooFilter::read_from(Failing).unwrap_err();
    assert!(matches!(
        &err,
        DecodeError::Io {
            kind: io::ErrorKind::ConnectionReset,
            ..
        }
    ));
    assert!(err.to_string().contains("peer went away"), "{err}");

    /// Interrupted once before every byte: retried, not reported.
    struct Interrupting<'a>(&'a [u8], bool);
    impl Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let one = buf.len().min(1);
            self.0.read(&mut buf[..one])
        }
    }
    let (filter, bytes) = sample();
    let copy = ConcurrentCuckooFilter::read_from(Interrupting(&bytes, false)).unwrap();
    assert_eq!(copy.len(), filter.len());
}

#[test]
fn decode_error_is_a_well_behaved_error() {
    fn is_error<E: std::error::Error + Clone + PartialEq + Send + Sync + 'static>(_: &E) {}
    let err = DecodeError::TrailingBytes {
        expected: 10,
        found: 13,
    };
    is_error(&err);
    assert_eq!(err.clone(), err);
    assert_eq!(
        err.to_string(),
        "3 trailing bytes after the cuckoo filter (13 bytes, the filter takes 10)"
    );
}
