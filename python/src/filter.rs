//! The Python classes, the crate's `CuckooFilter<K>` of each kind `K`: their shared methods
//! written once in `filter_class!` (a `#[pyclass]` cannot be generic).

use std::any::Any;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use concurrent_cuckoo_filter::GrowableCuckooFilterBuilder as GrowableBuilder;
use concurrent_cuckoo_filter::{
    Access, AdvanceError, ConcurrentCuckooFilter, CuckooFilter, Expiring, ExpiringBuilder,
    SharedError,
};
use concurrent_cuckoo_filter::{FilterStats, Fixed, Growable, GrowableCuckooFilter, Kind, Window};
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};

use crate::args::{self, Arg, Set};
use crate::keys::with_key;
use crate::{bulk, errors, files, process};

/// A new dict of `stats`' `fields` by their names (if given), then of `key => value` pairs.
macro_rules! py_dict {
    ($py:expr, $stats:ident.{$($field:ident),*} $(, $key:literal => $value:expr)* $(,)?) => {{
        let dict = PyDict::new($py);
        $(dict.set_item(stringify!($field), $stats.$field)?;)*
        $(dict.set_item($key, $value)?;)*
        PyResult::Ok(dict)
    }};
    ($py:expr, $($key:literal => $value:expr),* $(,)?) => { py_dict!($py, none.{} $(, $key => $value)*) };
}

