//! The `ccfilter` Python package's native module: the crate's three filters as Python classes,
//! keys hashed exactly as Rust and `ccf` hash them, bulk calls on numpy arrays that release the
//! interpreter, and the crate's byte format for files, pickling and merging across processes.

mod args;
mod bulk;
mod errors;
mod files;
mod filter;
mod keys;
mod process;
mod reader;

use core::hash::BuildHasher;

use concurrent_cuckoo_filter::{Access, DefaultHashBuilder};
use pyo3::prelude::*;

use crate::args::Arg;
use crate::files::FileKind;
use crate::filter::{copy_of, open_shared, ExpiringFilter, FixedFilter, GrowableFilter};

/// The 64-bit hash the filters compute for `key` with `seed`, as `ccf build --hex64` takes it.
#[pyfunction]
#[pyo3(signature = (key, seed = None))]
fn hash64(key: &Bound<'_, PyAny>, seed: Arg) -> PyResult<u64> {
    let hasher = args::hasher(seed)?;
    keys::with_key(key, |key| hasher.hash_one(key))
}

/// In a child made by `fork` (`ccfilter/__init__.py`'s hook): takes the child's process id, by
/// which filters the parent opened know they are inherited, and returns whether the parent
/// had opened a live file for writing, whose registration the child then holds too.
#[pyfunction]
fn _forked() -> bool {
    process::forked();
    process::opened_for_writing()
}

/// The filter in the file at `path`, of whichever kind it holds; a live file is mapped
/// read-only unless `mmap=False` copies it into memory (docs/python.md).
#[pyfunction]
#[pyo3(signature = (path, *, mmap = None))]
fn load(py: Python<'_>, path: &Bound<'_, PyAny>, mmap: Arg) -> PyResult<AnyFilter> {
    let path = args::path("path", path)?;
    let mmap = args::flag("mmap", mmap)?.unwrap_or(true);
    let (mut kind, mut file) = files::open_kind(py, &path)?;
    let mut mapped = None;
    if kind == FileKind::Unwritten {
        // A live file whose creator has not yet written it, which `open_shared` waits for; or
        // else no filter, said by the snapshot decoder as the file is then.
        match open_shared(py, &path, Access::ReadOnly) {
            Ok(live) => (kind, mapped) = (FileKind::Live, Some(live)),
            Err(_) => (kind, file) = files::open_kind(py, &path)?,
        }
    }
    Ok(match kind {
        FileKind::Fixed | FileKind::Unwritten => {
            AnyFilter::Fixed(files::read(py, &path, file)?.into())
        }
        FileKind::Growable => AnyFilter::Growable(files::read(py, &path, file)?.into()),
        FileKind::Expiring => AnyFilter::Expiring(files::read(py, &path, file)?.into()),
        // Mapped read-only, or a copy of that mapping: a filter of its own, writable.
        FileKind::Live => {
            let mapped = match mapped {
                Some(mapped) => mapped,
                None => open_shared(py, &path, Access::ReadOnly)?,
            };
            AnyFilter::Fixed(if mmap { mapped } else { copy_of(py, &mapped)? }.into())
        }
    })
}

/// A filter of whichever class, handed straight to Python (so its size does not matter).
#[derive(IntoPyObject)]
#[allow(clippy::large_enum_variant)]
enum AnyFilter {
    Fixed(FixedFilter),
    Growable(GrowableFilter),
    Expiring(ExpiringFilter),
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    process::forked();
    module.add_class::<FixedFilter>()?;
    module.add_class::<GrowableFilter>()?;
    module.add_class::<ExpiringFilter>()?;
    module.add("FilterFullError", py.get_type::<errors::FilterFullError>())?;
    module.add("DEFAULT_SEED", DefaultHashBuilder::new().seed())?;
    module.add_function(wrap_pyfunction!(hash64, module)?)?;
    module.add_function(wrap_pyfunction!(load, module)?)?;
    module.add_function(wrap_pyfunction!(_forked, module)?)?;
    Ok(())
}
