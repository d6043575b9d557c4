//! Filter files: written beside their destination and renamed over it, so that a failed save
//! leaves whatever was at the path untouched; read as a stream, checked as the bytes arrive.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use concurrent_cuckoo_filter::DecodeError;

/// The first bytes of a growable filter's file and an expiring one's (`FORMAT.md`); a fixed
/// filter's differ.
const GROWABLE_MAGIC: &[u8; 8] = b"\x89CCG\r\n\x1a\n";
const EXPIRING_MAGIC: &[u8; 8] = b"CCFEXPR1";
/// The first bytes of a live file (`FORMAT.md`, "The live file"): a fixed filter, mapped.
const LIVE_MAGIC: &[u8; 8] = b"\x89CCL\r\n\x1a\n";

/// Which class a filter file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Fixed,
    Growable,
    Expiring,
    /// A fixed filter in a live file, which is mapped rather than read.
    Live,
}

/// Bytes read from a file at a time.
const READ_BUFFER: usize = 1 << 16;

/// Writes a file at `path` with `write`, through a temporary file in the same directory.
pub fn save(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let temporary = temporary_beside(path)?;
    let written = (|| {
        let mut out = BufWriter::new(File::create(&temporary)?);
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

/// A name for a temporary file next to `path`, unique to this process and call.
fn temporary_beside(path: &Path) -> io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "does not name a file".to_owned(),
        )
    })?;
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(path.with_file_name(temporary))
}

/// Why a load failed.
#[derive(Debug)]
pub enum LoadError {
    /// Opening or reading the file, with the system's error number where there is one.
    Io(io::Error),
    /// Its contents.
    Decode(DecodeError),
}

impl From<io::Error> for LoadError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// A filter file, open for reading.
#[derive(Debug)]
pub struct FilterFile {
    reader: BufReader<File>,
    /// The first error of the file itself, kept whole: the decoder keeps only its text.
    error: Option<io::Error>,
}

impl FilterFile {
    /// Opens `path`, refusing anything but a regular file before reading a byte: a FIFO or a
    /// device could block or never end. Opened without blocking, so a FIFO with no writer is
    /// refused at once rather than waited on.
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let file = options.open(path)?;
        let kind = file.metadata()?.file_type();
        if kind.is_dir() {
            #[cfg(unix)]
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        if !kind.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a regular file but {}", file_kind(&kind)),
            ));
        }
        Ok(Self {
            reader: BufReader::with_capacity(READ_BUFFER, file),
            error: None,
        })
    }

    /// The kind of filter the file holds, by its first bytes (read, not consumed).
    pub fn kind(&mut self) -> io::Result<FileKind> {
        use std::io::BufRead;
        let start = self.reader.fill_buf()?;
        Ok(if start.starts_with(GROWABLE_MAGIC) {
            FileKind::Growable
        } else if start.starts_with(EXPIRING_MAGIC) {
            FileKind::Expiring
        } else if start.starts_with(LIVE_MAGIC) {
            FileKind::Live
        } else {
            FileKind::Fixed
        })
    }

    /// The filter `read` decodes from the file, which must end where the filter does.
    pub fn read<F>(
        mut self,
        read: impl FnOnce(&mut Self) -> Result<F, DecodeError>,
    ) -> Result<F, LoadError> {
        let filter = read(&mut self).map_err(|err| match self.error.take() {
            Some(io) => LoadError::Io(io),
            None => LoadError::Decode(err),
        })?;
        let mut extra = [0; 1];
        if self.reader.read(&mut extra)? > 0 {
            let position = io::Seek::stream_position(&mut self.reader)? - 1;
            let found = self.reader.get_ref().metadata()?.len().max(position + 1);
            return Err(LoadError::Decode(DecodeError::TrailingBytes {
                expected: position,
                found,
            }));
        }
        Ok(filter)
    }
}

impl Read for FilterFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf).inspect_err(|err| {
            self.error.get_or_insert_with(|| match err.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(err.kind(), err.to_string()),
            });
        })
    }
}

/// What a file that is not a regular one is, for messages.
fn file_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kinds = [
            (kind.is_fifo(), "a FIFO"),
            (kind.is_char_device(), "a character device"),
            (kind.is_block_device(), "a block device"),
            (kind.is_socket(), "a socket"),
        ];
        if let Some((_, name)) = kinds.into_iter().find(|(is, _)| *is) {
            return name;
        }
    }
    let _ = kind;
    "another kind of file"
}
