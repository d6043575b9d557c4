//! A file mapped into memory (`mmap`), and the kernel's locks a live file uses: a shared `flock`
//! while it is open, and an open-file-description (OFD) byte lock per registration slot, which
//! the kernel drops when its holder dies. `unsafe` only for the FFI; a mapping's words are
//! `AtomicU64`s, so every access to memory processes share is atomic.

use core::ptr::NonNull;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use super::{AtomicU64, TableWords, HUGE_PAGE};

/// A mapping of a file's first `len` bytes: `MAP_PRIVATE` for an opener that never writes it,
/// whose pages, never copied, stay the file's and follow its writers (Linux).
#[derive(Debug)]
pub(crate) struct Mapping {
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory that no Rust value owns but this handle; every access to
// it goes through `AtomicU64`s (`Mapping::words`), which are `Send` and `Sync`.
#[allow(unsafe_code)]
unsafe impl Send for Mapping {}
// SAFETY: as for `Send`.
#[allow(unsafe_code)]
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `file`'s first `len` bytes, which the caller checked it has (past its end: SIGBUS).
    pub(crate) fn map(file: &File, len: usize, private: bool) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        // A private mapping is never written: no swap is reserved for copies it never makes,
        // or the kernel would charge its whole length (a file larger than RAM: `ENOMEM`).
        let flags = if private {
            libc::MAP_PRIVATE | libc::MAP_NORESERVE
        } else {
            libc::MAP_SHARED
        };
        // SAFETY: a new mapping at an address the kernel chooses (null hint), of a file
        // descriptor we borrow for the call; it aliases no Rust memory. Failure is MAP_FAILED,
        // checked before the pointer is used.
        #[allow(unsafe_code)]
        let start = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                file.as_raw_fd(),
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let start = NonNull::new(start.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Self { start, len })
    }

    /// `words` words from byte `offset`, holding the mapping; `None` unless aligned and inside.
    pub(crate) fn words(self: &Arc<Self>, offset: usize, words: usize) -> Option<TableWords> {
        let end = words.checked_mul(8)?.checked_add(offset)?;
        if offset % 8 != 0 || end > self.len {
            return None;
        }
        let first = NonNull::new(self.start.as_ptr().wrapping_add(offset).cast::<AtomicU64>())?;
        Some(TableWords::mapped(
            first,
            words,
            Arc::clone(self) as Arc<dyn Send + Sync + std::panic::RefUnwindSafe>,
        ))
    }

    /// Writes every changed page back to the file and waits for it (`msync(MS_SYNC)`).
    pub(crate) fn flush(&self) -> io::Result<()> {
        // SAFETY: the range is exactly this live mapping; msync reads no Rust memory.
        #[allow(unsafe_code)]
        let done = unsafe { libc::msync(self.start.as_ptr().cast(), self.len, libc::MS_SYNC) };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Asks for huge pages over the whole, aligned huge pages of `[offset, offset + len)`, the
    /// only ones the kernel can back by one (none in a small table's range: no advice), as for
    /// heap tables.
    pub(crate) fn advise_huge_pages(self: &Arc<Self>, offset: usize, len: usize) {
        let start = self.start.as_ptr() as usize;
        let first = (start + offset).next_multiple_of(HUGE_PAGE);
        let last = (start + offset + len) & !(HUGE_PAGE - 1);
        if first < last {
            if let Some(words) = self.words(first - start, (last - first) / 8) {
                super::advise_huge_pages(&words);
            }
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range is exactly the mapping `map` made, unmapped once, here; every
        // `TableWords` borrowing it holds an `Arc` of this handle, so none is left.
        #[allow(unsafe_code)]
        unsafe {
            libc::munmap(self.start.as_ptr().cast(), self.len);
        }
    }
}

/// Makes the file `len` bytes long, blocks allocated, so no mapped page faults for want of space.
pub(crate) fn reserve(file: &File, len: u64) -> io::Result<()> {
    let len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large"))?;
    // SAFETY: a plain system call on a descriptor we borrow; it returns an error number.
    #[allow(unsafe_code)]
    let err = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    if err != 0 {
        return Err(io::Error::from_raw_os_error(err));
    }
    Ok(())
}

/// Takes a `flock` on the file without waiting; `Ok(false)` if another holds a conflicting one.
pub(crate) fn try_flock(file: &File, exclusive: bool) -> io::Result<bool> {
    let how = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: a plain system call on a descriptor we borrow.
    #[allow(unsafe_code)]
    let done = unsafe { libc::flock(file.as_raw_fd(), how | libc::LOCK_NB) };
    if done == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Ok(false);
    }
    Err(err)
}

/// An OFD write lock on the one byte at `offset`, for `file`'s open file description.
fn ofd_lock(file: &File, offset: u64, command: libc::c_int) -> io::Result<libc::flock> {
    // SAFETY: `flock` is a plain C struct of integers, for which all zeroes is valid.
    #[allow(unsafe_code)]
    let mut lock: libc::flock = unsafe { core::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = offset as libc::off_t;
    lock.l_len = 1;
    // SAFETY: fcntl with an OFD lock command reads and (for GETLK) writes the `flock` struct
    // we pass by a pointer valid for the call; `l_pid` must be 0, as zeroing made it.
    #[allow(unsafe_code)]
    let done = unsafe { libc::fcntl(file.as_raw_fd(), command, &mut lock) };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock)
}

/// Takes the OFD lock on the byte at `offset` without waiting; `Ok(false)` if another holds it.
/// The kernel releases it when the description's last descriptor closes, as at the holder's death.
pub(crate) fn try_lock_byte(file: &File, offset: u64) -> io::Result<bool> {
    match ofd_lock(file, offset, libc::F_OFD_SETLK) {
        Ok(_) => Ok(true),
        Err(err) if matches!(err.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => {
            Ok(false)
        }
        Err(err) => Err(err),
    }
}

/// Whether another open file description holds a lock on the byte at `offset`. An error counts
/// as held: a waiter never recovers a stripe it cannot prove abandoned.
pub(crate) fn byte_is_locked(file: &File, offset: u64) -> bool {
    ofd_lock(file, offset, libc::F_OFD_GETLK)
        .map_or(true, |lock| lock.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(test)]
#[path = "../../tests/unit/sync/mapping.rs"]
mod tests;
