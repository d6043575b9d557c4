use super::*;
use crate::raw::{Geometry, SearchLimits, Shape};

fn filter() -> RawFilter {
    RawFilter::new(&Geometry {
        shape: Shape {
            bucket_count: 500,
            bucket_size: 4,
            fingerprint_bits: 12,
            semi_sorted: false,
            bucket_words: false,
        },
        stripes: 8,
        limits: SearchLimits {
            max_hops: 5,
            max_search_buckets: 2000,
        },
    })
    .unwrap()
}

#[test]
fn a_plain_insert_or_remove_moves_only_the_stripe_of_the_bucket_it_writes() {
    let filter = filter();
    let (mut checked, mut queue) = (0, SearchQueue::default());
    for hash in (1..=400u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
        let c = filter.placement.candidates(hash);
        let stripes = [c.first, c.second].map(|b| filter.stripes.of(b));
        if stripes[0] == stripes[1] {
            continue;
        }
        let stamps = || [c.first, c.second].map(|b| filter.stripes.stamp(b));
        let before = stamps();
        let inserted = filter.insert_candidates::<false>(c, false, &mut queue);
        assert_eq!(inserted, Insertion::Inserted, "the table has room");
        let after = stamps();
        let moved: Vec<bool> = before.iter().zip(&after).map(|(b, a)| b != a).collect();
        assert_eq!(moved, [true, false], "the first bucket had room: {hash:#x}");
        assert!(filter.contains(hash));
        assert!(filter.remove::<false>(hash));
        assert_eq!(
            stamps()[1],
            after[1],
            "the remove left the second stripe alone"
        );
        assert_ne!(stamps()[0], after[0]);
        checked += 1;
    }
    assert!(checked > 300, "{checked} items on two stripes");
    assert_eq!(filter.len(), 0);
}

#[test]
fn an_insert_under_every_lock_does_what_an_uncontended_optimistic_one_does() {
    let hashes: Vec<u64> = (1..=2200u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let (optimistic, exclusive) = (filter(), filter());
    let mut queue = SearchQueue::default();
    let candidates = |hash| optimistic.placement.candidates(hash);
    let by_path: Vec<_> = hashes
        .iter()
        .map(|&h| optimistic.insert_candidates::<false>(candidates(h), false, &mut queue))
        .collect();
    let by_lock: Vec<_> = hashes
        .iter()
        .map(|&h| exclusive.insert_exclusive::<false>(candidates(h), false, &mut queue))
        .collect();
    assert_eq!(by_path, by_lock);
    // The table fills up, and a path had to be found for some items: both branches ran.
    let full = by_lock.iter().filter(|&&r| r == Insertion::Full).count();
    assert!(full > 0 && full < 500, "{full} inserts were full");
    assert!(exclusive.len() > 1900, "{} stored", exclusive.len());
    // The same moves: the same table, and counts that add up.
    assert_eq!(optimistic.snapshot(), exclusive.snapshot());
    let stored = by_lock
        .iter()
        .filter(|&&r| r == Insertion::Inserted)
        .count();
    assert_eq!(exclusive.len(), stored);
    for (&hash, &result) in hashes.iter().zip(&by_lock) {
        if result == Insertion::Inserted {
            assert!(exclusive.contains(hash));
        }
    }
    // A unique insert under every lock finds what is there.
    assert_eq!(
        exclusive.insert_exclusive::<false>(candidates(hashes[0]), true, &mut queue),
        Insertion::Present
    );
}

#[cfg(target_os = "linux")]
mod killed;
