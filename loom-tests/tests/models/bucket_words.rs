//! The bucket-word layout's lookup, which reads no stripe stamps: it loads its two bucket words
//! and trusts a miss only if the first, loaded again, is the same word, version included. A
//! lookup racing moves of its fingerprint between its two buckets never answers false.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Bucket 0 is full of `x` (which may move to bucket 1) and `p` (which may not); inserting `y`,
/// whose only bucket is 0, moves `x` to bucket 1 while the main thread looks `x` up, reading
/// bucket 0 (the move's source) first. Fails if a move cleared its source before it wrote its
/// destination.
#[test]
fn lookup_finds_a_fingerprint_while_it_moves() {
    check(3, || {
        let filter = Arc::new(Shape::words(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, p, y] = [(0, 1), (0, 0), (0, 0)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[x, p]);

        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.contains(&x), "x was not found while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1), (p, 1), (y, 1)]);
    });
}

/// `x` (first bucket 0, alternate 1) moves to bucket 1 for `y`, then, once `y` is removed, back
/// to bucket 0 for `z`, whose only bucket is the full bucket 1, while the main thread looks `x`
/// up. A lookup that loads bucket 0 between the moves, and bucket 1 after the move back, sees
/// `x` in neither: only its second load of bucket 0, which differs, tells it to try again.
/// Fails if the lookup trusted a miss without that check.
#[test]
fn lookup_finds_a_fingerprint_that_moves_and_moves_back() {
    check(2, || {
        let filter = Arc::new(Shape::words(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, p, s, y, z] =
            [(0, 1), (0, 0), (1, 1), (0, 0), (1, 1)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[x, p, s]);

        let writer = spawn(&filter, move |f| {
            f.insert(&y).unwrap();
            assert!(f.remove(&y));
            f.insert(&z)
        });
        assert!(
            filter.contains(&x),
            "x was not found while it moved and moved back"
        );
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1), (p, 1), (s, 1), (y, 0), (z, 1)]);
    });
}

/// `x` (first bucket 0, alternate 1) starts in bucket 1 and, while the main thread looks it up,
/// moves to bucket 0 for `z` and back to bucket 1 for `w`, each of which is then removed, so
/// that bucket 0 ends with exactly the fingerprints it started with. A lookup that loads bucket
/// 0 before the moves, bucket 1 between them and bucket 0 again after them sees `x` in neither
/// bucket and the same fingerprints in bucket 0 twice: only the version tells the two apart.
/// Fails if the check compared the fingerprints alone.
#[test]
fn lookup_tells_a_bucket_that_came_back_to_the_same_fingerprints_by_its_version() {
    check(3, || {
        let filter = Arc::new(Shape::words(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, p, q, s, z, w] =
            [(0, 1), (0, 0), (0, 0), (1, 1), (1, 1), (0, 0)].map(|(a, b)| keys.with_buckets(a, b));
        // Bucket 0 full of `p` and `q`, so `x` goes to bucket 1; then room in bucket 0.
        fill(&filter, &[p, q, x, s]);
        assert!(filter.remove(&q));

        let writer = spawn(&filter, move |f| {
            f.insert(&z).unwrap();
            assert!(f.remove(&z));
            f.insert(&w).unwrap();
            f.remove(&w)
        });
        assert!(
            filter.contains(&x),
            "x was not found while it moved there and back"
        );
        assert!(writer.join().unwrap());

        assert_holds(&filter, &[(x, 1), (p, 1), (q, 0), (s, 1), (z, 0), (w, 0)]);
    });
}