/// `filter_class!([merge] #[pyclass(..)] Class(Kind), { own methods })`: `Class` holding a
/// `CuckooFilter<Kind>` in `inner`, its own and the shared methods (the merge ones if `merge`).
macro_rules! filter_class {
    (merge $(#[$attr:meta])* $class:ident($kind:ty), { $($own:tt)* }) => {
        filter_class!($(#[$attr])* $class($kind), {
            /// Whether `merge` can take `other`: the same shape (or growth plan) and seed.
            fn is_compatible(&self, other: &Self) -> bool {
                self.inner.is_compatible(&other.inner)
            }

            /// Adds `other`'s fingerprints (`unique=True`: those not present); how many.
            #[pyo3(signature = (other, *, unique = false))]
            fn merge(&self, py: Python<'_>, other: &Self, unique: bool) -> PyResult<usize> {
                self.writable()?;
                let (ours, theirs) = (&self.inner, other.locking()?);
                py.detach(|| if unique { ours.merge_unique(theirs) } else { ours.merge(theirs) })
                    .map_err(|err| errors::merge(py, err))
            }

            /// `self |= other`: the set union, `merge(other, unique=True)`.
            fn __ior__(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                self.merge(py, other, true).map(drop)
            }

            /// `self | other`: a copy of this filter with `other` merged in as `|=` does.
            fn __or__(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                let union = self.copy(py)?;
                union.merge(py, other, true)?;
                Ok(union)
            }

            $($own)*
        });
    };
    ($(#[$attr:meta])* $class:ident($kind:ty), { $($own:tt)* }) => {
        $(#[$attr])*
        #[derive(Debug)]
        pub struct $class {
            inner: CuckooFilter<$kind>,
            /// The process that made or opened it, whose registration a live file's locks use.
            opener: u32,
        }

        impl From<CuckooFilter<$kind>> for $class {
            fn from(inner: CuckooFilter<$kind>) -> Self {
                Self { inner, opener: process::this_process() }
            }
        }

        impl $class {
            /// The filter, for a call that may lock its stripes (a lookup a writer got in the way
            /// of locks them too): `RuntimeError` in a child made by `fork` for a live file the
            /// parent opened for writing, whose locks would be taken as the parent's.
            fn locking(&self) -> PyResult<&CuckooFilter<$kind>> {
                match live(&self.inner) {
                    Some((path, false)) if process::this_process() != self.opener => {
                        Err(errors::inherited(path, self.opener))
                    }
                    _ => Ok(&self.inner),
                }
            }

            /// [`Self::locking`], and `TypeError` for a filter opened read-only.
            fn writable(&self) -> PyResult<()> {
                writable(self.locking()?)
            }
        }

        #[pymethods]
        impl $class {
            /// Adds one copy of `key`; `FilterFullError` if it finds no room (nothing changed).
            fn add(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
                self.writable()?;
                with_key(key, |key| self.inner.insert(&key))?
                    .map_err(|err| errors::full(py, err, 0))
            }

            /// Adds `key` unless it (or a key of its fingerprint) is in; whether it was added.
            fn add_unique(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                self.writable()?;
                with_key(key, |key| self.inner.insert_unique(&key))?
                    .map_err(|err| errors::full(py, err, 0))
            }

            /// Removes one copy of `key` if present; whether it was. Remove only keys added.
            fn discard(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                self.writable()?;
                with_key(key, |key| self.inner.remove(&key))
            }

            /// Removes one copy of `key`; `KeyError` if it is not present.
            fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                let found = self.discard(key)?;
                found.then_some(()).ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
            }

            /// Whether `key` may be in the filter: always for a key added, by chance for others.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let filter = self.locking()?;
                with_key(key, |key| filter.contains(&key))
            }

            /// Copies of `key` (or of keys with its fingerprint) stored.
            fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
                let filter = self.locking()?;
                with_key(key, |key| filter.count(&key))
            }

            fn __len__(&self) -> usize { self.inner.len() }
            fn __sizeof__(&self) -> usize { self.memory_usage() + core::mem::size_of::<Self>() }

            /// The false positive rate when full (a growable filter's levels so far, each full).
            #[getter]
            fn expected_false_positive_rate(&self) -> f64 {
                self.inner.expected_false_positive_rate()
            }
            /// Keys the filter is sized for (for a growable filter: its levels so far).
            #[getter]
            fn capacity(&self) -> usize { self.inner.capacity() }
            /// Bytes of memory the filter takes.
            #[getter]
            fn memory_usage(&self) -> usize { self.inner.memory_usage() }
            /// The seed keys are hashed with.
            #[getter]
            fn seed(&self) -> u64 { self.inner.hasher().seed() }

            /// Adds every key of `keys` in order, on `threads`; how many (else `FilterFullError`).
            #[pyo3(signature = (keys, *, threads = None))]
            fn add_many(&self, keys: &Bound<'_, PyAny>, threads: Arg) -> PyResult<usize> {
                self.writable()?;
                bulk::Call::new(keys, threads, &self.inner)?.add_many(0)
            }

            /// Whether each key may be in the filter, as a numpy `bool` array, on `threads`.
            #[pyo3(signature = (keys, *, threads = None))]
            fn contains_many<'py>(&self, keys: &Bound<'py, PyAny>, threads: Arg)
                                  -> PyResult<Bound<'py, PyArray1<bool>>> {
                bulk::Call::new(keys, threads, self.locking()?)?.contains_many()
            }

            /// Removes one copy of each key present, on `threads`; how many were removed.
            #[pyo3(signature = (keys, *, threads = None))]
            fn discard_many(&self, keys: &Bound<'_, PyAny>, threads: Arg) -> PyResult<usize> {
                self.writable()?;
                bulk::Call::new(keys, threads, &self.inner)?.discard_many()
            }

            /// Adds every key of each iterable as `add_many` does (`inserted` counts them all).
            #[pyo3(signature = (*iterables))]
            fn update(&self, iterables: &Bound<'_, PyTuple>) -> PyResult<()> {
                self.writable()?;
                let mut inserted = 0;
                for keys in iterables.iter() {
                    inserted += bulk::Call::new(&keys, None, &self.inner)?.add_many(inserted)?;
                }
                Ok(())
            }

            /// Removes every key, keeping the filter's memory and shape.
            fn clear(&self, py: Python<'_>) -> PyResult<()> {
                self.writable()?;
                py.detach(|| self.inner.clear());
                Ok(())
            }

            /// The filter in the crate's portable format (`FORMAT.md`), as Rust and `ccf` read it.
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                bytes_of(py, self.locking()?)
            }

            /// The filter `to_bytes` (or Rust, or `ccf`) wrote; `ValueError` for other bytes.
            #[classmethod]
            fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &Bound<'_, PyAny>)
                          -> PyResult<Self> {
                let bytes = args::bytes_like(data)?;
                let bytes = bytes.as_bytes();
                let inner = py.detach(|| CuckooFilter::from_bytes(bytes));
                inner.map(Self::from).map_err(|err| errors::decode(err, None))
            }

            /// Writes the filter to `path`, through a temporary file renamed over it when complete.
            fn save(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<()> {
                let path = args::path("path", path)?;
                // `MemoryError` without room for the copy of the bytes `write_to` takes.
                let filter = self.locking()?;
                let saved = py.detach(|| files::save(&path, |out| filter.write_to(out)));
                saved.map_err(|err| match err.kind() {
                    ErrorKind::OutOfMemory => encode_error(err),
                    _ => errors::file(py, &err, &path),
                })
            }

            /// The filter in the snapshot at `path`: `OSError` if unreadable, `ValueError` if invalid
            /// (a live file: `open_shared` or `ccfilter.load` opens it).
            #[classmethod]
            fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, path: &Bound<'_, PyAny>)
                    -> PyResult<Self> {
                let path = args::path("path", path)?;
                files::read(py, &path, files::open_snapshot(py, &path)?).map(Self::from)
            }

            /// A copy of the filter, independent of it: a state it had, even while others write.
            fn copy(&self, py: Python<'_>) -> PyResult<Self> {
                copy_of(py, self.locking()?).map(Self::from)
            }

            fn __copy__(&self, py: Python<'_>) -> PyResult<Self> { self.copy(py) }

            fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
                self.copy(py)
            }

            fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                self.__reduce_ex__(py, 4)
            }

            /// Pickles as `from_bytes(to_bytes())`, a live filter as `open_shared(path, readonly)`.
            fn __reduce_ex__<'py>(&self, py: Python<'py>, protocol: i64)
                                  -> PyResult<Bound<'py, PyTuple>> {
                // A class method pickles as `getattr(class, name)`, the class by its import path.
                let class = py.get_type::<Self>();
                if let Some(live) = live(&self.inner) {
                    return (class.getattr("open_shared")?, live).into_pyobject(py);
                }
                let mut bytes = bytes_of(py, &self.inner)?.into_any();
                if protocol >= 5 {
                    bytes = py.import("pickle")?.getattr("PickleBuffer")?.call1((bytes,))?;
                }
                (class.getattr("from_bytes")?, (bytes,)).into_pyobject(py)
            }

            /// Whether both are of this class with the same bytes (`to_bytes`). Not hashable.
            fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
                let Ok(other) = other.cast::<Self>() else { return Ok(false) };
                let other = other.get();
                if core::ptr::eq(self, other) {
                    return Ok(true);
                }
                let (ours, theirs) = (bytes_of(py, self.locking()?)?, bytes_of(py, other.locking()?)?);
                let (ours, theirs) = (ours.as_bytes(), theirs.as_bytes());
                Ok(py.detach(|| ours == theirs))
            }

            $($own)*
        }
    };
}

