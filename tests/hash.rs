//! The default hasher through its public calls: a key's hash depends only on its byte stream.

use concurrent_cuckoo_filter::DefaultHashBuilder;
use core::hash::{BuildHasher, Hasher};

#[test]
fn a_stream_hashed_in_one_call_is_the_stream_a_hash_impl_writes() {
    let text: String = (0..300u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    for builder in [
        DefaultHashBuilder::new(),
        DefaultHashBuilder::with_seed(0x1234),
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
