//! Many keys per call: numpy integer arrays read in place, or any iterable of keys, a chunk at a
//! time, each chunk's filter work done with the interpreter released.
//!
//! A chunk is first copied into memory of our own while attached to the interpreter: another
//! Python thread may write the caller's array while the filter works, and the copy (a few
//! microseconds per chunk) keeps every read of shared memory under the interpreter's rules.

use numpy::ndarray::{s, ArrayView1};
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use crate::backend::Backend;
use crate::errors;
use crate::keys::{type_name, KeyBatch, KeyRef};

/// Keys per chunk: large enough that releasing the interpreter costs nothing measurable, small
/// enough that a chunk's copy stays in cache.
const CHUNK: usize = 1 << 16;

/// A chunk of keys, in memory of our own.
enum Chunk<'a> {
    Ints(&'a [u64]),
    Keys(&'a [KeyRef<'a>]),
}

impl Chunk<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Ints(keys) => keys.len(),
            Self::Keys(keys) => keys.len(),
        }
    }
}

/// A 1-D numpy array of 64-bit integers, viewed in place.
enum IntArray<'py> {
    Unsigned(numpy::PyReadonlyArray1<'py, u64>),
    Signed(numpy::PyReadonlyArray1<'py, i64>),
}

impl IntArray<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Unsigned(array) => array.len(),
            Self::Signed(array) => array.len(),
        }
    }

    /// Copies keys `start..end` (any stride) into `buf`, as their 64-bit patterns.
    fn copy_into(&self, start: usize, end: usize, buf: &mut Vec<u64>) {
        fn copy<T: Copy>(view: ArrayView1<'_, T>, buf: &mut Vec<u64>, to_u64: fn(T) -> u64) {
            buf.extend(view.iter().map(|&value| to_u64(value)));
        }
        buf.clear();
        match self {
            Self::Unsigned(array) => copy(array.as_array().slice_move(s![start..end]), buf, |v| v),
            Self::Signed(array) => copy(array.as_array().slice_move(s![start..end]), buf, |v| {
                v as u64
            }),
        }
    }
}

