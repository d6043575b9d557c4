use super::*;

#[test]
fn spread_is_a_bijection_that_separates_consecutive_claims() {
    for n in [1, 2, 63, 64, 65, 127, 128, 1000, 4103] {
        let mut seen = vec![false; n as usize];
        for x in 0..n {
            let bucket = spread(x, n);
            assert!(!seen[bucket], "n {n}: bucket {bucket} twice");
            seen[bucket] = true;
        }
        if n >= 2 * REGIONS {
            let step = spread(1, n) - spread(0, n);
            assert!(
                step % 2 == 1 && step + 1 >= (n / REGIONS) as usize,
                "n {n}: {step}"
            );
        }
    }
}
