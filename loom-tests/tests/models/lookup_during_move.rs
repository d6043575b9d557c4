//! Model 1: a lookup racing a displacement that moves the looked-up fingerprint between its two
//! buckets never answers false.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, x_moves_for_y, Keys, Shape};

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

/// The same move, but the lookup reads the buckets the other way round: `x`'s first bucket is 1,
/// the move's target, so the lookup reads the target before the source, the order in which the
/// mover stores them. (`x` starts in bucket 0 because bucket 1 was full when it went in.)
#[test]
fn lookup_reading_the_target_first_finds_a_fingerprint_while_it_moves() {
    check(2, || {
        let filter = Arc::new(Shape::wide(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, p, y, s1, s2] =
            [(1, 0), (0, 0), (0, 0), (1, 1), (1, 1)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[s1, s2, x, p]);
        assert!(filter.remove(&s2));

        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.contains(&x), "x was not found while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1), (p, 1), (y, 1), (s1, 1), (s2, 0)]);
    });
}

/// A move between semi-sorted buckets, which re-encodes both: bucket 0 is full of `x` (which may
/// move to bucket 1) and three fingerprints that may not move; inserting `y` (bucket 0 only)
/// moves `x` while the main thread looks it up.
#[test]
fn lookup_finds_a_fingerprint_while_it_moves_between_semi_sorted_buckets() {
    check(2, || {
        let filter = Arc::new(Shape::semi_sorted(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, p, q, s, y] =
            [(0, 1), (0, 0), (0, 0), (0, 0), (0, 0)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[x, p, q, s]);

        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.contains(&x), "x was not found while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1), (p, 1), (q, 1), (s, 1), (y, 1)]);
    });
}
