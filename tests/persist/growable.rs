//! Growable filters: round trips, growth after loading, the golden file, snapshots under
//! concurrent writers, and serde.

use super::hashers::EvenSeeded;
use super::*;
use concurrent_cuckoo_filter::GrowableCuckooFilter;

/// The growable format's header length and fields, as FORMAT.md gives them.
pub(super) const G_HEADER_LEN: usize = 112;
pub(super) const G_HEADER_CHECKSUM_AT: usize = 104;
pub(super) const G_INITIAL_CAPACITY_AT: usize = 16;
pub(super) const G_MAX_CAPACITY_AT: usize = 48;
pub(super) const G_STRIPES_AT: usize = 56;
pub(super) const G_LEVEL_COUNT_AT: usize = 88;
/// A level's encoding takes its table and 96 bytes.
pub(super) const LEVEL_OVERHEAD: usize = 96;

/// The growable file of the golden test: 30 items first, ε = 1%, grown to three levels, rates by
/// the default schedule (format version 2).
const GOLDEN: &str = "golden-growable-v2.bin";
/// The same filter written by the format's version 1, whose levels gain one fingerprint bit each.
const GOLDEN_V1: &str = "golden-growable-v1.bin";

pub(super) fn grown(capacity: usize, rate: f64, keys: u64) -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(rate)
        .growth_factor(2)
        .hasher(DefaultHashBuilder::with_seed(0x5eed))
        .build()
        .unwrap();
    filter.try_extend(0..keys).unwrap();
    filter
}

/// Where each level's encoding starts, and its length, read from the level headers.
pub(super) fn level_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = G_HEADER_LEN;
    for _ in 0..get_u64(bytes, G_LEVEL_COUNT_AT) {
        let len = LEVEL_OVERHEAD + 8 * get_u64(bytes, at + TABLE_WORDS_AT) as usize;
        spans.push((at, len));
        at += len;
    }
    assert_eq!(at, bytes.len());
    spans
}

/// Asserts that `copy` answers as `original` does: same levels, count, members and answers to
/// other keys, and the same bytes.
fn assert_same_growable(original: &GrowableCuckooFilter, copy: &GrowableCuckooFilter, keys: u64) {
    assert_eq!(format!("{original:?}"), format!("{copy:?}"));
    assert_eq!(copy.level_count(), original.level_count());
    assert_eq!(copy.fingerprint_bits(), original.fingerprint_bits());
    assert_eq!(copy.capacity(), original.capacity());
    assert_eq!(copy.len(), original.len());
    assert_eq!(copy.false_positive_rate(), original.false_positive_rate());
    assert_eq!(copy.hasher(), original.hasher());
    for key in 0..keys {
        assert_eq!(copy.contains(&key), original.contains(&key), "{key}");
    }
    let others = (1u64 << 60)..(1u64 << 60) + 50_000;
    assert!(others
        .clone()
        .all(|key| copy.contains(&key) == original.contains(&key)));
    assert_eq!(copy.to_bytes(), original.to_bytes());
}

#[test]
fn growable_filters_of_one_or_many_levels_round_trip() {
    for (capacity, keys) in [(100, 0), (100, 50), (100, 20_000), (1000, 300_000)] {
        let filter = grown(capacity, 0.01, keys);
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(copy.len(), keys as usize);
        assert!((0..keys).all(|key| copy.contains(&key)));
        assert_same_growable(&filter, &copy, keys);
        let streamed = GrowableCuckooFilter::read_from(&filter.to_bytes()[..]).unwrap();
        assert_same_growable(&filter, &streamed, keys);
    }
    assert_eq!(grown(100, 0.01, 0).level_count(), 1);
    assert!(grown(100, 0.01, 20_000).level_count() >= 6);
}

#[test]
fn a_growable_filter_round_trips_after_removes_with_its_exact_count() {
    let filter = grown(64, 0.001, 10_000);
    let removed = (0..10_000u64)
        .step_by(3)
        .filter(|key| filter.remove(key))
        .count();
    assert!(removed > 3000, "{removed}");
    let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.len(), 10_000 - removed);
    assert!((0..10_000u64)
        .filter(|key| key % 3 != 0)
        .all(|key| copy.contains(&key)));
    assert_same_growable(&filter, &copy, 10_000);
}

#[test]
fn every_setting_of_the_plan_survives_a_round_trip_and_its_limit_still_holds() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(20)
        .growth_factor(4)
        .max_capacity(400)
        .level_shape(8, 4, 16, 1)
        .search_limits(3, 100)
        .build()
        .unwrap();
    let mut inserted = 0u64;
    while filter.insert(&inserted).is_ok() {
        inserted += 1;
    }
    // Levels of 8 and 32 buckets; a third, of 320 items, would pass the limit of 400.
    assert_eq!(filter.level_count(), 2);
    assert_eq!(filter.fingerprint_bits(), [16, 16]);
    let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_same_growable(&filter, &copy, inserted);
    assert!(copy.insert(&u64::MAX).is_err());
    assert_eq!(copy.level_count(), 2);
    assert_eq!(copy.len(), inserted as usize);
}

