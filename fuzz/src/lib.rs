//! What the fuzz targets share: a reader that hands out bytes a few at a time, and the check
//! that a filter type's two decoders, `from_bytes` and `read_from`, agree on any input.

use std::io::{self, Read};

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError, GrowableCuckooFilter};

/// Hands out its bytes a few at a time.
#[derive(Debug)]
pub struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl<'a> Trickle<'a> {
    /// `bytes`, in steps of 1 to 61 bytes chosen by the last byte, so that the fuzzer varies
    /// them too.
    pub fn new(bytes: &'a [u8]) -> Self {
        let step = bytes.last().map_or(1, |&byte| usize::from(byte % 61) + 1);
        Self { bytes, step }
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// A filter type with both decoders and an encoder.
pub trait Decode: Sized {
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError>;
    fn read_from(reader: Trickle<'_>) -> Result<Self, DecodeError>;
    fn to_bytes(&self) -> Vec<u8>;
}

impl Decode for ConcurrentCuckooFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        ConcurrentCuckooFilter::from_bytes(bytes)
    }
    fn read_from(reader: Trickle<'_>) -> Result<Self, DecodeError> {
        ConcurrentCuckooFilter::read_from(reader)
    }
    fn to_bytes(&self) -> Vec<u8> {
        ConcurrentCuckooFilter::to_bytes(self)
    }
}

impl Decode for GrowableCuckooFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        GrowableCuckooFilter::from_bytes(bytes)
    }
    fn read_from(reader: Trickle<'_>) -> Result<Self, DecodeError> {
        GrowableCuckooFilter::read_from(reader)
    }
    fn to_bytes(&self) -> Vec<u8> {
        GrowableCuckooFilter::to_bytes(self)
    }
}

/// Decodes `data` by `from_bytes` and by `read_from` on a [`Trickle`], and panics unless they
/// agree: both accept it (returned, from_bytes' first), or both refuse it with the same error
/// in words, or `from_bytes` finds bytes after the filter and `read_from`, which stops at its
/// end, finds what `from_bytes` finds in the filter's bytes alone.
pub fn decode_both<F: Decode>(data: &[u8]) -> Option<(F, F)> {
    match (F::from_bytes(data), F::read_from(Trickle::new(data))) {
        (Ok(decoded), Ok(streamed)) => Some((decoded, streamed)),
        (Err(DecodeError::TrailingBytes { expected, .. }), streamed) => {
            let end = usize::try_from(expected).unwrap();
            assert!(end < data.len());
            match (F::from_bytes(&data[..end]), streamed) {
                (Ok(filter), Ok(again)) => assert_eq!(filter.to_bytes(), again.to_bytes()),
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!("{:?} but read_from {:?}", a.map(|_| ()), b.map(|_| ())),
            }
            None
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(!a.to_string().is_empty());
            None
        }
        (a, b) => panic!(
            "from_bytes gave {:?}, read_from {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
}
