//! The expiring filter's generation advances racing its writes and lookups: a key inserted (or
//! refreshed) inside the window is found throughout. Each model runs a count window of `L`
//! inserts per generation on two buckets, so that the inserts of the race themselves publish
//! generations; `docs/expiry.md` lists the protection each model guards and the mutant of
//! `loom-tests/mutants/` it fails on.

use loom_tests::{check, tiny_window, ExpiringFilter, Keys};

/// Runs `op` on the shared expiring filter in a new loom thread.
fn spawn<T: Send + 'static>(
    filter: &loom::sync::Arc<ExpiringFilter>,
    op: impl FnOnce(&ExpiringFilter) -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    let filter = loom::sync::Arc::clone(filter);
    loom::thread::spawn(move || op(&filter))
}

/// Inserts every key in order, one generation each when `L = 1`.
fn fill(filter: &ExpiringFilter, keys: &[u64]) {
    for key in keys {
        filter
            .insert(key)
            .expect("a count window never answers Full");
    }
}

/// The sweep of one insert clears bucket 0's expired slot while another insert, which publishes
/// the next generation, reuses that slot for `x`: `x` is found. (`L = 1`, `G = 2`: `e`, stored
/// in generation 0, expires when generation 3 is published; the cursor reaches bucket 0 again
/// at the fifth insert's sweep.)
#[test]
fn expiring_sweep_racing_a_reuse_keeps_the_new_item() {
    check(1, || {
        let filter = tiny_window(1, 2);
        let mut keys = Keys::expiring(&filter);
        let [e, f1, f2, x, y] =
            [(0, 0), (1, 1), (1, 1), (0, 0), (1, 1)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[e, f1, f2]);

        let other = spawn(&filter, move |f| f.insert(&y));
        filter.insert(&x).unwrap();
        assert!(filter.contains(&x), "x was lost to the sweep");
        other.join().unwrap().unwrap();

        assert!(filter.contains(&x), "x was lost to the sweep");
        assert!(filter.contains(&y));
        assert!(!filter.contains(&e), "e outlived its generations");
    });
}

/// A lookup of `x` while another thread's insert of `x` publishes the next generation and
/// refreshes `x`'s tag to it: `x` is live before and after, and the lookup finds it.
#[test]
fn expiring_lookup_finds_an_item_refreshed_across_an_advance() {
    check(2, || {
        let filter = tiny_window(1, 2);
        let mut keys = Keys::expiring(&filter);
        let [x, f] = [(0, 0), (1, 1)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[x, f]);

        let other = spawn(&filter, move |f| f.insert(&x));
        assert!(
            filter.contains(&x),
            "x was not found while it was refreshed"
        );
        other.join().unwrap().unwrap();

        assert!(filter.contains(&x) && filter.contains(&f));
        assert_eq!(filter.len(), 2);
    });
}

/// A refresh of `x` that publishes a generation races an insert of `z` into `x`'s bucket, which
/// publishes the one before: the insert takes a free slot, never the refreshed `x`'s.
#[test]
fn expiring_insert_keeps_an_item_refreshed_across_an_advance() {
    check(2, || {
        let filter = tiny_window(1, 2);
        let mut keys = Keys::expiring(&filter);
        let [x, f, z] = [(0, 0), (1, 1), (0, 0)].map(|(a, b)| keys.with_buckets(a, b));
        fill(&filter, &[x, f]);

        let other = spawn(&filter, move |f| f.insert(&x));
        filter.insert(&z).unwrap();
        other.join().unwrap().unwrap();

        assert!(filter.contains(&x), "the refreshed x was overwritten");
        assert!(filter.contains(&z));
    });
}

/// Inserting `y` into bucket 0, full of live slots that may all move to bucket 1, moves one of
/// them there, while the main thread refreshes `w` in bucket 1, publishing a generation: the
/// move never lands on the refreshed `w`, and nothing is lost. (`L = 4`, `G = 2`: the prefill
/// spans generations 0 and 1, and the race's second insert publishes 2. `v1` and `v2` fill
/// bucket 1 first, so that inserts, which take the roomier of their buckets, fill bucket 0 with
/// `a` to `d`.) A lookup racing the move itself is the plain filter's `lookup_during_move` on
/// the same stripes: a lookup here as well multiplies the executions 500-fold.
#[test]
fn expiring_move_across_an_advance_loses_nothing() {
    check(2, || {
        let filter = tiny_window(4, 2);
        let mut keys = Keys::expiring(&filter);
        let [w, v1, v2, a, b, c, d, y] = [
            (1, 1),
            (1, 1),
            (1, 1),
            (0, 1),
            (0, 1),
            (0, 1),
            (0, 1),
            (0, 0),
        ]
        .map(|(first, second)| keys.with_buckets(first, second));
        fill(&filter, &[w, v1, v2, a, b, c, d]);

        let other = spawn(&filter, move |f| f.insert(&y));
        filter.insert(&w).unwrap();
        other.join().unwrap().unwrap();

        for key in [w, v1, v2, a, b, c, d, y] {
            assert!(filter.contains(&key), "key {key:#018x} was lost");
        }
        assert_eq!(filter.len(), 8);
    });
}
