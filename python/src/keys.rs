//! Python keys as the Rust hasher sees them (docs/python.md, "Keys"), one borrowed ([`Key`]) or
//! a bulk call's segment in memory of our own ([`Keys`]).

use core::hash::{BuildHasher, Hash, Hasher};
use core::ops::Range;

use concurrent_cuckoo_filter::DefaultHashBuilder;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString, PyType};

/// One key, borrowed: an int's 64-bit pattern, or the bytes of a `str` (UTF-8) or bytes-like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

impl Hash for Key<'_> {
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

/// A key of [`Keys`]: an int, or `bytes[.0..=.1]` (its bytes and the `0xff` ending them).
#[derive(Debug, Clone, Copy)]
enum Slot {
    Int(u64),
    Bytes(usize, usize),
}

/// The average bytes a segment's keys may take, bounding its memory.
const BYTES_PER_KEY: usize = 64;

/// A segment of a bulk call's keys: a numpy array's in `ints` alone (one tight hashing loop).
#[derive(Debug, Default)]
pub struct Keys {
    pub ints: Vec<u64>,
    slots: Vec<Slot>,
    bytes: Vec<u8>,
}

impl Keys {
    #[inline]
    pub fn is_full(&self, max: usize) -> bool {
        self.len() >= max || self.bytes.len() >= max.saturating_mul(BYTES_PER_KEY)
    }

    pub fn len(&self) -> usize {
        self.ints.len() + self.slots.len()
    }

    pub fn clear(&mut self) {
        self.ints.clear();
        self.slots.clear();
        self.bytes.clear();
    }

    /// Room for `keys` more keys of 32 bytes (most text keys).
    pub fn reserve(&mut self, keys: usize) {
        self.slots.reserve(keys);
        self.bytes.reserve(keys.saturating_mul(32));
    }

    #[inline]
    pub fn push(&mut self, key: Key<'_>) {
        match key {
            Key::Int(value) => self.slots.push(Slot::Int(value)),
            Key::Bytes(bytes) => self.push_bytes(bytes),
        }
    }

    #[inline]
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.bytes.push(0xff);
        self.slots.push(Slot::Bytes(start, start + bytes.len()));
    }

    pub fn hashes(&self, range: Range<usize>, hasher: DefaultHashBuilder) -> Vec<u64> {
        if self.slots.is_empty() {
            // `move`: the hasher's words stay in registers through the loop.
            return self.ints[range]
                .iter()
                .map(move |key| hasher.hash_one(key))
                .collect();
        }
        let hash = |slot: &Slot| match *slot {
            Slot::Int(value) => hasher.hash_one(value),
            Slot::Bytes(start, end) => hasher.hash_stream(&self.bytes[start..=end]),
        };
        self.slots[range].iter().map(hash).collect()
    }
}

pub const INT_RANGE: &str = "must be in [-2**63, 2**64)";

/// The 64-bit pattern of an int in `[-2^63, 2^64)` (two's complement for a negative one).
pub fn int_bits(int: &Bound<'_, PyInt>) -> Option<u64> {
    let signed = || int.extract::<i64>().ok().map(|value| value as u64);
    int.extract::<u64>().ok().or_else(signed)
}

/// `value` as `str()` gives it for a message; an int past the digits `str()` allows (4,300 by
/// default) by its size, `<int of N bits>`, rather than a failed `str()` reported as ignored.
pub fn shown(value: &Bound<'_, PyAny>) -> String {
    if let Ok(text) = value.str() {
        return text.to_string_lossy().into_owned();
    }
    let bits = value
        .call_method0("bit_length")
        .and_then(|bits| bits.extract::<u64>());
    bits.map_or_else(
        |_| format!("<{} that str() refuses>", type_name(value)),
        |bits| format!("<int of {bits} bits>"),
    )
}

fn int_key(int: &Bound<'_, PyInt>) -> PyResult<Key<'static>> {
    let message = || {
        format!(
            "int key {} is out of range: int keys {INT_RANGE}",
            shown(int)
        )
    };
    int_bits(int)
        .map(Key::Int)
        .ok_or_else(|| PyValueError::new_err(message()))
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    let name = obj.get_type().name();
    name.map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string())
}

/// `f` of the key `obj` stands for, borrowed where it can be.
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(Key<'_>) -> R) -> PyResult<R> {
    if let Ok(string) = obj.cast::<PyString>() {
        return Ok(f(Key::Bytes(string.to_str()?.as_bytes())));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        return Ok(f(int_key(int)?));
    }
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(f(Key::Bytes(bytes.as_bytes())));
    }
    // Python code may change a bytearray or memoryview: copied.
    let py = obj.py();
    if obj.cast::<PyByteArray>().is_ok() || obj.cast::<PyMemoryView>().is_ok() {
        let bytes = py
            .get_type::<PyBytes>()
            .call1((obj,))?
            .cast_into::<PyBytes>()?;
        return Ok(f(Key::Bytes(bytes.as_bytes())));
    }
    static INTEGER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static BOOL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    // A duration, though numpy makes it a signed integer: no key, as its arrays are not.
    static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if (obj.is_instance(INTEGER.import(py, "numpy", "integer")?)?
        && !obj.is_instance(TIMEDELTA.import(py, "numpy", "timedelta64")?)?)
        || obj.is_instance(BOOL.import(py, "numpy", "bool_")?)?
    {
        return Ok(f(int_key(py.get_type::<PyInt>().call1((obj,))?.cast()?)?));
    }
    Err(PyTypeError::new_err(format!(
        "a key must be an int, str, bytes, bytearray, memoryview or numpy integer, not {}",
        type_name(obj)
    )))
}
