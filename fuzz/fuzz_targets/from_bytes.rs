//! Arbitrary bytes into the decoder, by `from_bytes` and by `read_from` on a slow stream.
//!
//! `cargo fuzz` builds the crate with `--cfg fuzzing`, under which the decoder computes both
//! checksums but does not compare them, so the fuzzer gets past them to every check behind. The
//! target asserts that the two decoders agree, that an accepted input is exactly what its filter
//! writes (checksums aside), and that an accepted filter then works.
#![no_main]

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use concurrent_cuckoo_filter_fuzz::decode_both;
use libfuzzer_sys::fuzz_target;

/// Where the header checksum is, and how long the whole header and the final checksum are.
const HEADER_CHECKSUM_AT: usize = 80;
const HEADER_LEN: usize = 88;
const CHECKSUM_LEN: usize = 8;

/// `bytes` with both checksums zeroed: an accepted input may carry any under `cfg(fuzzing)`.
fn without_checksums(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if out.len() >= HEADER_LEN + CHECKSUM_LEN {
        out[HEADER_CHECKSUM_AT..HEADER_LEN].fill(0);
        let end = out.len() - CHECKSUM_LEN;
        out[end..].fill(0);
    }
    out
}

/// Inserts, looks up and removes a few keys; the filter must behave as a filter.
fn exercise(filter: &ConcurrentCuckooFilter) {
    let len = filter.len();
    for key in 0..8u64 {
        let copies = filter.count(&key);
        if filter.insert(&key).is_ok() {
            assert!(filter.contains(&key));
            assert_eq!(filter.count(&key), copies + 1);
            assert!(filter.remove(&key));
            assert_eq!(filter.count(&key), copies);
        }
    }
    assert_eq!(filter.len(), len);
}

fuzz_target!(|data: &[u8]| {
    if let Some((filter, again)) = decode_both::<ConcurrentCuckooFilter>(data) {
        // The format is canonical: an accepted input is what its filter writes.
        let bytes = filter.to_bytes();
        assert_eq!(without_checksums(&bytes), without_checksums(data));
        assert_eq!(again.to_bytes(), bytes);
        exercise(&filter);
    }
});
