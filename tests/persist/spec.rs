//! FORMAT.md, reimplemented from its text alone: its hash, its placement, and a reader that answers
//! lookups on a golden file.

use super::*;
use concurrent_cuckoo_filter::DebugCandidates;

const PHI: u64 = 0x9e37_79b9_7f4a_7c15;

/// The default hasher's `ccf-xxf8` as FORMAT.md describes it, over a key's byte stream.
fn spec_hash(bytes: &[u8], seed: u64) -> u64 {
    if let Ok(word) = <[u8; 8]>::try_from(bytes) {
        let salts = [0x243F6A8885A308D3u64, 0x13198A2E03707344];
        let w = salts.map(|salt| xxh3_64_with_seed(&salt.to_le_bytes(), seed));
        let y = u64::from_le_bytes(word).wrapping_mul(PHI);
        let p = (y ^ w[0]) as u128 * (y.rotate_left(32) ^ w[1]) as u128;
        return p as u64 ^ (p >> 64) as u64;
    }
    if bytes.len() <= 64 {
        return xxh3_64_with_seed(bytes, seed);
    }
    let folded = bytes.len().div_ceil(64) - 1;
    let mut state = seed;
    for block in bytes[..folded * 64].chunks(64) {
        state = xxh3_64_with_seed(block, state);
    }
    xxh3_64_with_seed(
        &bytes[folded * 64..],
        state ^ (folded as u64).wrapping_mul(PHI),
    )
}

/// FORMAT.md's placement: (fingerprint, first bucket, second bucket).
fn spec_placement(hash: u64, buckets: u64, bits: u32) -> (u64, u64, u64) {
    let fp = (((hash & 0xffff_ffff) * ((1u64 << bits) - 1)) >> 32) + 1;
    let first = ((hash >> 32) * buckets) >> 32;
    let mixed = ((fp.wrapping_mul(PHI) >> 32) * buckets) >> 32;
    (fp, first, (mixed + buckets - first) % buckets)
}

/// Hashes as exactly the bytes it holds.
struct RawBytes<'a>(&'a [u8]);

impl Hash for RawBytes<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}

#[test]
fn format_md_hash_and_placement_are_the_crates() {
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    for seed in [0, 1, 0x5eed_c0ff_ee15_f00d] {
        let hasher = DefaultHashBuilder::with_seed(seed);
        for len in 0..=data.len() {
            let bytes = &data[..len];
            assert_eq!(
                hasher.hash_one(RawBytes(bytes)),
                spec_hash(bytes, seed),
                "n={len}"
            );
        }
        assert_eq!(
            hasher.hash_one(0x0102_0304_0506_0708u64),
            spec_hash(&0x0102_0304_0506_0708u64.to_le_bytes(), seed)
        );
        assert_eq!(hasher.hash_one("key"), spec_hash(b"key\xff", seed));
    }
    for (slots, bits, capacity) in [(4, 12, 3000), (2, 32, 1000), (8, 5, 70_000)] {
        let filter = build(slots, bits, capacity, 77);
        let buckets = filter.bucket_count() as u64;
        for key in 0..2000u64 {
            let DebugCandidates {
                fingerprint: fp,
                first,
                second,
            } = filter.debug_candidates(&key);
            let hash = spec_hash(&key.to_le_bytes(), 77);
            assert_eq!(
                spec_placement(hash, buckets, bits),
                (fp.into(), first as u64, second as u64)
            );
        }
    }
}

#[test]
fn a_reader_written_from_format_md_answers_on_a_golden_file() {
    let bytes = std::fs::read(data_dir().join("golden-v1-b4-f12.bin")).unwrap();
    assert_eq!(bytes[..8], *b"\x89CCF\r\n\x1a\n");
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    assert_eq!(get_u64(&bytes, HEADER_CHECKSUM_AT), xxh3_64(&bytes[..80]));
    let end = bytes.len() - 8;
    assert_eq!(get_u64(&bytes, end), xxh3_64(&bytes[..end]));
    let (slots, bits) = (
        bytes[BUCKET_SIZE_AT] as u64,
        bytes[FINGERPRINT_BITS_AT] as u32,
    );
    let buckets = get_u64(&bytes, BUCKETS_AT);
    let seed = get_u64(&bytes, SEED_AT);
    assert_eq!(get_u64(&bytes, HASHER_ID_AT).to_le_bytes(), *b"ccf-xxf8");
    let words = get_u64(&bytes, TABLE_WORDS_AT);
    assert_eq!(words, (buckets * slots * bits as u64).div_ceil(64));
    assert_eq!(bytes.len() as u64, 96 + 8 * words);
    let bit = |k: u64| get_u64(&bytes, HEADER_LEN + 8 * (k / 64) as usize) >> (k % 64) & 1;
    let fingerprint = |bucket: u64, slot: u64| {
        let start = (bucket * slots + slot) * bits as u64;
        (0..bits as u64).fold(0, |fp, i| fp | bit(start + i) << i)
    };
    let stored = (0..buckets)
        .flat_map(|b| (0..slots).map(move |s| (b, s)))
        .filter(|&(b, s)| fingerprint(b, s) != 0)
        .count();
    assert_eq!(stored as u64, get_u64(&bytes, ITEMS_AT));
    let used = buckets * slots * bits as u64;
    assert!((used..words * 64).all(|k| bit(k) == 0), "padding");
    let holds = |bucket: u64, fp: u64| (0..slots).any(|s| fingerprint(bucket, s) == fp);
    for key in 0..2500u64 {
        let hash = spec_hash(&key.to_le_bytes(), seed);
        let (fp, first, second) = spec_placement(hash, buckets, bits);
        assert!(holds(first, fp) || holds(second, fp), "key {key}");
    }
    for i in 0..200 {
        let mut key = format!("golden-{i}").into_bytes();
        key.push(0xff);
        let (fp, first, second) = spec_placement(spec_hash(&key, seed), buckets, bits);
        assert!(holds(first, fp) || holds(second, fp), "golden-{i}");
    }
}

/// With `CCF_WRITE_FUZZ_SEEDS=1`, writes small valid encodings for the fuzzer to start from.
#[test]
fn fuzz_seeds() {
    if std::env::var_os("CCF_WRITE_FUZZ_SEEDS").is_none() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bytes) in samples().iter().enumerate() {
        std::fs::write(dir.join(format!("sample-{i}.bin")), bytes).unwrap();
    }
}

// serde goes through the same bytes.

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_through_the_same_bytes() {
    let filter = build(4, 16, 1000, 21);
    let keys = fill(&filter, 800, 21);
    let json = serde_json::to_string(&filter).unwrap();
    let numbers: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(numbers, filter.to_bytes());
    let copy: ConcurrentCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_same(&filter, &copy, &keys);

    let mut bad = numbers.clone();
    bad[200] ^= 1;
    let err = serde_json::from_str::<ConcurrentCuckooFilter>(&serde_json::to_string(&bad).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    assert!(serde_json::from_str::<ConcurrentCuckooFilter>("\"text\"").is_err());
    assert!(serde_json::from_str::<ConcurrentCuckooFilter>("[1, 2, 300]").is_err());
}
