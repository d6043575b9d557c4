//! `GrowableCuckooFilter`: the filter that adds levels as keys arrive.

use concurrent_cuckoo_filter::GrowableCuckooFilter;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::args;
use crate::backend::Backend;
use crate::errors;
use crate::fixed::stats_dict;
use crate::keys::with_key;

/// The first level's capacity unless one is given, as for `ccf build --grow`.
const DEFAULT_CAPACITY: usize = 1_000_000;

/// A cuckoo filter that needs no size up front: when its newest level fills it grows (by
/// splitting, or by adding a larger level), keeping the false positive rate under its target
/// however far it grows. Shared by any number of threads like `ConcurrentCuckooFilter`.
#[pyclass(frozen, module = "ccfilter", name = "GrowableCuckooFilter")]
#[derive(Debug)]
pub struct Growable {
    inner: GrowableCuckooFilter,
}

filter_class!(Growable, {
    /// A filter whose first level holds `capacity` keys (default 1,000,000) and that grows past it.
    ///
    /// `false_positive_rate` (default 0.001) holds however far it grows. It grows by splitting,
    /// each level `2^split_depth` times before the next is added (`split_depth` 1 to 10,
    /// default 6). `max_capacity`
    /// bounds the keys all levels together may be sized for (default: none); past it adds
    /// raise `FilterFullError`. `seed` as for `ConcurrentCuckooFilter`.
    #[new]
    #[pyo3(signature = (
        capacity = None,
        false_positive_rate = None,
        *,
        split_depth = None,
        max_capacity = None,
        seed = None,
    ))]
    fn new(
        capacity: Option<&Bound<'_, PyAny>>,
        false_positive_rate: Option<&Bound<'_, PyAny>>,
        split_depth: Option<&Bound<'_, PyAny>>,
        max_capacity: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut builder = GrowableCuckooFilter::builder()
            .capacity(capacity.map_or(Ok(DEFAULT_CAPACITY), |c| args::count("capacity", c))?)
            .hasher(args::hasher(seed)?);
        if let Some(rate) = args::rate("false_positive_rate", false_positive_rate)? {
            builder = builder.false_positive_rate(rate);
        }
        if let Some(depth) = args::setting("split_depth", split_depth)? {
            builder = builder.split_depth(depth);
        }
        if let Some(max) = max_capacity {
            builder = builder.max_capacity(args::count("max_capacity", max)?);
        }
        let inner = builder.build().map_err(errors::build)?;
        Ok(Self { inner })
    }

    /// Keys stored over the capacity of the levels so far.
    #[getter]
    fn load_factor(&self) -> f64 {
        self.inner.len() as f64 / self.inner.capacity() as f64
    }

    /// The false positive rate the filter stays under however far it grows.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.false_positive_rate()
    }

    /// The false positive rate of the levels so far, each full: below `false_positive_rate`.
    #[getter]
    fn expected_false_positive_rate(&self) -> f64 {
        self.inner.expected_false_positive_rate()
    }

    /// Levels so far; a lookup probes each.
    #[getter]
    fn level_count(&self) -> usize {
        self.inner.level_count()
    }

    /// Bits per fingerprint of each level, oldest first.
    #[getter]
    fn fingerprint_bits(&self) -> Vec<u32> {
        self.inner.level_fingerprint_bits()
    }

    /// Fill and accuracy as a dict, with `levels`: one dict per level as
    /// `ConcurrentCuckooFilter.stats()` gives.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("len", self.inner.len())?;
        dict.set_item("capacity", self.inner.capacity())?;
        dict.set_item("memory_bytes", self.inner.memory_usage())?;
        dict.set_item("false_positive_rate", self.inner.false_positive_rate())?;
        dict.set_item(
            "expected_false_positive_rate",
            self.inner.expected_false_positive_rate(),
        )?;
        dict.set_item("seed", self.inner.seed())?;
        let levels = PyList::empty(py);
        for level in self.inner.level_stats() {
            levels.append(stats_dict(py, &level)?)?;
        }
        dict.set_item("levels", levels)?;
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!(
            "GrowableCuckooFilter(len={}, capacity={}, levels={}, false_positive_rate={}, \
             seed={:#x})",
            self.inner.len(),
            self.inner.capacity(),
            self.inner.level_count(),
            self.inner.false_positive_rate(),
            self.inner.seed(),
        )
    }
});
