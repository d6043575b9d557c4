use std::time::Instant;

use crate::sync::Ordering::Relaxed;
use crate::{ConcurrentCuckooFilter, TableLayout};

/// A writer killed between the two word stores of a straddling bucket, holding its stripe
/// with a stale count: the next reader waits out the liveness bound, finds the holder dead,
/// and recovers the stripe: the bucket's pre-image back, the count recomputed.
#[test]
fn a_dead_writers_torn_bucket_and_count_are_recovered() {
    let path = std::env::temp_dir().join(format!("ccf-torn-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(2000)
        .layout(TableLayout::Packed)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .create_shared(&path)
        .unwrap();
    for i in 0..1500u64 {
        filter.insert(&i).unwrap();
    }
    let raw = filter.raw();
    let bits = raw.codec.bucket_bits() as u64;
    let bucket = (0..raw.bucket_count())
        .find(|&b| (b as u64 * bits) % 64 + bits > 64 && raw.table.load(b) != [0, 0])
        .unwrap();
    let stripe = raw.stripes.of(bucket);
    let shared = raw.stripes.shared.as_ref().unwrap();
    let (stamps, count_shift) = raw.stripes.stamp_words();
    let stamp = &stamps[stripe];
    let before = raw.table.load(bucket);
    // The dead writer: slot 199 of 128, an owner no process can be.
    shared.owner(stripe).store(200 << 32 | 1, Relaxed);
    stamp.store((stamp.load(Relaxed) | 1) + (5 << count_shift), Relaxed);
    let first = (bucket as u64 * bits / 64) as usize;
    shared.journal(stripe, bucket);
    let word = &raw.table.words[first];
    word.store(!word.load(Relaxed), Relaxed);
    assert_ne!(raw.table.load(bucket), before, "torn");

    let start = Instant::now();
    assert!((0..1500u64).all(|i| filter.contains(&i)));
    assert!(start.elapsed() >= super::super::owners::LIVENESS_BOUND);
    assert_eq!(raw.table.load(bucket), before);
    assert_eq!(shared.owner(stripe).load(Relaxed), 0);
    assert_eq!(stamp.load(Relaxed) & 1, 0);
    assert_eq!(filter.len(), 1500);
    filter.verify().unwrap();
    drop(filter);
    std::fs::remove_file(&path).unwrap();
}

/// Every write entry point of a live filter locks through the owner words: with every
/// stripe's owner word naming a dead process and no stamp locked (which the in-memory
/// locks would take at once), each write waits out the liveness bound, takes the stripes
/// over and recovers them, and does what it was asked.
#[test]
fn a_live_filters_writes_lock_through_the_owner_words() {
    for layout in [TableLayout::BucketWord, TableLayout::Packed] {
        let path = std::env::temp_dir().join(format!("ccf-owners-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(2000)
            .layout(layout)
            .create_shared(&path)
            .unwrap();
        let raw = filter.raw();
        let shared = raw.stripes.shared.as_ref().unwrap();
        let waits = |write: &dyn Fn()| {
            for stripe in 0..raw.stripe_count() {
                shared.owner(stripe).store(200 << 32 | 1, Relaxed);
            }
            let start = Instant::now();
            write();
            assert!(
                start.elapsed() >= super::super::owners::LIVENESS_BOUND,
                "{layout:?}: a write that did not lock through the owner words"
            );
        };
        let hashes: Vec<u64> = (0..100u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        waits(&|| filter.insert(&1u64).unwrap());
        waits(&|| assert!(filter.insert_unique(&2u64).unwrap()));
        waits(&|| assert!(filter.remove(&1u64)));
        waits(&|| assert_eq!(filter.try_extend_hashes(&hashes), Ok(100)));
        waits(&|| {
            let mut new = [false; 100];
            assert_eq!(
                filter.insert_unique_hash_batch_into(&hashes, &mut new),
                Ok(0)
            );
        });
        filter.verify().unwrap();
        assert_eq!(filter.len(), 101);
        assert!(filter.contains(&2u64) && hashes.iter().all(|&h| filter.contains_hash(h)));
        drop(filter);
        std::fs::remove_file(&path).unwrap();
    }
}

/// A read-only opener meets a stripe a live writer holds: it does not wait for a release
/// its private copy of the page might never show; it takes the stripe over in that copy.
#[test]
fn a_read_only_opener_never_waits_forever_on_a_live_writer() {
    let path = std::env::temp_dir().join(format!("ccf-ro-held-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let writer = ConcurrentCuckooFilter::builder()
        .capacity(2000)
        .create_shared(&path)
        .unwrap();
    writer.insert(&1u64).unwrap();
    let held = writer.raw().stripes.lock_one::<true>(0);
    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    let start = Instant::now();
    reader.verify().unwrap();
    assert!(reader.contains(&1u64));
    assert!(!reader.to_bytes().is_empty());
    assert!(start.elapsed() >= super::super::owners::LIVENESS_BOUND);
    drop(held);
    writer.verify().unwrap();
    drop((reader, writer));
    std::fs::remove_file(&path).unwrap();
}

/// A read-only opener whose private copy of the stamps shows a lock a live writer took
/// after the opener last copied that stripe's owner word, and released since: the owner
/// word it reads is 0, the stamp stays locked in its copy, and it takes the stripe over
/// after the liveness bound rather than wait for an unlock its copy will never show.
#[test]
fn a_read_only_opener_never_waits_on_a_stamp_its_copy_froze_locked() {
    let path = std::env::temp_dir().join(format!("ccf-ro-frozen-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let writer = ConcurrentCuckooFilter::builder()
        .capacity(200_000)
        .layout(TableLayout::Packed)
        .create_shared(&path)
        .unwrap();
    writer.insert(&1u64).unwrap();
    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    let stripes = &writer.raw().stripes;
    // Stripe 100: its stamp in stripe 0's page of stamps (512 a page), its owner word in
    // another page of lock records than stripe 0's.
    let stripe = 100;
    assert!(stripes.count() > stripe && stripe * super::super::owners::STRIDE * 8 >= 8192);
    let bucket = (0..writer.raw().bucket_count())
        .find(|&b| stripes.of(b) == stripe)
        .unwrap();
    let held = stripes.lock_one::<true>(bucket);
    // The reader's copy of the stamps' page, made while the writer holds the last stripe.
    drop(reader.raw().stripes.lock_one::<true>(0));
    drop(held);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            reader.verify().unwrap();
            done.send(reader.contains(&1u64)).unwrap();
        });
        let answer = finished.recv_timeout(std::time::Duration::from_secs(20));
        if answer.is_err() {
            eprintln!("the reader still waits after 20 s");
            std::process::abort();
        }
        assert_eq!(answer, Ok(true));
    });
    writer.verify().unwrap();
    drop((reader, writer));
    std::fs::remove_file(&path).unwrap();
}
