//! Filter files: written beside their destination and renamed over it, so that a failed save
//! leaves whatever was at the path untouched; read as a stream, checked as the bytes arrive.

use std::ffi::OsString;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use concurrent_cuckoo_filter::{CuckooFilter, DecodeError, Kind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{self, not_a_file};

/// The class a filter file is read as, by its first bytes (`FORMAT.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Fixed,
    Growable,
    Expiring,
    /// A fixed filter in a live file, which is mapped rather than read.
    Live,
    /// Empty, or zeros where a magic would be: no snapshot starts so, but a live file does
    /// until its creator has written the header (docs/shared.md, "Bad files are errors").
    Unwritten,
}

const MAGIC: [(&[u8; 8], FileKind); 3] = [
    (b"\x89CCG\r\n\x1a\n", FileKind::Growable),
    (b"CCFEXPR1", FileKind::Expiring),
    (b"\x89CCL\r\n\x1a\n", FileKind::Live),
];

/// Writes `path` by `write` through a temporary file beside it ([`temporary_beside`]), with the
/// replaced file's permissions. Symbolic links are followed; a device, a FIFO, a live filter
/// file or a file the caller may not write is not replaced.
pub fn save(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let path = &destination(path)?;
    let old = match fs::metadata(path) {
        Ok(old) => Some(old),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    if let Some(old) = &old {
        regular(old.file_type())?;
    }
    let existing = open(path).and_then(|mut file| kind(&mut file));
    if existing.is_ok_and(|kind| kind == FileKind::Live) {
        // Renamed over, it would vanish from under the processes mapping it.
        return Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            "a live filter file is not replaced by a snapshot (remove it first if that is meant)",
        ));
    }
    if old.is_some() {
        // Only a file the caller may write is replaced, as `open(path, "w")` would change it
        // (a rename needs only the directory's permission). Opened, nothing of it is changed.
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
    }
    let (temporary, file) = temporary_beside(path)?;
    let written = (|| {
        if let Some(old) = old {
            file.set_permissions(old.permissions())?;
        }
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        // The temporary file is ours; the error that matters is the write's.
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// A new file beside `path`, named for this process and call. A name already taken is not ours
/// (a link planted there, or a file a save left when killed in an earlier process of this id):
/// the next call's name is tried, up to a limit.
fn temporary_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let no_name = || io::Error::new(io::ErrorKind::InvalidInput, "does not name a file");
    let name = path.file_name().ok_or_else(no_name)?;
    for _ in 0..100 {
        let mut temporary = OsString::from(".");
        temporary.push(name);
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        temporary.push(format!(".{}.{call}.tmp", std::process::id()));
        let temporary = path.with_file_name(temporary);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            opened => return opened.map(|file| (temporary, file)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a temporary file beside it: 100 taken",
    ))
}

/// `path` with its symbolic links followed (up to Linux's limit of 40), existing or not.
fn destination(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                // Relative to the link's directory; `join` keeps an absolute target as it is.
                let target = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            _ => return Ok(at),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Opens `path` without blocking, refusing unread anything but a regular file (a FIFO or
/// device could block or never end).
fn open(path: &Path) -> io::Result<BufReader<File>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| {
            // A socket cannot be opened (`ENXIO`, "No such device or address"): said as what it is.
            match fs::metadata(path).map(|meta| regular(meta.file_type())) {
                Ok(Err(not_regular)) => not_regular,
                _ => err,
            }
        })?;
    regular(file.metadata()?.file_type())?;
    Ok(BufReader::with_capacity(1 << 16, file))
}

/// `Ok` for a regular file, else the error naming what it is.
fn regular(kind: FileType) -> io::Result<()> {
    let kinds = [
        (kind.is_dir(), "a directory"),
        (kind.is_fifo(), "a FIFO"),
        (kind.is_char_device(), "a character device"),
        (kind.is_block_device(), "a block device"),
        (kind.is_socket(), "a socket"),
        (!kind.is_file(), "another kind of file"),
    ];
    match kinds.into_iter().find(|(is, _)| *is) {
        Some((_, what)) => Err(not_a_file(what)),
        None => Ok(()),
    }
}

/// The kind of filter the file holds, by its first bytes (not consumed).
fn kind(file: &mut BufReader<File>) -> io::Result<FileKind> {
    let start = file.fill_buf()?;
    if start.iter().take(MAGIC[0].0.len()).all(|&byte| byte == 0) {
        return Ok(FileKind::Unwritten);
    }
    let kind = MAGIC.iter().find(|(magic, _)| start.starts_with(*magic));
    Ok(kind.map_or(FileKind::Fixed, |&(_, kind)| kind))
}

/// `path` opened and the kind of filter it holds; `OSError` naming the file.
pub fn open_kind(py: Python<'_>, path: &Path) -> PyResult<(FileKind, BufReader<File>)> {
    let opened = py.detach(|| open(path).and_then(|mut file| Ok((kind(&mut file)?, file))));
    opened.map_err(|err| errors::file(py, &err, path))
}

/// `path` opened as a snapshot, for a class's `load`: `ValueError` for a live file, saying what
/// opens one (its magic is no snapshot's, which the decoder would say alone).
pub fn open_snapshot(py: Python<'_>, path: &Path) -> PyResult<BufReader<File>> {
    match open_kind(py, path)? {
        (FileKind::Live, _) => Err(PyValueError::new_err(format!(
            "{}: is a live filter file, not a snapshot: open it with ccfilter.open_shared or \
             ccfilter.load",
            path.display()
        ))),
        (_, file) => Ok(file),
    }
}

/// The filter in `file`, which must end with it: `OSError` naming `path`, or `ValueError`.
pub fn read<K: Kind + Send>(
    py: Python<'_>,
    path: &Path,
    mut file: BufReader<File>,
) -> PyResult<CuckooFilter<K>> {
    let read = py.detach(|| {
        let filter = CuckooFilter::read_from(&mut file)?;
        let (expected, found) = (file.stream_position()?, file.get_ref().metadata()?.len());
        match expected < found {
            true => Err(DecodeError::TrailingBytes { expected, found }),
            false => Ok(filter),
        }
    });
    read.map_err(|err| match err {
        DecodeError::Io { kind, message } => errors::file(py, &io::Error::new(kind, message), path),
        err => errors::decode(err, Some(path)),
    })
}
