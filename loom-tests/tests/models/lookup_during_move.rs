//! Model 1: a lookup racing a displacement that moves the looked-up fingerprint between its two
//! buckets never answers false.

use loom_tests::{assert_holds, check, spawn, x_moves_for_y};

/// Two buckets with a stripe each. Bucket 0 is full of `x` (which may move to bucket 1) and `p`
/// (which may not); inserting `y`, whose only bucket is 0, must move `x` to bucket 1 while the
/// main thread looks `x` up.
#[test]
fn lookup_finds_a_fingerprint_while_it_moves() {
    check(3, || {
        let (filter, [x, p, y]) = x_moves_for_y();
        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.contains(&x), "x was not found while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1), (p, 1), (y, 1)]);
    });
}
