//! Model 3: `remove` racing an insert of the same item, and `remove` racing a displacement of
//! the item it removes. A present item is always found and removed exactly once.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, x_moves_for_y, Keys, Shape};

/// `x` is in bucket 0 once; one thread inserts a second copy (into the same bucket, the same
/// table word) while the main thread removes one. Exactly one copy is left.
#[test]
fn remove_racing_an_insert_of_the_same_item() {
    check(3, || {
        let filter = Arc::new(Shape::wide(2, 2).build());
        let x = Keys::new(&filter).with_buckets(0, 1);
        fill(&filter, &[x]);

        let inserter = spawn(&filter, move |f| f.insert(&x));
        assert!(filter.remove(&x), "a present item was not removed");
        assert_eq!(inserter.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 1)]);
    });
}

/// As in model 1, inserting `y` moves `x` from bucket 0 to bucket 1, while the main thread
/// removes `x`: the remove finds it wherever it is, and the move does not bring it back.
#[test]
fn remove_racing_a_move_of_the_item() {
    check(3, || {
        let (filter, [x, p, y]) = x_moves_for_y();
        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.remove(&x), "x was not removed while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(&filter, &[(x, 0), (p, 1), (y, 1)]);
    });
}
