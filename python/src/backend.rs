//! What the Python classes need of a filter, for both kinds of the crate's filters.

use core::hash::BuildHasher;
use std::io::{self, Read, Write};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DecodeError, ExtendError, GrowableCuckooFilter, InsertError, MergeError,
};

use crate::keys::KeyRef;

/// The operations the Python classes share that the two filter types name alike, each the
/// crate's method of the same name (others, such as `len`, are called on the type itself).
pub trait Backend: Send + Sync + Sized {
    fn insert(&self, key: KeyRef<'_>) -> Result<(), InsertError>;
    fn insert_unique(&self, key: KeyRef<'_>) -> Result<bool, InsertError>;
    fn contains(&self, key: KeyRef<'_>) -> bool;
    fn count(&self, key: KeyRef<'_>) -> usize;
    fn remove(&self, key: KeyRef<'_>) -> bool;
    fn seed(&self) -> u64;
    /// The filter's own hash of `key`: what its `insert` and `contains` compute.
    fn hash(&self, key: KeyRef<'_>) -> u64;
    /// The filter's hash of a key's whole byte stream (`DefaultHashBuilder::hash_stream`).
    fn hash_stream(&self, stream: &[u8]) -> u64;
    /// `hashes[i]` = the filter's hash of the int key `keys[i]`, in one loop the compiler sees
    /// whole (the hasher inlined).
    fn hash_ints(&self, keys: &[u64], hashes: &mut [u64]);
    /// Batched lookups by hash (the crate's prefetching path).
    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]);
    /// Pipelined inserts by hash that stop at the first with no room.
    fn extend_hashes(&self, hashes: &[u64]) -> Result<usize, ExtendError>;
    fn remove_hash(&self, hash: u64) -> bool;
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError>;
    fn read_from(reader: impl Read) -> Result<Self, DecodeError>;
    fn is_compatible(&self, other: &Self) -> bool;
    /// `merge`, or `merge_unique` if `unique`.
    fn merge(&self, other: &Self, unique: bool) -> Result<usize, MergeError>;
}

/// Implements [`Backend`] for a filter type whose methods have the same names and signatures.
macro_rules! backend {
    ($filter:ty) => {
        impl Backend for $filter {
            fn insert(&self, key: KeyRef<'_>) -> Result<(), InsertError> {
                <$filter>::insert(self, &key)
            }
            fn insert_unique(&self, key: KeyRef<'_>) -> Result<bool, InsertError> {
                <$filter>::insert_unique(self, &key)
            }
            fn contains(&self, key: KeyRef<'_>) -> bool {
                <$filter>::contains(self, &key)
            }
            fn count(&self, key: KeyRef<'_>) -> usize {
                <$filter>::count(self, &key)
            }
            fn remove(&self, key: KeyRef<'_>) -> bool {
                <$filter>::remove(self, &key)
            }
            fn seed(&self) -> u64 {
                self.hasher().seed()
            }
            #[inline]
            fn hash(&self, key: KeyRef<'_>) -> u64 {
                self.hasher().hash_one(key)
            }
            #[inline]
            fn hash_stream(&self, stream: &[u8]) -> u64 {
                self.hasher().hash_stream(stream)
            }
            fn hash_ints(&self, keys: &[u64], hashes: &mut [u64]) {
                let hasher = self.hasher();
                for (hash, key) in hashes.iter_mut().zip(keys) {
                    *hash = hasher.hash_one(key);
                }
            }
            fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
                self.contains_hash_batch_into(hashes, answers);
            }
            fn extend_hashes(&self, hashes: &[u64]) -> Result<usize, ExtendError> {
                self.try_extend_hashes(hashes)
            }
            fn remove_hash(&self, hash: u64) -> bool {
                <$filter>::remove_hash(self, hash)
            }
            fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
                <$filter>::from_bytes(bytes)
            }
            fn read_from(reader: impl Read) -> Result<Self, DecodeError> {
                <$filter>::read_from(reader)
            }
            fn is_compatible(&self, other: &Self) -> bool {
                <$filter>::is_compatible(self, other)
            }
            fn merge(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
                if unique {
                    <$filter>::merge_unique(self, other)
                } else {
                    <$filter>::merge(self, other)
                }
            }
        }
    };
}

backend!(ConcurrentCuckooFilter);
backend!(GrowableCuckooFilter);

/// Whether `write` writes exactly `expected`, stopped at the first byte that differs.
pub fn writes_exactly(
    expected: &[u8],
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> bool {
    /// Compares what is written with the rest of `expected`.
    struct Compare<'a> {
        rest: &'a [u8],
    }
    impl Write for Compare<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            match self.rest.strip_prefix(buf) {
                Some(rest) => {
                    self.rest = rest;
                    Ok(buf.len())
                }
                None => Err(io::Error::other("differs")),
            }
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut compare = Compare { rest: expected };
    write(&mut compare).is_ok() && compare.rest.is_empty()
}
