//! The default hasher: seeded XXH3, with the same output on every platform.
//!
//! `std`'s `Hasher` defaults write integers in native byte order and `usize` at native width, so
//! the same key would hash differently on a big-endian or 32-bit machine and a filter written on
//! one could not be read on another. [`DefaultHasher`] writes every integer as little-endian and
//! every `usize`/`isize` as 64 bits, then hashes the byte stream with XXH3.

use core::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The seed [`DefaultHashBuilder::new`] uses. Part of the format: changing it changes every hash.
const DEFAULT_SEED: u64 = 0x5eed_c0ff_ee15_f00d;

/// Bytes gathered before a block is folded into the running state. Keys up to this size (nearly
/// all keys) cost exactly one XXH3 call.
const BLOCK: usize = 64;

/// The default [`BuildHasher`] of
/// [`ConcurrentCuckooFilter`](crate::ConcurrentCuckooFilter): XXH3 (64-bit) with a seed.
///
/// Its output depends only on the seed and on the bytes a key's `Hash` impl writes, never on the
/// platform's endianness or pointer width, nor on the version of any dependency.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::DefaultHashBuilder;
/// use core::hash::BuildHasher;
///
/// let a = DefaultHashBuilder::with_seed(7);
/// assert_eq!(a.hash_one(42u64), DefaultHashBuilder::with_seed(7).hash_one(42u64));
/// assert_ne!(a.hash_one(42u64), DefaultHashBuilder::with_seed(8).hash_one(42u64));
/// // `usize` hashes as 64 bits everywhere.
/// assert_eq!(a.hash_one(42usize), a.hash_one(42u64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefaultHashBuilder {
    seed: u64,
}

impl DefaultHashBuilder {
    /// The builder with the crate's fixed default seed.
    #[must_use]
    pub const fn new() -> Self {
        Self { seed: DEFAULT_SEED }
    }

    /// A builder with a seed of your own: the seed of another filter's
    /// [`hasher`](crate::ConcurrentCuckooFilter::hasher), to build a filter it can merge with.
    #[must_use]
    pub const fn with_seed(seed: u64) -> Self {
        Self { seed }
    }

    /// A builder with a seed drawn at random, different in every call and every process, as
    /// std's and hashbrown's `RandomState` are. Use it where keys come from untrusted clients.
    ///
    /// With the fixed default seed, which anyone can read here, a client who chooses the keys
    /// can find keys whose hashes share the bits that pick a bucket, and fill a filter long
    /// before its capacity (or make a growable filter grow for them). Under a seed it cannot
    /// know, its keys land at random like anyone's.
    ///
    /// The seed is recorded with the filter's bytes, so a saved filter loads and answers as
    /// before. Filters merge only if their seeds are equal: give every filter of a job a clone
    /// of one random builder, or send [`seed`](Self::seed) to the processes that build the
    /// others and use [`with_seed`](Self::with_seed) there.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder};
    ///
    /// let hasher = DefaultHashBuilder::random();
    /// assert_ne!(hasher.seed(), DefaultHashBuilder::random().seed());
    /// let shards: Vec<ConcurrentCuckooFilter> = (0..2)
    ///     .map(|_| ConcurrentCuckooFilter::with_capacity_and_hasher(1000, hasher))
    ///     .collect();
    /// shards[0].insert("a")?;
    /// shards[1].insert("b")?;
    /// shards[0].merge(&shards[1])?;
    /// assert!(shards[0].contains("a") && shards[0].contains("b"));
    ///
    /// let loaded = ConcurrentCuckooFilter::from_bytes(&shards[0].to_bytes())?;
    /// assert_eq!(loaded.hasher().seed(), hasher.seed());
    /// assert!(loaded.contains("b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn random() -> Self {
        use std::collections::hash_map::RandomState;
        // Keyed from the operating system's randomness once per thread, and a new key for each
        // `RandomState`: its hash of a constant is a fresh random word.
        Self::with_seed(RandomState::new().hash_one(DEFAULT_SEED))
    }

    /// The seed this builder hashes with.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for DefaultHashBuilder {
    type Hasher = DefaultHasher;

    #[inline]
    fn build_hasher(&self) -> DefaultHasher {
        DefaultHasher {
            state: self.seed,
            buf: [0; BLOCK],
            len: 0,
            folded: 0,
        }
    }

    /// The provided method, inlined, so that a fixed-size key hashes with no call.
    #[inline(always)]
    #[allow(clippy::manual_hash_one)] // this is `hash_one` itself
    fn hash_one<T: core::hash::Hash>(&self, item: T) -> u64 {
        let mut hasher = self.build_hasher();
        item.hash(&mut hasher);
        hasher.finish()
    }
}

