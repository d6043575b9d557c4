//! Filters on disk, and new filters sized for their input.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;

use crate::error::CliError;
use crate::input::{count_lines, Source};

/// Reads the filter in `path`, every field and checksum checked.
pub fn load(path: &Path) -> Result<ConcurrentCuckooFilter, CliError> {
    let file = File::open(path).map_err(|error| CliError::file(path, error))?;
    ConcurrentCuckooFilter::read_from(BufReader::with_capacity(1 << 20, file)).map_err(|error| {
        CliError::Decode {
            path: path.to_owned(),
            error,
        }
    })
}

/// Writes `filter` to `path`, through a temporary file renamed into place so that a failed or
/// interrupted write never leaves half a filter under the name; or to standard output, unless
/// that is a terminal.
pub fn save(filter: &ConcurrentCuckooFilter, path: Option<&Path>) -> Result<(), CliError> {
    let Some(path) = path else {
        let stdout = io::stdout();
        if stdout.is_terminal() {
            return Err(CliError::Usage(
                "not writing a binary filter to a terminal: give -o FILE or redirect the output"
                    .into(),
            ));
        }
        let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
        filter.write_to(&mut out)?;
        return Ok(out.flush()?);
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".ccf-{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = File::create(&temporary).and_then(|file| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        filter.write_to(&mut out)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()
    });
    match written.and_then(|()| fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            let _ = fs::remove_file(&temporary);
            Err(CliError::file(path, error))
        }
    }
}

/// A new filter for `capacity` keys, or if none is given for as many keys as the input files
/// have lines (counted in a first pass); standard input, which cannot be read twice, needs a
/// capacity. `fpr` picks the configuration, or the library's default (12-bit fingerprints in
/// 4-slot buckets) without it.
pub fn sized(
    capacity: Option<u64>,
    fpr: Option<f64>,
    sources: &[Source],
) -> Result<ConcurrentCuckooFilter, CliError> {
    let capacity = match capacity {
        Some(capacity) => capacity,
        None => count_lines(sources)?.ok_or_else(|| {
            CliError::Usage(
                "reading standard input needs --capacity N (the filter is sized before the \
                 first line arrives)"
                    .into(),
            )
        })?,
    };
    let capacity = usize::try_from(capacity.max(1)).unwrap_or(usize::MAX);
    let mut builder = ConcurrentCuckooFilter::builder().capacity(capacity);
    if let Some(fpr) = fpr {
        builder = builder.false_positive_rate(fpr);
    }
    builder.build().map_err(CliError::Build)
}
