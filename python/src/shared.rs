//! Filters in live files (docs/shared.md): opening one, what a pickle of one carries, and the
//! refusal of writes to one opened read-only. Only a `ConcurrentCuckooFilter` lives in a file;
//! the other classes answer as in-memory filters.

use std::path::Path;

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter, CuckooFilter};
use concurrent_cuckoo_filter::{Expiring, Fixed, Growable};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors;

/// What a class's filter does about live files.
pub trait Live {
    /// `(path, readonly)` for `open_shared` to reopen the same live filter; `None` in memory.
    fn reopen_args<'py>(&self, _py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        Ok(None)
    }

    /// `TypeError` if the filter was opened read-only, before a write is tried.
    fn writable(&self) -> PyResult<()> {
        Ok(())
    }
}

impl Live for CuckooFilter<Fixed> {
    fn reopen_args<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.path()
            .map(|path| (path, self.is_read_only()).into_pyobject(py))
            .transpose()
    }

    fn writable(&self) -> PyResult<()> {
        match self.path() {
            Some(path) if self.is_read_only() => Err(PyTypeError::new_err(format!(
                "the filter in {} was opened readonly: it cannot be changed",
                path.display()
            ))),
            _ => Ok(()),
        }
    }
}

impl Live for CuckooFilter<Growable> {}
impl Live for CuckooFilter<Expiring> {}

/// The live file at `path`, mapped (`readonly`: privately, for lookups only).
pub fn open(py: Python<'_>, path: &Path, readonly: bool) -> PyResult<ConcurrentCuckooFilter> {
    let access = if readonly {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    py.detach(|| ConcurrentCuckooFilter::open_shared(path, access))
        .map_err(|err| errors::shared(py, err))
}
