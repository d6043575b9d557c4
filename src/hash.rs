//! The default hasher: seeded XXH3, with the same output on every platform, and one 128-bit
//! multiply-fold for keys of eight bytes.
//!
//! `std`'s `Hasher` defaults write integers in native byte order and `usize` at native width, so
//! the same key would hash differently on a big-endian or 32-bit machine and a filter written on
//! one could not be read on another. [`FilterHasher`] writes every integer as little-endian and
//! every `usize`/`isize` as 64 bits, then hashes the byte stream.
//!
//! Three hash functions, each with the id the byte format records
//! ([`StableHashBuilder::HASHER_ID`](crate::StableHashBuilder::HASHER_ID)); they differ only for
//! a stream of exactly eight bytes (`word_mix.rs` gives their mixes):
//! - `ccf-xxf8`, what every new builder computes: XXH3-64 of the stream, except a stream of
//!   eight bytes, which takes [`one_fold`](crate::word_mix::one_fold).
//! - `ccf-xxw8`: the same, with [`two_folds`](crate::word_mix::two_folds) for eight bytes.
//! - `ccf-xxh3`: XXH3-64 of every stream.
//!
//! Filters written under an older function still load with [`DefaultHashBuilder`], which then
//! computes that function, so they answer as they did.

use core::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::filter_hasher::{FilterHasher, BLOCK};
use crate::word_mix::{
    flip_4to8, WordFunction, WordMix, XXH3_ID, XXH3_ONE_FOLD_ID, XXH3_TWO_FOLDS_ID,
};

