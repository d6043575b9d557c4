//! A segment: keys of a bulk call read from Python at once, in memory of the extension's own, so
//! that the filter works on them with the interpreter released.
//!
//! Integers are kept as their 64-bit patterns; the bytes of a `str` (its UTF-8) or a bytes-like
//! key are copied into one buffer the segment owns, each followed by the `0xff` its hash reads
//! after them, so that a key's whole stream is hashed in one call. A segment therefore holds no reference to a
//! Python object: any thread may read or drop it, attached or not, and no Python thread's later
//! change of a list or a `bytearray` reaches it.

use crate::keys::KeyRef;

/// The average bytes a segment's keys may take before it ends short of its key count, so that
/// its memory is bounded whatever the keys' length (a single longer key still goes in whole).
pub const BYTES_PER_KEY: usize = 64;

/// Bytes a key is given room for when a segment is made: enough for most text keys, so that
/// the buffer rarely grows while keys are read.
const RESERVED_BYTES_PER_KEY: usize = 32;

/// Where one key of a segment is.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// An integer key, as its 64-bit pattern.
    Int(u64),
    /// A key whose bytes are `bytes[start..end]` of the segment, `bytes[end]` its `0xff`.
    Bytes { start: usize, end: usize },
}

/// Keys read from Python, in order.
#[derive(Debug, Default)]
pub struct Segment {
    slots: Vec<Slot>,
    bytes: Vec<u8>,
}

impl Segment {
    /// An empty segment with room for `keys` keys.
    pub fn with_capacity(keys: usize) -> Self {
        Self {
            slots: Vec::with_capacity(keys),
            bytes: Vec::with_capacity(keys.saturating_mul(RESERVED_BYTES_PER_KEY)),
        }
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.bytes.clear();
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes of `str` and bytes-like keys held.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends a key, copying its bytes.
    #[inline]
    pub fn push(&mut self, key: KeyRef<'_>) {
        match key {
            KeyRef::Int(value) => self.slots.push(Slot::Int(value)),
            KeyRef::Bytes(bytes) => self.push_bytes(bytes),
        }
    }

    /// Appends the key of these bytes, copying them and the `0xff` after them.
    #[inline]
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        let end = self.bytes.len();
        self.bytes.push(0xff);
        self.slots.push(Slot::Bytes { start, end });
    }

    /// The keys, borrowed.
    pub fn keys(&self) -> SegmentKeys<'_> {
        SegmentKeys {
            slots: &self.slots,
            bytes: &self.bytes,
        }
    }
}

/// A key as its hasher reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStream<'a> {
    /// An integer key, hashed as its eight little-endian bytes.
    Int(u64),
    /// The whole byte stream of a `str` or bytes-like key: its bytes, then `0xff`.
    Bytes(&'a [u8]),
}

/// Consecutive keys of a segment.
#[derive(Debug, Clone, Copy)]
pub struct SegmentKeys<'a> {
    slots: &'a [Slot],
    bytes: &'a [u8],
}

impl<'a> SegmentKeys<'a> {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Keys `..mid` and `mid..`.
    pub fn split_at(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.slots.split_at(mid);
        (
            Self {
                slots: a,
                bytes: self.bytes,
            },
            Self {
                slots: b,
                bytes: self.bytes,
            },
        )
    }

    /// Keys `range`.
    pub fn slice(self, range: core::ops::Range<usize>) -> Self {
        Self {
            slots: &self.slots[range],
            bytes: self.bytes,
        }
    }

    /// The keys in order, as their hasher reads them.
    #[inline]
    pub fn streams(self) -> impl Iterator<Item = KeyStream<'a>> {
        let bytes = self.bytes;
        self.slots.iter().map(move |slot| match *slot {
            Slot::Int(value) => KeyStream::Int(value),
            Slot::Bytes { start, end } => KeyStream::Bytes(&bytes[start..=end]),
        })
    }
}
