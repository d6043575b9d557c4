//! Filters on disk, of either kind, and new filters sized for their input or growing.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DecodeError, DefaultHashBuilder, GrowableCuckooFilter, TableLayout,
};

use crate::cli::{items, Sizing};
use crate::error::CliError;
use crate::growing;
use crate::input::{count_lines, Source};
use crate::memory;
use crate::output;

/// A filter of either kind the library writes. A command holds one or two: their sizes differ,
/// but not enough to box.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Filter {
    /// Sized before the first key; full when it reaches its capacity.
    Fixed(ConcurrentCuckooFilter),
    /// Adds a level each time its newest one fills.
    Growable(GrowableCuckooFilter),
}

/// What a filter file holds, told by its magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Fixed,
    Growable,
}

/// The first bytes of a growable filter's encoding (`FORMAT.md`, "Growable filters"); a fixed
/// filter's differ in their fourth byte.
const GROWABLE_MAGIC: &[u8] = b"\x89CCG\r\n\x1a\n";
/// The first bytes of a live file (`FORMAT.md`, "The live file"): a fixed filter, mapped.
const LIVE_MAGIC: &[u8] = b"\x89CCL\r\n\x1a\n";
/// The first bytes of an expiring filter's file, which no command but `dedup --window` uses.
const EXPIRING_MAGIC: &[u8] = b"CCFEXPR1";

impl Filter {
    pub fn hasher(&self) -> &DefaultHashBuilder {
        match self {
            Self::Fixed(filter) => filter.hasher(),
            Self::Growable(filter) => filter.hasher(),
        }
    }

    /// Items stored.
    pub fn stored(&self) -> usize {
        match self {
            Self::Fixed(filter) => filter.len(),
            Self::Growable(filter) => filter.len(),
        }
    }

    /// The false positive rate a new key meets at the current load: for a growable filter, the
    /// library's estimate from the items each chunk of each level holds.
    pub fn false_positive_rate_now(&self) -> f64 {
        match self {
            Self::Fixed(filter) => filter.stats().false_positive_rate_at_load,
            Self::Growable(filter) => filter.expected_false_positive_rate(),
        }
    }

    /// What to do when the filter is full.
    pub fn full_remedy(&self) -> &'static str {
        match self {
            Self::Fixed(_) => "give a larger --capacity",
            Self::Growable(_) => "no level could be added; give a larger --max-capacity, or none",
        }
    }

    fn write_to(&self, out: impl Write) -> io::Result<()> {
        match self {
            Self::Fixed(filter) => filter.write_to(out),
            Self::Growable(filter) => filter.write_to(out),
        }
    }
}

/// A filter file opened, its kind told by its magic (a file with neither kind's magic is taken
/// as fixed, whose decoder names what is wrong), to be read from the bytes after it: a pipe
/// cannot be opened again to read them.
pub struct Opened {
    path: PathBuf,
    kind: Kind,
    /// The bytes its kind was told by.
    head: Vec<u8>,
    file: File,
    /// Its length, if it is a regular file.
    len: Option<u64>,
    /// A live file (a regular file with the live magic), to be mapped rather than read.
    live: bool,
}

/// A filter read from its file, with what the file holds beside it.
pub struct Loaded {
    pub filter: Filter,
    /// The file's first bytes, as far as a growable filter's header goes that `info` and
    /// `merge` read fields of (`growing::HEAD`).
    pub head: Vec<u8>,
    /// Bytes of the file.
    pub bytes: u64,
}

/// Opens the filter file at `path` and reads its magic.
pub fn open(path: &Path) -> Result<Opened, CliError> {
    let file = File::open(path).map_err(|error| CliError::file(path, error))?;
    let len = file
        .metadata()
        .ok()
        .filter(|meta| meta.is_file())
        .map(|meta| meta.len());
    // The magic read alone: a live file is then mapped, not read a megabyte ahead.
    let mut head = Vec::with_capacity(GROWABLE_MAGIC.len());
    (&file)
        .take(GROWABLE_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|error| CliError::file(path, error))?;
    if head == EXPIRING_MAGIC {
        return Err(CliError::Unsupported {
            path: path.to_owned(),
            reason: "an expiring filter's file: ccf reads fixed-size and growable filters",
        });
    }
    let kind = if head == GROWABLE_MAGIC {
        Kind::Growable
    } else {
        Kind::Fixed
    };
    Ok(Opened {
        path: path.to_owned(),
        kind,
        live: len.is_some() && head == LIVE_MAGIC,
        head,
        file,
        len,
    })
}

impl Opened {
    /// The kind of filter the file holds, from its first bytes alone.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The filter for lookups: a live file mapped read-only (its header checked, its table not
    /// read), any other file read as [`load`](Self::load) reads it.
    pub fn map_or_load(self) -> Result<Loaded, CliError> {
        #[cfg(target_os = "linux")]
        if self.live {
            let filter = crate::live::open(&self.path).map(Filter::Fixed)?;
            return Ok(self.mapped(filter));
        }
        self.read()
    }

    /// Reads the filter, of whichever kind, every field and checksum checked, and refuses a
    /// file with bytes after the filter as the library's `from_bytes` refuses them. A live file
    /// is mapped and copied into memory, so the filter is the caller's to change.
    pub fn load(self) -> Result<Loaded, CliError> {
        #[cfg(target_os = "linux")]
        if self.live {
            let live = crate::live::open(&self.path)?;
            memory::check("a copy of its table", live.memory_usage() as u64)?;
            return Ok(self.mapped(Filter::Fixed(live.clone())));
        }
        self.read()
    }

