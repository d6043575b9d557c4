//! The crate's errors as Python exceptions.

use std::io::{self, ErrorKind};
use std::path::Path;

use concurrent_cuckoo_filter::{BuildError, DecodeError, MergeError, SharedError};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    ccfilter,
    FilterFullError,
    PyValueError,
    "A key found no room in the filter (or a count window has counted 2^62 adds, its end); nothing \
     was dropped to make room. `inserted`: the keys (for `merge`, fingerprints) of the call that \
     went in before it; those after were not tried."
);

/// A [`FilterFullError`] with its `inserted` count.
pub fn full(py: Python<'_>, message: impl std::fmt::Display, inserted: usize) -> PyErr {
    let err = FilterFullError::new_err(message.to_string());
    let set = err.value(py).setattr("inserted", inserted);
    set.err().unwrap_or(err)
}

/// `ValueError` with the builder's message (naming the setting); `MemoryError` for no memory.
pub fn build(err: BuildError) -> PyErr {
    match err {
        BuildError::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        // The builder names its `Window`; Python, the argument that gave it.
        BuildError::WindowItems { items } => PyValueError::new_err(format!(
            "items must be at least 1 and addressable by a table, got {items}"
        )),
        BuildError::WindowDuration { duration } => PyValueError::new_err(format!(
            "seconds must be at least one nanosecond per generation and at most 2^64 - 1 \
             nanoseconds (about 584 years), got {}",
            duration.as_secs_f64()
        )),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `ValueError` with the decoder's message (after the file's path, if from a file);
/// `MemoryError` for a table there is no memory for, which says nothing of the bytes.
pub fn decode(err: DecodeError, path: Option<&Path>) -> PyErr {
    let path = path.map_or(String::new(), |path| format!("{}: ", path.display()));
    match err {
        DecodeError::OutOfMemory { .. } => PyMemoryError::new_err(format!("{path}{err}")),
        // The decoder names the Rust call (`Class::from_bytes`); Python's is a class method.
        DecodeError::OtherFilterType { found, .. } => {
            let article = if found.starts_with(['A', 'E', 'I', 'O', 'U']) {
                "an"
            } else {
                "a"
            };
            let read = match path.is_empty() {
                true => format!("{found}.from_bytes"),
                false => format!("{found}.load or ccfilter.load"),
            };
            PyValueError::new_err(format!(
                "{path}not a valid filter encoding: these are the bytes of {article} {found}: \
                 read them with {read}"
            ))
        }
        _ => PyValueError::new_err(format!("{path}not a valid filter encoding: {err}")),
    }
}

/// `OSError` for `path` with `errno`, `strerror` and `filename` as `open()` gives them, so that
/// Python picks the subclass by the number; an error without one gets its kind's.
pub fn file(py: Python<'_>, err: &io::Error, path: &Path) -> PyErr {
    let errno = err.raw_os_error().unwrap_or(match err.kind() {
        ErrorKind::NotFound => libc::ENOENT,
        ErrorKind::AlreadyExists => libc::EEXIST,
        ErrorKind::IsADirectory => libc::EISDIR,
        ErrorKind::PermissionDenied => libc::EACCES,
        ErrorKind::ResourceBusy => libc::EBUSY,
        ErrorKind::InvalidInput => libc::EINVAL,
        _ => libc::EIO,
    });
    // A system error by the system's text alone, as Python's own errors give it.
    let strerror = || -> PyResult<String> {
        py.import("os")?
            .call_method1("strerror", (errno,))?
            .extract()
    };
    let message = err.raw_os_error().and_then(|_| strerror().ok());
    let message = message.unwrap_or_else(|| err.to_string());
    PyOSError::new_err((errno, message, path.as_os_str().to_owned()))
}

/// `ValueError` for filters that cannot merge, [`FilterFullError`] for a target that filled up.
pub fn merge(py: Python<'_>, err: MergeError) -> PyErr {
    match err {
        MergeError::Full { merged } => full(py, err, merged),
        MergeError::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A live file's [`file`] `OSError` (`EBUSY`: all slots held); `ValueError` for its contents.
pub fn shared(py: Python<'_>, err: SharedError) -> PyErr {
    match err {
        SharedError::Io { path, source } => file(py, &source, &path),
        SharedError::Decode { path, source } => {
            let message = format!("{}: not a valid live filter file: {source}", path.display());
            PyValueError::new_err(message)
        }
        SharedError::NotAFile { path, what } => file(py, &not_a_file(what), &path),
        SharedError::Busy { ref path, .. } => file(
            py,
            &io::Error::new(ErrorKind::ResourceBusy, err.to_string()),
            path,
        ),
        SharedError::Build(err) => build(err),
        other => PyOSError::new_err(other.to_string()),
    }
}

/// The error for a path to `what`, not a regular file.
pub fn not_a_file(what: &str) -> io::Error {
    let kind = match what {
        "a directory" => ErrorKind::IsADirectory,
        _ => ErrorKind::InvalidInput,
    };
    io::Error::new(kind, format!("not a regular file but {what}"))
}

/// `RuntimeError` for a live filter used in a child made by `fork`: it holds the
/// registration of `opener`, its parent, so a kill of either would look like the other's.
pub fn inherited(path: &Path, opener: u32) -> PyErr {
    PyRuntimeError::new_err(format!(
        "{}: this filter was opened for writing by process {opener}, and this process was made \
         from it by fork: open the file again here (ccfilter.open_shared(path)) to use it",
        path.display()
    ))
}
