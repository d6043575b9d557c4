//! Which process a filter belongs to: a live file's locks name the registration of the process
//! that opened it, which a child made by `fork` must not use as its own.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Whether this process opened a live file for writing: a child it makes by `fork` then holds
/// registrations of this process's, which `ccfilter/__init__.py` gives up in the child.
static OPENED_FOR_WRITING: AtomicBool = AtomicBool::new(false);

/// This process's id, kept here as a system call per lookup would cost more than the lookup;
/// set when the module loads and again in each child made by `fork` ([`forked`]).
static PROCESS: AtomicU32 = AtomicU32::new(0);

/// This process's id, as [`PROCESS`] has it.
pub fn this_process() -> u32 {
    match PROCESS.load(Ordering::Relaxed) {
        0 => forked(),
        id => id,
    }
}

/// Takes this process's id afresh (in a child made by `fork`, from `ccfilter/__init__.py`'s
/// hook), and returns it.
pub fn forked() -> u32 {
    let id = std::process::id();
    PROCESS.store(id, Ordering::Relaxed);
    id
}

/// Whether this process opened a live file for writing ([`OPENED_FOR_WRITING`]).
pub fn opened_for_writing() -> bool {
    OPENED_FOR_WRITING.load(Ordering::Relaxed)
}

/// Records that this process opened a live file for writing, if `for_writing`.
pub fn opened_live_file(for_writing: bool) {
    OPENED_FOR_WRITING.fetch_or(for_writing, Ordering::Relaxed);
}
