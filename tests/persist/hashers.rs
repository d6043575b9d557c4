//! Hashers.

use super::*;

/// A hasher with its own identity, that takes only even seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct EvenSeeded(pub(super) u64);

impl BuildHasher for EvenSeeded {
    type Hasher = <DefaultHashBuilder as BuildHasher>::Hasher;
    fn build_hasher(&self) -> Self::Hasher {
        DefaultHashBuilder::with_seed(self.0 ^ 0x5555).build_hasher()
    }
}

impl StableHashBuilder for EvenSeeded {
    const HASHER_ID: u64 = u64::from_le_bytes(*b"test-evn");
    fn seed(&self) -> u64 {
        self.0
    }
    fn from_seed(seed: u64) -> Option<Self> {
        (seed % 2 == 0).then_some(Self(seed))
    }
}

/// The error the default hasher's filter gets from `bytes`, the same from a slice and a reader.
fn default_err(bytes: &[u8]) -> DecodeError {
    let err = ConcurrentCuckooFilter::from_bytes(bytes).unwrap_err();
    assert_eq!(ConcurrentCuckooFilter::read_from(bytes).unwrap_err(), err);
    err
}

#[test]
fn a_filter_is_only_read_back_with_its_own_hash_function() {
    let custom = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .hasher(EvenSeeded(42))
        .build()
        .unwrap();
    for key in 0..500u64 {
        custom.insert(&key).unwrap();
    }
    let bytes = custom.to_bytes();
    assert_eq!(get_u64(&bytes, HASHER_ID_AT), EvenSeeded::HASHER_ID);
    assert_eq!(get_u64(&bytes, SEED_AT), 42);
    let copy = ConcurrentCuckooFilter::<EvenSeeded>::from_bytes_with_hasher(&bytes).unwrap();
    assert_eq!(copy.hasher(), &EvenSeeded(42));
    assert!((0..500u64).all(|key| copy.contains(&key)));
    let copy = ConcurrentCuckooFilter::<EvenSeeded>::read_from_with_hasher(&bytes[..]).unwrap();
    assert_eq!(copy.len(), 500);

    let default_id = <DefaultHashBuilder as StableHashBuilder>::HASHER_ID;
    assert_eq!(default_id.to_le_bytes(), *b"ccf-xxf8");
    let mismatch = DecodeError::HasherMismatch {
        expected: default_id,
        found: EvenSeeded::HASHER_ID,
    };
    assert_eq!(default_err(&bytes), mismatch);
    let plain = build(4, 12, 1000, 7).to_bytes();
    assert!(matches!(
        ConcurrentCuckooFilter::<EvenSeeded>::from_bytes_with_hasher(&plain),
        Err(DecodeError::HasherMismatch { .. })
    ));

    let mut odd = bytes.clone();
    set_u64(&mut odd, SEED_AT, 43);
    reseal(&mut odd);
    assert_eq!(
        ConcurrentCuckooFilter::<EvenSeeded>::from_bytes_with_hasher(&odd).unwrap_err(),
        DecodeError::InvalidSeed { seed: 43 }
    );
}

/// A golden file with its hasher id patched to `id` and both checksums made right.
fn golden_recorded_as(id: &[u8; 8]) -> Vec<u8> {
    let mut bytes = std::fs::read(data_dir().join("golden-v1-b4-f12.bin")).unwrap();
    set_u64(&mut bytes, HASHER_ID_AT, u64::from_le_bytes(*id));
    reseal(&mut bytes);
    bytes
}

#[test]
fn a_file_recorded_under_a_retired_id_of_the_default_hasher_is_refused() {
    let golden = golden_recorded_as(b"ccf-xxf8");
    let filter = ConcurrentCuckooFilter::from_bytes(&golden).unwrap();
    assert!(filter.to_bytes() == golden);
    for retired in [b"ccf-xxh3", b"ccf-xxw8"] {
        assert_eq!(
            default_err(&golden_recorded_as(retired)),
            DecodeError::HasherMismatch {
                expected: DefaultHashBuilder::HASHER_ID,
                found: u64::from_le_bytes(*retired),
            }
        );
    }
}
