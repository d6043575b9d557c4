//! Python keys as the byte streams the Rust hasher sees.
//!
//! The mapping is what makes a filter portable between Python, Rust and `ccf`:
//! - an `int` in `[0, 2^64)` hashes as that `u64`; one in `[-2^63, 0)` as the `u64` of the same
//!   bits (two's complement), which is also how Rust's `i64` hashes. A numpy `int64` or `uint64`
//!   array therefore agrees with the Python ints of its values.
//! - a `str` hashes as Rust's `str` does: its UTF-8 bytes, then one `0xff` byte. That is also how
//!   `ccf build` hashes a line.
//! - `bytes`, `bytearray` and `memoryview` hash by the same formula as `str` (their bytes, then
//!   `0xff`), so `"key"` and `b"key"` are one key, and a line read from a file in binary mode is
//!   the key `ccf` made of it (lines that are not UTF-8 included).
//! - a numpy integer or `bool_` scalar hashes as the Python int it equals (`np.str_` and
//!   `np.bytes_` are `str` and `bytes` already), so `for x in array: f.add(x)` adds what
//!   `f.add_many(array)` does.

use core::hash::{Hash, Hasher};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString, PyTuple};

/// One key, borrowed: an integer or the bytes of a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRef<'a> {
    /// An `int`, as its 64-bit pattern.
    Int(u64),
    /// A `str`'s UTF-8 bytes, or a bytes-like object's bytes.
    Bytes(&'a [u8]),
}

impl Hash for KeyRef<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Self::Int(value) => state.write_u64(*value),
            // Exactly `str::hash`: the bytes, then a 0xff that no UTF-8 text contains.
            Self::Bytes(bytes) => {
                state.write(bytes);
                state.write_u8(0xff);
            }
        }
    }
}

/// The message for an integer outside the 64-bit range.
pub const INT_RANGE: &str = "must be in [-2**63, 2**64)";

/// The 64-bit pattern of an int in `[-2^63, 2^64)` (two's complement for a negative one).
pub fn int_bits(int: &Bound<'_, PyInt>) -> Option<u64> {
    int.extract::<u64>()
        .ok()
        .or_else(|| int.extract::<i64>().ok().map(|value| value as u64))
}

/// The `u64` an int key stands for, or a `ValueError` for one outside `[-2^63, 2^64)`.
pub fn int_key(int: &Bound<'_, PyInt>) -> PyResult<u64> {
    int_bits(int).ok_or_else(|| {
        PyValueError::new_err(format!(
            "int key {int} is out of range: int keys {INT_RANGE}"
        ))
    })
}

/// `TypeError` for a key of another type, naming it.
pub fn wrong_key_type(obj: &Bound<'_, PyAny>) -> PyErr {
    let name = type_name(obj);
    PyTypeError::new_err(format!(
        "a key must be an int, str, bytes, bytearray, memoryview or numpy integer, not {name}"
    ))
}

/// An object's type name, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string())
}

/// Runs `f` on the key `obj` stands for, borrowed where its bytes can be (a `str`'s UTF-8, a
/// `bytes`); a `TypeError` naming its type, or a `ValueError`, if it is not a key.
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(KeyRef<'_>) -> R) -> PyResult<R> {
    // Exact types first: the common keys, told apart by one pointer comparison each.
    if let Ok(string) = obj.cast_exact::<PyString>() {
        return Ok(f(KeyRef::Bytes(string.to_str()?.as_bytes())));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        return Ok(f(KeyRef::Int(int_key(int)?)));
    }
    if let Ok(string) = obj.cast::<PyString>() {
        return Ok(f(KeyRef::Bytes(string.to_str()?.as_bytes())));
    }
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(f(KeyRef::Bytes(bytes.as_bytes())));
    }
    // A bytearray any Python code may resize: copied.
    if let Ok(array) = obj.cast::<PyByteArray>() {
        return Ok(f(KeyRef::Bytes(&array.to_vec())));
    }
    if obj.cast::<PyMemoryView>().is_ok() {
        let bytes = obj.call_method0("tobytes")?.cast_into::<PyBytes>()?;
        return Ok(f(KeyRef::Bytes(bytes.as_bytes())));
    }
    if let Some(value) = numpy_integer(obj)? {
        return Ok(f(KeyRef::Int(value)));
    }
    Err(wrong_key_type(obj))
}

/// The int key a numpy integer or `bool_` scalar stands for, or `None` for another object.
fn numpy_integer(obj: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    static TYPES: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    let py = obj.py();
    let types = TYPES.get_or_try_init(py, || {
        let numpy = py.import("numpy")?;
        PyResult::Ok(
            PyTuple::new(py, [numpy.getattr("integer")?, numpy.getattr("bool_")?])?.unbind(),
        )
    })?;
    if !obj.is_instance(types.bind(py))? {
        return Ok(None);
    }
    // `__index__` of an integer scalar gives the Python int it equals; a `bool_` is 1 or 0,
    // as `True` and `False` are.
    let int = match obj.call_method0("__index__") {
        Ok(int) => int,
        Err(_) => PyInt::new(py, u8::from(obj.is_truthy()?)).into_any(),
    };
    int_key(int.cast::<PyInt>()?).map(Some)
}
