//! Constructor arguments, checked so that a bad one is a `TypeError` or `ValueError` naming it.

use std::borrow::Cow;
use std::path::PathBuf;

use concurrent_cuckoo_filter::DefaultHashBuilder;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};

use crate::keys::{int_bits, type_name, INT_RANGE};
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

/// A small setting (`fingerprint_bits`, `bucket_size`, ...): an int that fits `T`; whether it
/// is in range is the builder's to say.
pub fn setting<T: TryFrom<i128>>(
    name: &str,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<T>> {
    let Some(value) = value else { return Ok(None) };
    let Ok(int) = value.cast::<PyInt>() else {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            type_name(value)
        )));
    };
    int.extract::<i128>()
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .map(Some)
        .ok_or_else(|| PyValueError::new_err(format!("{name} {int} is out of range")))
}

/// A flag (`semi_sorted`): a `bool`.
pub fn flag(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<bool>> {
    let Some(value) = value else { return Ok(None) };
    match value.cast::<PyBool>() {
        Ok(flag) => Ok(Some(flag.is_true())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{name} must be a bool, not {}",
            type_name(value)
        ))),
    }
}

/// A rate (`false_positive_rate`): a real number; whether it is in range is the builder's to say.
pub fn rate(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(value) = value else { return Ok(None) };
    value.extract::<f64>().map(Some).map_err(|_| {
        PyTypeError::new_err(format!("{name} must be a number, not {}", type_name(value)))
    })
}

/// A file path argument: a `str`, `bytes` or `os.PathLike`, as `open()` takes.
pub fn path(name: &str, value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "{name} must be a str, bytes or os.PathLike, not {}",
            type_name(value)
        ))
    };
    let fspath = value
        .py()
        .import("os")?
        .call_method1("fspath", (value,))
        .map_err(|_| wrong())?;
    if let Ok(text) = fspath.cast::<PyString>() {
        return Ok(PathBuf::from(text.to_str()?));
    }
    let bytes = fspath.cast::<PyBytes>().map_err(|_| wrong())?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes.as_bytes())))
    }
    #[cfg(not(unix))]
    {
        // Elsewhere a bytes path is the file system encoding's, which `os.fsdecode` undoes.
        let text = value
            .py()
            .import("os")?
            .call_method1("fsdecode", (bytes,))?;
        Ok(PathBuf::from(text.cast::<PyString>()?.to_str()?))
    }
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
            Ok(int) => int_bits(int)
                .map(DefaultHashBuilder::with_seed)
                .ok_or_else(|| {
                    PyValueError::new_err(format!("seed {int} is out of range: a seed {INT_RANGE}"))
                }),
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
                "data must be a bytes-like object, not {}",
                type_name(data)
            ))
        })?;
    let copy = view.call_method0("tobytes")?;
    Ok(Cow::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()))
}