#[test]
fn a_loaded_filter_grows_on_by_its_plan_within_its_rate() {
    for rate in [0.01, 0.001] {
        let filter = grown(200, rate, 5_000);
        let levels = filter.level_count();
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        copy.try_extend(5_000..200_000u64).unwrap();
        assert!(copy.level_count() > levels + 3, "{}", copy.level_count());
        assert_eq!(copy.len(), 200_000);
        assert!((0..200_000u64).all(|key| copy.contains(&key)));
        let probes = 1_000_000u64;
        let false_positives = ((1u64 << 62)..(1u64 << 62) + probes)
            .filter(|key| copy.contains(key))
            .count();
        let measured = false_positives as f64 / probes as f64;
        assert!(measured <= rate, "ε = {rate}: {measured}");
        // The levels it added are those the original would have added.
        filter.try_extend(5_000..200_000u64).unwrap();
        assert_eq!(copy.fingerprint_bits(), filter.fingerprint_bits());
        assert_eq!(copy.capacity(), filter.capacity());
    }
}

#[test]
fn a_growable_filter_with_its_own_hasher_decodes_only_with_it() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(50)
        .growth_factor(2)
        .hasher(EvenSeeded(8))
        .build()
        .unwrap();
    filter.try_extend(0..1000u32).unwrap();
    let bytes = filter.to_bytes();
    let copy = GrowableCuckooFilter::<EvenSeeded>::from_bytes_with_hasher(&bytes).unwrap();
    assert_eq!(copy.hasher(), &EvenSeeded(8));
    assert!((0..1000u32).all(|key| copy.contains(&key)));
    let copy = GrowableCuckooFilter::<EvenSeeded>::read_from_with_hasher(&bytes[..]).unwrap();
    assert_eq!(copy.len(), 1000);
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&bytes).unwrap_err(),
        DecodeError::HasherMismatch {
            expected: DefaultHashBuilder::HASHER_ID,
            found: EvenSeeded::HASHER_ID
        }
    );
}

#[test]
fn reading_a_growable_filter_from_a_stream_leaves_what_follows() {
    let filter = grown(30, 0.01, 500);
    let mut bytes = filter.to_bytes();
    let len = bytes.len();
    bytes.extend_from_slice(b"after");
    let mut reader = &bytes[..];
    let copy = GrowableCuckooFilter::read_from(&mut reader).unwrap();
    assert_eq!(copy.len(), 500);
    assert_eq!(reader, b"after");
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&bytes).unwrap_err(),
        DecodeError::TrailingBytes {
            expected: len as u64,
            found: len as u64 + 5
        }
    );
}

/// The filter of the golden file, rebuilt.
fn golden_filter() -> GrowableCuckooFilter {
    let filter = grown(30, 0.01, 200);
    for key in (0..200u64).step_by(10) {
        assert!(filter.remove(&key));
    }
    filter
}

/// This version writes exactly the golden bytes (or, with `CCF_WRITE_GROWABLE_GOLDEN=1`, writes
/// them).
#[test]
fn the_growable_golden_file_is_what_this_version_writes() {
    let path = data_dir().join(GOLDEN);
    let bytes = golden_filter().to_bytes();
    if std::env::var_os("CCF_WRITE_GROWABLE_GOLDEN").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(std::fs::read(&path).unwrap() == bytes, "{GOLDEN} differs");
}

#[test]
fn the_growable_golden_file_decodes_with_its_members() {
    let bytes = std::fs::read(data_dir().join(GOLDEN)).unwrap();
    let filter = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(filter.level_count(), 3);
    // ε/8 for each of the first four levels.
    assert_eq!(filter.fingerprint_bits(), [13, 13, 13]);
    assert_golden_members(&filter, &bytes);
}

#[test]
fn a_version_1_file_decodes_with_its_members_and_writes_back_unchanged() {
    let bytes = std::fs::read(data_dir().join(GOLDEN_V1)).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    let filter = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(filter.level_count(), 3);
    // ε/2^(i+1): one bit more per level.
    assert_eq!(filter.fingerprint_bits(), [11, 12, 13]);
    assert!(
        filter.to_bytes() == bytes,
        "{GOLDEN_V1} written back differs"
    );
    assert_golden_members(&filter, &bytes);
    // It grows on by the version-1 schedule.
    assert_eq!(filter.fingerprint_bits(), [11, 12, 13, 14]);
    assert_eq!(
        u16::from_le_bytes([filter.to_bytes()[8], filter.to_bytes()[9]]),
        1
    );
}

