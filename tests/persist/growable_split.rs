//! Growable filters whose levels split (format version 3): round trips, growth and limits after
//! loading, snapshots under concurrent writers, the golden file, statistics and serde. Damaged
//! and hostile levels are in `split_damage.rs`.
//!
//! Regenerate the golden file (only when the format changes, as a new version) with
//! `CCF_WRITE_SPLIT_GOLDEN=1 cargo test --release --test persist split_golden`.

use super::hashers::EvenSeeded;
use super::*;
use concurrent_cuckoo_filter::GrowableCuckooFilter;

/// The version-3 layout, as FORMAT.md gives it.
pub(super) const G_HEADER_LEN: usize = 112;
pub(super) const G_HEADER_CHECKSUM_AT: usize = 104;
pub(super) const G_INITIAL_CAPACITY_AT: usize = 16;
pub(super) const G_STRIPES_AT: usize = 56;
pub(super) const G_LEVEL_COUNT_AT: usize = 88;
const G_HASHER_ID_AT: usize = 72;
/// A chunk's table encoding takes its words and 96 bytes.
const LEVEL_OVERHEAD: usize = 96;
pub(super) const G_INITIAL_BUCKETS_AT: usize = 24;
pub(super) const G_GROWTH_FACTOR_AT: usize = 32;
pub(super) const G_ITEMS_AT: usize = 96;
pub(super) const LEVEL_RECORD_LEN: usize = 16;
pub(super) const CHUNK_RECORD_LEN: usize = 24;

/// [`golden_filter`] as this version writes it.
const GOLDEN: &str = "golden-growable-v3.bin";

/// A split filter whose header leaves semi-sorting to the rate (`semi_sorted` 0), so its chunks
/// are semi-sorted: built by a builder that left it so, with capacity 1,000, rate 1%, split
/// depth 2 and seed `0x5eed`, keys `0..6000` inserted and every tenth removed.
const GOLDEN_SEMI_SORTED: &str = "golden-growable-v3-semi-sorted.bin";

/// A split filter of tiny chunks: levels of 8, 32 and 128 buckets, each chunk splitting twice.
fn tiny(seed: u64) -> GrowableCuckooFilter {
    GrowableCuckooFilter::builder()
        .capacity(24)
        .false_positive_rate(0.01)
        .split_depth(2)
        .level_shape(8, 4, 8, 0)
        .hasher(DefaultHashBuilder::with_seed(seed))
        .build()
        .unwrap()
}

/// [`tiny`] grown until its third level exists, and 20 keys more: returns it and its key count.
fn small_filter() -> (GrowableCuckooFilter, u64) {
    let filter = tiny(0x5eed);
    let mut keys = 0u64;
    while filter.level_count() < 3 {
        filter.insert(&keys).unwrap();
        keys += 1;
    }
    for _ in 0..20 {
        filter.insert(&keys).unwrap();
        keys += 1;
    }
    (filter, keys)
}

pub(super) fn small() -> Vec<u8> {
    small_filter().0.to_bytes()
}

/// A split filter of the smallest chunks the builder makes by itself, 1,024 buckets.
pub(super) fn split(capacity: usize, depth: u32, keys: u64) -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(0.01)
        .split_depth(depth)
        .hasher(DefaultHashBuilder::with_seed(0x5eed))
        .build()
        .unwrap();
    assert_eq!(filter.try_extend(0..keys), Ok(keys as usize));
    filter
}

/// A chunk's place in the bytes: where its record starts, its id and split depth, and the
/// length of its record and table.
#[derive(Clone, Copy, Debug)]
pub(super) struct ChunkSpan {
    pub(super) at: usize,
    pub(super) id: u64,
    pub(super) depth: u64,
    pub(super) len: usize,
}

impl ChunkSpan {
    /// Where its fixed filter's encoding starts.
    pub(super) fn encoding(&self) -> usize {
        self.at + CHUNK_RECORD_LEN
    }
}

/// A level's place: where its record starts, and its chunks.
#[derive(Clone, Debug)]
pub(super) struct LevelSpan {
    pub(super) at: usize,
    pub(super) chunks: Vec<ChunkSpan>,
}

impl LevelSpan {
    pub(super) fn end(&self) -> usize {
        self.chunks
            .last()
            .map_or(self.at + LEVEL_RECORD_LEN, |c| c.at + c.len)
    }
}

