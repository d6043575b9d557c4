//! Many keys per call: numpy integer arrays read in place, or any iterable of keys, a segment at
//! a time.
//!
//! A segment is taken from Python while attached to the interpreter: a numpy array's integers
//! are copied into a buffer of ours (another Python thread may write the caller's array
//! meanwhile, and the copy keeps every read of it under the interpreter's rules), other keys
//! into a [`Segment`] (integers as their values, strings and bytes as copies of their bytes).
//! Then, with the interpreter released, the filter's hasher hashes them and the filter works on
//! the hashes through the crate's prehashed batch calls, on `threads` threads when asked (see
//! [`parts`]).

use numpy::ndarray::{s, ArrayView1};
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use concurrent_cuckoo_filter::ExtendError;

use crate::backend::Backend;
use crate::errors;
use crate::keys::{type_name, KeyRef};
use crate::parts::{in_parts, Part};
use crate::pipeline::pipelined;
use crate::reader::{KeyReader, SegmentEnd};
use crate::segment::{KeyStream, Segment, SegmentKeys};

/// Keys per segment and thread: large enough that releasing the interpreter (and starting a
/// thread) costs little beside the segment's work, small enough that its buffers stay in cache.
const SEGMENT: usize = 1 << 16;

/// A segment's keys, in memory of our own.
#[derive(Debug, Clone, Copy)]
pub enum Keys<'a> {
    /// Integers by their 64-bit pattern.
    Ints(&'a [u64]),
    /// Keys of any kind, read.
    Read(SegmentKeys<'a>),
}

impl<'a> Keys<'a> {
    pub fn len(&self) -> usize {
        match self {
            Self::Ints(keys) => keys.len(),
            Self::Read(keys) => keys.len(),
        }
    }

    pub fn split_at(self, mid: usize) -> (Self, Self) {
        match self {
            Self::Ints(keys) => {
                let (a, b) = keys.split_at(mid);
                (Self::Ints(a), Self::Ints(b))
            }
            Self::Read(keys) => {
                let (a, b) = keys.split_at(mid);
                (Self::Read(a), Self::Read(b))
            }
        }
    }

    /// `hashes[i]` = the filter's hash of key `i`.
    fn hash_into<B: Backend>(self, filter: &B, hashes: &mut [u64]) {
        match self {
            Self::Ints(keys) => filter.hash_ints(keys, hashes),
            Self::Read(keys) => {
                for (hash, key) in hashes.iter_mut().zip(keys.streams()) {
                    *hash = match key {
                        KeyStream::Int(value) => filter.hash(KeyRef::Int(value)),
                        KeyStream::Bytes(stream) => filter.hash_stream(stream),
                    };
                }
            }
        }
    }
}

/// A 1-D numpy array of 64-bit integers, viewed in place.
#[derive(Debug)]
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

    /// Copies keys `start..end` (any stride) into `buf`, as their 64-bit patterns: a contiguous
    /// array as one slice (a copy the compiler vectorises), with the interpreter held for less.
    fn copy_into(&self, start: usize, end: usize, buf: &mut Vec<u64>) {
        fn copy<T: Copy>(view: ArrayView1<'_, T>, buf: &mut Vec<u64>, to_u64: fn(T) -> u64) {
            match view.as_slice() {
                Some(values) => buf.extend(values.iter().map(|&value| to_u64(value))),
                None => buf.extend(view.iter().map(|&value| to_u64(value))),
            }
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

/// A pandas series or array of integers (numpy-backed, nullable `Int64` and the like, or
/// Arrow-backed) as a numpy array of their dtype, read in bulk as such; `ValueError` if it has
/// missing values, which are not keys; `None` for anything else.
fn pandas_integers<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let module = keys.get_type().module()?;
    if !module.to_str()?.starts_with("pandas") {
        return Ok(None);
    }
    let Ok(dtype) = keys.getattr("dtype") else {
        return Ok(None);
    };
    let integers = dtype
        .getattr("kind")
        .and_then(|kind| kind.extract::<String>())
        .is_ok_and(|kind| matches!(kind.as_str(), "i" | "u" | "b"));
    if !integers {
        return Ok(None);
    }
    if keys
        .call_method0("isna")?
        .call_method0("any")?
        .is_truthy()?
    {
        return Err(PyValueError::new_err(format!(
            "keys of dtype {dtype} have missing values, which are not keys: drop them first \
             (keys.dropna()), then pass the rest (or keys.dropna().to_numpy())"
        )));
    }
    // A nullable dtype names the numpy dtype of its values; a numpy one is its own.
    let numpy_dtype = dtype.getattr("numpy_dtype").unwrap_or(dtype);
    let kwargs = pyo3::types::PyDict::new(keys.py());
    kwargs.set_item("dtype", numpy_dtype)?;
    Ok(Some(keys.call_method("to_numpy", (), Some(&kwargs))?))
}

/// What a bulk call's `keys` argument is.
#[derive(Debug)]
enum Source<'py> {
    /// A numpy integer array.
    Array(IntArray<'py>),
    /// Keys read by a [`KeyReader`].
    Objects(KeyReader<'py>),
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
        let converted = pandas_integers(keys)?;
        let keys = converted.as_ref().unwrap_or(keys);
        let Ok(array) = keys.cast::<PyUntypedArray>() else {
            return Ok(Self::Objects(KeyReader::new(keys)?));
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
            b'U' | b'S' | b'O' => Ok(Self::Objects(KeyReader::array(keys, array.len()))),
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
            Self::Objects(reader) => reader.len_hint(),
        }
    }

    /// Calls `work` on each segment of up to `segment` keys in order, while it returns
    /// `Ok(true)`. An item that is not a key (or an iterator that raises) ends the call with its
    /// error, after `work` has done the keys before it.
    fn for_each_segment(
        self,
        py: Python<'_>,
        segment: usize,
        mut work: impl FnMut(Python<'_>, Keys<'_>) -> PyResult<bool>,
    ) -> PyResult<()> {
        let len_hint = self.len_hint();
        match self {
            Self::Array(array) => {
                let mut buf = Vec::with_capacity(segment.min(array.len()));
                let mut start = 0;
                while start < array.len() {
                    let end = (start + segment).min(array.len());
                    array.copy_into(start, end, &mut buf);
                    if !work(py, Keys::Ints(&buf))? {
                        break;
                    }
                    start = end;
                }
            }
            Self::Objects(mut reader) => {
                let mut keys = Segment::with_capacity(segment.min(len_hint));
                loop {
                    keys.clear();
                    // A key that is not one ends the call, after the keys before it are done.
                    let end = reader.read_segment(segment, &mut keys);
                    let go_on = keys.is_empty() || work(py, Keys::Read(keys.keys()))?;
                    match end {
                        SegmentEnd::Bad(err) => return Err(err),
                        SegmentEnd::Full if go_on => {}
                        SegmentEnd::Full | SegmentEnd::Exhausted => break,
                    }
                }
            }
        }
        Ok(())
    }
}

/// `op` on the filter's hashes of each piece of the keys `reader` reads, segments read by the
/// calling thread while other threads hash and work on the pieces of the one before
/// ([`pipelined`]).
fn by_hash_on_threads<B: Backend, R: Send>(
    py: Python<'_>,
    filter: &B,
    reader: KeyReader<'_>,
    threads: usize,
    go_on: impl Fn(&R) -> bool + Sync,
    op: impl Fn(&[u64]) -> R + Sync,
) -> PyResult<Vec<R>> {
    let work = |keys: SegmentKeys<'_>| {
        let mut hashes = vec![0; keys.len()];
        Keys::Read(keys).hash_into(filter, &mut hashes);
        op(&hashes)
    };
    pipelined(py, reader, threads, work, go_on)
}

/// Whether each key may be in the filter, as a numpy `bool` array.
pub fn contains_many<'py, B: Backend>(
    py: Python<'py>,
    filter: &B,
    keys: &Bound<'py, PyAny>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let look_up = |hashes: &[u64]| {
        let mut answers = vec![false; hashes.len()];
        filter.contains_hashes(hashes, &mut answers);
        answers
    };
    let source = match Source::new(keys)? {
        Source::Objects(reader) if threads > 1 => {
            let answers = by_hash_on_threads(py, filter, reader, threads, |_| true, look_up)?;
            return Ok(PyArray1::from_vec(py, answers.concat()));
        }
        source => source,
    };
    // Zeroed by the allocator (fresh pages of a large one), so that the answers' pages are
    // first touched by the lookups, with the interpreter released, not by a fill while it is
    // held; grown if the keys outnumber the hint, cut to the keys read at the end.
    let mut answers = vec![false; source.len_hint()];
    let mut done = 0;
    let mut hashes = Vec::new();
    source.for_each_segment(py, SEGMENT * threads, |py, keys| {
        let (start, end) = (done, done + keys.len());
        if answers.len() < end {
            answers.resize(end, false);
        }
        done = end;
        hashes.resize(keys.len(), 0);
        let part = Part::new(keys, &mut hashes, &mut answers[start..end]);
        py.detach(|| {
            in_parts(
                threads,
                part,
                |part| {
                    part.keys.hash_into(filter, part.hashes);
                    filter.contains_hashes(part.hashes, part.answers);
                },
                |()| true,
            )
        });
        Ok(true)
    })?;
    answers.truncate(done);
    Ok(PyArray1::from_vec(py, answers))
}

