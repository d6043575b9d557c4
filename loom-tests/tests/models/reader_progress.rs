//! Model 6: a reader facing a writer that keeps the stripe stamps moving still completes, with
//! the right answer: after a bounded number of optimistic tries it takes the stripe locks.

use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Six buckets on two stripes (even buckets on stripe 0, odd on stripe 1). The writer inserts,
/// removes and inserts again `w` (buckets 0 and 1), bumping both stamps each time, while the main
/// thread looks up `x` (buckets 5 and 4: the same stripes, in the opposite order, but other table
/// words, so only the stamps are shared). With three preemptions every optimistic try of the
/// reader can fail, so the model reaches the locked fallback, whose lock order must agree with
/// the writer's.
#[test]
fn reader_completes_while_the_stamps_keep_moving() {
    check(3, || {
        let filter = Arc::new(Shape::wide(6, 2).build());
        let mut keys = Keys::new(&filter);
        let [x, w] = [(5, 4), (0, 1)].map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[x]);

        let writer = spawn(&filter, move |f| {
            f.insert(&w).unwrap();
            assert!(f.remove(&w));
        });
        assert!(filter.contains(&x), "x was not found");
        writer.join().unwrap();

        assert_holds(&filter, &[(x, 1), (w, 0)]);
    });
}