/// The levels and chunks of a version-3 encoding, read as FORMAT.md lays them out.
pub(super) fn layout(bytes: &[u8]) -> Vec<LevelSpan> {
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
    let mut levels = Vec::new();
    let mut at = G_HEADER_LEN;
    for _ in 0..get_u64(bytes, G_LEVEL_COUNT_AT) {
        let level_at = at;
        let count = get_u64(bytes, at);
        at += LEVEL_RECORD_LEN;
        let mut chunks = Vec::new();
        for _ in 0..count {
            let words = get_u64(bytes, at + CHUNK_RECORD_LEN + TABLE_WORDS_AT) as usize;
            let len = CHUNK_RECORD_LEN + LEVEL_OVERHEAD + 8 * words;
            chunks.push(ChunkSpan {
                at,
                id: get_u64(bytes, at),
                depth: get_u64(bytes, at + 8),
                len,
            });
            at += len;
        }
        levels.push(LevelSpan {
            at: level_at,
            chunks,
        });
    }
    assert_eq!(at, bytes.len());
    levels
}

/// Recomputes the checksum of the record of `len` bytes at `at`.
pub(super) fn reseal_record(bytes: &mut [u8], at: usize, len: usize) {
    let checksum = xxh3_64(&bytes[at..at + len - 8]);
    set_u64(bytes, at + len - 8, checksum);
}

pub(super) fn reseal_growable_header(bytes: &mut [u8]) {
    let checksum = xxh3_64(&bytes[..G_HEADER_CHECKSUM_AT]);
    set_u64(bytes, G_HEADER_CHECKSUM_AT, checksum);
}

/// The error `bytes` get, the same from a slice and from a reader.
pub(super) fn split_err(bytes: &[u8]) -> DecodeError {
    let err = GrowableCuckooFilter::from_bytes(bytes).unwrap_err();
    assert!(!err.to_string().is_empty());
    assert_eq!(GrowableCuckooFilter::read_from(bytes).unwrap_err(), err);
    err
}

/// What is wrong inside level `level`, which `err` must name.
pub(super) fn in_level(err: &DecodeError, level: u64) -> &DecodeError {
    match err {
        DecodeError::Level { level: l, error } if *l == level => error,
        _ => panic!("not an error of level {level}: {err:?}"),
    }
}

/// Asserts that `copy` answers as `original` does: same levels, statistics, count, members and
/// answers to other keys, and the same bytes.
fn assert_same_split(original: &GrowableCuckooFilter, copy: &GrowableCuckooFilter, keys: u64) {
    assert_eq!(format!("{original:?}"), format!("{copy:?}"));
    assert_eq!(copy.level_count(), original.level_count());
    assert_eq!(
        copy.level_fingerprint_bits(),
        original.level_fingerprint_bits()
    );
    assert_eq!(copy.capacity(), original.capacity());
    assert_eq!(copy.len(), original.len());
    assert_eq!(copy.level_stats(), original.level_stats());
    assert_eq!(copy.false_positive_rate(), original.false_positive_rate());
    assert_eq!(copy.hasher(), original.hasher());
    assert!((0..keys).all(|key| copy.contains(&key)));
    let others = (1u64 << 60)..(1u64 << 60) + 50_000;
    assert!(others
        .clone()
        .all(|key| copy.contains(&key) == original.contains(&key)));
    assert!(copy.to_bytes() == original.to_bytes());
}

/// Chunks in each level, as the filter writes them.
fn chunk_counts(filter: &GrowableCuckooFilter) -> Vec<usize> {
    layout(&filter.to_bytes())
        .iter()
        .map(|level| level.chunks.len())
        .collect()
}

#[test]
fn split_filters_round_trip_with_every_answer() {
    let (small, small_keys) = small_filter();
    let cases = [
        (split(100, 2, 0), 0),
        (split(100, 2, 40_000), 40_000),
        (split(100, 3, 60_000), 60_000),
        (small, small_keys),
    ];
    for (filter, keys) in &cases {
        let bytes = filter.to_bytes();
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
        let copy = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(copy.len(), *keys as usize);
        assert!((0..*keys).all(|key| copy.contains(&key)));
        assert!(copy.to_bytes() == bytes);
        assert_same_split(filter, &copy, *keys);
        let streamed = GrowableCuckooFilter::read_from(&bytes[..]).unwrap();
        assert_same_split(filter, &streamed, *keys);
        let trickled = GrowableCuckooFilter::read_from(Trickle {
            bytes: &bytes,
            step: 7,
        })
        .unwrap();
        assert_same_split(filter, &trickled, *keys);
    }
    // Past several splits, into at least two levels.
    for (filter, _) in &cases[1..] {
        let chunks = chunk_counts(filter);
        assert!(
            chunks.len() >= 2 && chunks.iter().sum::<usize>() > chunks.len() + 3,
            "{chunks:?}"
        );
    }
    assert_eq!(chunk_counts(&cases[0].0), [1]);
}

