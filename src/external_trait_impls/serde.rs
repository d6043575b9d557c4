//! `serde` support: a filter serializes as the byte string of its `to_bytes`.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::filter::kind::Kind;
use crate::filter::CuckooFilter;
use crate::persist::StableHashBuilder;

/// Serializes the filter as the byte string of its [`to_bytes`](CuckooFilter::to_bytes): compact
/// in binary formats (bincode, postcard, CBOR), an array of numbers in JSON.
impl<K: Kind, S: StableHashBuilder> Serialize for CuckooFilter<K, S> {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

/// Deserializes a byte string (or a sequence of bytes, for formats without byte strings) with
/// the checks of [`from_bytes`](CuckooFilter::from_bytes); a [`DecodeError`] becomes the
/// format's custom error.
///
/// [`DecodeError`]: crate::DecodeError
impl<'de, K: Kind, S: StableHashBuilder> Deserialize<'de> for CuckooFilter<K, S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(FilterVisitor(PhantomData))
    }
}

struct FilterVisitor<K, S>(PhantomData<(K, S)>);

impl<'de, K: Kind, S: StableHashBuilder> Visitor<'de> for FilterVisitor<K, S> {
    type Value = CuckooFilter<K, S>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the bytes of a serialized {}", K::NAME)
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        CuckooFilter::from_bytes_with_hasher(bytes).map_err(E::custom)
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
