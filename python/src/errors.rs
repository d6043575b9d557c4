//! The crate's errors as Python exceptions.

use concurrent_cuckoo_filter::{BuildError, DecodeError, MergeError};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;

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

/// `ValueError` for filters that cannot merge, [`FilterFullError`] for a target that filled up.
pub fn merge(py: Python<'_>, err: MergeError) -> PyErr {
    match err {
        MergeError::Full { merged } => full(py, err.to_string(), merged),
        other => PyValueError::new_err(other.to_string()),
    }
}