/// The golden filter's members, count, rate and seed, and that it grows on by its plan: 30, 60,
/// 120, then 240 items.
fn assert_golden_members(filter: &GrowableCuckooFilter, bytes: &[u8]) {
    assert_eq!(filter.len(), 180);
    assert_eq!(filter.false_positive_rate(), 0.01);
    assert_eq!(filter.hasher().seed(), 0x5eed);
    assert!((0..200u64)
        .filter(|key| key % 10 != 0)
        .all(|key| filter.contains(&key)));
    let before = filter.capacity();
    filter.try_extend(1000..1300u64).unwrap();
    assert_eq!(filter.level_count(), 4);
    assert!(filter.capacity() >= before + 240);
    assert_eq!(
        bytes.len(),
        level_spans(bytes).last().map_or(0, |(at, len)| at + len)
    );
}

#[test]
fn a_snapshot_under_concurrent_growth_holds_every_insert_that_returned() {
    let filter = Arc::new(
        GrowableCuckooFilter::builder()
            .capacity(100)
            .false_positive_rate(0.01)
            .growth_factor(2)
            .build()
            .unwrap(),
    );
    let done = Arc::new(AtomicU64::new(0));
    let writer = {
        let (filter, done) = (Arc::clone(&filter), Arc::clone(&done));
        std::thread::spawn(move || {
            for key in 0..200_000u64 {
                filter.insert(&key).unwrap();
                // Every second key is removed again: a remove in an older level and an insert in
                // a newer one race every snapshot.
                if key % 2 == 1 {
                    filter.remove(&(key - 1));
                }
                done.store(key + 1, Ordering::Release);
            }
        })
    };
    let mut snapshots = 0;
    let mut levels_seen = Vec::new();
    while !writer.is_finished() || snapshots == 0 {
        let returned = done.load(Ordering::Acquire);
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        // Odd keys stay.
        assert!((1..returned).step_by(2).all(|key| copy.contains(&key)));
        assert!(copy.len() as u64 >= returned / 2);
        levels_seen.push(copy.level_count());
        snapshots += 1;
    }
    writer.join().unwrap();
    let last = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert!(last.len() >= 100_000, "{}", last.len());
    assert_eq!(last.len(), filter.len());
    levels_seen.dedup();
    assert!(
        levels_seen.len() >= 2,
        "{snapshots} snapshots saw levels {levels_seen:?}"
    );
}

#[test]
fn a_snapshot_is_one_moment_of_all_levels_at_once() {
    // Items leave the older levels and enter the newest one, each remove before its insert, so
    // the filter holds `held` or `held − 1` items at every moment. A copy taken one level after
    // another would miss removes from the older levels and count inserts into the newest.
    let held = 60_000u64;
    let filter = Arc::new(grown(1000, 0.01, held));
    assert!(filter.level_count() >= 6);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (filter, stop) = (Arc::clone(&filter), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut moved = 0u64;
            while !stop.load(Ordering::Relaxed) && moved < held {
                // A remove refused for a fingerprint in two levels changes nothing; nor does
                // skipping its insert.
                if filter.remove(&moved) {
                    filter.insert(&(held + moved)).unwrap();
                }
                moved += 1;
            }
            moved
        })
    };
    let mut snapshots = 0;
    while !writer.is_finished() && snapshots < 200 {
        let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        let len = copy.len() as u64;
        assert!(len == held || len == held - 1, "{len}");
        snapshots += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let moved = writer.join().unwrap();
    assert!(
        moved > 0 && snapshots > 0,
        "{moved} moved, {snapshots} snapshots"
    );
}

#[cfg(feature = "serde")]
#[test]
fn a_growable_filter_serializes_with_serde_as_its_bytes() {
    let filter = grown(30, 0.01, 5_000);
    let json = serde_json::to_string(&filter).unwrap();
    let copy: GrowableCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_same_growable(&filter, &copy, 5_000);
    let as_bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(as_bytes, filter.to_bytes());

    let mut damaged = filter.to_bytes();
    damaged[G_LEVEL_COUNT_AT] = 40;
    let err =
        serde_json::from_str::<GrowableCuckooFilter>(&serde_json::to_string(&damaged).unwrap())
            .unwrap_err();
    assert!(err.to_string().contains("header"), "{err}");
}

#[test]
fn a_growable_version_past_3_is_refused_by_number() {
    let mut bytes = golden_filter().to_bytes();
    bytes[8] = 4;
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&bytes).unwrap_err(),
        DecodeError::UnsupportedVersion { version: 4 }
    );
}
