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
                crate::bulk::add_many(py, &self.inner, keys, crate::args::threads(threads)?)
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
            fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
                py.detach(|| crate::files::save(&path, |out| self.inner.write_to(out)))?;
                Ok(())
            }

            /// The filter in the file at `path` (written by `save`, Rust or `ccf`).
            #[classmethod]
            fn load(
                _cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                path: std::path::PathBuf,
            ) -> PyResult<Self> {
                let inner = py.detach(|| {
                    std::fs::read(&path).map(|bytes| Backend::from_bytes(&bytes))
                })?;
                Ok(Self {
                    inner: inner.map_err(crate::errors::decode)?,
                })
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

            /// `self |= other`: `merge(other)`.
            fn __ior__(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                self.merge(py, other, false).map(drop)
            }

            /// `self | other`: a copy of this filter with `other` merged in.
            fn __or__(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                let union = self.copy(py)?;
                union.merge(py, other, false)?;
                Ok(union)
            }

            $($own)*
        }
    };
}
