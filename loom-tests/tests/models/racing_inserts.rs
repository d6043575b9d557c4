//! Model 2: two inserts racing into the same pair of buckets. Both succeed, or (when there is
//! room for only one) exactly one reports `Full`; nothing inserted is lost and `len` is exact.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Buckets 0 and 1 are full; `m` in bucket 0 and `n` in bucket 1 may each move to bucket 2, the
/// others may not move. `p` and `q` both have buckets 0 and 1, in opposite order, so they lock
/// the two stripes from opposite ends. With `room` free slots in bucket 2, both inserts must
/// succeed if `room` is 2, and exactly one if it is 1.
fn race_into_full_pair(room: usize) {
    check(3, move || {
        let filter = Arc::new(Shape::wide(3, 4).build());
        let mut keys = Keys::new(&filter);
        let [m, s0, n, s1, r, p, q] = [(0, 2), (0, 0), (1, 2), (1, 1), (2, 2), (0, 1), (1, 0)]
            .map(|(a, b)| keys.with_buckets(a, b));
        let prefill = if room == 1 {
            vec![m, s0, n, s1, r]
        } else {
            vec![m, s0, n, s1]
        };
        fill(&filter, &prefill);

        let other = spawn(&filter, move |f| f.insert(&p));
        let q_result = filter.insert(&q);
        let p_result = other.join().unwrap();

        let successes = usize::from(p_result.is_ok()) + usize::from(q_result.is_ok());
        assert_eq!(successes, room, "p: {p_result:?}, q: {q_result:?}");
        let mut expected: Vec<(u64, usize)> = prefill.iter().map(|&key| (key, 1)).collect();
        expected.push((p, usize::from(p_result.is_ok())));
        expected.push((q, usize::from(q_result.is_ok())));
        assert_holds(&filter, &expected);
    });
}

// The losing insert confirms "no room" with a validated search and may fall back to locking
// every stripe: over 15 minutes of exploration at bound 2 or 3, too long for CI. Run it with
// `-- --ignored room_for_one`.
#[test]
#[ignore = "explores for over 15 minutes"]
fn room_for_one_exactly_one_insert_fails() {
    race_into_full_pair(1);
}

/// The smallest table with room for one: two buckets of two slots, the only free slot in bucket
/// 1, and no fingerprint able to move anywhere useful (`m` may move only between the two full
/// buckets). `p` and `q` both have buckets 0 and 1, in opposite order: exactly one insert takes
/// the slot, the other searches in vain, confirms it and reports `Full`, changing nothing.
#[test]
fn last_free_slot_goes_to_exactly_one_insert() {
    check(2, || {
        let filter = Arc::new(Shape::wide(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [s0, m, s1, p, q] =
            [(0, 0), (0, 1), (1, 1), (0, 1), (1, 0)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[s0, m, s1]);

        let other = spawn(&filter, move |f| f.insert(&p));
        let q_result = filter.insert(&q);
        let p_result = other.join().unwrap();

        assert!(
            p_result.is_ok() != q_result.is_ok(),
            "p: {p_result:?}, q: {q_result:?}"
        );
        assert_holds(
            &filter,
            &[
                (s0, 1),
                (m, 1),
                (s1, 1),
                (p, usize::from(p_result.is_ok())),
                (q, usize::from(q_result.is_ok())),
            ],
        );
    });
}

#[test]
fn room_for_two_both_inserts_succeed() {
    race_into_full_pair(2);
}

/// Both buckets have room, and `p` and `q` have them in opposite order: the two inserts lock the
/// pair's stripes from opposite ends. Both must succeed, which they can only do without deadlock
/// because every writer takes its stripes in index order.
#[test]
fn inserts_locking_a_pair_from_opposite_ends_both_succeed() {
    check(3, || {
        let filter = Arc::new(Shape::wide(2, 2).build());
        let mut keys = Keys::new(&filter);
        let [p, q] = [(0, 1), (1, 0)].map(|(a, b)| keys.with_buckets(a, b));

        let other = spawn(&filter, move |f| f.insert(&p));
        assert_eq!(filter.insert(&q), Ok(()));
        assert_eq!(other.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(p, 1), (q, 1)]);
    });
}
