//! `try_extend` racing a remove: the pipelined block insert keeps every guarantee of `insert`.

use loom_tests::{assert_holds, check, spawn, x_moves_for_y, Keys};

/// As in `lookup_during_move`, bucket 0 is full of `x` (which may move to bucket 1) and `p`. One
/// thread extends the filter with the block `[u, y]`: `u` (bucket 1 only) takes one of bucket 1's
/// slots, and `y` (bucket 0 only) must move `x` into the other. Meanwhile the main thread removes
/// `x`, wherever it is. Both items of the block go in, and `x` is gone for good.
#[test]
fn try_extend_racing_a_remove_inserts_the_whole_block() {
    check(2, || {
        let (filter, [x, p, y]) = x_moves_for_y();
        let u = Keys::new(&filter).with_buckets(1, 1);
        let writer = spawn(&filter, move |f| f.try_extend([u, y]));
        assert!(
            filter.remove(&x),
            "x was not removed while a block moved it"
        );
        assert_eq!(writer.join().unwrap(), Ok(2));

        assert_holds(&filter, &[(x, 0), (p, 1), (u, 1), (y, 1)]);
    });
}
