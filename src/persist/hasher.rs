//! Hashers whose identity a filter's bytes record, so it is never read with another function.

use core::hash::BuildHasher;

use crate::hash::{DefaultHashBuilder, HASHER_ID};

/// A [`BuildHasher`] with a stable identity, an id naming its hash function and a seed, which a
/// filter's bytes record: the decoder refuses another id
/// ([`DecodeError::HasherMismatch`](crate::DecodeError::HasherMismatch)) and rebuilds the hasher
/// from the seed. A filter is serializable only if its hasher implements this trait.
///
/// Implement it only for a hasher whose output, for a given seed, depends on nothing but the
/// bytes a key's `Hash` impl writes: not on endianness or pointer width (hash `usize` as 64
/// bits, integers in one byte order), the process, or a dependency's version (`std`'s
/// `DefaultHasher` may change between Rust releases).
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, StableHashBuilder};
/// use core::hash::{BuildHasher, Hasher};
///
/// /// 64-bit FNV-1a, seeded by xor-ing the seed into its offset basis.
/// #[derive(Clone, Copy)]
/// struct Fnv(u64);
///
/// struct FnvHasher(u64);
///
/// impl Hasher for FnvHasher {
///     fn write(&mut self, bytes: &[u8]) {
///         for &byte in bytes {
///             self.0 = (self.0 ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
///         }
///     }
///     // Integers as little-endian bytes and `usize` as 64 bits, on every platform.
///     fn write_usize(&mut self, i: usize) {
///         self.write(&(i as u64).to_le_bytes());
///     }
///     fn write_u64(&mut self, i: u64) {
///         self.write(&i.to_le_bytes());
///     }
///     fn finish(&self) -> u64 {
///         // Mix the high bits down: the filter takes bucket and fingerprint from both halves.
///         self.0 ^ (self.0 >> 29).wrapping_mul(0x9e37_79b9_7f4a_7c15)
///     }
/// }
///
/// impl BuildHasher for Fnv {
///     type Hasher = FnvHasher;
///     fn build_hasher(&self) -> FnvHasher {
///         FnvHasher(0xcbf2_9ce4_8422_2325 ^ self.0)
///     }
/// }
///
/// impl StableHashBuilder for Fnv {
///     // Any number no other hasher uses; these eight bytes spell "fnv1a-v1".
///     const HASHER_ID: u64 = u64::from_le_bytes(*b"fnv1a-v1");
///     fn seed(&self) -> u64 {
///         self.0
///     }
///     fn from_seed(seed: u64) -> Option<Self> {
///         Some(Fnv(seed))
///     }
/// }
///
/// let filter = ConcurrentCuckooFilter::builder().capacity(1000).hasher(Fnv(7)).build()?;
/// filter.insert(&42u64)?;
/// let copy = ConcurrentCuckooFilter::<Fnv>::from_bytes_with_hasher(&filter.to_bytes())?;
/// assert!(copy.contains(&42u64));
/// assert_eq!(copy.hasher().0, 7);
///
/// // The default hasher is another hash function: reading the bytes with it is refused.
/// assert!(ConcurrentCuckooFilter::from_bytes(&filter.to_bytes()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait StableHashBuilder: BuildHasher + Sized {
    /// Names the hash function, including how it turns a key's `Hash` writes into bytes: any
    /// number no other function uses (eight ASCII bytes make a readable one; the crate's spell
    /// `ccf-...`). Change it when the function changes.
    const HASHER_ID: u64;

    /// The seed that, with [`HASHER_ID`](Self::HASHER_ID), determines every hash. A hasher with
    /// no seed returns a constant.
    fn seed(&self) -> u64;

    /// The hasher with this seed, as [`seed`](Self::seed) returned it when the filter was
    /// written; `None` if this hasher cannot have that seed.
    fn from_seed(seed: u64) -> Option<Self>;
}

impl StableHashBuilder for DefaultHashBuilder {
    /// `ccf-xxf8`, the function of [`FilterHasher`](crate::FilterHasher).
    const HASHER_ID: u64 = HASHER_ID;

    fn seed(&self) -> u64 {
        DefaultHashBuilder::seed(self)
    }

    fn from_seed(seed: u64) -> Option<Self> {
        Some(Self::with_seed(seed))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecordedHasher {
    pub(crate) id: u64,
    pub(crate) seed: u64,
}

impl RecordedHasher {
    pub(crate) fn of<S: StableHashBuilder>(hasher: &S) -> Self {
        Self {
            id: S::HASHER_ID,
            seed: hasher.seed(),
        }
    }
}
