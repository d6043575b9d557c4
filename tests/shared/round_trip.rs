use concurrent_cuckoo_filter::{
    Access, ConcurrentCuckooFilter, InsertError, MergeError, TableLayout,
};

use crate::{create, TempPath};

#[test]
fn created_filters_reopen_with_every_item_in_both_layouts() {
    for packed in [false, true] {
        let path = TempPath::new("round-trip");
        let filter = create(&path.0, packed, 20_000);
        assert!(filter.is_shared());
        assert_eq!(filter.path(), Some(path.0.as_path()));
        assert_eq!(
            filter.layout(),
            if packed {
                TableLayout::Packed
            } else {
                TableLayout::BucketWord
            }
        );
        assert_eq!(filter.is_semi_sorted(), packed);
        for i in 0..15_000u64 {
            filter.insert(&i).unwrap();
        }
        assert!(filter.remove(&7u64));
        filter.flush().unwrap();
        filter.verify().unwrap();
        // A second opener sees everything at once, and its writes are the first's.
        let other = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadWrite).unwrap();
        assert_eq!(other.len(), 14_999);
        assert!((0..15_000u64)
            .filter(|&i| i != 7)
            .all(|i| other.contains(&i)));
        other.insert(&1_000_000u64).unwrap();
        assert!(filter.contains(&1_000_000u64));
        drop((filter, other));
        // Reopened after every handle closed: the file holds it all.
        let again = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadWrite).unwrap();
        assert_eq!(again.len(), 15_000);
        assert!((0..15_000u64)
            .filter(|&i| i != 7)
            .all(|i| again.contains(&i)));
        again.verify().unwrap();
        // Its snapshot is the in-memory filter's format, read back in memory.
        let copy = ConcurrentCuckooFilter::from_bytes(&again.to_bytes()).unwrap();
        assert!(!copy.is_shared());
        assert_eq!(copy.len(), 15_000);
        assert_eq!(copy.bucket_count(), again.bucket_count());
    }
}

/// A live filter opened by a relative path keeps the file's absolute path, which names that
/// file from any working directory (what a pickle of it hands another process).
#[test]
fn a_relative_path_is_kept_absolute() {
    let path = TempPath::new("relative");
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count() - 1);
    let relative = std::path::Path::new(&up).join(path.0.strip_prefix("/").unwrap());
    let filter = create(&relative, false, 1000);
    filter.insert(&1u64).unwrap();
    let reader = ConcurrentCuckooFilter::open_shared(&relative, Access::ReadOnly).unwrap();
    for opened in [&filter, &reader] {
        let kept = opened.path().unwrap();
        assert!(kept.is_absolute() && kept.starts_with(&cwd), "{kept:?}");
        assert_eq!(
            std::fs::canonicalize(kept).unwrap(),
            std::fs::canonicalize(&path.0).unwrap()
        );
    }
    let again = ConcurrentCuckooFilter::open_shared(filter.path().unwrap(), Access::ReadOnly);
    assert!(again.unwrap().contains(&1u64));
}

#[test]
fn read_only_filters_answer_and_refuse_every_write() {
    let path = TempPath::new("read-only");
    let filter = create(&path.0, true, 5_000);
    for i in 0..3_000u64 {
        filter.insert(&i).unwrap();
    }
    let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
    assert!((0..3_000u64).all(|i| reader.contains(&i)));
    assert_eq!(reader.insert(&5u64), Err(InsertError::ReadOnly));
    assert_eq!(reader.insert_unique(&9_999u64), Err(InsertError::ReadOnly));
    assert!(reader.try_extend(10_000..10_010u64).is_err());
    assert!(!reader.remove(&5u64));
    reader.clear();
    let other = ConcurrentCuckooFilter::builder()
        .capacity(5_000)
        .layout(TableLayout::Packed)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .build()
        .unwrap();
    assert!(matches!(reader.merge(&other), Err(MergeError::ReadOnly)));
    assert_eq!(reader.len(), 3_000);
    assert_eq!(filter.len(), 3_000);
    assert!(reader.to_bytes().len() > 3_000);
    reader.verify().unwrap();
    reader.flush().unwrap();
    assert!(InsertError::ReadOnly.to_string().contains("read-only"));
    assert!(reader.is_read_only() && !filter.is_read_only());
    // Writes by others after it opened are seen.
    filter.insert(&77_777u64).unwrap();
    assert!(reader.contains(&77_777u64));
}

#[test]
fn a_file_is_never_created_over_another() {
    let path = TempPath::new("exists");
    std::fs::write(&path.0, b"precious").unwrap();
    let err = ConcurrentCuckooFilter::builder()
        .capacity(100)
        .create_shared(&path.0)
        .unwrap_err();
    assert!(
        err.to_string().contains(&path.0.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&path.0).unwrap(), b"precious");
}