#[test]
fn a_split_filter_round_trips_after_removes_with_its_exact_count() {
    let filter = split(100, 2, 30_000);
    let removed = (0..30_000u64)
        .step_by(3)
        .filter(|key| filter.remove(key))
        .count();
    assert!(removed > 9_000, "{removed}");
    let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.len(), 30_000 - removed);
    assert!((0..30_000u64)
        .filter(|key| key % 3 != 0)
        .all(|key| copy.contains(&key)));
    assert_same_split(&filter, &copy, 0);
}

#[test]
fn a_loaded_split_filter_grows_on_as_the_original_does() {
    for (original, keys) in [small_filter(), (split(100, 2, 20_000), 20_000)] {
        let copy = GrowableCuckooFilter::from_bytes(&original.to_bytes()).unwrap();
        let (levels, chunks) = (copy.level_count(), chunk_counts(&copy));
        let more = keys..keys * 8;
        assert_eq!(copy.try_extend(more.clone()), Ok(more.clone().count()));
        assert_eq!(original.try_extend(more.clone()), Ok(more.count()));
        assert!(copy.level_count() > levels, "{levels}");
        assert!(chunk_counts(&copy)[..chunks.len()] >= chunks[..]);
        assert_eq!(copy.len(), keys as usize * 8);
        assert!((0..keys * 8).all(|key| copy.contains(&key)));
        // Split for split and level for level where the original went.
        assert!(copy.to_bytes() == original.to_bytes());
    }
}

#[test]
fn a_split_filters_limit_survives_a_round_trip() {
    // A limit of 300 items: four chunks of 30 in level 0, and one of 121 in level 1 that may
    // not split; a level 2 of 384 would pass it.
    let filter = GrowableCuckooFilter::builder()
        .capacity(24)
        .split_depth(2)
        .level_shape(8, 4, 8, 0)
        .max_capacity(300)
        .build()
        .unwrap();
    let mut inserted = 0u64;
    while filter.insert(&inserted).is_ok() {
        inserted += 1;
    }
    assert_eq!(chunk_counts(&filter), [4, 1]);
    let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_same_split(&filter, &copy, inserted);
    assert!(copy.insert(&u64::MAX).is_err());
    assert!(copy.try_extend(inserted..inserted + 50).is_err());
    assert_eq!(chunk_counts(&copy), [4, 1]);
    assert_eq!(copy.len(), inserted as usize);
}

#[test]
fn a_split_filter_with_its_own_hasher_decodes_only_with_it() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(24)
        .split_depth(2)
        .level_shape(8, 4, 8, 0)
        .hasher(EvenSeeded(8))
        .build()
        .unwrap();
    filter.try_extend(0..300u32).unwrap();
    let bytes = filter.to_bytes();
    let copy = GrowableCuckooFilter::<EvenSeeded>::from_bytes_with_hasher(&bytes).unwrap();
    assert_eq!(copy.hasher(), &EvenSeeded(8));
    assert!((0..300u32).all(|key| copy.contains(&key)));
    let copy = GrowableCuckooFilter::<EvenSeeded>::read_from_with_hasher(&bytes[..]).unwrap();
    assert_eq!(copy.len(), 300);
    assert_eq!(
        split_err(&bytes),
        DecodeError::HasherMismatch {
            expected: DefaultHashBuilder::HASHER_ID,
            found: EvenSeeded::HASHER_ID
        }
    );
}

#[test]
fn reading_a_split_filter_from_a_stream_leaves_what_follows() {
    let bytes = small();
    let len = bytes.len();
    let mut stream = bytes.clone();
    stream.extend_from_slice(b"after");
    let mut reader = &stream[..];
    let copy = GrowableCuckooFilter::read_from(&mut reader).unwrap();
    assert!(copy.to_bytes() == bytes);
    assert_eq!(reader, b"after");
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&stream).unwrap_err(),
        DecodeError::TrailingBytes {
            expected: len as u64,
            found: len as u64 + 5
        }
    );
}

