//! The live file (docs/shared.md): a fixed filter's table, stamps and lock records in a file that
//! processes map and use at once; `filter/shared.rs` is its public face.

mod error;
mod header;
mod info;

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use self::error::{Access, SharedError};
use self::header::{LiveLayout, LIVE_HEADER_LEN, SLOTS};
pub use self::info::LiveFileInfo;
use crate::persist::RecordedHasher;
use crate::raw::{Geometry, MappedParts, RawFilter, Registry, SHARED_STRIDE};
use crate::sync::mapping::{reserve, try_flock, Mapping};

/// How long an opener waits for a creator's exclusive `flock`, held until the file is written.
const CREATION_WAIT: Duration = Duration::from_secs(2);

/// An open live file: what a shared filter keeps besides its raw filter.
#[derive(Debug)]
pub(crate) struct SharedFile {
    path: PathBuf,
    mapping: Arc<Mapping>,
    read_only: bool,
    layout: LiveLayout,
    /// A description of the file holding no OFD lock, to ask which slots are held.
    query: File,
}

impl SharedFile {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// `msync`; nothing to do for a read-only mapping, which never writes.
    pub(crate) fn flush(&self) -> io::Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.mapping.flush()
    }
}

/// A live file opened and checked.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) raw: RawFilter,
    pub(crate) capacity: usize,
    pub(crate) hasher: RecordedHasher,
    pub(crate) file: SharedFile,
}

/// Opens the live file at `path`, checks its header against its length in O(1), and maps it.
pub(crate) fn open(path: &Path, access: Access) -> Result<Opened, SharedError> {
    let io_err = |source| SharedError::io(path, source);
    let start = Instant::now();
    let (file, len) = loop {
        refuse_special(path, std::fs::metadata(path).map_err(io_err)?.file_type())?;
        // A FIFO put in its place meanwhile must not block the open.
        let file = options(access == Access::ReadWrite, libc::O_NONBLOCK)
            .open(path)
            .map_err(|source| SharedError::open(path, access, source))?;
        refuse_special(path, file.metadata().map_err(io_err)?.file_type())?;
        wait_for_flock(&file, path, false)?;
        // Empty under our shared flock: a creator that has not yet taken its exclusive one.
        let len = file.metadata().map_err(io_err)?.len();
        if len > 0 || start.elapsed() > CREATION_WAIT {
            break (file, len);
        }
        drop(file);
        std::thread::sleep(Duration::from_millis(1));
    };
    // The file was just opened: reading starts at its first byte.
    let mut bytes = Vec::with_capacity(LIVE_HEADER_LEN);
    (&file)
        .take(LIVE_HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    let parsed = header::parse(&bytes, len).map_err(|source| SharedError::decode(path, source))?;
    let capacity = usize::try_from(parsed.capacity).unwrap_or(usize::MAX);
    map(path, file, &parsed.geometry, &parsed.layout, access).map(|(raw, file)| Opened {
        raw,
        capacity,
        hasher: parsed.hasher,
        file,
    })
}

/// Creates a new live file at `path` (never over an existing one) for `geometry`, and maps it.
pub(crate) fn create(
    path: &Path,
    geometry: &Geometry,
    capacity: usize,
    hasher: RecordedHasher,
) -> Result<(RawFilter, SharedFile), SharedError> {
    let io_err = |source| SharedError::io(path, source);
    let too_large = "the table is too large for a file";
    let layout = LiveLayout::of(geometry)
        .ok_or_else(|| SharedError::refused(path, ErrorKind::InvalidInput, too_large))?;
    let file = options(true, 0)
        .create_new(true)
        .open(path)
        .map_err(io_err)?;
    let ours = file.metadata().map_err(io_err)?;
    let made = (|| {
        // Openers wait on this until the header is whole; one that opened the empty file
        // first lets go of its shared flock at once.
        wait_for_flock(&file, path, true)?;
        // Blocks reserved now: a page the file system cannot give later would fault instead.
        reserve(&file, layout.file_len).map_err(io_err)?;
        let page = header::encode(geometry, &layout, capacity, hasher);
        file.write_all_at(&page, 0).map_err(io_err)?;
        let handle = file.try_clone().map_err(io_err)?;
        let made = map(path, file, geometry, &layout, Access::ReadWrite)?;
        // Now a shared lock, as every opener's.
        try_flock(&handle, false).map_err(io_err)?;
        Ok(made)
    })();
    // Only the file made here: another put at the path meanwhile is not ours to remove.
    if made.is_err() && std::fs::symlink_metadata(path).is_ok_and(|now| same_file(&now, &ours)) {
        let _ = std::fs::remove_file(path);
    }
    made
}

/// For reading, and writing if `write`, with `flags` and `O_CLOEXEC`.
fn options(write: bool, flags: i32) -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(write)
        .custom_flags(flags | libc::O_CLOEXEC);
    options
}

