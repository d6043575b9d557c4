//! Constructor arguments, checked so that a bad one is a `TypeError` or `ValueError` naming it.

use std::borrow::Cow;

use concurrent_cuckoo_filter::DefaultHashBuilder;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt};

use crate::keys::{int_key, type_name};
use crate::parts::MAX_THREADS;

/// A count argument (`capacity`, `max_capacity`): an `int` of at least 1.
pub fn count(name: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let Ok(int) = value.cast::<PyInt>() else {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            type_name(value)
        )));
    };
    match int.extract::<i128>() {
        Ok(n) if n < 1 => Err(PyValueError::new_err(format!(
            "{name} must be at least 1, got {n}"
        ))),
        Ok(n) => usize::try_from(n)
            .map_err(|_| PyValueError::new_err(format!("{name} {n} is too large"))),
        Err(_) => Err(PyValueError::new_err(format!("{name} {int} is too large"))),
    }
}

/// A small setting (`fingerprint_bits`, `bucket_size`, ...): a non-negative int that fits `T`;
/// whether it is in range is the builder's to say.
pub fn setting<T: TryFrom<i64>>(name: &str, value: Option<i64>) -> PyResult<Option<T>> {
    value
        .map(|v| {
            T::try_from(v).map_err(|_| PyValueError::new_err(format!("{name} {v} is out of range")))
        })
        .transpose()
}

/// The `threads` argument of a bulk call: an int from 1 to [`MAX_THREADS`], 1 if not given.
pub fn threads(value: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let Some(value) = value else { return Ok(1) };
    match count("threads", value)? {
        n @ 1..=MAX_THREADS => Ok(n),
        n => Err(PyValueError::new_err(format!(
            "threads must be at most {MAX_THREADS}, got {n}"
        ))),
    }
}

/// The hasher for a `seed` argument: any int in `[-2^63, 2^64)`, mapped as int keys are; the
/// crate's default seed (the one `ccf` uses) when `None`.
pub fn hasher(seed: Option<&Bound<'_, PyAny>>) -> PyResult<DefaultHashBuilder> {
    match seed {
        None => Ok(DefaultHashBuilder::new()),
        Some(seed) => match seed.cast::<PyInt>() {
            Ok(int) => int_key(int).map(DefaultHashBuilder::with_seed),
            Err(_) => Err(PyTypeError::new_err(format!(
                "seed must be an int, not {}",
                type_name(seed)
            ))),
        },
    }
}

/// The bytes of a bytes-like object (`bytes`, `bytearray`, `memoryview`, ...).
pub fn bytes_like<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    // Anything else that supports the buffer protocol, copied.
    let builtins = data.py().import("builtins")?;
    let view = builtins
        .getattr("memoryview")?
        .call1((data,))
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a bytes-like object, not {}",
                type_name(data)
            ))
        })?;
    let copy = view.call_method0("tobytes")?;
    Ok(Cow::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()))
}
