//! `Full` only when the filter had no room: a path search whose buckets changed while it ran is
//! stale, and an insert that had room at every moment of the race succeeds.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// 2-slot buckets. `z` can only use bucket 0 = [a (0 or 1), p (0 only)]; bucket 1 = [w (1 only),
/// b (1 or 2)]; bucket 2 = [r, one free slot]. The other thread removes `w`, then inserts `v`
/// (bucket 2 only). Before the remove `z` has the path `b: 1 -> 2, a: 0 -> 1`, after it the path
/// `a: 0 -> 1`, and after `v` takes bucket 2's slot the second still holds: `z` had room at every
/// moment. A search that read bucket 1 before the remove and bucket 2 after `v` sees no path, and
/// must not report `Full` on that.
#[test]
fn an_insert_that_always_had_a_path_is_not_full() {
    check(2, || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [a, p, w, b, r, v, z] = [(0, 1), (0, 0), (1, 1), (1, 2), (2, 2), (2, 2), (0, 0)]
            .map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[a, p, w, b, r]);

        let other = spawn(&filter, move |f| {
            assert!(f.remove(&w));
            f.insert(&v)
        });
        assert_eq!(filter.insert(&z), Ok(()), "z had room at every moment");
        assert_eq!(other.join().unwrap(), Ok(()));

        assert_holds(
            &filter,
            &[(a, 1), (p, 1), (w, 0), (b, 1), (r, 1), (v, 1), (z, 1)],
        );
    });
}
