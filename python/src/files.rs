//! Filter files: written beside their destination and renamed over it, so that a failed save
//! leaves whatever was at the path untouched; read as a stream, checked as the bytes arrive.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Writes a file at `path` with `write`, through a temporary file in the same directory named
/// for this process and call.
pub fn save(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let no_name = || io::Error::new(io::ErrorKind::InvalidInput, "does not name a file");
    let mut temporary = OsString::from(".");
    temporary.push(path.file_name().ok_or_else(no_name)?);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    temporary.push(format!(".{}.{call}.tmp", std::process::id()));
    let temporary = path.with_file_name(temporary);
    if is_live_file(path) {
        // Renamed over, it would vanish from under the processes that map it, and its next
        // opener would find a snapshot.
        return Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            "a live filter file is not replaced by a snapshot (remove it first if that is meant)",
        ));
    }
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

/// Whether `path` is a regular file that starts as a live filter file does.
fn is_live_file(path: &Path) -> bool {
    let mut head = [0u8; 8];
    fs::metadata(path).is_ok_and(|meta| meta.is_file())
        && File::open(path)
            .and_then(|mut file| file.read_exact(&mut head))
            .is_ok()
        && &head == LIVE_MAGIC
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
        if !kind.is_file() {
            return Err(not_a_file(file_kind(&kind)));
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

    /// The filter `read` decodes from the file, which must end where the filter does: an error
    /// of the file itself, or else the decoder's.
    pub fn read<F>(
        mut self,
        read: impl FnOnce(&mut Self) -> Result<F, DecodeError>,
    ) -> io::Result<Result<F, DecodeError>> {
        let filter = match read(&mut self) {
            Ok(filter) => filter,
            Err(err) => return self.error.take().map_or(Ok(Err(err)), Err),
        };
        if self.reader.read(&mut [0])? == 0 {
            return Ok(Ok(filter));
        }
        let expected = io::Seek::stream_position(&mut self.reader)? - 1;
        let found = self.reader.get_ref().metadata()?.len().max(expected + 1);
        Ok(Err(DecodeError::TrailingBytes { expected, found }))
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

/// The error for a path to `what`, not a regular file (`IsADirectory` for a directory).
pub fn not_a_file(what: &str) -> io::Error {
    let kind = match what {
        "a directory" => io::ErrorKind::IsADirectory,
        _ => io::ErrorKind::InvalidInput,
    };
    io::Error::new(kind, format!("not a regular file but {what}"))
}

/// What a file that is not a regular one is, for messages.
fn file_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kinds = [
            (kind.is_dir(), "a directory"),
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
