//! Model 4: a cuckoo path made stale by a concurrent insert or remove is detected when a hop is
//! validated, and the insert searches again: no fingerprint is duplicated or lost.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Bucket 0 holds `a` (which may move to bucket 1) and `a2` (which may move to bucket 2); buckets 1
/// and 2 have one free slot each. Inserting `y` (bucket 0 only) finds the path `a: 0 -> 1`, while
/// `z` (bucket 1 only) may take bucket 1's free slot first: the hop must then fail and `y` must
/// find the other path. There is room for both.
#[test]
fn path_spoiled_by_an_insert_into_its_free_slot() {
    check(3, || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [a, a2, q, r, y, z] =
            [(0, 1), (0, 2), (1, 1), (2, 2), (0, 0), (1, 1)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[a, a2, q, r]);

        let other = spawn(&filter, move |f| f.insert(&y));
        assert_eq!(filter.insert(&z), Ok(()));
        assert_eq!(other.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(a, 1), (a2, 1), (q, 1), (r, 1), (y, 1), (z, 1)]);
    });
}

/// Buckets 0 and 1 are full and bucket 2 has one free slot: inserting `y` (bucket 0 only) takes
/// the two-hop path `b: 1 -> 2`, then `a: 0 -> 1`. Meanwhile the main thread removes `b`, which
/// may make the first hop's source stale: it must not be moved (and so brought back).
#[test]
fn path_spoiled_by_a_remove_of_a_fingerprint_on_it() {
    check(3, || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [a, p, b, q, r, y] =
            [(0, 1), (0, 0), (1, 2), (1, 1), (2, 2), (0, 0)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[a, p, b, q, r]);

        let other = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.remove(&b), "b was not removed while on a path");
        assert_eq!(other.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(a, 1), (p, 1), (b, 0), (q, 1), (r, 1), (y, 1)]);
    });
}