/// The seed [`DefaultHashBuilder::new`] uses. Part of the format: changing it changes every hash.
const DEFAULT_SEED: u64 = 0x5eed_c0ff_ee15_f00d;

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
    /// [`flip_4to8`] of the seed, so that a 4- or 8-byte key does not derive it again.
    flip_4to8: u64,
    /// The words the mixes take from the seed.
    mix: WordMix,
    /// What it computes for a stream of eight bytes.
    word: WordFunction,
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
        Self {
            seed,
            flip_4to8: flip_4to8(seed),
            mix: WordMix::of(seed),
            word: WordFunction::OneFold,
        }
    }

    /// The builder that computes the hash function recorded as `hasher_id` with `seed`, for a
    /// filter read from bytes; `None` for an id that is not one of [the crate's](self).
    pub(crate) const fn recorded(hasher_id: u64, seed: u64) -> Option<Self> {
        let word = match hasher_id {
            XXH3_ONE_FOLD_ID => WordFunction::OneFold,
            XXH3_TWO_FOLDS_ID => WordFunction::TwoFolds,
            XXH3_ID => WordFunction::Xxh3,
            _ => return None,
        };
        Some(Self {
            word,
            ..Self::with_seed(seed)
        })
    }

    /// The id of the hash function this builder computes, as the byte format records it.
    pub(crate) const fn function_id(&self) -> u64 {
        self.word.id()
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

    /// The hash of an item whose [`Hash`](core::hash::Hash) impl writes exactly the bytes
    /// `stream`, as [`hash_one`](BuildHasher::hash_one) gives it, with no hasher state built
    /// for a stream that fits one block (64 bytes). A `str` key's stream is its UTF-8 bytes
    /// followed by `0xff`; a language binding or a file reader that holds keys as bytes hashes
    /// them in one call.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::hash::BuildHasher;
    /// use concurrent_cuckoo_filter::DefaultHashBuilder;
    ///
    /// let hasher = DefaultHashBuilder::new();
    /// assert_eq!(hasher.hash_stream(b"alice\xff"), hasher.hash_one("alice"));
    /// assert_eq!(hasher.hash_stream(&7u64.to_le_bytes()), hasher.hash_one(7u64));
    /// ```
    #[must_use]
    #[inline]
    pub fn hash_stream(&self, stream: &[u8]) -> u64 {
        if stream.len() > BLOCK {
            let mut hasher = self.build_hasher();
            hasher.write(stream);
            return hasher.finish();
        }
        match <[u8; 8]>::try_from(stream) {
            Ok(word) => self
                .word
                .hash(u64::from_le_bytes(word), self.mix, self.flip_4to8),
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
        FilterHasher::new(self.seed, self.flip_4to8, self.mix, self.word)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word_mix::{one_fold, two_folds};
    use core::hash::Hash;

    fn hash_of<T: Hash + ?Sized>(item: &T) -> u64 {
        DefaultHashBuilder::new().hash_one(item)
    }

    /// The builder of `ccf-xxh3`, XXH3 for every stream.
    fn xxh3_only(seed: u64) -> DefaultHashBuilder {
        DefaultHashBuilder::recorded(XXH3_ID, seed).unwrap()
    }

    /// What the default function gives a stream: the one-fold mix for eight bytes, else XXH3.
    fn expected(seed: u64, bytes: &[u8]) -> u64 {
        match <[u8; 8]>::try_from(bytes) {
            Ok(word) => {
                let [a, b, _, _] = WordMix::of(seed).flips;
                one_fold(u64::from_le_bytes(word), a, b, WordMix::of(seed).spread)
            }
            Err(_) => xxh3_64_with_seed(bytes, seed),
        }
    }

    #[test]
    fn short_keys_are_one_call_over_their_little_endian_bytes() {
        let key = 0x0102_0304_0506_0708u64;
        assert_eq!(hash_of(&key), expected(DEFAULT_SEED, &key.to_le_bytes()));
        assert_eq!(
            xxh3_only(DEFAULT_SEED).hash_one(key),
            xxh3_64_with_seed(&key.to_le_bytes(), DEFAULT_SEED)
        );
        assert_ne!(hash_of(&key), xxh3_only(DEFAULT_SEED).hash_one(key));
        assert_eq!(hash_of(&7usize), hash_of(&7u64));
        assert_eq!(hash_of(&-7isize), hash_of(&-7i64));
        assert_eq!(hash_of(&7u32), xxh3_only(DEFAULT_SEED).hash_one(7u32));
    }

    #[test]
    fn each_builder_records_the_function_it_computes() {
        let default = DefaultHashBuilder::with_seed(5);
        assert_eq!(default.function_id(), XXH3_ONE_FOLD_ID);
        assert_eq!(
            DefaultHashBuilder::recorded(XXH3_ONE_FOLD_ID, 5),
            Some(default)
        );
        let older = DefaultHashBuilder::recorded(XXH3_TWO_FOLDS_ID, 5).unwrap();
        assert_eq!(older.function_id(), XXH3_TWO_FOLDS_ID);
        let key = 0x0102_0304_0506_0708u64;
        assert_eq!(older.hash_one(key), two_folds(key, WordMix::of(5).flips));
        assert_eq!(older.hash_one("key"), default.hash_one("key"));
        let old = xxh3_only(5);
        assert_eq!(old.function_id(), XXH3_ID);
        assert_eq!(old.seed(), 5);
        assert_ne!(old, default);
        assert_eq!(
            DefaultHashBuilder::recorded(u64::from_le_bytes(*b"fnv1a-v1"), 5),
            None
        );
    }

    /// The hash of `item` and the hash of the same byte stream through the general path.
    fn fast_and_general<T: Hash>(builder: DefaultHashBuilder, item: T) -> (u64, u64) {
        let mut hasher = builder.build_hasher();
        item.hash(&mut hasher);
        (builder.hash_one(item), hasher.finish_stream())
    }

    #[test]
    fn four_and_eight_byte_keys_match_xxh3_under_any_seed() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        for round in 0..2000u64 {
            // Seeds of every shape: small, large, one bit, and a scrambled sequence.
            seed = match round % 4 {
                0 => round,
                1 => u64::MAX - round,
                2 => 1 << (round % 64),
                _ => seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ round,
            };
            let builder = xxh3_only(seed);
            let key = seed.rotate_left(29) ^ round;
            assert_eq!(
                builder.hash_one(key),
                xxh3_64_with_seed(&key.to_le_bytes(), seed)
            );
            assert_eq!(
                builder.hash_one(key as u32),
                xxh3_64_with_seed(&(key as u32).to_le_bytes(), seed)
            );
            let default = DefaultHashBuilder::with_seed(seed);
            assert_eq!(default.hash_one(key), expected(seed, &key.to_le_bytes()));
        }
    }

    #[test]
    fn integer_keys_hash_as_their_little_endian_bytes_through_the_general_path() {
        for seed in [0, 1, DEFAULT_SEED, u64::MAX] {
            for (builder, mixes) in [
                (DefaultHashBuilder::with_seed(seed), true),
                (xxh3_only(seed), false),
            ] {
                let want = |bytes: &[u8]| {
                    if mixes {
                        expected(seed, bytes)
                    } else {
                        xxh3_64_with_seed(bytes, seed)
                    }
                };
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
                            assert_eq!(fast, want(&$bytes(v)), "{}", stringify!($t));
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
    fn a_stream_hashed_in_one_call_is_the_stream_a_hash_impl_writes() {
        let text: String = (0..300u32)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        for builder in [
            DefaultHashBuilder::new(),
            DefaultHashBuilder::with_seed(0x1234),
            xxh3_only(DEFAULT_SEED),
        ] {
            // Every length around the eight-byte mix and the block, and the folds after it.
            for len in 0..text.len() {
                let key = &text[..len];
                let mut stream = key.as_bytes().to_vec();
                stream.push(0xff);
                assert_eq!(builder.hash_stream(&stream), builder.hash_one(key), "{len}");
                let bytes = &text.as_bytes()[..len];
                let mut hasher = builder.build_hasher();
                hasher.write(bytes);
                assert_eq!(builder.hash_stream(bytes), hasher.finish(), "{len}");
            }
            assert_eq!(
                builder.hash_stream(&7u64.to_le_bytes()),
                builder.hash_one(7u64)
            );
            assert_eq!(
                builder.hash_stream(&7u32.to_le_bytes()),
                builder.hash_one(7u32)
            );
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
