//! Arguments checked so that a bad one is a `TypeError` or `ValueError` naming it.

use std::path::PathBuf;
use std::time::Duration;

use concurrent_cuckoo_filter::ConcurrentCuckooFilterBuilder as FixedBuilder;
use concurrent_cuckoo_filter::{Clock, ConcurrentCuckooFilter, DefaultHashBuilder};
use concurrent_cuckoo_filter::{ExpiringBuilder, ExpiringCuckooFilter, Overflow, Window};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyMemoryView, PyString};

use crate::keys::{int_bits, shown, type_name, INT_RANGE};

/// An optional argument as the caller gave it.
pub type Arg<'a, 'py> = Option<&'a Bound<'py, PyAny>>;

/// A builder's setting applied only when given.
pub trait Set: Sized {
    fn set<T>(self, value: Option<T>, set: impl FnMut(Self, T) -> Self) -> Self {
        value.into_iter().fold(self, set)
    }
}

impl<B> Set for B {}

/// `TypeError`: argument `name` must be `what`, naming the type it is.
fn wrong(name: &str, what: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {what}, not {}", type_name(value)))
}

fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// An `int`, or another integer (a numpy one) as the `int` its `__index__` gives, as Python does.
fn int<'py>(name: &str, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyInt>> {
    let py = value.py();
    match py.import("operator")?.call_method1("index", (value,)) {
        Ok(int) => Ok(int.cast_into::<PyInt>()?),
        Err(err) if err.is_instance_of::<PyTypeError>(py) => Err(wrong(name, "an int", value)),
        Err(err) => Err(err),
    }
}

/// A count (`capacity`, `items`, `threads`, ...): an `int` of at least 1.
pub fn count(name: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let int = int(name, value)?;
    match int.extract::<i128>() {
        Ok(n) if n < 1 => Err(value_error(format!("{name} must be at least 1, got {n}"))),
        Ok(n) => usize::try_from(n).map_err(|_| value_error(format!("{name} {n} is too large"))),
        Err(_) => Err(value_error(format!("{name} {} is too large", shown(&int)))),
    }
}

/// A small setting (`fingerprint_bits`, ...): an int that fits `T`; the builder checks its range.
pub fn setting<T: TryFrom<i128>>(name: &str, value: Arg) -> PyResult<Option<T>> {
    let Some(value) = value else { return Ok(None) };
    let int = int(name, value)?;
    let fits = int.extract::<i128>().ok().and_then(|v| T::try_from(v).ok());
    let out_of_range = || value_error(format!("{name} {} is out of range", shown(&int)));
    fits.map(Some).ok_or_else(out_of_range)
}

/// A flag (`semi_sorted`, `readonly`, `mmap`): a `bool`, or numpy's `bool_` as the one it is.
pub fn flag(name: &str, value: Arg) -> PyResult<Option<bool>> {
    let Some(value) = value else { return Ok(None) };
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Some(flag.is_true()));
    }
    let numpy_bool = value.py().import("numpy")?.getattr("bool_")?;
    match value.is_instance(&numpy_bool)? {
        true => value.is_truthy().map(Some),
        false => Err(wrong(name, "a bool", value)),
    }
}

/// A real number as `float()` gives it; `None` for one past a float's range (an int too large),
/// which is a number out of range, not one of the wrong type.
fn real(name: &str, what: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    match value.extract() {
        Ok(real) => Ok(Some(real)),
        Err(err) if err.is_instance_of::<PyOverflowError>(value.py()) => Ok(None),
        Err(_) => Err(wrong(name, what, value)),
    }
}

/// A rate (`false_positive_rate`): a real number; the builder checks its range.
pub fn rate(name: &str, value: Arg) -> PyResult<Option<f64>> {
    let Some(value) = value else { return Ok(None) };
    let out_of_range = || {
        value_error(format!(
            "{name} must be above 0 and below 1, got {}",
            shown(value)
        ))
    };
    real(name, "a number", value)?
        .map(Some)
        .ok_or_else(out_of_range)
}

/// A file path: a `str`, `bytes` or `os.PathLike`, as `open()` takes.
pub fn path(name: &str, value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let os = value.py().import("os")?;
    let text = os
        .call_method1("fsdecode", (value,))
        .and_then(|text| text.extract());
    text.map_err(|_| wrong(name, "a str, bytes or os.PathLike", value))
}

const MAX_THREADS: usize = 256;

/// A bulk call's `threads`: an int from 1 to [`MAX_THREADS`], 1 if not given.
pub fn threads(value: Arg) -> PyResult<usize> {
    match value.map(|value| count("threads", value)).transpose()? {
        None => Ok(1),
        Some(n @ 1..=MAX_THREADS) => Ok(n),
        Some(n) => Err(value_error(format!(
            "threads must be at most {MAX_THREADS}, got {n}"
        ))),
    }
}

/// The hasher of `seed`, an int mapped as int keys are; the crate's (and `ccf`'s) default if none.
pub fn hasher(seed: Arg) -> PyResult<DefaultHashBuilder> {
    let Some(seed) = seed else {
        return Ok(DefaultHashBuilder::new());
    };
    let int = int("seed", seed)?;
    let bits = int_bits(&int).ok_or_else(|| {
        let int = shown(&int);
        value_error(format!("seed {int} is out of range: a seed {INT_RANGE}"))
    })?;
    Ok(DefaultHashBuilder::with_seed(bits))
}