filter_class!(merge
    /// A cuckoo filter of `capacity` keys, shared by any number of threads (docs/python.md).
    /// `fingerprint_bits`, `bucket_size` and `semi_sorted` win over `false_positive_rate`.
    #[pyclass(frozen, module = "ccfilter", name = "ConcurrentCuckooFilter")]
    FixedFilter(Fixed), {
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = None, *, fingerprint_bits = None,
                        bucket_size = None, semi_sorted = None, seed = None))]
    fn new(capacity: &Bound<'_, PyAny>, false_positive_rate: Arg, fingerprint_bits: Arg,
           bucket_size: Arg, semi_sorted: Arg, seed: Arg) -> PyResult<Self> {
        let builder = args::fixed(capacity, false_positive_rate, fingerprint_bits, bucket_size,
                                  semi_sorted, seed)?;
        builder.build().map(Self::from).map_err(errors::build)
    }

    /// A filter built in a new live file at `path`, for `open_shared`; `OSError` if refused.
    #[classmethod]
    #[pyo3(signature = (path, capacity, false_positive_rate = None, *, fingerprint_bits = None,
                        bucket_size = None, semi_sorted = None, seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_shared(_cls: &Bound<'_, PyType>, py: Python<'_>, path: &Bound<'_, PyAny>,
                     capacity: &Bound<'_, PyAny>, false_positive_rate: Arg, fingerprint_bits: Arg,
                     bucket_size: Arg, semi_sorted: Arg, seed: Arg) -> PyResult<Self> {
        let path = args::path("path", path)?;
        let builder = args::fixed(capacity, false_positive_rate, fingerprint_bits, bucket_size,
                                  semi_sorted, seed)?;
        let inner = py.detach(|| builder.create_shared(&path));
        process::opened_live_file(inner.is_ok());
        inner.map(Self::from).map_err(|err| errors::shared(py, err))
    }

    /// The filter in the live file at `path`, mapped: the same as every other process's.
    #[classmethod]
    #[pyo3(signature = (path, readonly = None))]
    fn open_shared(_cls: &Bound<'_, PyType>, py: Python<'_>, path: &Bound<'_, PyAny>,
                   readonly: Arg) -> PyResult<Self> {
        let path = args::path("path", path)?;
        let access = match args::flag("readonly", readonly)? {
            Some(true) => Access::ReadOnly,
            _ => Access::ReadWrite,
        };
        open_shared(py, &path, access).map(Self::from)
    }

    /// Writes the changes so far to the file and waits until they are on disk (`msync`).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let flushed = py.detach(|| self.inner.flush());
        match self.inner.path() {
            Some(path) => flushed.map_err(|err| errors::file(py, &err, path)),
            None => Ok(()),
        }
    }

    /// Checks the whole table, recovering what a killed writer left; `ValueError` if damaged.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let filter = self.locking()?;
        py.detach(|| filter.verify()).map_err(|err| errors::decode(err, None))
    }

    /// The live file the filter is mapped from, `None` in memory.
    #[getter]
    fn path(&self) -> Option<PathBuf> { self.inner.path().map(Path::to_path_buf) }
    /// Whether the filter lives in a file that processes share.
    #[getter]
    fn is_shared(&self) -> bool { self.inner.is_shared() }
    /// Whether it was opened `readonly`: every write raises `TypeError`.
    #[getter]
    fn readonly(&self) -> bool { self.inner.is_read_only() }
    /// The share of slots in use, from 0 to 1.
    #[getter]
    fn load_factor(&self) -> f64 { self.inner.load_factor() }
    /// Bits per fingerprint.
    #[getter]
    fn fingerprint_bits(&self) -> u32 { self.inner.fingerprint_bits() }
    /// Slots per bucket.
    #[getter]
    fn bucket_size(&self) -> usize { self.inner.bucket_size() }
    /// Whether buckets are semi-sorted (one bit per key less).
    #[getter]
    fn semi_sorted(&self) -> bool { self.inner.is_semi_sorted() }

    /// Shape, fill and accuracy as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.inner.stats())
    }

    fn __repr__(&self) -> String {
        let f = &self.inner;
        let semi_sorted = if f.is_semi_sorted() { "True" } else { "False" };
        format!("ConcurrentCuckooFilter(len={}, capacity={}, fingerprint_bits={}, bucket_size={}, \
                 semi_sorted={semi_sorted}, seed={:#x})",
                f.len(), f.capacity(), f.fingerprint_bits(), f.bucket_size(), f.hasher().seed())
    }
});

