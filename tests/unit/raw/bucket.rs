use super::*;

fn codecs() -> impl Iterator<Item = BucketCodec> {
    let plain = [2, 4, 8]
        .into_iter()
        .flat_map(|b| (4..=32).map(move |f| BucketCodec::new(b, f, false)));
    plain.chain((5..=32).map(|f| BucketCodec::new(4, f, true)))
}

#[test]
fn fill_find_count_and_empty_every_codec() {
    for codec in codecs() {
        let max = (1u64 << codec.fingerprint_bits()) - 1;
        let fps: Vec<u32> = (0..codec.bucket_size() as u64)
            .map(|i| max.saturating_sub(i * 3).max(1) as u32)
            .collect();
        let mut bucket = [0u128; 2];
        for &fp in &fps {
            assert!(codec.insert(&mut bucket, fp));
        }
        assert!(!codec.has_free(&bucket), "{codec:?}");
        assert!(!codec.insert(&mut bucket, 1));
        let mut stored = codec.fingerprints(&bucket).as_slice().to_vec();
        if codec.is_semi_sorted() {
            stored.sort_unstable();
            let mut want = fps.clone();
            want.sort_unstable();
            assert_eq!(stored, want);
        } else {
            assert_eq!(stored, fps);
        }
        for &fp in &fps {
            assert!(codec.matches(&bucket, codec.broadcast(fp)));
            assert_eq!(
                codec.count(&bucket, fp),
                fps.iter().filter(|&&x| x == fp).count()
            );
        }
        let absent = if fps.contains(&2) { 5 } else { 2 };
        assert!(!codec.matches(&bucket, codec.broadcast(absent)));
        // A bucket built whole holds what one filled slot by slot holds, in any slot order.
        let mut built = codec.fingerprints(&codec.encode(&fps)).as_slice().to_vec();
        built.sort_unstable();
        let mut filled = codec.fingerprints(&bucket).as_slice().to_vec();
        filled.sort_unstable();
        assert_eq!(built, filled, "{codec:?}");
        let half = &fps[..fps.len() / 2];
        let mut some = codec.fingerprints(&codec.encode(half)).as_slice().to_vec();
        some.sort_unstable();
        let mut want: Vec<u32> = half.to_vec();
        want.resize(codec.bucket_size(), 0);
        want.sort_unstable();
        assert_eq!(some, want, "{codec:?}");
        for &fp in &fps {
            assert!(codec.remove(&mut bucket, fp));
        }
        assert_eq!(bucket, [0, 0], "{codec:?}");
    }
}

#[test]
fn a_zero_lane_below_does_not_hide_or_fake_a_match_above() {
    let codec = BucketCodec::new(4, 8, false);
    let mut bucket = [0u128; 2];
    // Slot 0 empty, slot 1 holds 1: the borrow out of slot 0 must not make slot 1 look empty.
    bucket[0] = 1 << 8;
    assert_eq!(codec.count(&bucket, 0), 3);
    assert!(codec.insert(&mut bucket, 7));
    assert_eq!(codec.fingerprints(&bucket).as_slice(), &[7, 1, 0, 0]);
}
