//! Model 5: an insert that fails with `Full` while other threads look items up changes no
//! answer: no stored item is ever reported absent, and the failed item is never reported present.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Buckets 0 and 1 are full and bucket 2 has one free slot. Inserting `y` (bucket 0 only) needs
/// the path `b: 1 -> 2`, then `a: 0 -> 1`; the main thread inserts `z` (bucket 2 only), which may
/// take the slot first or move `b` back to make room, and then looks up `b` and `y`. Exactly one
/// of the inserts fits; when `y`'s fails, possibly after it moved `b`, every item is still found
/// and `y` never was.
#[test]
fn failed_insert_changes_no_answer() {
    check(2, || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [a, p, b, q, r, y, z] = [(0, 1), (0, 0), (1, 2), (1, 1), (2, 2), (0, 0), (2, 2)]
            .map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[a, p, b, q, r]);

        let other = spawn(&filter, move |f| f.insert(&y));
        let z_result = filter.insert(&z);
        assert!(filter.contains(&b), "b was lost to a racing insert");
        let saw_y = filter.contains(&y);
        let y_result = other.join().unwrap();

        assert!(
            y_result.is_ok() != z_result.is_ok(),
            "y: {y_result:?}, z: {z_result:?}"
        );
        assert!(y_result.is_ok() || !saw_y, "a failed insert was visible");
        let [y_copies, z_copies] = [y_result, z_result].map(|r| usize::from(r.is_ok()));
        assert_holds(
            &filter,
            &[
                (a, 1),
                (p, 1),
                (b, 1),
                (q, 1),
                (r, 1),
                (y, y_copies),
                (z, z_copies),
            ],
        );
    });
}
