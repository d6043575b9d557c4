//! Live files (the library's `create_shared`): mapped read-only instead of read, so the first
//! answer from a file of any size comes after a header check and a mapping; described with
//! their regions and writers by `ccf info`.

use std::io::{self, Write};
use std::path::Path;

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter, SharedError};

use crate::error::CliError;

/// The live file at `path`, mapped read-only: its header checked, its table not read.
pub fn open(path: &Path) -> Result<ConcurrentCuckooFilter, CliError> {
    ConcurrentCuckooFilter::open_shared(path, Access::ReadOnly).map_err(|error| match error {
        SharedError::Decode { path, source } => CliError::Decode {
            path,
            error: source,
        },
        SharedError::Io { path, source } => CliError::file(path, source),
        SharedError::Build(error) => CliError::Build(error),
        // Not a regular file, busy: the library's message names the file and why.
        other => CliError::file(path, io::Error::other(other.to_string())),
    })
}

/// `ccf info` of a live file: the fixed filter's fields, then the file's own.
pub fn describe(filter: &ConcurrentCuckooFilter, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "kind: fixed-size, live file (mapped read-only)\n{}",
        filter.stats()
    )?;
    let Some(info) = filter.live_info() else {
        return Ok(());
    };
    writeln!(out, "live format version: 1")?;
    writeln!(
        out,
        "registration slots: {} in use of {} (processes with the file open for writing), at byte {}",
        info.writers, info.registration_slots, info.registration_offset
    )?;
    writeln!(
        out,
        "lock region: {} stripe records of {} bytes at byte {}, stamps at byte {}",
        info.stripes,
        info.lock_records_bytes / info.stripes.max(1),
        info.lock_records_offset,
        info.stamps_offset
    )?;
    writeln!(
        out,
        "stripes held: {} (by a writer at work, or left by a killed one until recovered)",
        info.stripes_held
    )?;
    writeln!(
        out,
        "table: {} bytes at byte {}",
        info.table_bytes, info.table_offset
    )?;
    writeln!(out, "file length: {} bytes", info.file_len)?;
    writeln!(
        out,
        "clean-shutdown flag: none in the format (a machine crash can leave pages unwritten; \
         run verify() after one)"
    )
}
