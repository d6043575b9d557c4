use super::*;
use crate::raw::bucket::{
    fits_bucket_word as fits, BucketCodec, WORD_VERSION_BITS as VERSION_BITS,
};
use crate::raw::index::Place;
use crate::raw::RawFilter;

#[test]
fn every_store_moves_the_version_on_and_touches_no_other_bucket() {
    let codec = BucketCodec::word(4, 12);
    assert_eq!(codec.bucket_bits(), 64);
    let table = Table::new(5, &codec).unwrap();
    let word = |bucket: usize| table.words[bucket].load(Ordering::Relaxed);
    let mut raw = [0u128; 2];
    assert!(codec.insert(&mut raw, 0xabc));
    // Past a wrap of the 16-bit version: it goes round and leaves the fingerprints alone.
    for store in 1..=(1u64 << VERSION_BITS) + 3 {
        table.store(2, &raw);
        assert_eq!(word(2) >> VERSION_SHIFT, store % (1 << VERSION_BITS));
        assert_eq!(table.load(2), raw);
    }
    assert!([0, 1, 3, 4].iter().all(|&bucket| word(bucket) == 0));
    // What a copy reads has no versions.
    let mut words = vec![0; table.data_words()];
    table.read_words(0, &mut words);
    assert_eq!(words[2], raw[0] as u64);
    assert!(table.has_bits_above(2, codec.limb_bits()));
    assert!(!table.has_bits_above(1, codec.limb_bits()));
}

#[test]
fn a_placed_fingerprint_takes_the_first_empty_slot_and_moves_the_version_on_through_its_wrap() {
    let codec = BucketCodec::word(4, 12);
    let table = Table::new(3, &codec).unwrap();
    let word = |bucket: usize| table.words[bucket].load(Ordering::Relaxed);
    for (i, fp) in [0x111, 0x222, 0x333, 0x444].into_iter().enumerate() {
        assert!(table.place_in_word(1, fp, &codec));
        assert_eq!(word(1) >> VERSION_SHIFT, i as u64 + 1);
        assert_eq!(word(1) >> (12 * i) & 0xfff, u64::from(fp));
    }
    // Full: nothing stored, the version unchanged.
    let full = word(1);
    assert!(!table.place_in_word(1, 0x555, &codec));
    assert_eq!(word(1), full);
    // The last version before the wrap: the next placement wraps it to 0 and keeps the
    // fingerprints, and no other bucket changes.
    let (held, hole) = (0xabc << 24 | 0xdef, 0x777 << 12);
    table.words[2].store(0xffff << VERSION_SHIFT | held, Ordering::Relaxed);
    assert!(table.place_in_word(2, 0x777, &codec));
    assert_eq!(word(2), held | hole);
    assert_eq!(word(0), 0);
    assert_eq!(word(1), full);
}

#[test]
fn the_locked_read_after_the_retries_answers_as_the_optimistic_one() {
    use crate::raw::{Geometry, SearchLimits, Shape};
    let filter = RawFilter::new(&Geometry {
        shape: Shape {
            bucket_count: 300,
            bucket_size: 4,
            fingerprint_bits: 12,
            semi_sorted: false,
            bucket_words: true,
        },
        stripes: 4,
        limits: SearchLimits {
            max_hops: 5,
            max_search_buckets: 2000,
        },
    })
    .unwrap();
    let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let stored: Vec<u64> = (0..1100).map(hash).collect();
    for &h in &stored {
        assert_eq!(
            filter.insert::<false>(h, false),
            super::super::Insertion::Inserted
        );
    }
    let mut hits = 0;
    for h in stored.iter().copied().chain((5000..15_000).map(hash)) {
        let c = filter.placement.candidates(h);
        let answer = filter.contains_located(c);
        assert_eq!(filter.contains_word_contended(move || c), answer);
        hits += usize::from(answer);
    }
    // Every member, and a few of the others (false positives at about 0.2%).
    assert!((1100..1200).contains(&hits), "{hits}");
    assert!(stored.iter().all(|&h| filter.contains(h)));
}

#[test]
fn buckets_fit_a_word_with_a_16_bit_version_or_are_refused() {
    assert!(fits(4, 12) && fits(2, 24) && fits(8, 6));
    assert!(!fits(4, 13) && !fits(2, 25) && !fits(8, 7));
}
