use std::os::unix::fs::PermissionsExt;

use concurrent_cuckoo_filter::{
    Access, ConcurrentCuckooFilter, DecodeError, DefaultHashBuilder, SharedError, StableHashBuilder,
};

use crate::{create, TempPath};

fn open(path: &std::path::Path, access: Access) -> SharedError {
    let err = ConcurrentCuckooFilter::open_shared(path, access).unwrap_err();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "the error names the file: {err}"
    );
    err
}

fn decode_error(path: &std::path::Path) -> DecodeError {
    match open(path, Access::ReadWrite) {
        SharedError::Decode { source, .. } => source,
        other => panic!("{other}"),
    }
}

/// A live file's bytes, made and closed.
fn live_bytes(packed: bool) -> Vec<u8> {
    let path = TempPath::new("source");
    let filter = create(&path.0, packed, 3_000);
    for i in 0..1_000u64 {
        filter.insert(&i).unwrap();
    }
    drop(filter);
    std::fs::read(&path.0).unwrap()
}

#[test]
fn truncated_files_are_refused_at_every_length() {
    let bytes = live_bytes(true);
    let path = TempPath::new("truncated");
    for len in [
        0,
        7,
        8,
        100,
        159,
        160,
        4096,
        8192,
        bytes.len() - 4096,
        bytes.len() - 1,
    ] {
        std::fs::write(&path.0, &bytes[..len]).unwrap();
        let err = decode_error(&path.0);
        assert!(
            matches!(err, DecodeError::Truncated { .. }),
            "{len} bytes: {err}"
        );
    }
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 4096]);
    std::fs::write(&path.0, &longer).unwrap();
    assert!(matches!(
        decode_error(&path.0),
        DecodeError::TrailingBytes { .. }
    ));
}

#[test]
fn every_bit_flip_in_the_header_is_refused() {
    let bytes = live_bytes(false);
    let path = TempPath::new("flipped");
    for bit in 0..160 * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&path.0, &flipped).unwrap();
        let err = open(&path.0, Access::ReadWrite);
        assert!(
            matches!(err, SharedError::Decode { .. }),
            "bit {bit}: {err}"
        );
    }
}

#[test]
fn other_kinds_of_bytes_are_refused() {
    let path = TempPath::new("snapshot");
    let filter = ConcurrentCuckooFilter::with_capacity(1000);
    filter.insert(&1u64).unwrap();
    std::fs::write(&path.0, filter.to_bytes()).unwrap();
    let err = decode_error(&path.0);
    assert!(err.to_string().contains("snapshot"), "{err}");
    std::fs::write(&path.0, vec![0x42; 10_000]).unwrap();
    assert!(matches!(decode_error(&path.0), DecodeError::BadMagic));
    // A live file read as a snapshot is refused too.
    let live = live_bytes(false);
    assert!(ConcurrentCuckooFilter::from_bytes(&live).is_err());
}

#[test]
fn directories_fifos_and_missing_files_are_refused() {
    let dir = std::env::temp_dir();
    assert!(matches!(
        open(&dir, Access::ReadWrite),
        SharedError::NotAFile {
            what: "a directory",
            ..
        }
    ));
    let fifo = TempPath::new("fifo");
    let c_path = std::ffi::CString::new(fifo.0.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path valid for the call.
    #[allow(unsafe_code)]
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0);
    for access in [Access::ReadWrite, Access::ReadOnly] {
        assert!(matches!(
            open(&fifo.0, access),
            SharedError::NotAFile { what: "a FIFO", .. }
        ));
    }
    let missing = TempPath::new("missing");
    assert!(matches!(
        open(&missing.0, Access::ReadOnly),
        SharedError::Io { .. }
    ));
    assert!(ConcurrentCuckooFilter::builder()
        .capacity(100)
        .create_shared(dir.join("no-such-dir/x"))
        .is_err());
}

#[test]
fn a_file_without_write_permission_opens_read_only_only() {
    let path = TempPath::new("no-write");
    let filter = create(&path.0, true, 1_000);
    filter.insert(&3u64).unwrap();
    drop(filter);
    std::fs::set_permissions(&path.0, std::fs::Permissions::from_mode(0o444)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let err = open(&path.0, Access::ReadWrite);
        assert!(matches!(err, SharedError::Io { .. }), "{err}");
        assert!(err.to_string().contains("ReadOnly"), "{err}");
    } else {
        // Root may write any file: the refusal is checked in a child run as `nobody`.
        let mut child = crate::child::command("refused_read_write", &path.0, &[]);
        std::os::unix::process::CommandExt::uid(&mut child, 65534);
        std::os::unix::process::CommandExt::gid(&mut child, 65534);
        let status = child.status().unwrap();
        assert!(status.success(), "the child run as nobody failed: {status}");
    }
    let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
    assert!(reader.contains(&3u64));
}

/// A hasher with an identity of its own.
#[derive(Clone, Copy, Debug)]
struct Other;

impl core::hash::BuildHasher for Other {
    type Hasher = <DefaultHashBuilder as core::hash::BuildHasher>::Hasher;
    fn build_hasher(&self) -> Self::Hasher {
        DefaultHashBuilder::default().build_hasher()
    }
}

impl StableHashBuilder for Other {
    const HASHER_ID: u64 = u64::from_le_bytes(*b"test-oth");
    fn seed(&self) -> u64 {
        0
    }
    fn from_seed(_: u64) -> Option<Self> {
        Some(Self)
    }
}

#[test]
fn a_file_of_another_hasher_is_refused() {
    let path = TempPath::new("hasher");
    drop(create(&path.0, false, 100));
    let err = ConcurrentCuckooFilter::<Other>::open_shared_with_hasher(&path.0, Access::ReadOnly)
        .unwrap_err();
    assert!(
        matches!(
            err,
            SharedError::Decode {
                source: DecodeError::HasherMismatch { .. },
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn writers_past_the_slots_and_a_creator_still_writing_are_busy() {
    let path = TempPath::new("slots");
    let first = create(&path.0, false, 100);
    let mut writers = vec![first];
    while writers.len() < 128 {
        writers.push(ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadWrite).unwrap());
    }
    assert!(matches!(
        open(&path.0, Access::ReadWrite),
        SharedError::Busy { .. }
    ));
    // Readers take no slot; a writer gone frees one.
    assert!(ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).is_ok());
    writers.pop();
    writers.push(ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadWrite).unwrap());
    writers[127].insert(&5u64).unwrap();
    assert!(writers[0].contains(&5u64));
    drop(writers);

    // A program holding the exclusive flock (as a creator does until its header is written).
    let holder = std::fs::File::open(&path.0).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    #[allow(unsafe_code)]
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&holder), libc::LOCK_EX) };
    assert_eq!(locked, 0);
    let err = open(&path.0, Access::ReadOnly);
    assert!(matches!(err, SharedError::Busy { .. }), "{err}");
    drop(holder);
    assert!(ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).is_ok());
}
