//! Arbitrary bytes into the decoder, by `from_bytes` and by `read_from` on a slow stream.
//!
//! `cargo fuzz` builds the crate with `--cfg fuzzing`, under which the decoder computes both
//! checksums but does not compare them, so the fuzzer gets past them to every check behind. The
//! target asserts that the two decoders agree, that an accepted input is exactly what its filter
//! writes (checksums aside), and that an accepted filter then works.
#![no_main]

use std::io::{self, Read};

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError};
use libfuzzer_sys::fuzz_target;

/// Where the header checksum is, and how long the whole header and the final checksum are.
const HEADER_CHECKSUM_AT: usize = 80;
const HEADER_LEN: usize = 88;
const CHECKSUM_LEN: usize = 8;

/// Hands out its bytes a few at a time.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

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
    let step = data.last().map_or(1, |&byte| usize::from(byte % 61) + 1);
    let decoded = ConcurrentCuckooFilter::from_bytes(data);
    let streamed = ConcurrentCuckooFilter::read_from(Trickle { bytes: data, step });
    match (decoded, streamed) {
        (Ok(filter), Ok(again)) => {
            // The format is canonical: an accepted input is what its filter writes.
            let bytes = filter.to_bytes();
            assert_eq!(without_checksums(&bytes), without_checksums(data));
            assert_eq!(again.to_bytes(), bytes);
            exercise(&filter);
        }
        // A stream may go on after the filter: read_from stops at its end, and finds what
        // from_bytes finds in the filter's bytes alone.
        (Err(DecodeError::TrailingBytes { expected, .. }), streamed) => {
            let end = usize::try_from(expected).unwrap();
            match (ConcurrentCuckooFilter::from_bytes(&data[..end]), streamed) {
                (Ok(filter), Ok(again)) => assert_eq!(filter.to_bytes(), again.to_bytes()),
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!("{:?} but read_from {:?}", a.map(|_| ()), b.map(|_| ())),
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(!a.to_string().is_empty());
        }
        (a, b) => panic!(
            "from_bytes gave {:?}, read_from {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
});
