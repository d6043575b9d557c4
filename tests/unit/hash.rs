use super::*;
use core::hash::Hash;

/// The function FORMAT.md gives, from XXH3 itself: the mix of its seed words for eight
/// bytes, else XXH3.
fn expected(seed: u64, bytes: &[u8]) -> u64 {
    let Ok(word) = <[u8; 8]>::try_from(bytes) else {
        return xxh3_64_with_seed(bytes, seed);
    };
    let [a, b] = WORD_MIX_SALTS.map(|salt| xxh3_64_with_seed(&salt.to_le_bytes(), seed));
    let spread = u64::from_le_bytes(word).wrapping_mul(SPREAD);
    let product = (spread ^ a) as u128 * (spread.rotate_left(32) ^ b) as u128;
    product as u64 ^ (product >> 64) as u64
}

/// The hash of `item` and the hash of the same byte stream through the general path.
fn fast_and_general<T: Hash>(builder: DefaultHashBuilder, item: T) -> (u64, u64) {
    let mut hasher = builder.build_hasher();
    item.hash(&mut hasher);
    (builder.hash_one(item), hasher.finish_stream())
}

#[test]
fn four_and_eight_byte_keys_match_the_function_under_any_seed() {
    let mut seed = 0x0123_4567_89ab_cdefu64;
    for round in 0..2000u64 {
        // Seeds of every shape: small, large, one bit, and a scrambled sequence.
        seed = match round % 4 {
            0 => round,
            1 => u64::MAX - round,
            2 => 1 << (round % 64),
            _ => seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ round,
        };
        let builder = DefaultHashBuilder::with_seed(seed);
        let key = seed.rotate_left(29) ^ round;
        assert_eq!(builder.hash_one(key), expected(seed, &key.to_le_bytes()));
        assert_eq!(
            builder.hash_one(key as u32),
            xxh3_64_with_seed(&(key as u32).to_le_bytes(), seed)
        );
    }
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
                    assert_eq!(fast, expected(seed, &$bytes(v)), "{}", stringify!($t));
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
fn the_mix_depends_on_every_bit_of_the_key_and_on_the_seed() {
    let mix = |seed| DefaultHashBuilder::with_seed(seed).mix;
    let key = 0x0123_4567_89ab_cdef;
    for bit in 0..64 {
        assert_ne!(mix(1).hash(key), mix(1).hash(key ^ 1 << bit), "bit {bit}");
    }
    assert_ne!(mix(1).hash(key), mix(2).hash(key));
}
