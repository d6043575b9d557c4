//! The crate's errors as Python exceptions.

use std::io;
use std::path::Path;

use concurrent_cuckoo_filter::{BuildError, DecodeError, MergeError, SharedError};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::files::LoadError;

pyo3::create_exception!(
    ccfilter,
    FilterFullError,
    PyValueError,
    "A key found no room in the filter. Nothing was dropped to make room. `inserted` says how \
     many keys of the call went in before it (for `add_many`, the keys before the one that \
     failed; for `merge`, fingerprints of the other filter); the keys after it were not tried."
);

/// A [`FilterFullError`] with its `inserted` count.
pub fn full(py: Python<'_>, message: String, inserted: usize) -> PyErr {
    let err = FilterFullError::new_err(message);
    if let Err(set) = err.value(py).setattr("inserted", inserted) {
        return set;
    }
    err
}

/// `ValueError` with the builder's message, which names the parameter; `MemoryError` for a table
/// that could not be allocated.
pub fn build(err: BuildError) -> PyErr {
    match err {
        BuildError::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `ValueError` with the decoder's message.
pub fn decode(err: DecodeError) -> PyErr {
    PyValueError::new_err(format!("not a valid filter encoding: {err}"))
}

/// `OSError` for a file at `path`, with `errno`, `strerror` and `filename` as `open()` gives
/// them, so that Python picks the subclass (`FileNotFoundError`, ...) by the error number. An
/// error with no number (one of ours, such as a file that is not a regular one) is `EINVAL`.
pub fn file(py: Python<'_>, err: &io::Error, path: &Path) -> PyErr {
    let errno = err.raw_os_error().or_else(|| {
        py.import("errno")
            .and_then(|module| module.getattr("EINVAL")?.extract())
            .ok()
    });
    let message = match err.raw_os_error() {
        // The system's text alone, as Python's own errors give it.
        Some(code) => py
            .import("os")
            .and_then(|os| os.call_method1("strerror", (code,))?.extract())
            .unwrap_or_else(|_| err.to_string()),
        None => err.to_string(),
    };
    PyOSError::new_err((errno, message, path.as_os_str().to_owned()))
}

/// The error of a load from the file at `path`: [`file`] for reading, `ValueError` naming the
/// file for contents that are not a filter of that kind.
pub fn load(py: Python<'_>, err: LoadError, path: &Path) -> PyErr {
    match err {
        LoadError::Io(err) => file(py, &err, path),
        LoadError::Decode(err) => PyValueError::new_err(format!(
            "{}: not a valid filter encoding: {err}",
            path.display()
        )),
    }
}

/// `ValueError` for filters that cannot merge, [`FilterFullError`] for a target that filled up.
pub fn merge(py: Python<'_>, err: MergeError) -> PyErr {
    match err {
        MergeError::Full { merged } => full(py, err.to_string(), merged),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// The error of creating or opening a live file: `OSError` naming the file (by its error
/// number, so `FileNotFoundError`, `PermissionError`, `FileExistsError`, `IsADirectoryError`
/// as `open()` gives them; `EINVAL` for a FIFO, socket or device, `EBUSY` for a file whose
/// slots are all held), `ValueError` for contents that are no live filter.
pub fn shared(py: Python<'_>, err: SharedError) -> PyErr {
    let numbered = |code: i32, message: String, path: &Path| {
        PyOSError::new_err((code, message, path.as_os_str().to_owned()))
    };
    match err {
        SharedError::Io { path, source } => match (source.raw_os_error(), source.kind()) {
            (Some(_), _) => file(py, &source, &path),
            (None, io::ErrorKind::PermissionDenied) => {
                numbered(libc::EACCES, source.to_string(), &path)
            }
            (None, io::ErrorKind::NotFound) => numbered(libc::ENOENT, source.to_string(), &path),
            (None, _) => file(py, &source, &path),
        },
        SharedError::Decode { path, source } => PyValueError::new_err(format!(
            "{}: not a valid live filter file: {source}",
            path.display()
        )),
        SharedError::NotAFile { path, what } => {
            let code = if what == "a directory" {
                libc::EISDIR
            } else {
                libc::EINVAL
            };
            numbered(code, format!("not a regular file but {what}"), &path)
        }
        SharedError::Busy { ref path, .. } => numbered(libc::EBUSY, err.to_string(), path),
        SharedError::Build(err) => build(err),
        other => PyOSError::new_err(other.to_string()),
    }
}