/// Inserts every key; how many went in, or a `FilterFullError` at the first that found no room,
/// saying how many went in before it (counting `before`, the keys of the call that went in
/// earlier). With one thread the keys go in in order, and those before the one with no room
/// all went in; with more, pieces of a segment go in at once, and `inserted` counts what went
/// in of every piece tried.
pub fn add_many<B: Backend>(
    py: Python<'_>,
    filter: &B,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    before: usize,
) -> PyResult<usize> {
    let mut inserted = before;
    let mut full = None;
    let mut hashes = Vec::new();
    let mut tally = |outcome: Result<usize, ExtendError>| match outcome {
        Ok(n) => inserted += n,
        Err(err) => {
            inserted += err.inserted();
            full.get_or_insert(err);
        }
    };
    match Source::new(keys)? {
        Source::Objects(reader) if threads > 1 => {
            let outcomes =
                by_hash_on_threads(py, filter, reader, threads, Result::is_ok, |hashes| {
                    filter.extend_hashes(hashes)
                })?;
            outcomes.into_iter().for_each(&mut tally);
        }
        source => {
            source.for_each_segment(py, SEGMENT * threads, |py, keys| {
                hashes.resize(keys.len(), 0);
                let part = Part::new(keys, &mut hashes, &mut []);
                let outcomes = py.detach(|| {
                    in_parts(
                        threads,
                        part,
                        |part| {
                            part.keys.hash_into(filter, part.hashes);
                            filter.extend_hashes(part.hashes)
                        },
                        Result::is_ok,
                    )
                });
                let go_on = outcomes.iter().all(Result::is_ok);
                outcomes.into_iter().for_each(&mut tally);
                Ok(go_on)
            })?;
        }
    }
    match full {
        None => Ok(inserted - before),
        Some(err) => Err(errors::full(
            py,
            if threads == 1 {
                format!("{err}; {inserted} keys of this call went in before it")
            } else {
                format!("{err}; {inserted} keys of this call went in")
            },
            inserted,
        )),
    }
}

/// Removes one copy of each key that is present; how many were removed.
pub fn discard_many<B: Backend>(
    py: Python<'_>,
    filter: &B,
    keys: &Bound<'_, PyAny>,
    threads: usize,
) -> PyResult<usize> {
    let remove = |hashes: &[u64]| {
        hashes
            .iter()
            .filter(|&&hash| filter.remove_hash(hash))
            .count()
    };
    let source = match Source::new(keys)? {
        Source::Objects(reader) if threads > 1 => {
            let removed = by_hash_on_threads(py, filter, reader, threads, |_| true, remove)?;
            return Ok(removed.into_iter().sum());
        }
        source => source,
    };
    let mut removed = 0;
    let mut hashes = Vec::new();
    source.for_each_segment(py, SEGMENT * threads, |py, keys| {
        hashes.resize(keys.len(), 0);
        let part = Part::new(keys, &mut hashes, &mut []);
        removed += py
            .detach(|| {
                in_parts(
                    threads,
                    part,
                    |part| {
                        part.keys.hash_into(filter, part.hashes);
                        remove(part.hashes)
                    },
                    |_| true,
                )
            })
            .into_iter()
            .sum::<usize>();
        Ok(true)
    })?;
    Ok(removed)
}
