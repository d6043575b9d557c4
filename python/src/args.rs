//! Constructor arguments, checked so that a bad one is a `TypeError` or `ValueError` naming it.

use std::path::PathBuf;
use std::time::Duration;

use concurrent_cuckoo_filter::{Clock, DefaultHashBuilder, ExpiringBuilder, ExpiringCuckooFilter};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, ConcurrentCuckooFilterBuilder};
use concurrent_cuckoo_filter::{Overflow, Window};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};

use crate::keys::{int_bits, type_name, INT_RANGE};
use crate::threads::MAX_THREADS;

/// `TypeError`: argument `name` must be `what`, naming the type it is.
fn wrong(name: &str, what: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {what}, not {}", type_name(value)))
}

/// An `int` argument.
fn int<'a, 'py>(name: &str, value: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyInt>> {
    value
        .cast::<PyInt>()
        .map_err(|_| wrong(name, "an int", value))
}

/// A count argument (`capacity`, `max_capacity`): an `int` of at least 1.
pub fn count(name: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let int = int(name, value)?;
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
    let int = int(name, value)?;
    int.extract::<i128>()
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .map(Some)
        .ok_or_else(|| PyValueError::new_err(format!("{name} {int} is out of range")))
}

/// A flag (`semi_sorted`): a `bool`.
pub fn flag(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<bool>> {
    let Some(value) = value else { return Ok(None) };
    let flag = value
        .cast::<PyBool>()
        .map_err(|_| wrong(name, "a bool", value))?;
    Ok(Some(flag.is_true()))
}

/// A rate (`false_positive_rate`): a real number; whether it is in range is the builder's to say.
pub fn rate(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(value) = value else { return Ok(None) };
    let rate = value
        .extract::<f64>()
        .map_err(|_| wrong(name, "a number", value))?;
    Ok(Some(rate))
}

/// A file path argument: a `str`, `bytes` or `os.PathLike`, as `open()` takes.
pub fn path(name: &str, value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let wrong = || wrong(name, "a str, bytes or os.PathLike", value);
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
    let Some(seed) = seed else {
        return Ok(DefaultHashBuilder::new());
    };
    let int = int("seed", seed)?;
    let bits = int_bits(int).ok_or_else(|| {
        PyValueError::new_err(format!("seed {int} is out of range: a seed {INT_RANGE}"))
    })?;
    Ok(DefaultHashBuilder::with_seed(bits))
}

/// A bytes-like object (`bytes`, `bytearray`, `memoryview`, a pickle's out-of-band buffer) as
/// `bytes`: itself, or one copy of it.
pub fn bytes_like<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    let view = (data
        .py()
        .import("builtins")?
        .getattr("memoryview")?
        .call1((data,)))
    .map_err(|_| wrong("data", "a bytes-like object", data))?;
    Ok(view.call_method0("tobytes")?.cast_into::<PyBytes>()?)
}

/// A time in seconds (`seconds`, `advance_to`'s): a real number, finite and at least 0 (above 0
/// unless `zero_ok`).
pub fn duration(name: &str, value: &Bound<'_, PyAny>, zero_ok: bool) -> PyResult<Duration> {
    let seconds: f64 = value
        .extract()
        .map_err(|_| wrong(name, "a number of seconds", value))?;
    match Duration::try_from_secs_f64(seconds) {
        Ok(time) if zero_ok || !time.is_zero() => Ok(time),
        _ => Err(PyValueError::new_err(format!(
            "{name} must be a finite number of seconds above 0, got {seconds}"
        ))),
    }
}

/// One of `choices` (`overflow`, `clock`): a `str` naming it.
fn choice<T: Copy>(name: &str, value: &Bound<'_, PyAny>, choices: &[(&str, T)]) -> PyResult<T> {
    let text = value
        .cast::<PyString>()
        .map_err(|_| wrong(name, "a str", value))?
        .to_str()?;
    let names: Vec<String> = choices.iter().map(|(n, _)| format!("{n:?}")).collect();
    let found = choices.iter().find(|(n, _)| *n == text);
    found.map(|&(_, choice)| choice).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{name} must be {}, got {text:?}",
            names.join(" or ")
        ))
    })
}