filter_class!(merge
    /// A cuckoo filter that grows under `false_positive_rate` from `capacity` keys, each level
    /// splitting `2^split_depth` times, up to `max_capacity` (docs/python.md).
    #[pyclass(frozen, module = "ccfilter", name = "GrowableCuckooFilter")]
    GrowableFilter(Growable), {
    #[new]
    #[pyo3(signature = (capacity = None, false_positive_rate = None, *, split_depth = None,
                        max_capacity = None, seed = None))]
    fn new(capacity: Arg, false_positive_rate: Arg, split_depth: Arg, max_capacity: Arg,
           seed: Arg) -> PyResult<Self> {
        let capacity = capacity.map(|c| args::count("capacity", c)).transpose()?;
        let max_capacity = max_capacity.map(|c| args::count("max_capacity", c)).transpose()?;
        let rate = args::rate("false_positive_rate", false_positive_rate)?;
        let builder = GrowableCuckooFilter::builder()
            .capacity(capacity.unwrap_or(1_000_000))
            .hasher(args::hasher(seed)?)
            .set(rate, GrowableBuilder::false_positive_rate)
            .set(args::setting("split_depth", split_depth)?, GrowableBuilder::split_depth)
            .set(max_capacity, GrowableBuilder::max_capacity);
        builder.build().map(Self::from).map_err(errors::build)
    }

    /// Keys stored over the capacity of the levels so far.
    #[getter]
    fn load_factor(&self) -> f64 { self.inner.len() as f64 / self.inner.capacity() as f64 }
    /// The false positive rate the filter stays under however far it grows.
    #[getter]
    fn false_positive_rate(&self) -> f64 { self.inner.false_positive_rate() }
    /// Levels so far; a lookup probes each.
    #[getter]
    fn level_count(&self) -> usize { self.inner.level_count() }
    /// Bits per fingerprint of each level, oldest first.
    #[getter]
    fn fingerprint_bits(&self) -> Vec<u32> { self.inner.level_fingerprint_bits() }

    /// Fill and accuracy as a dict, `levels` a list of `ConcurrentCuckooFilter.stats()` dicts.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let levels: PyResult<Vec<_>> = f.level_stats().iter().map(|l| stats_dict(py, l)).collect();
        py_dict!(py,
            "len" => f.len(), "capacity" => f.capacity(), "memory_bytes" => f.memory_usage(),
            "false_positive_rate" => f.false_positive_rate(),
            "expected_false_positive_rate" => f.expected_false_positive_rate(),
            "seed" => f.hasher().seed(), "levels" => levels?)
    }

    fn __repr__(&self) -> String {
        let f = &self.inner;
        format!("GrowableCuckooFilter(len={}, capacity={}, levels={}, false_positive_rate={}, \
                 seed={:#x})",
                f.len(), f.capacity(), f.level_count(), f.false_positive_rate(), f.hasher().seed())
    }
});

