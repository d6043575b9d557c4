//! The methods both Python classes share, written once: `filter_class!` expands to a class's
//! one `#[pymethods]` block, these methods followed by the class's own.

/// `filter_class!(Type, { own methods })`: `Type` is a frozen `#[pyclass]` with a field `inner`
/// holding a [`Backend`](crate::backend::Backend).
macro_rules! filter_class {
    ($class:ident, { $($own:tt)* }) => {
        #[pyo3::pymethods]
        impl $class {
            /// Adds one copy of `key`. Raises `FilterFullError` if it finds no room (the filter
            /// is unchanged).
            fn add(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
                with_key(key, |key| Backend::insert(&self.inner, key))?.map_err(|err| {
                    crate::errors::full(py, err.to_string(), 0)
                })
            }

            /// Adds `key` unless it (or a key with the same fingerprint) is already in; whether it
            /// was added. Raises `FilterFullError` if it finds no room.
            fn add_unique(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                with_key(key, |key| Backend::insert_unique(&self.inner, key))?.map_err(|err| {
                    crate::errors::full(py, err.to_string(), 0)
                })
            }

            /// Removes one copy of `key` if present; whether it was. Remove only keys that were
            /// added: removing a false positive removes another key's fingerprint.
            fn discard(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                with_key(key, |key| Backend::remove(&self.inner, key))
            }

            /// Removes one copy of `key`; raises `KeyError` if it is not present.
            fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                if with_key(key, |key| Backend::remove(&self.inner, key))? {
                    Ok(())
                } else {
                    Err(pyo3::exceptions::PyKeyError::new_err(key.clone().unbind()))
                }
            }

            /// Whether `key` may be in the filter: always true for a key added and not removed,
            /// true by chance (a false positive) for others.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                with_key(key, |key| Backend::contains(&self.inner, key))
            }

            /// Copies of `key` (or of keys with its fingerprint) stored.
            fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
                with_key(key, |key| Backend::count(&self.inner, key))
            }

            /// Keys stored.
            fn __len__(&self) -> usize {
                self.inner.len()
            }

            /// Keys the filter is sized for (for a growable filter: its levels so far).
            #[getter]
            fn capacity(&self) -> usize {
                self.inner.capacity()
            }

            /// Bytes of memory the filter takes.
            #[getter]
            fn memory_usage(&self) -> usize {
                self.inner.memory_usage()
            }

            fn __sizeof__(&self) -> usize {
                self.inner.memory_usage() + core::mem::size_of::<Self>()
            }

            /// The seed keys are hashed with.
            #[getter]
            fn seed(&self) -> u64 {
                self.inner.seed()
            }

            /// Adds every key of `keys` (a numpy integer array, or any iterable of keys) in order;
            /// returns how many. At the first key with no room, raises `FilterFullError` whose
            /// `inserted` says how many keys of this call went in before it. `threads` splits
            /// each segment of keys across that many threads (then what went in before a full
            /// filter is a prefix of each thread's part, not of the call).
            #[pyo3(signature = (keys, *, threads = None))]
            fn add_many(
                &self,
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
                threads: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<usize> {
                crate::bulk::add_many(py, &self.inner, keys, crate::args::threads(threads)?, 0)
            }

            /// Whether each key may be in the filter, as a numpy `bool` array. `threads` splits
            /// each segment of keys across that many threads.
            #[pyo3(signature = (keys, *, threads = None))]
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
                threads: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Bound<'py, numpy::PyArray1<bool>>> {
                crate::bulk::contains_many(py, &self.inner, keys, crate::args::threads(threads)?)
            }

            /// Removes one copy of each key that is present; returns how many were removed.
            /// `threads` splits each segment of keys across that many threads.
            #[pyo3(signature = (keys, *, threads = None))]
            fn discard_many(
                &self,
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
                threads: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<usize> {
                crate::bulk::discard_many(py, &self.inner, keys, crate::args::threads(threads)?)
            }

            /// The filter in the crate's portable format (`FORMAT.md`), readable by Rust, `ccf`
            /// and `from_bytes`.
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
                let bytes = py.detach(|| self.inner.to_bytes());
                pyo3::types::PyBytes::new(py, &bytes)
            }

            /// The filter `to_bytes` (or Rust, or `ccf`) wrote. Raises `ValueError` for bytes that
            /// are not a filter of this kind, truncated or corrupt.
            #[classmethod]
            fn from_bytes(
                _cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
            ) -> PyResult<Self> {
                let bytes = crate::args::bytes_like(data)?;
                let bytes: &[u8] = &bytes;
                let inner = py
                    .detach(|| Backend::from_bytes(bytes))
                    .map_err(crate::errors::decode)?;
                Ok(Self { inner })
            }

            /// Writes the filter to `path` in the portable format, through a temporary file in
            /// the same directory renamed over `path` when complete.
            fn save(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<()> {
                let path = crate::args::path("path", path)?;
                py.detach(|| crate::files::save(&path, |out| self.inner.write_to(out)))
                    .map_err(|err| crate::errors::file(py, &err, &path))
            }

            /// The filter in the file at `path` (written by `save`, Rust or `ccf`), read as a
            /// stream and checked as it is read. Raises `OSError` for a file that cannot be
            /// read or is not a regular file, `ValueError` for one that is not a filter of this
            /// kind (or has bytes after it).
            #[classmethod]
            fn load(
                _cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                path: &Bound<'_, PyAny>,
            ) -> PyResult<Self> {
                let path = crate::args::path("path", path)?;
                let file = py
                    .detach(|| crate::files::FilterFile::open(&path))
                    .map_err(|err| crate::errors::file(py, &err, &path))?;
                Self::from_file(py, file, &path)
            }

            /// A copy of the filter, independent of it.
            fn copy(&self, py: Python<'_>) -> PyResult<Self> {
                let inner = py
                    .detach(|| Backend::from_bytes(&self.inner.to_bytes()))
                    .map_err(crate::errors::decode)?;
                Ok(Self { inner })
            }

            fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
                self.copy(py)
            }

            fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
                self.copy(py)
            }

            /// Pickles as `from_bytes(to_bytes())`: no process-specific state, so a filter made
            /// in one process answers the same in another.
            fn __reduce__<'py>(
                &self,
                py: Python<'py>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
                // A class method pickles as `getattr(class, name)`, the class by its import path.
                let restore = py.get_type::<Self>().getattr("from_bytes")?;
                Ok((restore, (self.to_bytes(py),)))
            }

            /// Whether `merge` can merge `other` into this filter: same shape (for a growable
            /// filter: same plan) and seed.
            fn is_compatible(&self, other: &Self) -> bool {
                Backend::is_compatible(&self.inner, &other.inner)
            }

            /// Adds every key of `other` (a compatible filter no one is writing to); returns how
            /// many fingerprints went in. With `unique=True`, only fingerprints not yet present,
            /// as a set union of filters built with `add_unique`. Raises `ValueError` for
            /// incompatible filters (nothing merged), `FilterFullError` if this filter fills up
            /// (what went in stays).
            #[pyo3(signature = (other, *, unique = false))]
            fn merge(&self, py: Python<'_>, other: &Self, unique: bool) -> PyResult<usize> {
                py.detach(|| Backend::merge(&self.inner, &other.inner, unique))
                    .map_err(|err| crate::errors::merge(py, err))
            }

            /// `self |= other`: the set union, `merge(other, unique=True)`: a key in both
            /// filters stays one copy.
            fn __ior__(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                self.merge(py, other, true).map(drop)
            }

            /// `self | other`: a copy of this filter with `other` merged in as `|=` does.
            fn __or__(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                let union = self.copy(py)?;
                union.merge(py, other, true)?;
                Ok(union)
            }

            /// Adds every key of each iterable, as `add_many` does (numpy arrays in bulk).
            /// `FilterFullError.inserted` counts the keys of all of them that went in.
            #[pyo3(signature = (*iterables))]
            fn update(
                &self,
                py: Python<'_>,
                iterables: &Bound<'_, pyo3::types::PyTuple>,
            ) -> PyResult<()> {
                let mut inserted = 0;
                for keys in iterables.iter() {
                    inserted += crate::bulk::add_many(py, &self.inner, &keys, 1, inserted)?;
                }
                Ok(())
            }

            /// Whether both filters are of this class with the same settings, seed and table:
            /// the same bytes (`to_bytes`), so that they answer every lookup alike. Filters of
            /// the same keys added in another order may hold them in other slots and differ.
            /// While others write, each filter is read as it is at one moment. Not hashable:
            /// its content changes.
            fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> bool {
                let Ok(other) = other.cast::<Self>() else {
                    return false;
                };
                let other = other.get();
                core::ptr::eq(self, other)
                    || py.detach(|| {
                        let ours = self.inner.to_bytes();
                        crate::backend::writes_exactly(&ours, |out| other.inner.write_to(out))
                    })
            }

            $($own)*
        }

        impl $class {
            /// The filter in `file`, opened from `path` (for messages).
            pub fn from_file(
                py: Python<'_>,
                file: crate::files::FilterFile,
                path: &std::path::Path,
            ) -> PyResult<Self> {
                let inner = py
                    .detach(|| file.read(|reader| Backend::read_from(reader)))
                    .map_err(|err| crate::errors::load(py, err, path))?;
                Ok(Self { inner })
            }
        }
    };
}
