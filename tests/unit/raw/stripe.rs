//! The stripes' unit tests.
use super::*;

#[test]
fn counts_get_the_bits_the_largest_stripe_needs() {
    // 1000 buckets in 250 groups of 4 over 8 stripes: up to 32 groups of 4 buckets of 4
    // slots, 512 fingerprints, 10 bits.
    assert_eq!(Stripes::new(8, 2, 1000, 4).unwrap().count_shift, 64 - 10);
    // A count that needs 33 bits still leaves the version 31.
    assert_eq!(Stripes::new(1, 0, 1 << 29, 8).unwrap().count_shift, 64 - 33);
}

#[test]
fn an_optimistic_read_watches_the_stripe_every_writer_of_its_buckets_locks() {
    for (count, group_shift) in [(1, 0), (4, 0), (8, 2), (64, 3)] {
        let stripes = Stripes::new(count, group_shift, 1000, 4).unwrap();
        for bucket in (0..1000).step_by(7) {
            let other = 999 - bucket;
            assert!(stripes.begin_read(bucket, other).validate(), "no writer");
            let reads = [
                stripes.begin_read(bucket, other),
                stripes.begin_read(other, bucket),
            ];
            let mut guard = stripes.lock_pair::<false>(bucket, bucket);
            let during = stripes.begin_read(other, bucket);
            guard.add(bucket, 1);
            drop(guard);
            assert!(!during.validate(), "read begun under the lock of {bucket}");
            for read in &reads {
                assert!(
                    !read.validate(),
                    "write to {bucket} unseen, {count} stripes"
                );
            }
        }
    }
}

#[test]
fn a_version_wraps_without_touching_the_count() {
    let stripes = Stripes::new(4, 0, 64, 4).unwrap();
    let versions = stripes.versions;
    assert_eq!(versions, (1u64 << stripes.count_shift) - 1);
    stripes.stamps[1].store(5 << stripes.count_shift | (versions - 1), Ordering::Relaxed);
    let before = stripes.stamps[1].load(Ordering::Relaxed);
    let mut guard = stripes.lock_pair::<false>(1, 1);
    guard.add(1, 1);
    drop(guard);
    let after = stripes.stamps[1].load(Ordering::Relaxed);
    assert_eq!(after, 6 << stripes.count_shift, "version 0, count 6");
    assert_ne!(after, before, "a reader sees the write");
    assert_eq!(stripes.len(), 6);
}

/// Each stripe's stamp.
fn stamps(stripes: &Stripes) -> Vec<u64> {
    stripes
        .stamps
        .iter()
        .map(|s| s.load(Ordering::Relaxed))
        .collect()
}

/// Each stripe's count.
fn counts(stripes: &Stripes) -> Vec<u64> {
    stamps(stripes)
        .iter()
        .map(|s| s >> stripes.count_shift)
        .collect()
}

#[test]
fn a_guard_charges_each_stripe_its_own_changes() {
    let stripes = Stripes::new(4, 0, 64, 4).unwrap();
    let mut guard = stripes.lock_buckets::<false>([0, 1, 5]);
    guard.add(0, 1);
    guard.add(5, 1);
    guard.add(1, 1);
    guard.add(1, -1);
    guard.add(1, 1);
    drop(guard);
    // Buckets 1 and 5 share stripe 1.
    assert_eq!(counts(&stripes), [1, 2, 0, 0]);
    assert!(stamps(&stripes).iter().all(|s| s & 1 == 0));
    let mut guard = stripes.lock_pair::<false>(4, 0);
    guard.add(4, -1);
    drop(guard);
    assert_eq!(stripes.len(), 2);
}

#[test]
fn the_guard_of_every_stripe_charges_counts_and_moves_every_version() {
    let stripes = Stripes::new(4, 0, 64, 4).unwrap();
    let before = stamps(&stripes);
    let mut all = stripes.lock_all();
    all.add(1, 1);
    all.add(5, 1);
    all.add(2, 1);
    all.add(2, -1);
    drop(all);
    assert_eq!(counts(&stripes), [0, 2, 0, 0]);
    for (after, before) in stamps(&stripes).into_iter().zip(before) {
        assert!(after & 1 == 0 && after != before, "{before} -> {after}");
    }
    assert_eq!(stripes.len(), 2);
}

#[test]
fn locks_that_may_be_shared_lock_in_memory_stripes_by_their_stamps() {
    let stripes = Stripes::new(4, 0, 64, 4).unwrap();
    let before = stamps(&stripes);
    let mut one = stripes.lock_one::<true>(1);
    assert_eq!(stamps(&stripes)[1] & 1, 1, "locked");
    one.add(1, 1);
    drop(one);
    let mut pair = stripes.lock_pair::<true>(2, 7);
    assert_eq!(
        stamps(&stripes)[2] & stamps(&stripes)[3] & 1,
        1,
        "both locked"
    );
    pair.add(2, 1);
    pair.add(7, 1);
    drop(pair);
    let after = stamps(&stripes);
    for stripe in 0..4 {
        assert_eq!(after[stripe] & 1, 0, "stripe {stripe} unlocked");
        assert_eq!(
            after[stripe] != before[stripe],
            stripe > 0,
            "stripe {stripe}"
        );
    }
    assert_eq!(stripes.len(), 3);
}
