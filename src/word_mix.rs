//! The default hasher's functions of one word: XXH3's path for streams of four to eight bytes,
//! and the mixes that replace it for a stream of exactly eight bytes (a lone `u64`, `i64`,
//! `usize`, or an `f64`'s bits), the commonest key and the one a lookup loop hashes most often;
//! and [`WordFunction`], which of them a builder computes, with the id the format records.
//!
//! - [`one_fold`] (`ccf-xxf8`, what new builders compute): the key times an odd constant, then
//!   that product and its halves swapped, each flipped by a seed word, multiplied in 128 bits and
//!   folded. One 64-bit and one 128-bit multiply, seven instructions.
//! - [`two_folds`] (`ccf-xxw8`): the key and its halves swapped, flipped and multiplied in 128
//!   bits, then the product's halves flipped again, multiplied and folded. Filters recorded under
//!   it still load and answer as they did.
//!
//! A lone 128-bit fold of the key itself is not enough: for a small key the swapped operand is
//! the key shifted up and the product's low bits are linear in the key, so keys `0..n` fill
//! filters unevenly (`tests/capacity.rs` fails with it: up to 64 of 600 key sets of one size
//! refused an insert within the capacity their filter claims). Multiplying the key by an odd
//! constant first, a bijection, spreads even a small key over the whole word before the fold.

/// The recorded id of XXH3 for every stream.
pub(crate) const XXH3_ID: u64 = u64::from_le_bytes(*b"ccf-xxh3");

/// The recorded id of XXH3 with eight-byte streams mixed by [`two_folds`].
pub(crate) const XXH3_TWO_FOLDS_ID: u64 = u64::from_le_bytes(*b"ccf-xxw8");

/// The recorded id of XXH3 with eight-byte streams mixed by [`one_fold`].
pub(crate) const XXH3_ONE_FOLD_ID: u64 = u64::from_le_bytes(*b"ccf-xxf8");

/// XXH3's default secret, bytes 8 to 24 as two little-endian words: what its path for inputs of
/// 4 to 8 bytes mixes with the seed.
const SECRET_8_TO_24: [u64; 2] = [0x1cad_21f7_2c81_017c, 0xdb97_9083_e96d_d4de];

/// What [`WordMix`] hashes under the seed for its four words: the first hexadecimal digits of π.
const WORD_MIX_SALTS: [u64; 4] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
];

/// The odd multiplier [`one_fold`] spreads a key with: 2^64 divided by the golden ratio.
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

/// The seed-derived words of the mixes: [`one_fold`] takes the first two, [`two_folds`] all four.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct WordMix {
    pub(crate) flips: [u64; 4],
    /// [`SPREAD`], as a field: a lookup loop reads it as a memory operand, where the constant
    /// would hold a register (x86-64 multiplies by no 64-bit immediate) that wider lookups spill.
    pub(crate) spread: u64,
}

impl WordMix {
    /// The words for `seed`: XXH3-64 under the seed of each of [`WORD_MIX_SALTS`], as eight
    /// little-endian bytes.
    pub(crate) const fn of(seed: u64) -> Self {
        let flip = flip_4to8(seed);
        let mut flips = [0; 4];
        let mut i = 0;
        while i < flips.len() {
            flips[i] = xxh3_word(WORD_MIX_SALTS[i], flip);
            i += 1;
        }
        Self {
            flips,
            spread: SPREAD,
        }
    }
}

/// `a × b` in 128 bits, its two halves XORed.
#[inline(always)]
const fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = a as u128 * b as u128;
    product as u64 ^ (product >> 64) as u64
}

/// The `ccf-xxf8` hash of an eight-byte key, with the first two of its [`WordMix`] words and
/// its [`WordMix::spread`].
#[inline(always)]
pub(crate) const fn one_fold(key: u64, a: u64, b: u64, spread: u64) -> u64 {
    let spread_key = key.wrapping_mul(spread);
    folded_multiply(spread_key ^ a, spread_key.rotate_left(32) ^ b)
}

/// The `ccf-xxw8` hash of an eight-byte key, wyhash's for eight bytes, with the words of its
/// [`WordMix`].
#[inline(always)]
pub(crate) const fn two_folds(key: u64, [a, b, c, d]: [u64; 4]) -> u64 {
    let product = (key ^ a) as u128 * (key.rotate_left(32) ^ b) as u128;
    folded_multiply(product as u64 ^ c, (product >> 64) as u64 ^ d)
}