    /// A live file's filter, mapped from it.
    #[cfg(target_os = "linux")]
    fn mapped(self, filter: Filter) -> Loaded {
        Loaded {
            filter,
            head: self.head,
            bytes: self.len.unwrap_or_default(),
        }
    }

    /// Decodes the filter from the bytes after the magic.
    fn read(self) -> Result<Loaded, CliError> {
        let Opened {
            path,
            kind,
            head,
            file,
            len,
            ..
        } = self;
        let reader = Cursor::new(head).chain(BufReader::with_capacity(1 << 20, file));
        let mut reader = Counted {
            reader,
            bytes: 0,
            head: Vec::with_capacity(growing::HEAD),
        };
        let decoded = match kind {
            Kind::Fixed => ConcurrentCuckooFilter::read_from(&mut reader).map(Filter::Fixed),
            Kind::Growable => GrowableCuckooFilter::read_from(&mut reader).map(Filter::Growable),
        };
        let decode_error = |error| CliError::Decode {
            path: path.clone(),
            error,
        };
        let filter = decoded.map_err(decode_error)?;
        let expected = reader.bytes;
        let read_error = |error| CliError::file(&path, error);
        let mut probe = Vec::with_capacity(1);
        (&mut reader)
            .take(1)
            .read_to_end(&mut probe)
            .map_err(read_error)?;
        if !probe.is_empty() {
            // A regular file's length says how many follow; anything else is read to its end.
            let found = match len {
                Some(len) => len.max(reader.bytes),
                None => {
                    reader.bytes + io::copy(&mut reader, &mut io::sink()).map_err(read_error)?
                }
            };
            return Err(decode_error(DecodeError::TrailingBytes { expected, found }));
        }
        Ok(Loaded {
            filter,
            head: reader.head,
            bytes: expected,
        })
    }
}

/// Files whose kinds were told before any is read whole: a regular file is closed meanwhile (a
/// merge may name more files than a process may hold open) and opened again to be read, a pipe
/// kept open.
pub enum Pending {
    Closed { path: PathBuf, kind: Kind },
    Open(Opened),
}

impl Pending {
    /// The file at `path`, its kind told.
    pub fn open(path: &Path) -> Result<Self, CliError> {
        let opened = open(path)?;
        Ok(match opened.len {
            Some(_) => Self::Closed {
                path: opened.path,
                kind: opened.kind,
            },
            None => Self::Open(opened),
        })
    }

    pub fn kind(&self) -> Kind {
        match self {
            Self::Closed { kind, .. } => *kind,
            Self::Open(opened) => opened.kind,
        }
    }

    /// Reads the filter as [`Opened::load`] does; a file opened again may have been replaced
    /// since its kind was told, and be of the other kind.
    pub fn load(self) -> Result<Loaded, CliError> {
        match self {
            Self::Closed { path, .. } => open(&path)?.load(),
            Self::Open(opened) => opened.load(),
        }
    }
}

/// A reader that counts the bytes read through it and keeps the first `growing::HEAD`.
struct Counted<R> {
    reader: R,
    bytes: u64,
    head: Vec<u8>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read(buf)?;
        let kept = n.min(growing::HEAD.saturating_sub(self.head.len()));
        self.head.extend_from_slice(&buf[..kept]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// What `build` without `-o` writes to standard output, for a message.
pub const BINARY_FILTER: &str = "a binary filter";

/// Writes `filter` to `path` (replacing a regular file whole, writing through anything else:
/// `output::write_file`), or to standard output unless that is a terminal.
pub fn save(filter: &Filter, path: Option<&Path>) -> Result<(), CliError> {
    let write = |out: &mut dyn Write| filter.write_to(out);
    match path {
        Some(path) => output::write_file(path, write),
        None => output::write_stdout(BINARY_FILTER, write),
    }
}

/// A new filter as `sizing` asks: a growable one with `--grow`, else a fixed one for
/// `--capacity` keys, or if none is given for as many keys as the input files have lines
/// (counted in a first pass); standard input, which cannot be read twice, needs a capacity then.
/// `--fpr` picks the configuration, or the library's default (12-bit fingerprints in 4-slot
/// buckets) without it. Refused if its table would not fit in the memory available, with the
/// copy of it that writing it takes if it is to be `written`.
pub fn new_filter(sizing: &Sizing, sources: &[Source], written: bool) -> Result<Filter, CliError> {
    if sizing.grow {
        let counted = match sizing.capacity {
            Some(_) => None,
            None => count_lines(sources)?,
        };
        return growing::new_filter(sizing, counted, written).map(Filter::Growable);
    }
    let capacity = match sizing.capacity {
        Some(capacity) => capacity,
        None => count_lines(sources)?.ok_or_else(|| {
            CliError::Usage(
                "reading standard input, a device or a pipe needs --capacity N (the filter is \
                 sized before the first line arrives, and none of them can be read twice) or \
                 --grow"
                    .into(),
            )
        })?,
    };
    // Files are kept and shipped: the packed layout, the smallest, whatever the rate.
    let mut builder = ConcurrentCuckooFilter::builder()
        .capacity(items(capacity))
        .layout(TableLayout::Packed);
    if let Some(fpr) = sizing.fpr {
        builder = builder.false_positive_rate(fpr);
    }
    memory::check_new(
        builder.memory_bytes().map_err(CliError::Build)?,
        written,
        "its table",
        "its table and the copy of it written out",
    )?;
    builder.build().map(Filter::Fixed).map_err(CliError::Build)
}
