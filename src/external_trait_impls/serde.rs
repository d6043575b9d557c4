//! `serde` support (feature `serde`): a filter, fixed or growable, serializes as one byte string
//! holding exactly the bytes of its `to_bytes`, and deserializes through the same validating
//! decoder.

use core::fmt;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::filter::ConcurrentCuckooFilter;
use crate::growable::GrowableCuckooFilter;
use crate::persist::{DecodeError, StableHashBuilder};

/// Serializes the filter as a byte string: its [`to_bytes`](ConcurrentCuckooFilter::to_bytes),
/// from the same consistent snapshot. Compact in binary formats (bincode, postcard, CBOR); a
/// text format such as JSON spells it as an array of numbers.
impl<S: StableHashBuilder> Serialize for ConcurrentCuckooFilter<S> {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

/// Deserializes a byte string (or a sequence of bytes, for formats without byte strings) with
/// the checks of [`from_bytes`](ConcurrentCuckooFilter::from_bytes); a [`DecodeError`] becomes
/// the format's custom error.
///
/// [`DecodeError`]: crate::DecodeError
impl<'de, S: StableHashBuilder> Deserialize<'de> for ConcurrentCuckooFilter<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(FilterVisitor {
            expecting: "the bytes of a serialized ConcurrentCuckooFilter",
            decode: ConcurrentCuckooFilter::<S>::from_bytes_with_hasher,
        })
    }
}

/// Serializes the filter as a byte string: its
/// [`to_bytes`](GrowableCuckooFilter::to_bytes), from the same consistent snapshot.
impl<S: StableHashBuilder> Serialize for GrowableCuckooFilter<S> {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

/// Deserializes a byte string (or a sequence of bytes) with the checks of
/// [`from_bytes`](GrowableCuckooFilter::from_bytes); a [`DecodeError`] becomes the format's
/// custom error.
impl<'de, S: StableHashBuilder> Deserialize<'de> for GrowableCuckooFilter<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(FilterVisitor {
            expecting: "the bytes of a serialized GrowableCuckooFilter",
            decode: GrowableCuckooFilter::<S>::from_bytes_with_hasher,
        })
    }
}

/// Takes a byte string to `decode`.
struct FilterVisitor<T> {
    expecting: &'static str,
    decode: fn(&[u8]) -> Result<T, DecodeError>,
}

impl<'de, T> Visitor<'de> for FilterVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        (self.decode)(bytes).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // The sequence's size hint is not trusted: the buffer grows with the bytes that arrive.
        let mut bytes = Vec::new();
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        self.visit_bytes(&bytes)
    }
}