filter_class!(
    /// A cuckoo filter that remembers keys for the last `items` adds, or the last `seconds`
    /// holding `capacity` keys (docs/python.md).
    #[pyclass(frozen, module = "ccfilter", name = "ExpiringCuckooFilter")]
    ExpiringFilter(Expiring), {
    #[new]
    #[pyo3(signature = (*, items = None, seconds = None, capacity = None,
                        false_positive_rate = None, generations = None, overflow = None,
                        clock = None, seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(items: Arg, seconds: Arg, capacity: Arg, false_positive_rate: Arg,
           generations: Arg, overflow: Arg, clock: Arg, seed: Arg) -> PyResult<Self> {
        let rate = args::rate("false_positive_rate", false_positive_rate)?;
        let builder = args::window(items, seconds, capacity, overflow, clock)?
            .hasher(args::hasher(seed)?)
            .set(rate, ExpiringBuilder::false_positive_rate)
            .set(args::setting("generations", generations)?, ExpiringBuilder::generations);
        builder.build().map(Self::from).map_err(errors::build)
    }

    /// Moves a `clock="manual"` filter's clock to `seconds` since its start (never back).
    fn advance_to(&self, py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let time = args::duration("seconds", seconds, true)?;
        // The clock counts nanoseconds in 64 bits: a later time would stop it at its end, where
        // no key is ever forgotten.
        if time.as_nanos() > u128::from(u64::MAX) {
            return Err(PyValueError::new_err(format!(
                "seconds must be at most 2^64 - 1 nanoseconds (about 584 years), the manual \
                 clock's range, got {}",
                time.as_secs_f64()
            )));
        }
        let advanced = py.detach(|| self.inner.advance_to(time));
        advanced.map_err(|err| match err {
            // Said with the argument that picks the clock.
            AdvanceError::NotManual => {
                PyValueError::new_err("advance_to needs a time window with clock=\"manual\"")
            }
            other => PyValueError::new_err(other.to_string()),
        })
    }

    /// The window as the constructor takes it: `{"items": N}` or `{"seconds": S}`.
    #[getter]
    fn window<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match self.inner.window() {
            Window::Items(items) => py_dict!(py, "items" => items),
            Window::Time(time) => py_dict!(py, "seconds" => time.as_secs_f64()),
            _ => Ok(PyDict::new(py)),
        }
    }

    /// Generations the window is split into.
    #[getter]
    fn generations(&self) -> u32 { self.inner.generations() }

    /// Shape, clock and fill as a dict (`len`: keys not yet freed, expired ones included).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (f, s) = (&self.inner, self.inner.stats());
        py_dict!(py, s.{len, generations, generation, inserts, capacity, fingerprint_bits,
                        tag_bits, bits_per_window_item, early_expiries},
            "window" => self.window(py)?, "buckets" => s.bucket_count,
            "memory_bytes" => s.memory_usage,
            "expected_false_positive_rate" => f.expected_false_positive_rate(),
            "seed" => f.hasher().seed())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (f, window) = (&self.inner, self.window(py)?.repr()?);
        Ok(format!("ExpiringCuckooFilter(window={window}, generations={}, len={}, capacity={}, \
                    seed={:#x})", f.generations(), f.len(), f.capacity(), f.hasher().seed()))
    }
});

