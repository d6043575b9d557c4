use super::*;
use crate::growable::chunk_shape::MIN_CHUNK_BUCKETS;
use crate::raw::{default_max_hops, level_hash, Geometry, SearchLimits, Shape};
use std::sync::atomic::AtomicBool;

fn level(bucket_count: usize, core_bits: u32, route_bits: u32) -> Chunks {
    let template = Geometry {
        shape: Shape {
            bucket_count,
            bucket_size: 4,
            fingerprint_bits: core_bits,
            semi_sorted: true,
            bucket_words: false,
        },
        stripes: 0,
        limits: SearchLimits {
            max_hops: default_max_hops(4),
            max_search_buckets: 1 << 16,
        },
    };
    // A level of chunks shaped like `template` together, each splitting `route_bits` times.
    Chunks::with_shape(ChunkShape::of(template, route_bits)).unwrap()
}

/// At least the smallest chunk a filter builds.
fn level_at_least(bucket_count: usize, core_bits: u32, route_bits: u32) -> Chunks {
    level(bucket_count.max(MIN_CHUNK_BUCKETS), core_bits, route_bits)
}

fn key(i: u64) -> u64 {
    level_hash(i, 5)
}

/// Every route leads lookups to the chunk the directory names for it.
fn assert_routes_lead_to_their_chunks(level: &Chunks) {
    for (route, entry) in level.directory.iter().enumerate() {
        let named = level.chunks.get(entry.load(Ordering::Relaxed)).unwrap();
        assert!(
            core::ptr::eq(level.chunks.of_route(route), named),
            "route {route}"
        );
    }
}

#[test]
fn a_level_grows_by_splits_and_loses_nothing() {
    let level = level(1024, 10, 6);
    assert_routes_lead_to_their_chunks(&level);
    let items = 200_000u64;
    for i in 0..items {
        assert_eq!(level.insert(key(i), false), Insertion::Inserted, "{i}");
    }
    assert_routes_lead_to_their_chunks(&level);
    assert_eq!(level.len(), items as usize);
    assert!((0..items).all(|i| level.contains(key(i))));
    let chunks = level.iter().count();
    // 4,096 slots a chunk: about 200k / (0.7 · 4096) chunks.
    assert!((50..=64).contains(&chunks), "{chunks} chunks");
    // Every lookup compares at least the 10 core bits, plus the growth bits left: the rate
    // stays under 8 / 2^10.
    let absent = 1_000_000u64;
    let false_positives = (items..items + absent)
        .filter(|&i| level.contains(key(i)))
        .count();
    let rate = false_positives as f64 / absent as f64;
    assert!(rate < 8.0 / 1024.0, "{rate}");
    for i in (0..items).step_by(2) {
        assert!(level.remove(key(i)));
    }
    assert_eq!(level.len(), items as usize / 2);
    assert!((1..items).step_by(2).all(|i| level.contains(key(i))));
}

#[test]
fn a_chunk_split_as_deep_as_it_can_be_is_full_and_changes_nothing() {
    let level = level_at_least(64, 8, 2);
    let mut stored = 0;
    let refused = (0..30_000u64).find(|&i| match level.insert(key(i), false) {
        Insertion::Full => true,
        _ => {
            stored += 1;
            false
        }
    });
    assert!(refused.is_some());
    assert_eq!(level.len(), stored);
    assert!((0..stored as u64).all(|i| level.contains(key(i))));
    // Four chunks of the smallest size, 4,096 slots: near full when the first refuses.
    assert_eq!(level.iter().count(), 4);
    assert!(stored > 4 * 4096 * 9 / 10, "{stored}");
}

#[test]
fn a_level_sized_past_one_chunk_starts_as_several() {
    let level = level(160_000, 12, 3);
    // 160,000 buckets in chunks of at most 65,536: four of 40,000.
    assert_eq!(level.iter().count(), 4);
    assert!(level.iter().all(|chunk| chunk.bucket_count() == 40_000));
    assert_routes_lead_to_their_chunks(&level);
    let items = 700_000u64;
    for i in 0..items {
        assert_eq!(level.insert(key(i), false), Insertion::Inserted, "{i}");
    }
    assert!((0..items).all(|i| level.contains(key(i))));
    assert_eq!(level.len(), items as usize);
    assert!(level.iter().count() > 4);
}

#[test]
fn a_unique_insert_finds_the_copy_wherever_splits_moved_it() {
    let level = level_at_least(256, 16, 4);
    // A key whose fingerprint an earlier key already shows is taken as present: rare with
    // 16-bit cores.
    let inserted = (0..20_000u64)
        .filter(|&i| level.insert(key(i), true) == Insertion::Inserted)
        .count();
    assert!(inserted > 19_990, "{inserted}");
    assert!(level.iter().count() > 4);
    for i in 0..20_000u64 {
        assert_eq!(level.insert(key(i), true), Insertion::Present);
        assert!(level.count(key(i)) >= 1);
    }
    assert_eq!(level.len(), inserted);
}

#[test]
fn readers_racing_splits_never_miss_an_inserted_key() {
    let level = level_at_least(512, 12, 8);
    // How far each writer has inserted: every key below both marks was inserted and returned.
    // A writer that stops, done or failing, marks itself past the end so the reader stops.
    let passed = [AtomicU64::new(0), AtomicU64::new(0)];
    struct Stop<'a>(&'a AtomicU64);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.fetch_max(u64::MAX, Ordering::Release);
        }
    }
    std::thread::scope(|scope| {
        for writer in 0..2u64 {
            let (level, passed) = (&level, &passed[writer as usize]);
            scope.spawn(move || {
                let _stop = Stop(passed);
                for i in (writer..120_000).step_by(2) {
                    assert_eq!(level.insert(key(i), false), Insertion::Inserted);
                    passed.store(i, Ordering::Release);
                }
            });
        }
        let (level, passed) = (&level, &passed);
        scope.spawn(move || {
            let mut mark = 0;
            while mark < 119_000 {
                mark = passed
                    .iter()
                    .map(|p| p.load(Ordering::Acquire))
                    .min()
                    .unwrap();
                for i in (0..mark.min(120_000)).step_by(7) {
                    assert!(level.contains(key(i)), "{i} missed below {mark}");
                }
            }
        });
    });
    assert_eq!(level.len(), 120_000);
    assert!(level.iter().count() > 16);
}

#[test]
fn writes_meeting_a_refused_split_still_find_the_room_and_the_copy() {
    // One chunk of one stripe, the only one its level may have: each split of it is sealed,
    // then refused, as one without memory or one that lost the last chunk to a racing split.
    let mut template = level(64, 12, 2).shape.template;
    template.stripes = 1;
    let mut level = Chunks::with_shape(ChunkShape::of(template, 2)).unwrap();
    level.shape.max_chunks = 1;
    let chunk = level.chunks.get(0).unwrap();
    let stop = AtomicBool::new(false);
    let refused = std::thread::scope(|scope| {
        let (level, stop) = (&level, &stop);
        scope.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if chunk.try_seal(chunk.split_state()) {
                    chunk.unseal_unsplit();
                    level.waiters.wake_all();
                }
            }
        });
        // The chunk stays almost empty: every insert has room and every remove its copy.
        let refused = (0..10_000_000u64)
            .map(|i| (i, level.insert(key(i), false), level.remove(key(i))))
            .find(|&(_, inserted, removed)| inserted != Insertion::Inserted || !removed);
        stop.store(true, Ordering::Relaxed);
        refused
    });
    assert_eq!(refused, None, "the chunk had room and held the copy");
    assert_eq!(level.len(), 0);
}
