//! Reading lines: files or standard input, in segments of whole lines, on a thread of their own so
//! that reading overlaps the work on the previous segment.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use indicatif::ProgressBar;

use crate::error::CliError;

/// Bytes a segment holds before it is handed on (it ends at the last whole line). Large enough that
/// splitting it across threads costs little, small enough that a few in flight are little memory.
pub const SEGMENT_BYTES: usize = 2 << 20;

/// Segments read ahead of the one being worked on: memory stays at a few segments whatever the
/// input.
const READ_AHEAD: usize = 1;

/// Where lines come from.
#[derive(Debug, Clone)]
pub enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    /// The sources named on the command line: standard input for none, or for `-`.
    pub fn all(paths: &[PathBuf]) -> Vec<Source> {
        if paths.is_empty() {
            return vec![Source::Stdin];
        }
        paths
            .iter()
            .map(|path| {
                if path == Path::new("-") {
                    Source::Stdin
                } else {
                    Source::File(path.clone())
                }
            })
            .collect()
    }

    pub(crate) fn open(&self) -> Result<Box<dyn Read + Send>, CliError> {
        match self {
            Source::Stdin => Ok(Box::new(io::stdin())),
            Source::File(path) => match File::open(path) {
                Ok(file) => Ok(Box::new(file)),
                Err(error) => Err(CliError::file(path, error)),
            },
        }
    }

    /// Whether the source is read once only: standard input, or a file that is a pipe, a
    /// socket or a character device (a terminal, whose lines would be asked for twice;
    /// `/dev/zero`, which never ends) but `/dev/null`, empty every time. A file that cannot be
    /// looked at is left to its read to report.
    fn is_stream(&self) -> bool {
        match self {
            Source::Stdin => true,
            #[cfg(unix)]
            Source::File(path) => std::fs::metadata(path).is_ok_and(|meta| {
                use std::os::unix::fs::{FileTypeExt, MetadataExt};
                let kind = meta.file_type();
                let null =
                    || std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == meta.rdev());
                kind.is_fifo() || kind.is_socket() || kind.is_char_device() && !null()
            }),
            #[cfg(not(unix))]
            Source::File(_) => false,
        }
    }

    pub(crate) fn error(&self, error: io::Error) -> CliError {
        match self {
            Source::Stdin => CliError::Stdio(error),
            Source::File(path) => CliError::file(path, error),
        }
    }
}

/// Bytes of every source if all are files, for a progress bar; `None` if one is not.
pub fn total_bytes(sources: &[Source]) -> Option<u64> {
    sources.iter().try_fold(0u64, |total, source| match source {
        Source::Stdin => None,
        Source::File(path) => Some(total + std::fs::metadata(path).ok()?.len()),
    })
}

/// Lines in every source (a last line without a newline counts), if all are files: a first pass
/// that sizes the filter. `Ok(None)` if a source is standard input, or a pipe, socket or
/// character device named as a file (`<(command)`, a FIFO, `/dev/tty`): none can be read twice.
pub fn count_lines(sources: &[Source]) -> Result<Option<u64>, CliError> {
    if sources.iter().any(Source::is_stream) {
        return Ok(None);
    }
    let mut lines = 0u64;
    for source in sources {
        let mut reader = source.open()?;
        let mut buf = vec![0u8; 1 << 20];
        let mut last = b'\n';
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                    last = buf[n - 1];
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(source.error(error)),
            }
        }
        lines += u64::from(last != b'\n');
    }
    Ok(Some(lines))
}

/// Segments of whole lines, each ending in `\n`, from every source in turn (a source's last line
/// gets a `\n` if it lacks one). An error ends the sequence.
#[derive(Debug)]
pub struct Segments {
    segments: Receiver<Result<Vec<u8>, CliError>>,
    reader: Option<JoinHandle<()>>,
}

impl Segments {
    /// Starts reading `sources` on a thread of its own, advancing `progress` by the bytes read.
    pub fn read(sources: Vec<Source>, progress: ProgressBar) -> Self {
        let (send, segments) = sync_channel(READ_AHEAD);
        let reader = std::thread::spawn(move || {
            let mut pending = Vec::with_capacity(SEGMENT_BYTES);
            for source in &sources {
                if let Err(error) = read_source(source, &mut pending, &progress, &send) {
                    let _ = send.send(Err(error));
                    return;
                }
            }
            if !pending.is_empty() {
                let _ = send.send(Ok(pending));
            }
        });
        Self {
            segments,
            reader: Some(reader),
        }
    }
}

/// Reads one source into `pending`, sending every full segment on.
fn read_source(
    source: &Source,
    pending: &mut Vec<u8>,
    progress: &ProgressBar,
    send: &std::sync::mpsc::SyncSender<Result<Vec<u8>, CliError>>,
) -> Result<(), CliError> {
    let mut reader = source.open()?;
    // Bytes at the start of `pending` known to hold no `\n`: a line longer than a segment is
    // searched as it arrives, not all over again at each read.
    let mut searched = 0;
    loop {
        let old = pending.len();
        // Up to a segment; past it only while a line is longer than that.
        let want = if old < SEGMENT_BYTES {
            SEGMENT_BYTES
        } else {
            old + (64 << 10)
        };
        pending.resize(want, 0);
        let n = loop {
            match reader.read(&mut pending[old..]) {
                Ok(n) => break n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    pending.truncate(old);
                    return Err(source.error(error));
                }
            }
        };
        pending.truncate(old + n);
        progress.inc(n as u64);
        if n == 0 {
            if pending.last().is_some_and(|&b| b != b'\n') {
                pending.push(b'\n');
            }
            return Ok(());
        }
        if pending.len() >= SEGMENT_BYTES {
            match pending[searched..].iter().rposition(|&b| b == b'\n') {
                Some(at) => {
                    let rest = pending.split_off(searched + at + 1);
                    let segment = std::mem::replace(pending, Vec::with_capacity(SEGMENT_BYTES));
                    pending.extend_from_slice(&rest);
                    searched = pending.len();
                    if send.send(Ok(segment)).is_err() {
                        // The consumer stopped: end the reading (the error goes nowhere).
                        return Err(CliError::BrokenPipe);
                    }
                }
                None => searched = pending.len(),
            }
        }
    }
}

impl Iterator for Segments {
    type Item = Result<Vec<u8>, CliError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.segments.recv().ok();
        if next.is_none() {
            if let Some(reader) = self.reader.take() {
                let _ = reader.join();
            }
        }
        next
    }
}
