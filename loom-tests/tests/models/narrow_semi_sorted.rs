//! A lookup racing a move between narrow semi-sorted buckets never answers false: 8-bit
//! fingerprints, four to a 28-bit bucket, so that buckets share table words and one of the
//! two straddles a word boundary, and a lookup reads each bucket's code and remainders from
//! two words.

use concurrent_cuckoo_filter::TableLayout;
use loom::sync::Arc;
use loom_tests::{assert_holds, check, fill, spawn, Keys, Shape};

/// Three 28-bit buckets under one stripe (their lock group is 16 buckets): bucket 2 takes
/// bits 56 to 84, across the first two words.
fn narrow() -> Shape {
    Shape {
        buckets: 3,
        bucket_size: 4,
        fingerprint_bits: 8,
        stripes: 1,
        max_hops: 2,
        max_search_buckets: 6,
        semi_sorted: true,
        layout: TableLayout::Packed,
    }
}

/// `x`'s first bucket is 2, the straddling one, but it went into bucket 1 while 2 was full.
/// Bucket 1 is then filled with fingerprints that may not move and bucket 2 gets a free slot,
/// so inserting `y` (bucket 1 only) moves `x` into bucket 2 while the main thread looks `x` up,
/// reading the move's target before its source, the order in which the mover stores them.
#[test]
fn lookup_finds_a_fingerprint_while_it_moves_between_narrow_semi_sorted_buckets() {
    check(2, || {
        let filter = Arc::new(narrow().build());
        let mut keys = Keys::new(&filter);
        let [x, y, p, q, r, s1, s2, s3, s4] = [
            (2, 1),
            (1, 1),
            (1, 1),
            (1, 1),
            (1, 1),
            (2, 2),
            (2, 2),
            (2, 2),
            (2, 2),
        ]
        .map(|(i, j)| keys.with_buckets(i, j));
        fill(&filter, &[s1, s2, s3, s4, x, p, q, r]);
        assert!(filter.remove(&s4));

        let writer = spawn(&filter, move |f| f.insert(&y));
        assert!(filter.contains(&x), "x was not found while it moved");
        assert_eq!(writer.join().unwrap(), Ok(()));

        assert_holds(
            &filter,
            &[
                (x, 1),
                (y, 1),
                (p, 1),
                (q, 1),
                (r, 1),
                (s1, 1),
                (s2, 1),
                (s3, 1),
                (s4, 0),
            ],
        );
    });
}
