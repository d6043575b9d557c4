use super::*;

#[test]
fn expired_lanes_are_the_tags_older_than_the_window() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for generations in 1..=u64::from(Ages::MAX_GENERATIONS) {
        let ages = Ages { generations };
        for g in 0..40 {
            for _ in 0..64 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Bits above the four tags belong to the next bucket: ignored.
                let tags = state;
                let want = (0..4).fold(0, |mask, i| {
                    let tag = tags >> (4 * i) & Ages::TAG_MASK;
                    mask | u32::from(Ages::age(tag, g) > generations) << i
                });
                assert_eq!(ages.expired_lanes(tags, g), want, "G {generations} g {g}");
            }
        }
    }
}