fn refuse_special(path: &Path, kind: std::fs::FileType) -> Result<(), SharedError> {
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        return Ok(());
    };
    Err(SharedError::NotAFile {
        path: path.to_path_buf(),
        what,
    })
}

/// Takes an opener's shared `flock` (a creator's exclusive one), waiting up to [`CREATION_WAIT`].
fn wait_for_flock(file: &File, path: &Path, exclusive: bool) -> Result<(), SharedError> {
    let start = Instant::now();
    while !try_flock(file, exclusive).map_err(|source| SharedError::io(path, source))? {
        if start.elapsed() > CREATION_WAIT {
            let what = "another program holds a conflicting flock on the file";
            return Err(SharedError::busy(path, what));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Maps a checked file and builds its raw filter, registering the opener if it writes.
fn map(
    path: &Path,
    file: File,
    geometry: &Geometry,
    layout: &LiveLayout,
    access: Access,
) -> Result<(RawFilter, SharedFile), SharedError> {
    let io_err = |source| SharedError::io(path, source);
    let too_large = "the file is too large to map";
    let len = usize::try_from(layout.file_len)
        .map_err(|_| SharedError::refused(path, ErrorKind::InvalidInput, too_large))?;
    let read_only = access == Access::ReadOnly;
    let query = file.try_clone().map_err(io_err)?;
    let mapping = Arc::new(Mapping::map(&file, len, read_only).map_err(io_err)?);
    let table_bytes = (layout.table_words * 8) as usize;
    mapping.advise_huge_pages(layout.table as usize, table_bytes);
    let outside = "a region lies outside the mapping";
    let words = |offset: u64, count: u64| {
        mapping
            .words(offset as usize, count as usize)
            .ok_or_else(|| SharedError::refused(path, ErrorKind::Other, outside))
    };
    let epochs = words(layout.registration, SLOTS)?;
    let parts = |registry| -> Result<MappedParts, SharedError> {
        Ok(MappedParts {
            table: words(layout.table, layout.table_words)?,
            stamps: words(layout.stamps, layout.stripes)?,
            records: words(layout.records, layout.stripes * SHARED_STRIDE as u64)?,
            registry,
        })
    };
    let registry = if read_only {
        Registry::unregistered(file, epochs, layout.registration)
    } else {
        let own = options(true, 0).open(path).map_err(io_err)?;
        // The slot's lock must be on the mapped file, or the others would call us dead.
        if !same_file(
            &file.metadata().map_err(io_err)?,
            &own.metadata().map_err(io_err)?,
        ) {
            let what = "the path was replaced by another file while it was being opened";
            return Err(SharedError::busy(path, what));
        }
        Registry::register(file, own, epochs, layout.registration)
            .map_err(io_err)?
            .ok_or_else(|| {
                SharedError::busy(path, "every registration slot is held by an open writer")
            })?
    };
    let misfit = "the mapped regions do not fit the geometry";
    let raw = RawFilter::in_mapping(geometry, parts(registry)?)
        .ok_or_else(|| SharedError::refused(path, ErrorKind::Other, misfit))?;
    Ok((
        raw,
        SharedFile {
            // Absolute: a relative path names another file after a `chdir` or in another process.
            path: std::env::current_dir().map_or_else(|_| path.to_path_buf(), |dir| dir.join(path)),
            mapping,
            read_only,
            layout: *layout,
            query,
        },
    ))
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/shared.rs"]
mod tests;
