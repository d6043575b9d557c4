//! Filters on disk, of either kind, and new filters sized for their input or growing.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Write};
use std::path::Path;

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

/// A filter file opened: its kind, by its magic (a file with neither kind's magic is taken as
/// fixed, whose decoder names what is wrong), a reader from its first byte, and its length if
/// it is a regular file.
struct Opened<R> {
    kind: Kind,
    reader: R,
    len: Option<u64>,
    /// A live file (a regular file with the live magic), to be mapped rather than read.
    live: bool,
}

fn open(path: &Path) -> Result<Opened<impl Read>, CliError> {
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
    let reader = BufReader::with_capacity(1 << 20, file);
    let kind = if head == GROWABLE_MAGIC {
        Kind::Growable
    } else {
        Kind::Fixed
    };
    Ok(Opened {
        kind,
        live: len.is_some() && head == LIVE_MAGIC,
        reader: Cursor::new(head).chain(reader),
        len,
    })
}

/// The kind of filter the file at `path` holds, from its first bytes alone.
pub fn kind(path: &Path) -> Result<Kind, CliError> {
    open(path).map(|opened| opened.kind)
}

/// The filter in `path` for lookups: a live file mapped read-only (its header checked, its
/// table not read), any other file read as [`load`] reads it.
pub fn map_or_load(path: &Path) -> Result<Filter, CliError> {
    let opened = open(path)?;
    #[cfg(target_os = "linux")]
    if opened.live {
        drop(opened);
        return crate::live::open(path).map(Filter::Fixed);
    }
    read(path, opened)
}

/// Reads the filter in `path`, of whichever kind, every field and checksum checked, and refuses
/// a file with bytes after the filter as the library's `from_bytes` refuses them. A live file
/// is mapped and copied into memory, so the filter is the caller's to change.
pub fn load(path: &Path) -> Result<Filter, CliError> {
    let opened = open(path)?;
    #[cfg(target_os = "linux")]
    if opened.live {
        drop(opened);
        let live = crate::live::open(path)?;
        memory::check("a copy of its table", live.memory_usage() as u64)?;
        return Ok(Filter::Fixed(live.clone()));
    }
    read(path, opened)
}

/// Decodes the filter `open` found in `path`.
fn read(path: &Path, opened: Opened<impl Read>) -> Result<Filter, CliError> {
    let Opened {
        kind, reader, len, ..
    } = opened;
    let mut reader = Counted { reader, bytes: 0 };
    let decoded = match kind {
        Kind::Fixed => ConcurrentCuckooFilter::read_from(&mut reader).map(Filter::Fixed),
        Kind::Growable => GrowableCuckooFilter::read_from(&mut reader).map(Filter::Growable),
    };
    let decode_error = |error| CliError::Decode {
        path: path.to_owned(),
        error,
    };
    let filter = decoded.map_err(decode_error)?;
    let expected = reader.bytes;
    let read_error = |error| CliError::file(path, error);
    let mut probe = Vec::with_capacity(1);
    (&mut reader)
        .take(1)
        .read_to_end(&mut probe)
        .map_err(read_error)?;
    if !probe.is_empty() {
        // A regular file's length says how many follow; anything else is read to its end.
        let found = match len {
            Some(len) => len.max(reader.bytes),
            None => reader.bytes + io::copy(&mut reader, &mut io::sink()).map_err(read_error)?,
        };
        return Err(decode_error(DecodeError::TrailingBytes { expected, found }));
    }
    Ok(filter)
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    reader: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Writes `filter` to `path` (replacing a regular file whole, writing through anything else:
/// `output::write_file`), or to standard output unless that is a terminal.
pub fn save(filter: &Filter, path: Option<&Path>) -> Result<(), CliError> {
    let write = |out: &mut dyn Write| filter.write_to(out);
    match path {
        Some(path) => output::write_file(path, write),
        None => output::write_stdout("a binary filter", write),
    }
}

/// A new filter as `sizing` asks: a growable one with `--grow`, else a fixed one for
/// `--capacity` keys, or if none is given for as many keys as the input files have lines
/// (counted in a first pass); standard input, which cannot be read twice, needs a capacity then.
/// `--fpr` picks the configuration, or the library's default (12-bit fingerprints in 4-slot
/// buckets) without it.
pub fn new_filter(sizing: &Sizing, sources: &[Source]) -> Result<Filter, CliError> {
    if sizing.grow {
        let counted = match sizing.capacity {
            Some(_) => None,
            None => count_lines(sources)?,
        };
        return growing::new_filter(sizing, counted).map(Filter::Growable);
    }
    let capacity = match sizing.capacity {
        Some(capacity) => capacity,
        None => count_lines(sources)?.ok_or_else(|| {
            CliError::Usage(
                "reading standard input or a pipe needs --capacity N (the filter is sized \
                 before the first line arrives, and a pipe cannot be read twice) or --grow"
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
    memory::check(
        "its table",
        builder.memory_bytes().map_err(CliError::Build)?,
    )?;
    builder.build().map(Filter::Fixed).map_err(CliError::Build)
}