#[test]
fn live_info_counts_open_writers_and_describes_the_regions() {
    let path = TempPath::new("info");
    let filter = create(&path.0, false, 5_000);
    let info = filter.live_info().unwrap();
    assert_eq!((info.registration_slots, info.writers), (128, 1));
    assert_eq!(info.stripes_held, 0);
    assert!(info.registration_offset < info.lock_records_offset);
    assert_eq!(
        info.lock_records_offset + info.lock_records_bytes,
        info.stamps_offset
    );
    assert!(info.stamps_offset + 8 * info.stripes <= info.table_offset);
    assert!(info.table_offset + info.table_bytes <= info.file_len);
    assert_eq!(std::fs::metadata(&path.0).unwrap().len(), info.file_len);
    let other = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadWrite).unwrap();
    let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
    assert_eq!(reader.live_info().unwrap().writers, 2);
    drop(other);
    assert_eq!(writers_soon(&reader, 1), 1);
    drop(filter);
    assert_eq!(writers_soon(&reader, 0), 0);
    let last = reader.live_info().unwrap();
    assert_eq!(
        (last.writers, last.file_len, last.table_offset),
        (0, info.file_len, info.table_offset)
    );
    let memory = ConcurrentCuckooFilter::builder()
        .capacity(10)
        .build()
        .unwrap();
    assert!(memory.live_info().is_none());
}

/// The writers `live_info` counts once it reaches `expected`, or after 5 s. A closed writer's
/// slot lock can outlive it for a moment: a child that another test thread is spawning holds a
/// copy of every descriptor until its `exec` closes them.
fn writers_soon(filter: &ConcurrentCuckooFilter, expected: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let writers = filter.live_info().unwrap().writers;
        if writers == expected || std::time::Instant::now() > deadline {
            return writers;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Every bulk insert into a read-only filter stops at its first item and says why, as `insert`
/// does: `ReadOnly`, not `Full`.
#[test]
fn bulk_inserts_into_a_read_only_filter_name_the_access() {
    use rayon::prelude::*;

    let path = TempPath::new("read-only-bulk");
    drop(create(&path.0, false, 1_000));
    let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
    let hashes = [1u64, 2, 3];
    let mut new = [false; 3];
    let errors = [
        reader.try_extend(0..10u64).unwrap_err(),
        reader.try_extend_hashes(&hashes).unwrap_err(),
        reader
            .insert_unique_hash_batch_into(&hashes, &mut new)
            .unwrap_err(),
        reader
            .try_par_extend((0..10u64).into_par_iter())
            .unwrap_err(),
    ];
    for err in errors {
        assert_eq!(err.error(), InsertError::ReadOnly, "{err}");
        assert_eq!(err.inserted(), 0);
        assert!(err.to_string().contains("read-only"), "{err}");
    }
    assert_eq!(new, [false; 3]);
    assert!(reader.is_empty());
}

/// A live filter merged with its own file opened again (read-only or read-write) adds each
/// fingerprint once, as a merge with itself does: it reads a copy, not the table it writes.
#[test]
fn merging_a_live_file_into_itself_through_another_opener_adds_each_item_once() {
    for access in [Access::ReadOnly, Access::ReadWrite] {
        let path = TempPath::new("merge-self");
        let filter = create(&path.0, true, 100_000);
        filter.try_extend(0..10_000u64).unwrap();
        let again = ConcurrentCuckooFilter::open_shared(&path.0, access).unwrap();
        assert_eq!(filter.merge(&again), Ok(10_000), "{access:?}");
        assert_eq!(filter.len(), 20_000);
        assert!((0..10_000u64).all(|key| filter.count(&key) >= 2));
        assert_eq!(filter.merge_unique(&again), Ok(0), "{access:?}");
        filter.verify().unwrap();
    }
}

/// Without memory for the copy of a live file that a read-only opener's bytes are written
/// from, and that a merge from it reads, `write_to`, `write_to_slice` and `merge` return
/// `OutOfMemory` and change nothing (in a child process under a memory limit).
#[test]
fn copies_of_a_live_file_without_memory_are_errors() {
    let path = TempPath::new("without-memory");
    // A table larger than a thread's malloc arena (64 MB), whose free part a limit on the
    // address space does not bound: 158 MB, its pages never touched but where keys went.
    let filter = create(&path.0, true, 100_000_000);
    filter.try_extend(0..1_000u64).unwrap();
    let status = crate::child::spawn("read_only_without_memory", &path.0, &[])
        .wait()
        .unwrap();
    assert!(status.success(), "the child failed: {status:?}");
}
