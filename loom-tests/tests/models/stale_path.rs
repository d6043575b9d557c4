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
/// the two-hop path `b: 1 -> 2`, then `a: 0 -> 1`, whose hop places `y`. Meanwhile the main
/// thread removes `removed` (`a` or `b`), before, during or after the search: a hop whose
/// fingerprint is gone must not move it (and so bring it back), nor place `y` into a slot it did
/// not free, and `y` finds the room the remove made.
fn path_spoiled_by_a_remove(remove_a: bool, preemption_bound: usize) {
    check(preemption_bound, move || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [a, p, b, q, r, y] =
            [(0, 1), (0, 0), (1, 2), (1, 1), (2, 2), (0, 0)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[a, p, b, q, r]);
        let removed = if remove_a { a } else { b };

        let other = spawn(&filter, move |f| f.insert(&y));
        assert!(
            filter.remove(&removed),
            "a fingerprint on a path was not removed"
        );
        assert_eq!(other.join().unwrap(), Ok(()));

        let [a_copies, b_copies] = [usize::from(!remove_a), usize::from(remove_a)];
        assert_holds(
            &filter,
            &[(a, a_copies), (p, 1), (b, b_copies), (q, 1), (r, 1), (y, 1)],
        );
    });
}

#[test]
fn path_spoiled_by_a_remove_of_a_fingerprint_on_it() {
    path_spoiled_by_a_remove(false, 3);
}

/// A remove racing the path search whose last hop, the one that places `y`, would move `a`.
#[test]
fn path_spoiled_by_a_remove_of_the_fingerprint_its_last_hop_moves() {
    path_spoiled_by_a_remove(true, 2);
}