/// The [`Hasher`] made by [`DefaultHashBuilder`].
///
/// Bytes collect in a 64-byte buffer; each full block is folded into the running state with one
/// XXH3 call seeded by that state, so the result depends only on the byte stream, never on how a
/// `Hash` impl splits it into writes.
#[derive(Clone, Debug)]
pub struct DefaultHasher {
    state: u64,
    buf: [u8; BLOCK],
    len: usize,
    folded: u64,
}

impl DefaultHasher {
    /// Appends bytes. The common case, bytes that fit the block, is small enough to inline, so
    /// that a fixed-size key's writes reduce to a few stores the optimiser can see through.
    #[inline(always)]
    fn push(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.push_folding(bytes),
        }
    }

    /// [`Self::push`] of bytes that overflow the block: folds each full block into the state.
    #[cold]
    #[inline(never)]
    fn push_folding(&mut self, mut bytes: &[u8]) {
        loop {
            if self.len == BLOCK {
                self.state = xxh3_64_with_seed(&self.buf, self.state);
                self.folded += 1;
                self.len = 0;
            }
            let take = (BLOCK - self.len).min(bytes.len());
            self.buf[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            if bytes.is_empty() {
                return;
            }
        }
    }

    /// [`Hasher::finish`] of any stream: one XXH3 call over the bytes of the last block, for a
    /// length only known at run time.
    #[inline(never)]
    fn finish_stream(&self) -> u64 {
        // A stream that folded blocks ends under a seed that also records how many it folded.
        let seed = if self.folded == 0 {
            self.state
        } else {
            self.state ^ self.folded.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        };
        xxh3_64_with_seed(&self.buf[..self.len], seed)
    }

    /// XXH3 over the first `N` bytes of the block, with `N` fixed at compile time: XXH3 then
    /// reduces to its short path for that one length.
    #[inline(always)]
    fn finish_short<const N: usize>(&self) -> u64 {
        let mut bytes = [0; N];
        bytes.copy_from_slice(&self.buf[..N]);
        xxh3_64_with_seed(&bytes, self.state)
    }
}

