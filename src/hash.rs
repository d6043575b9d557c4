//! The default hasher, `ccf-xxf8` (FORMAT.md): seeded XXH3-64 of a key's byte stream, integers
//! little-endian and `usize`/`isize` as 64 bits so that filters move between platforms, and one
//! 128-bit multiply-fold for a stream of exactly eight bytes, the commonest key.

use core::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The recorded id of the default hasher's function.
pub(crate) const HASHER_ID: u64 = u64::from_le_bytes(*b"ccf-xxf8");

/// The seed [`DefaultHashBuilder::new`] uses. Part of the format: changing it changes every hash.
const DEFAULT_SEED: u64 = 0x5eed_c0ff_ee15_f00d;

/// Bytes gathered before they are folded into the state: nearly every key costs one XXH3 call.
const BUFFER_BYTES: usize = 64;

/// XXH3's default secret, bytes 8 to 24 as little-endian words: its 4-to-8-byte path's.
const SECRET_8_TO_24: [u64; 2] = [0x1cad_21f7_2c81_017c, 0xdb97_9083_e96d_d4de];

/// What [`WordMix`] hashes under the seed for its two words: the first hexadecimal digits of π.
const WORD_MIX_SALTS: [u64; 2] = [0x243f_6a88_85a3_08d3, 0x1319_8a2e_0370_7344];

/// The odd multiplier [`WordMix::hash`] spreads a key with: 2^64 divided by the golden ratio.
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

/// What the hash of an eight-byte stream takes from the seed, derived once per builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct WordMix {
    flips: [u64; 2],
    /// [`SPREAD`] as a field, read as a memory operand where the constant would hold a register.
    spread: u64,
}

impl WordMix {
    /// The seed's words, from its [`flip_4to8`] `flip`: XXH3-64 of [`WORD_MIX_SALTS`] under it.
    const fn of(flip: u64) -> Self {
        let [a, b] = WORD_MIX_SALTS;
        Self {
            flips: [
                strong_avalanche(a.rotate_left(32) ^ flip, 8),
                strong_avalanche(b.rotate_left(32) ^ flip, 8),
            ],
            spread: SPREAD,
        }
    }

    /// The hash of the eight-byte stream `word`: spread, then a seeded multiply-fold.
    #[inline(always)]
    const fn hash(self, word: u64) -> u64 {
        let spread = word.wrapping_mul(self.spread);
        let product =
            (spread ^ self.flips[0]) as u128 * (spread.rotate_left(32) ^ self.flips[1]) as u128;
        product as u64 ^ (product >> 64) as u64
    }
}

/// What XXH3 XORs into an input of 4 to 8 bytes under `seed` (its `xxh3_64_4to8`).
const fn flip_4to8(seed: u64) -> u64 {
    let seed = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
    (SECRET_8_TO_24[0] ^ SECRET_8_TO_24[1]).wrapping_sub(seed)
}

/// XXH3's final mix for inputs of 4 to 8 bytes (`rrmxmx`).
#[inline(always)]
const fn strong_avalanche(mut value: u64, len: u64) -> u64 {
    const PRIME: u64 = 0x9fb2_1c65_1e98_df25;
    value ^= value.rotate_left(49) ^ value.rotate_left(24);
    value = value.wrapping_mul(PRIME);
    value ^= (value >> 35).wrapping_add(len);
    value = value.wrapping_mul(PRIME);
    value ^ (value >> 28)
}

/// The default [`BuildHasher`]: seeded XXH3-64, whose output depends only on the seed and the
/// bytes a key's `Hash` impl writes, never on the platform or a dependency's version.
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
    /// [`flip_4to8`] of the seed, so that a 4- or 8-byte key does not derive it again.
    flip_4to8: u64,
    mix: WordMix,
}

impl DefaultHashBuilder {
    /// The builder with the crate's fixed default seed.
    #[must_use]
    pub const fn new() -> Self {
        Self::with_seed(DEFAULT_SEED)
    }

    /// A builder with a seed of your own: the seed of another filter's
    /// [`hasher`](crate::ConcurrentCuckooFilter::hasher), to build a filter it can merge with.
    #[must_use]
    pub const fn with_seed(seed: u64) -> Self {
        let flip = flip_4to8(seed);
        Self {
            seed,
            flip_4to8: flip,
            mix: WordMix::of(flip),
        }
    }

    /// A builder with a seed drawn at random in every call, for keys from untrusted clients (see
    /// the crate docs), recorded with the filter's bytes. Filters merge only with equal seeds:
    /// give every filter of a job a clone of one builder, or [`seed`](Self::seed) to
    /// [`with_seed`](Self::with_seed).
    #[must_use]
    pub fn random() -> Self {
        use std::collections::hash_map::RandomState;
        // Each `RandomState` has a new key: its hash of a constant is a fresh random word.
        Self::with_seed(RandomState::new().hash_one(DEFAULT_SEED))
    }

