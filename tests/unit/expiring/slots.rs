use super::*;

#[test]
fn buckets_lie_in_two_words_exactly_when_every_start_leaves_room() {
    for width in TAG_BITS + 1..=32 {
        let bucket_bits = u64::from(width) * BUCKET_SIZE as u64;
        // Buckets start at every offset their multiples reach within a word.
        let fits = (0..64u64).all(|b| (b * bucket_bits) % 64 + bucket_bits <= 128);
        assert_eq!(in_two_words(bucket_bits), fits, "width {width}");
    }
    // 13-bit fingerprints (68-bit buckets) fit; 15-bit ones (76) do not.
    assert!(in_two_words(68) && !in_two_words(76));
}

#[test]
fn tags_read_from_two_words_are_the_tags_windows() {
    for width in TAG_BITS + 1..=20 {
        let slots = Slots::new(40, width).unwrap();
        let mask = (1u64 << width) - 1;
        for b in 0..40 {
            for i in 0..BUCKET_SIZE {
                let value = (b as u64 * 0x9e37 + i as u64 * 0x79b9 + 1) & mask;
                slots.set(b, i, 0, value);
            }
        }
        for b in 0..40 {
            let want = (0..BUCKET_SIZE).fold(0, |tags, i| {
                tags | (slots.get(b, i) & Ages::TAG_MASK) << (i as u32 * TAG_BITS)
            });
            assert_eq!(slots.tags(b, None), want, "width {width} bucket {b}");
            let bits = slots.bucket_bits(b);
            assert_eq!(bits.low, slots.fingerprints(b));
            assert_eq!(slots.tags(b, Some(bits)), want, "width {width} bucket {b}");
        }
    }
}

#[test]
fn slots_of_every_width_keep_their_neighbours() {
    for width in [5, 8, 16, 17, 20, 21, 31, 32] {
        let slots = Slots::new(9, width).unwrap();
        let value = |b: usize, i: usize| ((b * 7 + i * 3 + 1) as u64) & ((1 << width) - 1);
        for b in 0..9 {
            for i in 0..BUCKET_SIZE {
                slots.set(b, i, 0, value(b, i));
            }
        }
        for b in 0..9 {
            assert_eq!(
                slots.bucket(b),
                core::array::from_fn(|i| value(b, i)),
                "{width}"
            );
        }
        slots.set(4, 2, value(4, 2), 0);
        assert_eq!(slots.get(4, 2), 0);
        assert_eq!(slots.get(4, 1), value(4, 1));
        assert_eq!(slots.get(4, 3), value(4, 3));
        assert_eq!(slots.bucket(4)[2], 0);
    }
}

#[test]
fn a_bucket_is_its_fingerprints_then_its_tags() {
    // f = 13: slot i's fingerprint at bit 68·b + 13·i, its tag at 68·b + 52 + 4·i.
    let slots = Slots::new(3, 17).unwrap();
    slots.set(1, 1, 0, Ages::slot(0x1abc, 9));
    let mut words = vec![0; slots.word_count()];
    slots.read_words(0, &mut words);
    let bits = u128::from(words[1]) << 64 | u128::from(words[0]);
    assert_eq!(bits >> (68 + 13) & 0x1fff, 0x1abc);
    assert_eq!(bits >> (68 + 52 + 4) & 0xf, 9);
    assert_eq!(
        bits.count_ones() + words[2].count_ones(),
        0x1abcu32.count_ones() + 9u32.count_ones()
    );
    let lanes = slots.lanes().unwrap();
    let hits = lanes.matches(slots.fingerprints(1), 0x1abc);
    assert_eq!(lanes.slots(hits), 1 << 1);
    assert_eq!(hits.count_ones(), 1);
    assert_eq!(slots.tags(1, None), 9 << 4);
}
