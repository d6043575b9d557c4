//! `ConcurrentCuckooFilter`: the fixed-size filter.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, FilterStats};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args;
use crate::backend::Backend;
use crate::errors;
use crate::keys::with_key;

/// A cuckoo filter sized up front, shared by any number of threads. Lookups take no lock;
/// writers lock only the buckets they touch; bulk calls release the interpreter.
#[pyclass(frozen, module = "ccfilter", name = "ConcurrentCuckooFilter")]
#[derive(Debug)]
pub struct Fixed {
    inner: ConcurrentCuckooFilter,
}

filter_class!(Fixed, {
    /// A filter that holds any `capacity` distinct keys.
    ///
    /// `false_positive_rate` picks the cheapest fingerprint width, bucket size and layout for
    /// that rate at capacity; `fingerprint_bits` (4 to 32), `bucket_size` (2, 4 or 8) and
    /// `semi_sorted` set them explicitly and win over the rate. Without either: 12-bit
    /// fingerprints in 4-slot buckets (about 0.19%). `seed` changes every hash (default: the
    /// crate's seed, which `ccf` uses too). Impossible settings raise `ValueError`.
    #[new]
    #[pyo3(signature = (
        capacity,
        false_positive_rate = None,
        *,
        fingerprint_bits = None,
        bucket_size = None,
        semi_sorted = None,
        seed = None,
    ))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        false_positive_rate: Option<&Bound<'_, PyAny>>,
        fingerprint_bits: Option<&Bound<'_, PyAny>>,
        bucket_size: Option<&Bound<'_, PyAny>>,
        semi_sorted: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut builder = ConcurrentCuckooFilter::builder()
            .capacity(args::count("capacity", capacity)?)
            .hasher(args::hasher(seed)?);
        if let Some(rate) = args::rate("false_positive_rate", false_positive_rate)? {
            builder = builder.false_positive_rate(rate);
        }
        if let Some(bits) = args::setting("fingerprint_bits", fingerprint_bits)? {
            builder = builder.fingerprint_bits(bits);
        }
        if let Some(size) = args::setting("bucket_size", bucket_size)? {
            builder = builder.bucket_size(size);
        }
        if let Some(semi_sorted) = args::flag("semi_sorted", semi_sorted)? {
            builder = builder.semi_sorted(semi_sorted);
        }
        let inner = builder.build().map_err(errors::build)?;
        Ok(Self { inner })
    }

    /// The share of slots in use, from 0 to 1.
    #[getter]
    fn load_factor(&self) -> f64 {
        self.inner.load_factor()
    }

    /// The false positive rate when the filter is full.
    #[getter]
    fn expected_false_positive_rate(&self) -> f64 {
        self.inner.expected_false_positive_rate()
    }

    /// Bits per fingerprint.
    #[getter]
    fn fingerprint_bits(&self) -> u32 {
        self.inner.fingerprint_bits()
    }

    /// Slots per bucket.
    #[getter]
    fn bucket_size(&self) -> usize {
        self.inner.bucket_size()
    }

    /// Whether buckets are semi-sorted (one bit per key less).
    #[getter]
    fn semi_sorted(&self) -> bool {
        self.inner.is_semi_sorted()
    }

    /// Shape, fill and accuracy as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.inner.stats())
    }

    fn __repr__(&self) -> String {
        format!(
            "ConcurrentCuckooFilter(len={}, capacity={}, fingerprint_bits={}, bucket_size={}, \
             semi_sorted={}, seed={:#x})",
            self.inner.len(),
            self.inner.capacity(),
            self.inner.fingerprint_bits(),
            self.inner.bucket_size(),
            if self.inner.is_semi_sorted() {
                "True"
            } else {
                "False"
            },
            self.inner.hasher().seed(),
        )
    }
});

/// A [`FilterStats`] as a dict of the same field names.
pub fn stats_dict<'py>(py: Python<'py>, stats: &FilterStats) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("len", stats.len)?;
    dict.set_item("capacity", stats.capacity)?;
    dict.set_item("buckets", stats.buckets)?;
    dict.set_item("bucket_size", stats.bucket_size)?;
    dict.set_item("fingerprint_bits", stats.fingerprint_bits)?;
    dict.set_item("semi_sorted", stats.semi_sorted)?;
    dict.set_item("stripes", stats.stripes)?;
    dict.set_item("load_factor", stats.load_factor)?;
    dict.set_item("memory_bytes", stats.memory_bytes)?;
    dict.set_item("bits_per_item", stats.bits_per_item)?;
    dict.set_item(
        "expected_false_positive_rate",
        stats.expected_false_positive_rate,
    )?;
    dict.set_item(
        "false_positive_rate_at_load",
        stats.false_positive_rate_at_load,
    )?;
    dict.set_item("hasher_id", stats.hasher_id)?;
    dict.set_item("seed", stats.hasher_seed)?;
    dict.set_item("format_version", stats.format_version)?;
    dict.set_item("serialized_len", stats.serialized_len)?;
    Ok(dict)
}
