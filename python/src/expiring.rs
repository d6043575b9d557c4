//! The Python class `ExpiringCuckooFilter`: the shared methods from `filter_class!`, and the
//! window's own.

use concurrent_cuckoo_filter::{CuckooFilter, Expiring, Window};
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};

use crate::args::{self, Arg, Set};
use crate::files::FilterFile;
use crate::filter::{bytes_of, copy_of, filter_class, py_dict, read_file};
use crate::keys::with_key;
use crate::shared::Live;
use crate::{bulk, errors, files};

filter_class!(
    /// A cuckoo filter that forgets: it remembers keys for a sliding window, the last `items`
    /// adds or the last `seconds`, split into `generations`. A key added (or added again) is
    /// found for the whole window after, and forgotten within `1 + 1/generations` windows.
    /// Shared by any number of threads; lookups take no lock. Filters do not merge.
    #[pyclass(frozen, module = "ccfilter", name = "ExpiringCuckooFilter")]
    ExpiringFilter(Expiring), {
    /// A count window of the last `items` adds, or a time window of the last `seconds` holding
    /// `capacity` keys per window at a steady rate (at most `capacity·(1 + 1/generations)` adds
    /// within `seconds·(1 + 1/generations)`, bursts included); past it `overflow="error"` (default) raises
    /// `FilterFullError` and `"expire_early"` forgets the oldest generation early. `clock` is
    /// `"monotonic"` (default) or `"manual"` (moved by `advance_to`). `false_positive_rate`
    /// (default 0.001) holds at every point of a stream of any length; `generations` is 1 to 14
    /// (default 8). `seed` as for `ConcurrentCuckooFilter`.
    #[new]
    #[pyo3(signature = (*, items = None, seconds = None, capacity = None,
                        false_positive_rate = None, generations = None, overflow = None,
                        clock = None, seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(items: Arg, seconds: Arg, capacity: Arg, false_positive_rate: Arg,
           generations: Arg, overflow: Arg, clock: Arg, seed: Arg) -> PyResult<Self> {
        let builder = args::window(items, seconds, capacity, overflow, clock)?
            .hasher(args::hasher(seed)?)
            .set(args::rate("false_positive_rate", false_positive_rate)?, |b, rate| {
                b.false_positive_rate(rate)
            })
            .set(args::setting("generations", generations)?, |b, n| b.generations(n));
        Ok(Self { inner: builder.build().map_err(errors::build)? })
    }

    /// Moves a `clock="manual"` filter's clock to `seconds` since its start (never back),
    /// forgetting what its window no longer holds; `ValueError` for another clock.
    fn advance_to(&self, py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let time = args::duration("seconds", seconds, true)?;
        py.detach(|| self.inner.advance_to(time))
            .map_err(|err| PyValueError::new_err(err.to_string()))
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

    /// Shape, clock and fill as a dict (`len` counts the keys not yet freed: those live and
    /// expired ones not yet cleared).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        py_dict!(py,
            "len" => s.len, "window" => self.window(py)?, "generations" => s.generations,
            "generation" => s.generation, "inserts" => s.inserts, "capacity" => s.capacity,
            "buckets" => s.bucket_count, "fingerprint_bits" => s.fingerprint_bits,
            "tag_bits" => s.tag_bits, "memory_bytes" => s.memory_usage,
            "bits_per_window_item" => s.bits_per_window_item,
            "early_expiries" => s.early_expiries,
            "expected_false_positive_rate" => self.inner.expected_false_positive_rate(),
            "seed" => self.inner.hasher().seed())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let f = &self.inner;
        let window = self.window(py)?.repr()?;
        Ok(format!(
            "ExpiringCuckooFilter(window={window}, generations={}, len={}, capacity={}, \
             seed={:#x})",
            f.generations(), f.len(), f.capacity(), f.hasher().seed(),
        ))
    }
});
