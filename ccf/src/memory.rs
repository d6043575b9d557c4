//! The machine's memory, against which a new filter is checked before it is allocated: a table
//! larger than the memory there is would otherwise grow until the kernel kills the process.

use crate::error::CliError;

/// Bytes of memory the machine has available and where the figure comes from, or `None` where
/// it is not known (only Linux's `/proc/meminfo` is read).
fn available() -> Option<(u64, &'static str)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| {
        meminfo.lines().find_map(|line| {
            let kib = line.strip_prefix(name)?.strip_prefix(':')?;
            kib.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
        })
    };
    // MemAvailable, not MemTotal: a filter's table is written all over as it fills, so it needs
    // memory the kernel can give without swapping or killing another process, which is what
    // MemAvailable estimates. MemTotal only where the kernel (before 3.14) has no MemAvailable.
    let (kib, source) = match field("MemAvailable") {
        Some(kib) => (kib, "MemAvailable in /proc/meminfo"),
        None => (field("MemTotal")?, "MemTotal in /proc/meminfo"),
    };
    Some((kib.saturating_mul(1024), source))
}

/// Refuses `needed` bytes for `what` (the table, a first level) if the machine has less
/// available; on a machine whose memory is not known, allows it.
pub fn check(what: &'static str, needed: u64) -> Result<(), CliError> {
    match available() {
        Some((available, source)) if needed > available => Err(CliError::TooLarge {
            what,
            needed,
            available,
            source,
        }),
        _ => Ok(()),
    }
}

/// Refuses a new table (or first level) of `bytes`, `what` it is, if the machine has less
/// available; if it is to be `written` to a file, with the copy of it `write_to` encodes it into
/// before writing, twice that, as `with_copy` says.
pub fn check_new(
    bytes: u64,
    written: bool,
    what: &'static str,
    with_copy: &'static str,
) -> Result<(), CliError> {
    match written {
        true => check(with_copy, bytes.saturating_mul(2)),
        false => check(what, bytes),
    }
}
