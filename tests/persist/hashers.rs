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
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&bytes).unwrap_err(),
        mismatch
    );
    assert_eq!(
        ConcurrentCuckooFilter::read_from(&bytes[..]).unwrap_err(),
        mismatch
    );
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
