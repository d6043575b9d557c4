//! `to_bytes` racing a writer: the bytes are a state the filter really had, because the copy is
//! made while every stripe is locked.

use loom_tests::{assert_holds, check, spawn, x_moves_for_y, Filter};

/// As in `lookup_during_move`, inserting `y` moves `x` from bucket 0 to bucket 1, while the main
/// thread encodes the filter. The decoded copy holds `x` and `p` once each and `y` at most once,
/// with a `len` to match: never `x` in both buckets or in neither, half moved.
#[test]
fn to_bytes_racing_a_move_encodes_a_state_the_filter_had() {
    check(2, || {
        let (filter, [x, p, y]) = x_moves_for_y();
        let writer = spawn(&filter, move |f| f.insert(&y));
        let bytes = filter.to_bytes();
        assert_eq!(writer.join().unwrap(), Ok(()));

        let copy = Filter::from_bytes_with_hasher(&bytes).expect("a snapshot decodes");
        let y_copies = copy.count(&y);
        assert!(y_copies <= 1, "y copied {y_copies} times");
        assert_holds(&copy, &[(x, 1), (p, 1), (y, y_copies)]);
        assert_holds(&filter, &[(x, 1), (p, 1), (y, 1)]);
    });
}