/// What a bulk call's `keys` argument is.
enum Source<'py> {
    Array(IntArray<'py>),
    Iterable(Bound<'py, PyAny>),
}

impl<'py> Source<'py> {
    fn new(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        if keys.is_instance_of::<PyString>()
            || keys.is_instance_of::<PyBytes>()
            || keys.is_instance_of::<PyByteArray>()
        {
            return Err(PyTypeError::new_err(format!(
                "expected a collection of keys, got one {}: pass a list of it, or use the \
                 single-key method",
                type_name(keys)
            )));
        }
        let Ok(array) = keys.cast::<PyUntypedArray>() else {
            return Ok(Self::Iterable(keys.clone()));
        };
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "expected a 1-D array of keys, got {} dimensions",
                array.ndim()
            )));
        }
        let dtype = array.dtype();
        match dtype.kind() {
            // Text and objects: their elements are keys of their own.
            b'U' | b'S' | b'O' => Ok(Self::Iterable(keys.clone())),
            kind @ (b'i' | b'u' | b'b') => {
                // Narrower integers and booleans widen to the 64-bit type of their sign, which
                // keeps every value, so each hashes as the Python int it equals.
                let wide = if kind == b'i' { "int64" } else { "uint64" };
                let native = dtype.itemsize() == 8 && dtype.is_native_byteorder() != Some(false);
                let array = if native && kind != b'b' {
                    keys.clone()
                } else {
                    keys.call_method1("astype", (wide,))?
                };
                Ok(Self::Array(if kind == b'i' {
                    IntArray::Signed(array.cast::<PyArray1<i64>>()?.try_readonly()?)
                } else {
                    IntArray::Unsigned(array.cast::<PyArray1<u64>>()?.try_readonly()?)
                }))
            }
            _ => Err(PyTypeError::new_err(format!(
                "keys must be integers, strings or bytes, not an array of dtype {}",
                dtype.str()?
            ))),
        }
    }

    /// The number of keys, where known before reading them.
    fn len_hint(&self) -> usize {
        match self {
            Self::Array(array) => array.len(),
            Self::Iterable(keys) => keys.len().unwrap_or(0),
        }
    }

    /// Calls `work` on each chunk of keys in order, while it returns `Ok(true)`. An item that is
    /// not a key (or an iterator that raises) ends the call with its error, after `work` has
    /// done the keys before it.
    fn for_each_chunk(
        &self,
        py: Python<'_>,
        mut work: impl FnMut(Python<'_>, Chunk<'_>) -> PyResult<bool>,
    ) -> PyResult<()> {
        match self {
            Self::Array(array) => {
                let mut buf = Vec::with_capacity(CHUNK.min(array.len()));
                let mut start = 0;
                while start < array.len() {
                    let end = (start + CHUNK).min(array.len());
                    array.copy_into(start, end, &mut buf);
                    if !work(py, Chunk::Ints(&buf))? {
                        break;
                    }
                    start = end;
                }
            }
            Self::Iterable(keys) => {
                let mut batch = KeyBatch::default();
                let mut items = keys.try_iter()?;
                loop {
                    batch.clear();
                    // A key that is not one ends the call, after the keys before it are done.
                    let bad = items
                        .by_ref()
                        .take(CHUNK)
                        .try_for_each(|item| batch.push(&item?))
                        .err();
                    if batch.len() == 0 && bad.is_none() {
                        break;
                    }
                    let full_chunk = batch.len() == CHUNK;
                    let go_on = work(py, Chunk::Keys(&batch.keys()))?;
                    if let Some(bad) = bad {
                        return Err(bad);
                    }
                    if !go_on || !full_chunk {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whether each key may be in the filter, as a numpy `bool` array.
pub fn contains_many<'py, B: Backend>(
    py: Python<'py>,
    filter: &B,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let source = Source::new(keys)?;
    let mut answers = Vec::with_capacity(source.len_hint());
    source.for_each_chunk(py, |py, chunk| {
        let start = answers.len();
        answers.resize(start + chunk.len(), false);
        let out = &mut answers[start..];
        py.detach(|| match chunk {
            Chunk::Ints(keys) => filter.contains_ints(keys, out),
            Chunk::Keys(keys) => filter.contains_keys(keys, out),
        });
        Ok(true)
    })?;
    Ok(PyArray1::from_vec(py, answers))
}

/// Inserts every key in order; how many went in, or a `FilterFullError` at the first that found
/// no room, saying how many went in before it.
pub fn add_many<B: Backend>(
    py: Python<'_>,
    filter: &B,
    keys: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let source = Source::new(keys)?;
    let mut inserted = 0;
    let mut full = None;
    source.for_each_chunk(py, |py, chunk| {
        let outcome = py.detach(|| match chunk {
            Chunk::Ints(keys) => filter.extend_ints(keys),
            Chunk::Keys(keys) => filter.extend_keys(keys),
        });
        match outcome {
            Ok(n) => {
                inserted += n;
                Ok(true)
            }
            Err(err) => {
                inserted += err.inserted();
                full = Some(err);
                Ok(false)
            }
        }
    })?;
    match full {
        None => Ok(inserted),
        Some(err) => Err(errors::full(
            py,
            format!("{err}; {inserted} keys of this call went in before it"),
            inserted,
        )),
    }
}

/// Removes one copy of each key that is present; how many were removed.
pub fn discard_many<B: Backend>(
    py: Python<'_>,
    filter: &B,
    keys: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let source = Source::new(keys)?;
    let mut removed = 0;
    source.for_each_chunk(py, |py, chunk| {
        removed += py.detach(|| match chunk {
            Chunk::Ints(keys) => keys
                .iter()
                .filter(|&&key| filter.remove(KeyRef::Int(key)))
                .count(),
            Chunk::Keys(keys) => keys.iter().filter(|&&key| filter.remove(key)).count(),
        });
        Ok(true)
    })?;
    Ok(removed)
}
