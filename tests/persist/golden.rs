//! Golden files: bytes written by format version 1 under the default hasher, which every later
//! version must read.

use super::*;

pub(super) fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The golden filters, rebuilt: name, filter, and a check of its members.
fn golden_filters() -> Vec<(&'static str, ConcurrentCuckooFilter)> {
    let a = ConcurrentCuckooFilter::builder()
        .capacity(3000)
        .layout(concurrent_cuckoo_filter::TableLayout::Packed)
        .build()
        .unwrap();
    for key in 0..2500u64 {
        a.insert(&key).unwrap();
    }
    for i in 0..200 {
        a.insert(&format!("golden-{i}")).unwrap();
    }
    let b = ConcurrentCuckooFilter::builder()
        .capacity(600)
        .bucket_size(8)
        .fingerprint_bits(20)
        .hasher(DefaultHashBuilder::with_seed(0xc0ffee))
        .stripes(4)
        .search_limits(4, 500)
        .build()
        .unwrap();
    for key in 0..500u64 {
        b.insert(&key).unwrap();
    }
    let c = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(0.001)
        .build()
        .unwrap();
    for key in 0..900u64 {
        c.insert(&key).unwrap();
    }
    let d = ConcurrentCuckooFilter::builder()
        .capacity(3000)
        .layout(concurrent_cuckoo_filter::TableLayout::BucketWord)
        .build()
        .unwrap();
    for key in 0..2500u64 {
        d.insert(&key).unwrap();
    }
    // Removes and re-inserts move the buckets' versions, which the file does not record.
    for key in (0..2500u64).step_by(5) {
        assert!(d.remove(&key));
        d.insert(&key).unwrap();
    }
    vec![
        ("golden-v1-b4-f12.bin", a),
        ("golden-v1-b4-f12-bucket-word.bin", d),
        ("golden-v1-b8-f20-seeded.bin", b),
        ("golden-v1-b4-f13-semi-sorted.bin", c),
    ]
}

#[test]
fn golden_files_decode_with_their_members() {
    let read = |name: &str| {
        let bytes = std::fs::read(data_dir().join(format!("{name}.bin"))).unwrap();
        assert_eq!(get_u64(&bytes, HASHER_ID_AT).to_le_bytes(), *b"ccf-xxf8");
        let filter = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
        // Written back: the same bytes.
        assert!(filter.to_bytes() == bytes, "{name}");
        filter
    };

    let a = read("golden-v1-b4-f12");
    assert_eq!(a.len(), 2700);
    assert_eq!(
        (a.bucket_count(), a.bucket_size(), a.fingerprint_bits()),
        (790, 4, 12)
    );
    assert_eq!(a.capacity(), 3002);
    assert_eq!(a.hasher().seed(), DefaultHashBuilder::new().seed());
    assert!((0..2500u64).all(|key| a.contains(&key)));
    assert!((0..200).all(|i| a.contains(&format!("golden-{i}"))));
    let false_positives = (10_000..110_000u64).filter(|key| a.contains(key)).count();
    assert!(false_positives < 300, "{false_positives}");

    let b = read("golden-v1-b8-f20-seeded");
    assert_eq!(b.len(), 500);
    assert_eq!(
        (b.bucket_count(), b.bucket_size(), b.fingerprint_bits()),
        (78, 8, 20)
    );
    assert_eq!(b.capacity(), 605);
    assert_eq!(b.hasher().seed(), 0xc0ffee);
    assert!(format!("{b:?}").contains("stripes: 4"), "{b:?}");
    assert!((0..500u64).all(|key| b.contains(&key)));
    assert!(!b.contains(&"golden-0"));

    let c = read("golden-v1-b4-f13-semi-sorted");
    assert_eq!(c.len(), 900);
    assert!(c.is_semi_sorted());
    assert_eq!((c.bucket_size(), c.fingerprint_bits()), (4, 13));
    assert!((0..900u64).all(|key| c.contains(&key)));

    let d = read("golden-v1-b4-f12-bucket-word");
    assert_eq!(d.len(), 2500);
    assert_eq!(
        d.layout(),
        concurrent_cuckoo_filter::TableLayout::BucketWord
    );
    assert_eq!(
        (d.bucket_count(), d.bucket_size(), d.fingerprint_bits()),
        (790, 4, 12)
    );
    assert!((0..2500u64).all(|key| d.contains(&key)));
    let false_positives = (10_000..110_000u64).filter(|key| d.contains(key)).count();
    assert!(false_positives < 300, "{false_positives}");
}

/// This version writes exactly the golden bytes (or, with `CCF_WRITE_GOLDEN=1`, writes them).
/// When a new format version comes, this test moves to new files; the old ones stay, read by
/// [`golden_files_decode_with_their_members`].
#[test]
fn golden_files_are_what_this_version_writes() {
    let write = std::env::var_os("CCF_WRITE_GOLDEN").is_some();
    for (name, filter) in golden_filters() {
        let path = data_dir().join(name);
        if write {
            std::fs::create_dir_all(data_dir()).unwrap();
            std::fs::write(&path, filter.to_bytes()).unwrap();
        } else {
            let golden = std::fs::read(&path).unwrap();
            assert!(golden == filter.to_bytes(), "{name} differs");
        }
    }
}