#[test]
fn a_snapshot_while_a_thread_inserts_holds_every_insert_that_returned() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(100)
        .false_positive_rate(0.01)
        .split_depth(2)
        .build()
        .unwrap();
    let keys = 150_000u64;
    let returned = AtomicU64::new(0);
    // Snapshots taken so far. Every 5,000 keys the writer waits for one more, so that the
    // snapshots spread over the whole growth however the two threads are scheduled.
    let taken = AtomicU64::new(0);
    let (mut snapshots, mut shapes) = (0, Vec::new());
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            for key in 0..keys {
                if key % 5_000 == 0 {
                    let seen = taken.load(Ordering::Acquire);
                    while taken.load(Ordering::Acquire) == seen {
                        std::thread::yield_now();
                    }
                }
                filter.insert(&key).unwrap();
                returned.store(key + 1, Ordering::Release);
            }
        });
        while !writer.is_finished() || snapshots == 0 {
            let before = returned.load(Ordering::Acquire);
            let bytes = filter.to_bytes();
            let after = returned.load(Ordering::Acquire);
            let copy = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
            // Every insert that returned before the snapshot is in it, and nothing that did
            // not start before it ended: at most the one insert in flight.
            if let Some(lost) = (0..before).find(|key| !copy.contains(key)) {
                panic!("key {lost} inserted before the snapshot is not in it");
            }
            let len = copy.len() as u64;
            assert!(
                before <= len && len <= after + 1,
                "{before} ≤ {len} ≤ {after} + 1"
            );
            shapes.push(chunk_counts(&copy));
            snapshots += 1;
            taken.store(snapshots, Ordering::Release);
        }
    });
    let last = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(last.len(), keys as usize);
    shapes.dedup();
    assert!(
        shapes.len() >= 3,
        "{snapshots} snapshots saw only the chunks {shapes:?}"
    );
}

#[test]
fn a_split_snapshot_is_one_moment_of_all_levels_at_once() {
    // Items leave the older levels and enter the newest one, each remove before its insert, so
    // the filter holds `held` or `held − 1` items at every moment. A copy taken level by level
    // would miss removes from older levels and count inserts into the newest.
    let held = 40_000u64;
    let filter = split(100, 2, held);
    assert!(filter.level_count() >= 2);
    let stop = AtomicBool::new(false);
    let (moved, snapshots) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
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
        });
        let mut snapshots = 0;
        while (!writer.is_finished() || snapshots == 0) && snapshots < 200 {
            let copy = GrowableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
            let len = copy.len() as u64;
            assert!(len == held || len == held - 1, "{len}");
            snapshots += 1;
        }
        stop.store(true, Ordering::Relaxed);
        (writer.join().unwrap(), snapshots)
    });
    assert!(
        moved > 0 && snapshots > 0,
        "{moved} moved, {snapshots} snapshots"
    );
}

#[test]
fn split_level_statistics_add_up_over_their_chunks() {
    let (filter, keys) = small_filter();
    let bytes = filter.to_bytes();
    let levels = filter.level_stats();
    assert_eq!(levels.len(), 3);
    assert_eq!(
        levels.iter().map(|level| level.len).sum::<usize>(),
        keys as usize
    );
    assert_eq!(
        G_HEADER_LEN as u64 + levels.iter().map(|l| l.serialized_len).sum::<u64>(),
        bytes.len() as u64
    );
    for (stats, (span, buckets)) in levels.iter().zip(layout(&bytes).iter().zip([8, 32, 128])) {
        assert_eq!(stats.format_version, 3);
        assert_eq!(stats.buckets, span.chunks.len() * buckets);
        assert_eq!(stats.fingerprint_bits, 8);
        assert_eq!((stats.bucket_size, stats.semi_sorted), (4, false));
        assert_eq!(stats.serialized_len, (span.end() - span.at) as u64);
        assert_eq!(stats.hasher_seed, 0x5eed);
        let load = stats.len as f64 / (stats.buckets * 4) as f64;
        assert_eq!(stats.load_factor, load);
        assert!(stats.capacity >= stats.len);
        assert!(stats.false_positive_rate_at_load <= stats.expected_false_positive_rate);
        assert!(stats.memory_bytes > stats.buckets * 4);
        assert!(stats.to_string().contains("format version: 3\n"), "{stats}");
    }
    assert_eq!(filter.level_fingerprint_bits(), [8, 8, 8]);
}

/// The filter of the golden file, rebuilt: [`small_filter`] with every tenth key removed, but
/// for the few whose fingerprint shows in two levels, which `remove` refuses and leaves found.
fn golden_filter() -> (GrowableCuckooFilter, u64) {
    let (filter, keys) = small_filter();
    for key in (0..keys).step_by(10) {
        assert!(filter.remove(&key) || filter.contains(&key), "{key}");
    }
    (filter, keys)
}

/// This version writes exactly the golden bytes (or, with `CCF_WRITE_SPLIT_GOLDEN=1`, writes
/// them).
#[test]
fn the_split_golden_file_is_what_this_version_writes() {
    let path = data_dir().join(GOLDEN);
    let bytes = golden_filter().0.to_bytes();
    if std::env::var_os("CCF_WRITE_SPLIT_GOLDEN").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(bytes.len() < 64 << 10);
    assert!(std::fs::read(&path).unwrap() == bytes, "{GOLDEN} differs");
}