    /// The seed this builder hashes with.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The hash of an item whose [`Hash`](core::hash::Hash) impl writes exactly `stream`, as
    /// [`hash_one`](BuildHasher::hash_one) gives it, for keys held as bytes (a `str`'s stream is
    /// its UTF-8 bytes then `0xff`).
    #[must_use]
    #[inline]
    pub fn hash_stream(&self, stream: &[u8]) -> u64 {
        if stream.len() > BUFFER_BYTES {
            let mut hasher = self.build_hasher();
            hasher.write(stream);
            return hasher.finish();
        }
        match <[u8; 8]>::try_from(stream) {
            Ok(word) => self.mix.hash(u64::from_le_bytes(word)),
            Err(_) => xxh3_64_with_seed(stream, self.seed),
        }
    }
}

impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for DefaultHashBuilder {
    type Hasher = FilterHasher;

    #[inline]
    fn build_hasher(&self) -> FilterHasher {
        FilterHasher {
            state: self.seed,
            flip_4to8: self.flip_4to8,
            mix: self.mix,
            buf: [0; BUFFER_BYTES],
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

/// The [`Hasher`] of [`DefaultHashBuilder`]: bytes collect in a 64-byte block, each full block
/// folded into the state by one XXH3 call, so the hash depends only on the byte stream, not on
/// how a `Hash` impl splits it into writes.
#[derive(Clone, Debug)]
pub struct FilterHasher {
    state: u64,
    /// The builder's, for the seed `state` starts as.
    flip_4to8: u64,
    mix: WordMix,
    buf: [u8; BUFFER_BYTES],
    len: usize,
    folded: u64,
}

impl FilterHasher {
    /// Appends bytes; inlined, so a fixed-size key's writes reduce to a few stores.
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
            if self.len == BUFFER_BYTES {
                self.state = xxh3_64_with_seed(&self.buf, self.state);
                self.folded += 1;
                self.len = 0;
            }
            let take = (BUFFER_BYTES - self.len).min(bytes.len());
            self.buf[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            if bytes.is_empty() {
                return;
            }
        }
    }

    /// [`Hasher::finish`] of any stream: one XXH3 call over the last block, or the eight-byte mix.
    #[inline(never)]
    fn finish_stream(&self) -> u64 {
        let tail = &self.buf[..self.len];
        if self.folded == 0 {
            return match <[u8; 8]>::try_from(tail) {
                Ok(word) => self.mix.hash(u64::from_le_bytes(word)),
                Err(_) => xxh3_64_with_seed(tail, self.state),
            };
        }
        // A stream that folded blocks ends under a seed that also records how many it folded.
        xxh3_64_with_seed(
            tail,
            self.state ^ self.folded.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        )
    }

    /// The block's first `N` bytes, `N` a constant.
    #[inline(always)]
    fn first<const N: usize>(&self) -> [u8; N] {
        let mut bytes = [0; N];
        bytes.copy_from_slice(&self.buf[..N]);
        bytes
    }

    /// XXH3 of the block's first 4 bytes, nothing folded, with the builder's [`flip_4to8`].
    #[inline(always)]
    fn finish_4(&self) -> u64 {
        let word = u64::from(u32::from_le_bytes(self.first()));
        strong_avalanche(word.wrapping_add(word << 32) ^ self.flip_4to8, 4)
    }

    /// XXH3 of the block's first `N` bytes: XXH3's short path for it.
    #[inline(always)]
    fn finish_short<const N: usize>(&self) -> u64 {
        xxh3_64_with_seed(&self.first::<N>(), self.state)
    }
}

/// `Hasher::write_*` of each integer type: its little-endian bytes, pushed.
macro_rules! write_little_endian {
    ($($write:ident: $int:ty),*) => {$(
        #[inline]
        fn $write(&mut self, i: $int) {
            self.push(&i.to_le_bytes());
        }
    )*};
}

impl Hasher for FilterHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        // A lone integer key (the length is a constant once `hash_one` is inlined) takes a
        // branch-free path with the same value as `finish_stream`; any other key takes a call.
        if self.folded == 0 {
            match self.len {
                1 => return self.finish_short::<1>(),
                2 => return self.finish_short::<2>(),
                4 => return self.finish_4(),
                8 => return self.mix.hash(u64::from_le_bytes(self.first())),
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
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }

    write_little_endian!(
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128,
        write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128
    );
}

#[cfg(test)]
#[path = "../tests/unit/hash.rs"]
mod tests;