/// What a [`DefaultHashBuilder`](crate::DefaultHashBuilder) computes for a stream of exactly
/// eight bytes: the one thing in which its hash functions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WordFunction {
    /// [`one_fold`], of `ccf-xxf8`.
    OneFold,
    /// [`two_folds`], of `ccf-xxw8`.
    TwoFolds,
    /// XXH3, of `ccf-xxh3`.
    Xxh3,
}

/// [`two_folds`], for filters recorded under `ccf-xxw8`.
#[cold]
#[inline(never)]
fn two_folds_out_of_line(word: u64, a: u64, b: u64, c: u64, d: u64) -> u64 {
    two_folds(word, [a, b, c, d])
}

/// [`xxh3_word`], for filters recorded under `ccf-xxh3`.
#[cold]
#[inline(never)]
fn xxh3_word_out_of_line(word: u64, flip_4to8: u64) -> u64 {
    xxh3_word(word, flip_4to8)
}

impl WordFunction {
    /// The hash of an eight-byte stream, read as the little-endian `word`. Only the function new
    /// builders compute is inline; the others are calls, so that it falls through with no jump.
    /// The calls take words, not the mix or the hasher, which they would make the caller build
    /// in memory for every key.
    #[inline(always)]
    pub(crate) fn hash(self, word: u64, mix: WordMix, flip_4to8: u64) -> u64 {
        let [a, b, c, d] = mix.flips;
        match self {
            Self::OneFold => one_fold(word, a, b, mix.spread),
            Self::TwoFolds => two_folds_out_of_line(word, a, b, c, d),
            Self::Xxh3 => xxh3_word_out_of_line(word, flip_4to8),
        }
    }

    /// The id the byte format records for the builder's function.
    pub(crate) const fn id(self) -> u64 {
        match self {
            Self::OneFold => XXH3_ONE_FOLD_ID,
            Self::TwoFolds => XXH3_TWO_FOLDS_ID,
            Self::Xxh3 => XXH3_ID,
        }
    }
}

/// What XXH3 XORs into an input of 4 to 8 bytes under `seed` (`xxh3_64_4to8` of the reference):
/// the default secret's words 8..24 less the seed with its low half byte-swapped into its high.
pub(crate) const fn flip_4to8(seed: u64) -> u64 {
    let seed = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
    (SECRET_8_TO_24[0] ^ SECRET_8_TO_24[1]).wrapping_sub(seed)
}

/// XXH3-64 of the eight little-endian bytes of `word`, under the seed whose [`flip_4to8`] is
/// `flip`.
#[inline(always)]
pub(crate) const fn xxh3_word(word: u64, flip: u64) -> u64 {
    strong_avalanche(word.rotate_left(32) ^ flip, 8)
}

/// XXH3's final mix for inputs of 4 to 8 bytes (`rrmxmx`).
#[inline(always)]
pub(crate) const fn strong_avalanche(mut value: u64, len: u64) -> u64 {
    const PRIME: u64 = 0x9fb2_1c65_1e98_df25;
    value ^= value.rotate_left(49) ^ value.rotate_left(24);
    value = value.wrapping_mul(PRIME);
    value ^= (value >> 35).wrapping_add(len);
    value = value.wrapping_mul(PRIME);
    value ^ (value >> 28)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    #[test]
    fn the_words_are_xxh3_of_the_salts_and_xxh3_word_is_xxh3() {
        for seed in [0, 7, 0x5eed_c0ff_ee15_f00d, u64::MAX] {
            let words = WORD_MIX_SALTS.map(|salt| xxh3_64_with_seed(&salt.to_le_bytes(), seed));
            assert_eq!(WordMix::of(seed).flips, words);
            let key = seed.rotate_left(13) ^ 0x0102_0304_0506_0708;
            assert_eq!(
                xxh3_word(key, flip_4to8(seed)),
                xxh3_64_with_seed(&key.to_le_bytes(), seed)
            );
        }
    }

    #[test]
    fn each_mix_depends_on_every_bit_of_the_key_and_on_the_seed() {
        let one = |key, seed| {
            let [a, b, _, _] = WordMix::of(seed).flips;
            one_fold(key, a, b, SPREAD)
        };
        let two = |key, seed| two_folds(key, WordMix::of(seed).flips);
        for function in [one, two] {
            let key = 0x0123_4567_89ab_cdef;
            for bit in 0..64 {
                assert_ne!(function(key, 1), function(key ^ 1 << bit, 1), "bit {bit}");
            }
            assert_ne!(function(key, 1), function(key, 2));
        }
    }
}