/// The split golden file with its hasher id, in the header and in every chunk, patched to `id`
/// and every checksum over them made right.
fn golden_recorded_as(id: &[u8; 8]) -> Vec<u8> {
    let mut bytes = std::fs::read(data_dir().join(GOLDEN)).unwrap();
    set_u64(&mut bytes, G_HASHER_ID_AT, u64::from_le_bytes(*id));
    reseal_growable_header(&mut bytes);
    for chunk in layout(&bytes).iter().flat_map(|level| level.chunks.clone()) {
        let at = chunk.encoding();
        set_u64(&mut bytes, at + HASHER_ID_AT, u64::from_le_bytes(*id));
        reseal(&mut bytes[at..chunk.at + chunk.len]);
    }
    bytes
}

#[test]
fn a_split_file_recorded_under_a_retired_id_of_the_default_hasher_is_refused() {
    let golden = golden_recorded_as(b"ccf-xxf8");
    assert!(
        GrowableCuckooFilter::from_bytes(&golden)
            .unwrap()
            .to_bytes()
            == golden
    );
    for retired in [b"ccf-xxh3", b"ccf-xxw8"] {
        assert_eq!(
            split_err(&golden_recorded_as(retired)),
            DecodeError::HasherMismatch {
                expected: DefaultHashBuilder::HASHER_ID,
                found: u64::from_le_bytes(*retired),
            }
        );
    }
}

#[test]
fn a_split_file_of_semi_sorted_chunks_decodes_grows_and_writes_back_unchanged() {
    let bytes = std::fs::read(data_dir().join(GOLDEN_SEMI_SORTED)).unwrap();
    let filter = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
    let stats = &filter.level_stats()[0];
    assert!(
        stats.semi_sorted && stats.fingerprint_bits == 11,
        "{stats:?}"
    );
    assert_eq!(filter.len(), 5_400);
    let members = |end: u64| (0..end).filter(|key| key >= &6_000 || key % 10 != 0);
    assert!(members(6_000).all(|key| filter.contains(&key)));
    assert!(filter.to_bytes() == bytes);
    // Its splits keep the chunks semi-sorted, as its header says.
    assert_eq!(filter.try_extend(6_000..20_000u64), Ok(14_000));
    assert!(filter.level_stats()[0].semi_sorted);
    assert!(members(20_000).all(|key| filter.contains(&key)));
}

#[test]
fn the_split_golden_file_decodes_with_its_members_and_writes_back_unchanged() {
    let bytes = std::fs::read(data_dir().join(GOLDEN)).unwrap();
    let filter = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(filter.level_count(), 3);
    assert_eq!(filter.level_fingerprint_bits(), [8, 8, 8]);
    assert_eq!(filter.hasher().seed(), 0x5eed);
    assert_eq!(filter.len(), 549);
    assert!((0..611u64)
        .filter(|key| key % 10 != 0)
        .all(|key| filter.contains(&key)));
    assert!(filter.to_bytes() == bytes, "{GOLDEN} written back differs");
    let chunks: Vec<usize> = layout(&bytes).iter().map(|l| l.chunks.len()).collect();
    assert_eq!(chunks, [4, 4, 1]);
    // It grows on by its plan.
    filter.try_extend(1000..2000u64).unwrap();
    assert!(chunk_counts(&filter)[2] > 1);
}

#[cfg(feature = "serde")]
#[test]
fn a_split_filter_serializes_with_serde_as_its_bytes() {
    let (filter, keys) = small_filter();
    let json = serde_json::to_string(&filter).unwrap();
    let copy: GrowableCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_same_split(&filter, &copy, keys);
    let as_bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(as_bytes, filter.to_bytes());

    let mut damaged = filter.to_bytes();
    let at = layout(&damaged)[1].at;
    damaged[at] ^= 1;
    let err =
        serde_json::from_str::<GrowableCuckooFilter>(&serde_json::to_string(&damaged).unwrap())
            .unwrap_err();
    assert!(err.to_string().contains("level 1"), "{err}");
}

#[test]
fn growable_versions_other_than_3_are_refused_by_number() {
    for version in [1u8, 2, 4] {
        let mut bytes = small();
        bytes[8] = version;
        assert_eq!(
            GrowableCuckooFilter::from_bytes(&bytes).unwrap_err(),
            DecodeError::UnsupportedVersion {
                version: version.into()
            }
        );
    }
}
