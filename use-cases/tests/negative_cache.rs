//! The negative cache on a real redb database in a temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use ccf_use_cases::measure::SplitMix;
use ccf_use_cases::negative_cache::{
    Answer, FilterSource, NegativeCache, Options, SnapshotState, StoreError,
};

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let unique = SplitMix(std::process::id() as u64 ^ name.len() as u64).next_u64();
        let dir = std::env::temp_dir().join(format!("ccf-use-cases-{name}-{unique:x}"));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("store.redb")
    }

    fn snapshot(&self) -> PathBuf {
        self.0.join("filter.snapshot")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

fn value(i: u64) -> [u8; 8] {
    (i.wrapping_mul(3)).to_le_bytes()
}

fn with_snapshot(dir: &TempDir) -> Options {
    Options {
        snapshot: Some(dir.snapshot()),
        ..Options::default()
    }
}

fn put_range(store: &NegativeCache, keys: std::ops::Range<u64>) {
    let pairs: Vec<_> = keys.map(|i| (key(i), value(i))).collect();
    store
        .put_all(pairs.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap();
}

fn open(path: &Path, options: Options) -> NegativeCache {
    NegativeCache::open(path, options).unwrap()
}

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

/// Every key of `keys` that the database holds is found by `get`.
fn assert_gets_agree_with_the_database(store: &NegativeCache, keys: std::ops::Range<u64>) {
    for i in keys {
        let in_db = store.get_from_database(&key(i)).unwrap();
        assert_eq!(
            store.get(&key(i)).unwrap(),
            in_db,
            "key {i}: {:?}",
            store.source()
        );
    }
}

/// The child of `a_snapshot_of_commits_a_crash_lost_is_not_trusted_later`: stores keys without
/// waiting for the disk, snapshots, stores more, says so and waits to be killed.
const CRASH_CHILD: &str = "CCF_NEGATIVE_CACHE_CRASH_CHILD";

#[test]
fn a_snapshot_of_commits_a_crash_lost_is_not_trusted_later() {
    let not_durable = |dir: &Path| Options {
        snapshot: Some(dir.join("filter.snapshot")),
        durable: false,
        ..Options::default()
    };
    if let Some(dir) = std::env::var_os(CRASH_CHILD) {
        let dir = PathBuf::from(dir);
        let store = open(&dir.join("store.redb"), not_durable(&dir));
        put_range(&store, 0..100);
        let sequence = store.write_snapshot().unwrap();
        put_range(&store, 100..200);
        println!("snapshot {sequence}");
        loop {
            std::thread::park();
        }
    }
    let dir = TempDir::new("crash");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "a_snapshot_of_commits_a_crash_lost_is_not_trusted_later",
            "--exact",
            "--nocapture",
        ])
        .env(CRASH_CHILD, &dir.0)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let snapshot: u64 = std::io::BufRead::lines(stdout)
        .map(Result::unwrap)
        .find_map(|line| line.strip_prefix("snapshot ").map(|s| s.parse().unwrap()))
        .expect("the child snapshots");
    child.kill().unwrap(); // SIGKILL: no destructor runs, writes not yet durable are lost
    child.wait().unwrap();

    let store = open(&dir.db(), not_durable(&dir.0));
    assert_gets_agree_with_the_database(&store, 0..300);
    // New writes carry the database's sequence number up to the snapshot's and past it.
    let mut next = 200;
    loop {
        put_range(&store, next..next + 10);
        next += 10;
        if store.sequence().unwrap() >= snapshot {
            break;
        }
    }
    drop(store);
    let store = open(&dir.db(), not_durable(&dir.0));
    assert_gets_agree_with_the_database(&store, 0..next);
}

#[test]
fn a_snapshot_whose_sequence_number_is_corrupt_is_rebuilt_over() {
    let dir = TempDir::new("corrupt-sequence");
    let store = open(&dir.db(), with_snapshot(&dir));
    put_range(&store, 0..100);
    let sequence = store.write_snapshot().unwrap();
    drop(store);
    // One bit of the sequence number flipped on disk: it names a later state of the database.
    let mut bytes = std::fs::read(dir.snapshot()).unwrap();
    let at = bytes
        .windows(8)
        .position(|word| word == sequence.to_le_bytes())
        .unwrap();
    bytes[at] ^= 0b10;
    std::fs::write(dir.snapshot(), &bytes).unwrap();
    let corrupt = sequence ^ 0b10;
    assert!(corrupt > sequence);

    let store = open(&dir.db(), with_snapshot(&dir));
    let mut next = 100;
    while store.sequence().unwrap() < corrupt {
        put_range(&store, next..next + 10);
        next += 10;
    }
    drop(store);
    let store = open(&dir.db(), with_snapshot(&dir));
    assert_gets_agree_with_the_database(&store, 0..next);
    assert!(matches!(
        store.source(),
        FilterSource::Rebuilt {
            snapshot: SnapshotState::Unreadable(_),
            ..
        }
    ));
}

