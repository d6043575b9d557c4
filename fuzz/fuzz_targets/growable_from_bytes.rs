//! Arbitrary bytes into the growable filter's decoder, by `from_bytes` and by `read_from` on a
//! slow stream (`decode_both`).
//!
//! As for the fixed filter's target, `cargo fuzz` builds the crate with `--cfg fuzzing`, under
//! which every checksum (header, level, chunk record) is computed but not compared. The target
//! asserts that the two decoders agree, that an accepted filter writes bytes that decode to the
//! same filter again (not the input itself: its unchecked checksums may be anything), and that an
//! accepted filter then works, growing if it must.
#![no_main]

use concurrent_cuckoo_filter::GrowableCuckooFilter;
use concurrent_cuckoo_filter_fuzz::decode_both;
use libfuzzer_sys::fuzz_target;

/// The encoding of `filter` decodes to a filter that encodes the same, holds as many items in as
/// many levels, and answers as `filter` does.
fn round_trips(filter: &GrowableCuckooFilter) -> Vec<u8> {
    let bytes = filter.to_bytes();
    let again = GrowableCuckooFilter::from_bytes(&bytes).expect("a filter's own bytes decode");
    assert_eq!(again.to_bytes(), bytes);
    assert_eq!(again.len(), filter.len());
    assert_eq!(again.level_count(), filter.level_count());
    assert_eq!(again.capacity(), filter.capacity());
    for key in 0..64u64 {
        assert_eq!(again.contains(&key), filter.contains(&key));
    }
    bytes
}

/// Inserts and looks up a few keys: every insert that returned `Ok` is found, and `len` counts
/// exactly the inserts. A remove may refuse (several levels may hold the fingerprint), but one
/// that succeeds takes one item away.
fn exercise(filter: &GrowableCuckooFilter) {
    let mut len = filter.len();
    for key in 0..8u64 {
        if filter.insert(&key).is_ok() {
            len += 1;
            assert!(filter.contains(&key));
        }
        assert_eq!(filter.len(), len);
    }
    for key in 0..8u64 {
        if filter.contains(&key) && filter.remove(&key) {
            len -= 1;
        }
        assert_eq!(filter.len(), len);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some((filter, again)) = decode_both::<GrowableCuckooFilter>(data) {
        let bytes = round_trips(&filter);
        assert_eq!(again.to_bytes(), bytes);
        exercise(&filter);
        round_trips(&filter);
    }
});