impl Hasher for DefaultHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        // A lone integer key (the length is a constant once `hash_one` is inlined) takes a
        // branch-free path with the same value as `finish_stream`; any other key takes a call.
        if self.folded == 0 {
            match self.len {
                1 => return self.finish_short::<1>(),
                2 => return self.finish_short::<2>(),
                4 => return self.finish_short::<4>(),
                8 => return self.finish_short::<8>(),
                16 => return self.finish_short::<16>(),
                _ => {}
            }
        }
        self.finish_stream()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.push(bytes);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.push(&[i]);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }

    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }

    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }

    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::Hash;

    fn hash_of<T: Hash + ?Sized>(item: &T) -> u64 {
        DefaultHashBuilder::new().hash_one(item)
    }

    #[test]
    fn short_keys_are_one_xxh3_call_over_their_little_endian_bytes() {
        assert_eq!(
            hash_of(&0x0102_0304_0506_0708u64),
            xxh3_64_with_seed(&0x0102_0304_0506_0708u64.to_le_bytes(), DEFAULT_SEED)
        );
        assert_eq!(hash_of(&7usize), hash_of(&7u64));
        assert_eq!(hash_of(&-7isize), hash_of(&-7i64));
    }

    /// The hash of `item` and the hash of the same byte stream through the general path.
    fn fast_and_general<T: Hash>(builder: DefaultHashBuilder, item: T) -> (u64, u64) {
        let mut hasher = builder.build_hasher();
        item.hash(&mut hasher);
        (builder.hash_one(item), hasher.finish_stream())
    }

    #[test]
    fn integer_keys_hash_as_their_little_endian_bytes_through_the_general_path() {
        for seed in [0, 1, DEFAULT_SEED, u64::MAX] {
            let builder = DefaultHashBuilder::with_seed(seed);
            for value in [
                0u128,
                1,
                0x80,
                0xfedc_ba98_7654_3210,
                u128::MAX,
                0x0123 << 100,
            ] {
                macro_rules! check {
                    ($($t:ty => $bytes:expr),* $(,)?) => {$(
                        let v = value as $t;
                        let (fast, general) = fast_and_general(builder, v);
                        assert_eq!(fast, general, "{} {v}", stringify!($t));
                        assert_eq!(fast, xxh3_64_with_seed(&$bytes(v), seed), "{}", stringify!($t));
                    )*};
                }
                check!(
                    u8 => u8::to_le_bytes, u16 => u16::to_le_bytes, u32 => u32::to_le_bytes,
                    u64 => u64::to_le_bytes, u128 => u128::to_le_bytes,
                    usize => |v: usize| (v as u64).to_le_bytes(),
                    i8 => i8::to_le_bytes, i16 => i16::to_le_bytes, i32 => i32::to_le_bytes,
                    i64 => i64::to_le_bytes, i128 => i128::to_le_bytes,
                    isize => |v: isize| (v as i64).to_le_bytes(),
                );
            }
        }
    }

    #[test]
    fn keys_of_several_writes_hash_the_same_through_either_path() {
        let builder = DefaultHashBuilder::with_seed(99);
        let cases = [
            fast_and_general(builder, (1u8, 2u8)),
            fast_and_general(builder, (1u16, 2u16)),
            fast_and_general(builder, (1u32, 2u32)),
            fast_and_general(builder, (1u64, 2u64)),
            fast_and_general(builder, (1u32, 2u16, 3u8, 4u8)),
            fast_and_general(builder, [7u8; 7]),
            fast_and_general(builder, "abc"),
            fast_and_general(builder, (1u64, 2u64, 3u64)),
        ];
        for (fast, general) in cases {
            assert_eq!(fast, general);
        }
        // Every stream length of up to three blocks, written byte by byte.
        let data: Vec<u8> = (0..200).map(|i| (i * 37) as u8).collect();
        for len in 0..data.len() {
            let mut hasher = builder.build_hasher();
            for &byte in &data[..len] {
                hasher.write_u8(byte);
            }
            assert_eq!(hasher.finish(), hasher.finish_stream(), "length {len}");
        }
    }

    #[test]
    fn result_does_not_depend_on_how_bytes_are_split() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for split in [0, 1, 63, 64, 65, 128, 500, 999, 1000] {
            let mut a = DefaultHashBuilder::new().build_hasher();
            a.write(&data[..split]);
            a.write(&data[split..]);
            let mut b = DefaultHashBuilder::new().build_hasher();
            for byte in &data {
                b.write_u8(*byte);
            }
            assert_eq!(a.finish(), b.finish(), "split at {split}");
        }
    }

    #[test]
    fn lengths_around_the_block_size_differ() {
        let data = [0u8; 200];
        let hashes: std::collections::HashSet<u64> = (0..200)
            .map(|n| {
                let mut h = DefaultHashBuilder::new().build_hasher();
                h.write(&data[..n]);
                h.finish()
            })
            .collect();
        assert_eq!(hashes.len(), 200);
    }
}
