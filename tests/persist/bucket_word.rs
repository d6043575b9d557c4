//! The bucket-word layout in the format: its flag, its words written without versions, and a
//! decode that refuses what its encoder never writes.

use super::errors::decode_err;
use super::*;
use concurrent_cuckoo_filter::TableLayout;

/// Flag bit 1 of FORMAT.md.
const FLAG_BUCKET_WORDS: u16 = 2;

fn word_filter(buckets: usize, bucket_size: usize, bits: u32) -> ConcurrentCuckooFilter {
    ConcurrentCuckooFilter::builder()
        .buckets(buckets)
        .bucket_size(bucket_size)
        .fingerprint_bits(bits)
        .layout(TableLayout::BucketWord)
        .build()
        .unwrap()
}

#[test]
fn bucket_word_filters_round_trip_with_their_layout_and_no_versions() {
    for (bucket_size, bits) in [(4, 12), (2, 24), (8, 6), (4, 4)] {
        let filter = word_filter(300, bucket_size, bits);
        let keys = fill(&filter, 300 * bucket_size * 9 / 10, 5);
        // Removes and re-inserts move every version on; none of it is written.
        for key in keys.iter().step_by(3) {
            assert!(filter.remove(key));
            filter.insert(key).unwrap();
        }
        let bytes = filter.to_bytes();
        let flags = u16::from_le_bytes([bytes[FLAGS_AT], bytes[FLAGS_AT + 1]]);
        assert_eq!(flags, FLAG_BUCKET_WORDS, "b={bucket_size} f={bits}");
        // One word per bucket, each with its top 16 bits (the version) zero.
        assert_eq!(get_u64(&bytes, TABLE_WORDS_AT), 300);
        for bucket in 0..300 {
            let word = get_u64(&bytes, HEADER_LEN + 8 * bucket);
            assert_eq!(word >> 48, 0, "bucket {bucket}: {word:#x}");
        }
        let copy = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(copy.layout(), TableLayout::BucketWord);
        assert_same(&filter, &copy, &keys);
        // The copy takes writes as the original does.
        let more = fill(&copy, 20, 77);
        assert!(more.iter().all(|key| copy.contains(key)));
        assert_eq!(copy.len(), keys.len() + more.len());
    }
}

#[test]
fn a_bucket_word_with_a_version_or_an_impossible_shape_is_refused() {
    let filter = word_filter(64, 4, 12);
    fill(&filter, 200, 3);
    let good = filter.to_bytes();

    let mut bytes = good.clone();
    let at = HEADER_LEN + 8 * 9;
    let versioned = get_u64(&bytes, at) | 1 << 48;
    set_u64(&mut bytes, at, versioned);
    reseal(&mut bytes);
    assert_eq!(decode_err(&bytes), DecodeError::InvalidBucket { bucket: 9 });
    // Bits between the fingerprints and the version: two 16-bit slots end at bit 32.
    let narrow = word_filter(64, 2, 16);
    fill(&narrow, 100, 4);
    let mut bytes = narrow.to_bytes();
    let at = HEADER_LEN + 8 * 12;
    let stray = get_u64(&bytes, at) | 1 << 40;
    set_u64(&mut bytes, at, stray);
    reseal(&mut bytes);
    assert_eq!(
        decode_err(&bytes),
        DecodeError::InvalidBucket { bucket: 12 }
    );

    // Semi-sorted buckets have no word form.
    let mut bytes = good.clone();
    bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&3u16.to_le_bytes());
    reseal(&mut bytes);
    assert_eq!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "flags",
            value: 3
        }
    );
    // Four 13-bit fingerprints do not fit beside the version.
    let mut bytes = good.clone();
    bytes[FINGERPRINT_BITS_AT] = 13;
    reseal(&mut bytes);
    assert_eq!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "fingerprint_bits",
            value: 13
        }
    );
    // Without the flag the words are read as packed buckets, which need fewer words.
    let mut bytes = good;
    bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&0u16.to_le_bytes());
    reseal(&mut bytes);
    assert!(matches!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "table_words",
            ..
        }
    ));
}

#[test]
fn a_packed_and_a_bucket_word_filter_of_one_shape_answer_alike_and_merge() {
    let packed = ConcurrentCuckooFilter::builder()
        .buckets(500)
        .build()
        .unwrap();
    let word = word_filter(500, 4, 12);
    let keys = fill(&packed, 1800, 9);
    assert_eq!(fill(&word, 1800, 9), keys);
    // The same moves, so the same fingerprints in the same slots.
    let others = (1u64 << 60)..(1u64 << 60) + 50_000;
    assert!(others
        .clone()
        .all(|key| packed.contains(&key) == word.contains(&key)));
    let merged = word_filter(500, 4, 12);
    merged.merge(&packed).unwrap();
    assert_eq!(merged.len(), packed.len());
    assert!(keys.iter().all(|key| merged.contains(key)));
}