/// A bytes-like object (`bytes`, `bytearray`, `memoryview`, a `PickleBuffer`) as `bytes`.
pub fn bytes_like<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    let view = PyMemoryView::from(data).map_err(|_| wrong("data", "a bytes-like object", data))?;
    Ok(view.call_method0("tobytes")?.cast_into::<PyBytes>()?)
}

/// A time in seconds: a finite real number, at least 0 (above 0 unless `zero_ok`), below 2^64.
pub fn duration(name: &str, value: &Bound<'_, PyAny>, zero_ok: bool) -> PyResult<Duration> {
    let seconds = real(name, "a number of seconds", value)?;
    let least = if zero_ok { "0" } else { "one nanosecond" };
    match seconds.map(Duration::try_from_secs_f64) {
        Some(Ok(time)) if zero_ok || !time.is_zero() => Ok(time),
        _ => Err(value_error(format!(
            "{name} must be a finite number of seconds, at least {least} and below 2^64, got {}",
            seconds.map_or_else(|| shown(value), |seconds| seconds.to_string())
        ))),
    }
}

/// Which of `choices` (`overflow`, `clock`) the `str` given names, by its index.
fn choice(name: &str, value: Arg, choices: [&str; 2]) -> PyResult<Option<usize>> {
    let Some(value) = value else { return Ok(None) };
    let text = value
        .cast::<PyString>()
        .map_err(|_| wrong(name, "a str", value))?;
    // Text with no UTF-8 form (a lone surrogate) is no choice either, shown with U+FFFD there.
    let text = text.to_string_lossy();
    match choices.iter().position(|choice| *choice == text) {
        Some(index) => Ok(Some(index)),
        None => Err(value_error(format!(
            "{name} must be {:?} or {:?}, got {text:?}",
            choices[0], choices[1]
        ))),
    }
}

/// An expiring filter's builder for `items` (a count window) or `seconds` with `capacity` (a
/// time window, with its `overflow` and `clock`), checked together.
pub fn window(
    items: Arg,
    seconds: Arg,
    capacity: Arg,
    overflow: Arg,
    clock: Arg,
) -> PyResult<ExpiringBuilder> {
    if let (Some(items), None) = (items, seconds) {
        let time_only = [
            ("capacity", capacity),
            ("overflow", overflow),
            ("clock", clock),
        ];
        if let Some((name, _)) = time_only.iter().find(|(_, given)| given.is_some()) {
            return Err(PyTypeError::new_err(format!(
                "{name} is for a time window (seconds=...), not a count window (items=...)"
            )));
        }
        let items = count("items", items)? as u64;
        return Ok(ExpiringCuckooFilter::builder(Window::Items(items)));
    }
    let (seconds, capacity) = match (items, seconds, capacity) {
        (None, Some(seconds), Some(capacity)) => (seconds, capacity),
        (None, Some(_), None) => Err(PyTypeError::new_err(
            "a time window (seconds=...) needs capacity=, the most keys one window holds",
        ))?,
        _ => Err(PyTypeError::new_err(
            "give exactly one window: items=N (the last N adds) or seconds=S (the last S seconds)",
        ))?,
    };
    let time = duration("seconds", seconds, false)?;
    let capacity = count("capacity", capacity)? as u64;
    let overflow = choice("overflow", overflow, ["error", "expire_early"])?;
    let overflow = overflow.map(|at| [Overflow::Error, Overflow::ExpireEarly][at]);
    let clock = choice("clock", clock, ["monotonic", "manual"])?;
    let clock = clock.map(|at| [Clock::Monotonic, Clock::Manual][at]);
    Ok(ExpiringCuckooFilter::builder(Window::Time(time))
        .capacity(capacity)
        .set(overflow, ExpiringBuilder::overflow)
        .set(clock, ExpiringBuilder::clock))
}

/// The builder of a `ConcurrentCuckooFilter`'s settings (its constructor's, `create_shared`'s).
pub fn fixed(
    capacity: &Bound<'_, PyAny>,
    false_positive_rate: Arg,
    fingerprint_bits: Arg,
    bucket_size: Arg,
    semi_sorted: Arg,
    seed: Arg,
) -> PyResult<FixedBuilder<DefaultHashBuilder>> {
    let capacity = count("capacity", capacity)?;
    let hasher = hasher(seed)?;
    let rate = rate("false_positive_rate", false_positive_rate)?;
    let bits = setting("fingerprint_bits", fingerprint_bits)?;
    let bucket_size = setting("bucket_size", bucket_size)?;
    let semi_sorted = flag("semi_sorted", semi_sorted)?;
    Ok(ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .hasher(hasher)
        .set(rate, FixedBuilder::false_positive_rate)
        .set(bits, FixedBuilder::fingerprint_bits)
        .set(bucket_size, FixedBuilder::bucket_size)
        .set(semi_sorted, FixedBuilder::semi_sorted))
}
