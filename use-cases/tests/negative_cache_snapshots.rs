//! The negative cache's snapshots on a real redb database in a temporary directory: a crash
//! that loses commits, a corrupt sequence number, racing snapshots, undersized filters, and
//! snapshot paths that name the database.

mod common;

use std::path::{Path, PathBuf};

use ccf_use_cases::negative_cache::{
    FilterSource, NegativeCache, Options, SnapshotState, StoreError,
};

use common::{
    assert_gets_agree_with_the_database, key, open, put_range, value, with_snapshot, TempDir,
};

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