/// A [`FilterStats`] as a dict of the same field names.
fn stats_dict<'py>(py: Python<'py>, s: &FilterStats) -> PyResult<Bound<'py, PyDict>> {
    py_dict!(py, s.{len, capacity, buckets, bucket_size, fingerprint_bits, semi_sorted, stripes,
                    load_factor, memory_bytes, bits_per_item, expected_false_positive_rate,
                    false_positive_rate_at_load, hasher_id, format_version, serialized_len},
        "seed" => s.hasher_seed)
}

/// The live file `filter` is mapped from and whether it was opened read-only.
fn live<K: Kind + 'static>(filter: &CuckooFilter<K>) -> Option<(&Path, bool)> {
    let fixed = (filter as &dyn Any).downcast_ref::<ConcurrentCuckooFilter>()?;
    fixed.path().map(|path| (path, fixed.is_read_only()))
}

/// `TypeError` for a write to a filter opened read-only, before the write is tried.
fn writable<K: Kind + 'static>(filter: &CuckooFilter<K>) -> PyResult<()> {
    match live(filter) {
        Some((path, true)) => Err(PyTypeError::new_err(format!(
            "the filter in {} was opened readonly: it cannot be changed",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// The live file at `path`, mapped (`Access::ReadOnly`: for lookups only, never written).
pub fn open_shared(
    py: Python<'_>,
    path: &Path,
    access: Access,
) -> PyResult<ConcurrentCuckooFilter> {
    let filter = py.detach(|| ConcurrentCuckooFilter::open_shared(path, access));
    process::opened_live_file(filter.is_ok() && access == Access::ReadWrite);
    filter.map_err(|err| match err {
        // The crate's message names its `Access::ReadOnly`; Python's, the argument.
        SharedError::Io { path, source }
            if source.kind() == ErrorKind::PermissionDenied && access == Access::ReadWrite =>
        {
            let why = "no permission to open it for writing (readonly=True needs only reading)";
            errors::file(py, &io::Error::new(source.kind(), why), &path)
        }
        err => errors::shared(py, err),
    })
}

/// An independent copy of `filter`: `MemoryError`, not the crate's panic, without the memory.
pub fn copy_of<K: Kind + Send + Sync>(
    py: Python<'_>,
    filter: &CuckooFilter<K>,
) -> PyResult<CuckooFilter<K>> {
    let copy = std::panic::AssertUnwindSafe(|| filter.clone());
    py.detach(|| std::panic::catch_unwind(copy))
        .map_err(|_| PyMemoryError::new_err("no memory for a copy of the filter"))
}

/// `filter`'s bytes, written straight into one bytes object of their exact length; a growable
/// filter that grew between measuring and writing no longer fits, and is written again.
fn bytes_of<'py, K: Kind + Sync>(
    py: Python<'py>,
    filter: &CuckooFilter<K>,
) -> PyResult<Bound<'py, PyBytes>> {
    loop {
        let len = usize::try_from(filter.serialized_len())
            .map_err(|_| encode_error(ErrorKind::OutOfMemory.into()))?;
        let mut written = Ok(0);
        let bytes = PyBytes::new_with(py, len, |buffer| {
            written = py.detach(|| filter.write_to_slice(buffer));
            Ok(())
        })?;
        match written {
            Ok(n) if n == len => return Ok(bytes),
            Ok(n) => {
                return Err(PyRuntimeError::new_err(format!(
                    "{n} of {len} bytes written"
                )))
            }
            Err(err) if err.kind() == ErrorKind::WriteZero => {}
            Err(err) => return Err(encode_error(err)),
        }
    }
}

/// `MemoryError` for no memory (a read-only opener's bytes also need a copy of its table).
fn encode_error(err: io::Error) -> PyErr {
    match err.kind() {
        ErrorKind::OutOfMemory => PyMemoryError::new_err("no memory for the filter's bytes"),
        _ => PyRuntimeError::new_err(err.to_string()),
    }
}
