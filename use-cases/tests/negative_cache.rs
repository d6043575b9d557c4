//! The negative cache on a real redb database in a temporary directory: gets racing writers,
//! full filters, failing disks. Snapshots across crashes and bad snapshot paths are in
//! `negative_cache_snapshots.rs`.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use ccf_use_cases::measure::SplitMix;
use ccf_use_cases::negative_cache::{
    Answer, FilterSource, NegativeCache, Options, SnapshotState, StoreError,
};

use common::{key, open, put_range, value, with_snapshot, TempDir};

// Key lifecycle stages, set by the writer that owns the key.
const NEVER: u8 = 0;
const PUTTING: u8 = 1;
const STORED: u8 = 2;
const DELETING: u8 = 3;
const DELETED: u8 = 4;

#[test]
fn concurrent_gets_agree_with_the_database_while_writers_put_and_delete() {
    const WRITERS: u64 = 2;
    const READERS: u64 = 2;
    const PER_WRITER: u64 = 1500;
    let dir = TempDir::new("stress");
    let store = open(
        &dir.db(),
        Options {
            capacity: 256,
            durable: false,
            ..Options::default()
        },
    );
    let filter = store.filter().unwrap();
    // Live keys fill about 85% of the slots, so inserts displace fingerprints all along.
    let slots = (filter.bucket_count() * filter.bucket_size()) as u64;
    let lag = slots * 85 / 100 / WRITERS;
    let stages: Vec<AtomicU8> = (0..WRITERS * PER_WRITER)
        .map(|_| AtomicU8::new(NEVER))
        .collect();
    let frontier = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let (store, stages, frontier, done) = (&store, &stages, &frontier, &done);

    let counts: Vec<[u64; 3]> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                scope.spawn(move || {
                    for i in 0..PER_WRITER {
                        let k = i * WRITERS + w;
                        frontier.fetch_max(k, Ordering::SeqCst);
                        stages[k as usize].store(PUTTING, Ordering::SeqCst);
                        store.put(&key(k), &value(k)).unwrap();
                        stages[k as usize].store(STORED, Ordering::SeqCst);
                        if i % 5 == 0 {
                            // A put of a stored key: no second copy in the filter.
                            store.put(&key(k), &value(k)).unwrap();
                        }
                        if i >= lag {
                            let d = (i - lag) * WRITERS + w;
                            stages[d as usize].store(DELETING, Ordering::SeqCst);
                            assert!(store.delete(&key(d)).unwrap());
                            stages[d as usize].store(DELETED, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..READERS)
            .map(|r| {
                scope.spawn(move || {
                    let mut rng = SplitMix(r + 100);
                    // Gets checked, of them answered by the filter, of them of a stored key.
                    let mut counts = [0u64; 3];
                    while !done.load(Ordering::SeqCst) {
                        let range = (frontier.load(Ordering::SeqCst) + 64).min(stages.len() as u64);
                        let k = rng.next_u64() % range;
                        let before = stages[k as usize].load(Ordering::SeqCst);
                        let in_db = store.get_from_database(&key(k)).unwrap();
                        let (got, answer) = store.get_answered(&key(k)).unwrap();
                        let still_in_db = store.get_from_database(&key(k)).unwrap().is_some();
                        let after = stages[k as usize].load(Ordering::SeqCst);
                        // In the database before the get, and after it or with no delete begun
                        // by its end: stored all through it (a deleted key is never put again).
                        let stored = in_db.is_some() && (still_in_db || after <= STORED);
                        // Never put by the end of the get, or deleted before it began.
                        let absent = after == NEVER || before == DELETED;
                        if stored {
                            assert_eq!(got, Some(value(k).to_vec()), "key {k}: {before}..{after}");
                            assert_eq!(in_db, got);
                        } else if absent {
                            assert_eq!(
                                (&got, &in_db),
                                (&None, &None),
                                "key {k}: {before}..{after}"
                            );
                        } else {
                            continue;
                        }
                        counts[0] += 1;
                        counts[1] += u64::from(answer == Answer::Filter);
                        counts[2] += u64::from(stored);
                    }
                    counts
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });

    let [checked, by_filter, stored] = counts
        .iter()
        .fold([0; 3], |a, c| [a[0] + c[0], a[1] + c[1], a[2] + c[2]]);
    assert!(
        store.filter_trusted(),
        "the filter overflowed: lower the load"
    );
    assert!(checked > 1000, "only {checked} gets were checked");
    assert!(
        by_filter > 100,
        "the filter answered {by_filter} of {checked}"
    );
    assert!(stored > 100, "only {stored} gets were of stored keys");
    // One copy in the filter per stored key, none left behind by deletes or repeated puts.
    assert_eq!(store.filter().unwrap().len() as u64, store.len().unwrap());
    for (k, stage) in stages.iter().enumerate() {
        let stored = stage.load(Ordering::SeqCst) == STORED;
        assert_eq!(store.get(&key(k as u64)).unwrap().is_some(), stored);
    }
}

#[test]
fn a_current_snapshot_is_loaded_and_a_stale_one_is_rebuilt_over() {
    let dir = TempDir::new("stale");
    let store = open(&dir.db(), with_snapshot(&dir));
    assert_eq!(
        store.source(),
        &FilterSource::Rebuilt {
            keys: 0,
            snapshot: SnapshotState::Missing
        }
    );
    put_range(&store, 0..1000);
    let sequence = store.write_snapshot().unwrap();
    drop(store);

    let store = open(&dir.db(), with_snapshot(&dir));
    assert_eq!(store.source(), &FilterSource::Snapshot { sequence });
    assert!((0..1000).all(|i| store.get(&key(i)).unwrap() == Some(value(i).to_vec())));
    // More writes after the snapshot, then a crash before the next one.
    put_range(&store, 1000..1500);
    assert!(store.delete(&key(3)).unwrap());
    drop(store);

    let store = open(&dir.db(), with_snapshot(&dir));
    assert_eq!(
        store.source(),
        &FilterSource::Rebuilt {
            keys: 1499,
            snapshot: SnapshotState::Stale {
                snapshot: sequence,
                database: sequence + 2
            }
        }
    );
    assert!((1000..1500).all(|i| store.get(&key(i)).unwrap().is_some()));
    assert_eq!(store.get(&key(3)).unwrap(), None);
}

#[test]
fn a_corrupt_or_foreign_snapshot_is_rebuilt_over() {
    let dir = TempDir::new("corrupt");
    let store = open(&dir.db(), with_snapshot(&dir));
    put_range(&store, 0..500);
    store.write_snapshot().unwrap();
    drop(store);
    let mut bytes = std::fs::read(dir.snapshot()).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0x10;
    std::fs::write(dir.snapshot(), &bytes).unwrap();
    let store = open(&dir.db(), with_snapshot(&dir));
    assert!(matches!(
        store.source(),
        FilterSource::Rebuilt {
            keys: 500,
            snapshot: SnapshotState::Unreadable(_)
        }
    ));
    assert!((0..500).all(|i| store.get(&key(i)).unwrap().is_some()));
    drop(store);

    let other = TempDir::new("foreign");
    let foreign = open(&other.db(), with_snapshot(&dir));
    assert!(matches!(
        foreign.source(),
        FilterSource::Rebuilt {
            keys: 0,
            snapshot: SnapshotState::ForeignDatabase
        }
    ));
}

#[test]
fn a_full_filter_stops_answering_and_gets_still_find_every_key() {
    let dir = TempDir::new("full");
    let options = Options {
        capacity: 1,
        ..with_snapshot(&dir)
    };
    let store = open(&dir.db(), options.clone());
    let slots = {
        let filter = store.filter().unwrap();
        (filter.bucket_count() * filter.bucket_size()) as u64
    };
    let keys = slots * 2;
    put_range(&store, 0..keys);
    assert!(!store.filter_trusted());
    for i in 0..keys {
        assert_eq!(
            store.get_answered(&key(i)).unwrap(),
            (Some(value(i).to_vec()), Answer::Database)
        );
    }
    assert_eq!(
        store.get_answered(&key(keys)).unwrap(),
        (None, Answer::Database)
    );
    assert!(matches!(
        store.write_snapshot(),
        Err(StoreError::FilterOverflowed)
    ));
    drop(store);

    let store = open(&dir.db(), options);
    assert!(store.filter_trusted());
    assert!(store.filter().unwrap().capacity() as u64 >= 2 * keys);
    assert!((0..keys).all(|i| store.get(&key(i)).unwrap().is_some()));
}

#[test]
fn absent_keys_are_answered_by_the_filter_and_a_bare_store_reads_the_database() {
    let dir = TempDir::new("answers");
    let store = open(&dir.db(), Options::default());
    put_range(&store, 0..2000);
    let by_filter = (2000..12_000)
        .filter(|&i| store.get_answered(&key(i)).unwrap() == (None, Answer::Filter))
        .count();
    // The rest are false positives, which the database answers: under 1% at this load.
    assert!(by_filter > 9900, "{by_filter}");
    drop(store);

    let bare = open(
        &dir.db(),
        Options {
            filter: false,
            ..Options::default()
        },
    );
    assert_eq!(bare.source(), &FilterSource::Disabled);
    assert_eq!(
        bare.get_answered(&key(5000)).unwrap(),
        (None, Answer::Database)
    );
    assert!(matches!(bare.write_snapshot(), Err(StoreError::NoSnapshot)));
}

#[test]
fn delete_then_put_again_keeps_one_copy_per_stored_key() {
    let dir = TempDir::new("copies");
    let store = open(&dir.db(), Options::default());
    put_range(&store, 0..100);
    for i in 0..50 {
        assert!(store.delete(&key(i)).unwrap());
        assert!(!store.delete(&key(i)).unwrap());
    }
    put_range(&store, 25..75);
    assert_eq!(store.len().unwrap(), 75);
    assert_eq!(store.filter().unwrap().len(), 75);
    assert!((25..100).all(|i| store.get(&key(i)).unwrap().is_some()));
}

/// Real redb on memory whose syncs fail while `fail` is set: commits that must reach the disk fail;
/// and which cannot grow while `full` is set: writes that need more room fail.
#[derive(Debug)]
struct FailingDisk {
    memory: redb::backends::InMemoryBackend,
    fail: Arc<AtomicBool>,
    full: Arc<AtomicBool>,
}

impl redb::StorageBackend for FailingDisk {
    fn len(&self) -> std::io::Result<u64> {
        self.memory.len()
    }
    fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        self.memory.read(offset, len)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        if self.full.load(Ordering::SeqCst) && len > self.memory.len()? {
            return Err(std::io::Error::other("disk full"));
        }
        self.memory.set_len(len)
    }
    fn sync_data(&self, eventual: bool) -> std::io::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("sync refused"));
        }
        self.memory.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.memory.write(offset, data)
    }
}

fn on_failing_disk() -> (NegativeCache, Arc<AtomicBool>) {
    let (store, fail, _) = on_failing_or_full_disk();
    (store, fail)
}

fn on_failing_or_full_disk() -> (NegativeCache, Arc<AtomicBool>, Arc<AtomicBool>) {
    let fail = Arc::new(AtomicBool::new(false));
    let full = Arc::new(AtomicBool::new(false));
    let disk = FailingDisk {
        memory: redb::backends::InMemoryBackend::new(),
        fail: Arc::clone(&fail),
        full: Arc::clone(&full),
    };
    let db = redb::Database::builder().create_with_backend(disk).unwrap();
    let store = NegativeCache::with_database(db, Options::default()).unwrap();
    put_range(&store, 0..100);
    (store, fail, full)
}

#[test]
fn a_put_whose_commit_fails_takes_its_copy_back_out_of_the_filter() {
    let (store, fail) = on_failing_disk();
    fail.store(true, Ordering::SeqCst);
    assert!(store.put(&key(500), &value(500)).is_err());
    assert!(store.put_all([(&key(501)[..], &value(501)[..])]).is_err());
    assert_eq!(store.filter().unwrap().len(), 100);
    assert!(store.filter_trusted());
}

#[test]
fn a_put_all_that_fails_before_its_commit_takes_its_copies_back_out_of_the_filter() {
    let (store, _, full) = on_failing_or_full_disk();
    full.store(true, Ordering::SeqCst);
    // More keys than the database has room for: an insert into its table fails part way.
    let pairs: Vec<_> = (1000..100_000).map(|i| (key(i), value(i))).collect();
    let put = store.put_all(pairs.iter().map(|(k, v)| (&k[..], &v[..])));
    assert!(matches!(put, Err(StoreError::Database(_))), "{put:?}");
    assert_eq!(store.filter().unwrap().len(), 100);
    assert!(store.filter_trusted());
}

#[test]
fn a_delete_whose_commit_fails_leaves_the_key_in_the_filter() {
    let (store, fail) = on_failing_disk();
    fail.store(true, Ordering::SeqCst);
    assert!(store.delete(&key(3)).is_err());
    assert_eq!(store.filter().unwrap().len(), 100);
    assert!(store.filter().unwrap().contains(&key(3)[..]));
}