/// An expiring filter's window arguments as its builder: `items` (a count window) or `seconds`
/// with `capacity` (a time window, with its `overflow` and `clock`), checked together.
pub fn window(
    items: Option<&Bound<'_, PyAny>>,
    seconds: Option<&Bound<'_, PyAny>>,
    capacity: Option<&Bound<'_, PyAny>>,
    overflow: Option<&Bound<'_, PyAny>>,
    clock: Option<&Bound<'_, PyAny>>,
) -> PyResult<ExpiringBuilder> {
    let time_only = |name: &str, given: Option<_>| match given {
        Some(_) => Err(PyTypeError::new_err(format!(
            "{name} is for a time window (seconds=...), not a count window (items=...)"
        ))),
        None => Ok(()),
    };
    match (items, seconds) {
        (Some(items), None) => {
            time_only("capacity", capacity)?;
            time_only("overflow", overflow)?;
            time_only("clock", clock)?;
            let items = count("items", items)? as u64;
            Ok(ExpiringCuckooFilter::builder(Window::Items(items)))
        }
        (None, Some(seconds)) => {
            let capacity = capacity.ok_or_else(|| {
                PyTypeError::new_err(
                    "a time window (seconds=...) needs capacity=, the most keys one window holds",
                )
            })?;
            let mut builder =
                ExpiringCuckooFilter::builder(Window::Time(duration("seconds", seconds, false)?))
                    .capacity(count("capacity", capacity)? as u64);
            if let Some(overflow) = overflow {
                let choices = [
                    ("error", Overflow::Error),
                    ("expire_early", Overflow::ExpireEarly),
                ];
                builder = builder.overflow(choice("overflow", overflow, &choices)?);
            }
            if let Some(clock) = clock {
                let choices = [("monotonic", Clock::Monotonic), ("manual", Clock::Manual)];
                builder = builder.clock(choice("clock", clock, &choices)?);
            }
            Ok(builder)
        }
        _ => Err(PyTypeError::new_err(
            "give exactly one window: items=N (the last N adds) or seconds=S (the last S seconds)",
        )),
    }
}

/// The settings of a `ConcurrentCuckooFilter` (its constructor's, and `create_shared`'s), each
/// checked and given to the crate's builder.
pub struct FixedSettings<'a, 'py> {
    pub capacity: &'a Bound<'py, PyAny>,
    pub false_positive_rate: Option<&'a Bound<'py, PyAny>>,
    pub fingerprint_bits: Option<&'a Bound<'py, PyAny>>,
    pub bucket_size: Option<&'a Bound<'py, PyAny>>,
    pub semi_sorted: Option<&'a Bound<'py, PyAny>>,
    pub seed: Option<&'a Bound<'py, PyAny>>,
}

impl FixedSettings<'_, '_> {
    /// The crate's builder for these settings; `TypeError` or `ValueError` naming a bad one.
    pub fn builder(&self) -> PyResult<ConcurrentCuckooFilterBuilder<DefaultHashBuilder>> {
        let mut builder = ConcurrentCuckooFilter::builder()
            .capacity(count("capacity", self.capacity)?)
            .hasher(hasher(self.seed)?);
        if let Some(rate) = rate("false_positive_rate", self.false_positive_rate)? {
            builder = builder.false_positive_rate(rate);
        }
        if let Some(bits) = setting("fingerprint_bits", self.fingerprint_bits)? {
            builder = builder.fingerprint_bits(bits);
        }
        if let Some(size) = setting("bucket_size", self.bucket_size)? {
            builder = builder.bucket_size(size);
        }
        if let Some(semi_sorted) = flag("semi_sorted", self.semi_sorted)? {
            builder = builder.semi_sorted(semi_sorted);
        }
        Ok(builder)
    }
}
