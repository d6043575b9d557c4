use super::*;

#[test]
fn every_code_is_used_once() {
    let mut seen = vec![false; CODES];
    for &packed in PREFIXES[..CODES].iter() {
        let p = [0, 4, 8, 12].map(|shift| (packed as u32 >> shift) & 0xf);
        assert!(p[0] <= p[1] && p[1] <= p[2] && p[2] <= p[3]);
        let code = rank(p);
        assert!(!seen[code]);
        seen[code] = true;
    }
    assert!(seen.iter().all(|&s| s));
    assert!(PREFIXES[CODES..].iter().all(|&p| p == 0));
}

#[test]
fn round_trip_any_four_fingerprints() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for fingerprint_bits in 5..=32u32 {
        for _ in 0..2000 {
            let mut fps = [0u32; 4];
            for fp in &mut fps {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // A quarter of the slots empty, the rest any fingerprint.
                *fp = if state % 4 == 0 {
                    0
                } else {
                    (state >> 8) as u32 & ((1u64 << fingerprint_bits) - 1) as u32
                };
            }
            let bucket = encode(fps, fingerprint_bits);
            assert!(
                bucket < 1u128 << (4 * fingerprint_bits - 4),
                "f={fingerprint_bits}"
            );
            let mut sorted = fps;
            sorted.sort_unstable();
            assert_eq!(
                decode(bucket, fingerprint_bits),
                sorted,
                "f={fingerprint_bits}"
            );
            // Neighbouring buckets' bits above this one must not matter.
            let near = fps.map(|fp| fp ^ (state as u32 & 3));
            let other_prefix = fps.map(|fp| fp ^ 1 << (fingerprint_bits - 1 - (state as u32 & 3)));
            let probes = fps.into_iter().chain(near).chain(other_prefix);
            let bits = CODE_BITS + 4 * (fingerprint_bits - 4);
            let wide_above = (u128::from(state) << 64 | u128::from(state)) << bits;
            let lanes = (fingerprint_bits <= MAX_LANE_FINGERPRINT_BITS)
                .then(|| NarrowLanes::new(fingerprint_bits));
            for probe in probes {
                let expected = sorted.contains(&probe);
                let held = holds(bucket | wide_above, fingerprint_bits, probe);
                assert_eq!(held, expected, "f={fingerprint_bits} {probe}");
                if let Some(lanes) = &lanes {
                    let above = state.checked_shl(bits).unwrap_or(0);
                    let held = lanes.holds(bucket as u64 | above, &lanes.probe(probe));
                    assert_eq!(held, expected, "f={fingerprint_bits} {probe}");
                }
            }
        }
    }
}

#[test]
fn only_the_encoder_output_round_trips() {
    // A code past the last multiset, and remainders out of order under equal prefixes.
    let bad_code = 4000u128;
    assert_ne!(encode(decode(bad_code, 13), 13), bad_code);
    let good = encode([1, 2, 0, 0], 13);
    let swapped = (good & 0xfff) | (2 << 12) | (1 << (12 + 9)) | (good >> (12 + 18)) << (12 + 18);
    assert_eq!(encode(decode(good, 13), 13), good);
    assert_ne!(encode(decode(swapped, 13), 13), swapped);
}

#[test]
fn an_empty_bucket_is_all_zero_bits() {
    assert_eq!(encode([0; 4], 13), 0);
}