#[test]
fn concurrent_snapshots_each_succeed_and_leave_a_current_one() {
    let dir = TempDir::new("concurrent-snapshots");
    let owned = open(&dir.db(), with_snapshot(&dir));
    put_range(&owned, 0..1000);
    let store = &owned;
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(move || {
                for _ in 0..50 {
                    store.write_snapshot().unwrap();
                }
            });
        }
    });
    let sequence = store.sequence().unwrap();
    drop(owned);
    let store = open(&dir.db(), with_snapshot(&dir));
    assert_eq!(store.source(), &FilterSource::Snapshot { sequence });
    assert_gets_agree_with_the_database(&store, 0..1000);
}

#[test]
fn a_snapshot_sized_for_fewer_items_than_asked_is_rebuilt_over() {
    let dir = TempDir::new("undersized");
    let sized = |capacity| Options {
        capacity,
        ..with_snapshot(&dir)
    };
    let store = open(&dir.db(), sized(100));
    put_range(&store, 0..10);
    store.write_snapshot().unwrap();
    drop(store);
    let store = open(&dir.db(), sized(100_000));
    assert!(matches!(
        store.source(),
        FilterSource::Rebuilt {
            keys: 10,
            snapshot: SnapshotState::Undersized { asked: 100_000, .. }
        }
    ));
    assert!(store.filter().unwrap().capacity() >= 100_000);
    put_range(&store, 10..10_000);
    assert!(store.filter_trusted());
    assert_gets_agree_with_the_database(&store, 0..10_100);
}

/// `Options::capacity`: the filter is sized for twice the stored keys if that is more, also
/// when a snapshot would do: one of a filter past half full is rebuilt over.
#[test]
fn a_snapshot_of_a_filter_past_half_full_is_rebuilt_for_twice_the_keys() {
    let dir = TempDir::new("half-full");
    let sized = Options {
        capacity: 1000,
        ..with_snapshot(&dir)
    };
    let store = open(&dir.db(), sized.clone());
    put_range(&store, 0..400);
    store.write_snapshot().unwrap();
    drop(store);
    let store = open(&dir.db(), sized.clone());
    assert!(matches!(store.source(), FilterSource::Snapshot { .. }));
    put_range(&store, 400..900);
    assert!(store.filter_trusted());
    store.write_snapshot().unwrap();
    drop(store);
    let store = open(&dir.db(), sized);
    assert!(
        matches!(
            store.source(),
            FilterSource::Rebuilt {
                keys: 900,
                snapshot: SnapshotState::Undersized { asked: 1800, .. }
            }
        ),
        "{:?}",
        store.source()
    );
    assert!(store.filter().unwrap().capacity() >= 1800);
    assert_gets_agree_with_the_database(&store, 0..1000);
}

#[test]
fn a_snapshot_path_naming_the_database_file_is_refused_and_the_database_kept() {
    let dir = TempDir::new("snapshot-is-db");
    let store = open(&dir.db(), Options::default());
    put_range(&store, 0..100);
    drop(store);
    let link = dir.0.join("link.redb");
    std::os::unix::fs::symlink(dir.db(), &link).unwrap();
    for snapshot in [dir.db(), link] {
        let options = Options {
            snapshot: Some(snapshot.clone()),
            ..Options::default()
        };
        match NegativeCache::open(&dir.db(), options) {
            Err(StoreError::Io(err)) => {
                assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
                assert!(err.to_string().contains("database"), "{err}");
            }
            other => panic!("{}: {other:?}", snapshot.display()),
        }
    }
    let store = open(&dir.db(), Options::default());
    assert_gets_agree_with_the_database(&store, 0..200);
    assert_eq!(store.get(&key(99)).unwrap(), Some(value(99).to_vec()));
}

#[test]
fn a_database_named_as_the_snapshot_with_another_extension_survives_a_snapshot() {
    // The snapshot is written beside its path and renamed over it: that temporary file must be
    // the store's own, never the database (nor any other file of the user's).
    let dir = TempDir::new("db-beside-snapshot");
    let db = dir.0.join("filter.partial");
    let store = open(&db, with_snapshot(&dir));
    put_range(&store, 0..100);
    store.write_snapshot().unwrap();
    drop(store);
    let store = open(&db, with_snapshot(&dir));
    assert_eq!(store.len().unwrap(), 100, "the database lost its keys");
    assert_gets_agree_with_the_database(&store, 0..200);
    drop(store);
    // A database at the temporary file's own name is refused, as one at the snapshot's is.
    let db = dir.0.join("filter.snapshot.partial");
    match NegativeCache::open(&db, with_snapshot(&dir)) {
        Err(StoreError::Io(err)) => assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput),
        other => panic!("{other:?}"),
    }
}
