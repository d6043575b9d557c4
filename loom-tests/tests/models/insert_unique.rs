//! `insert_unique`: two threads racing to insert one item insert it exactly once, also
//! when the insert has to move a fingerprint to make room, and a unique insert of an item that is
//! already present finds it while another writer moves it.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Both threads `insert_unique` the same key `x`: exactly one gets `Ok(true)`, the other
/// `Ok(false)`, and one copy is stored.
fn race_on_one_item(needs_a_move: bool) {
    check(2, move || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        // `x` lives in buckets 0 and 1. When `needs_a_move`, both are full, and `m` (in bucket 0)
        // must move to bucket 2 to make room.
        let [x, m, s0, s1] = [(0, 1), (0, 2), (0, 0), (1, 1)].map(|(a, b)| keys.with_buckets(a, b));
        let prefill = if needs_a_move {
            vec![m, s0, s1, s1]
        } else {
            vec![s0]
        };
        fill(&filter, &prefill);

        let other = spawn(&filter, move |f| f.insert_unique(&x));
        let mine = filter.insert_unique(&x);
        let theirs = other.join().unwrap();
        let wins = usize::from(mine == Ok(true)) + usize::from(theirs == Ok(true));
        assert_eq!(wins, 1, "mine: {mine:?}, theirs: {theirs:?}");
        assert!(mine.is_ok() && theirs.is_ok());

        let mut expected: Vec<(u64, usize)> = Vec::new();
        for key in prefill {
            match expected.iter_mut().find(|(k, _)| *k == key) {
                Some((_, copies)) => *copies += 1,
                None => expected.push((key, 1)),
            }
        }
        expected.push((x, 1));
        assert_holds(&filter, &expected);
    });
}

#[test]
fn racing_unique_inserts_of_one_item_insert_it_once() {
    race_on_one_item(false);
}

#[test]
fn racing_unique_inserts_that_must_move_a_fingerprint_insert_once() {
    race_on_one_item(true);
}

/// While one thread's unique insert of `x` moves `m` out of bucket 0 to make room, the other
/// frees a slot in `x`'s other bucket and unique-inserts `x` there. The mover must see that copy
/// under the locks of its last move and report `Ok(false)` rather than store a second one.
#[test]
fn a_unique_insert_that_moves_sees_a_copy_placed_in_the_other_bucket() {
    check(2, || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [x, m, s0, s1, t1] =
            [(0, 1), (0, 2), (0, 0), (1, 1), (1, 1)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[m, s0, s1, t1]);

        let other = spawn(&filter, move |f| {
            assert!(f.remove(&t1));
            f.insert_unique(&x)
        });
        let mine = filter.insert_unique(&x);
        let theirs = other.join().unwrap();
        let wins = usize::from(mine == Ok(true)) + usize::from(theirs == Ok(true));
        assert_eq!(wins, 1, "mine: {mine:?}, theirs: {theirs:?}");
        assert_eq!(filter.count(&x), 1);
        assert_eq!(filter.count(&t1), 0);
        assert_eq!(filter.len(), 4);
    });
}
