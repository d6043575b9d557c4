//! Model 7: `len` is exact after racing inserts and removes, and never out of range during them.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Packed buckets: 0 and 1 share a table word and a stripe, as do 2 and 3. One thread inserts
/// `a` (bucket 0) and removes `b` (bucket 2); the main thread inserts `c` (bucket 1), reads
/// `len`, and removes `d` (bucket 3).
#[test]
fn len_is_exact_after_racing_inserts_and_removes() {
    check(3, || {
        let filter = Arc::new(Shape::packed(4, 2).build());
        let mut keys = Keys::new(&filter);
        let [a, b, c, d] = [(0, 0), (2, 2), (1, 1), (3, 3)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[b, d]);

        let other = spawn(&filter, move |f| {
            f.insert(&a).unwrap();
            assert!(f.remove(&b));
        });
        filter.insert(&c).unwrap();
        let len = filter.len();
        assert!(filter.remove(&d));
        other.join().unwrap();

        // 2 stored, plus `c`, plus or minus what the other thread has done so far.
        assert!((2..=4).contains(&len), "len {len} during the race");
        assert_holds(&filter, &[(a, 1), (b, 0), (c, 1), (d, 0)]);
    });
}
