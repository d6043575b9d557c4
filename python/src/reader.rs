//! Reading a bulk call's keys from Python into [`Segment`]s, with the interpreter held.
//!
//! An exact `list` or `tuple` is read by index, and a numpy array of objects, strings or bytes a
//! slice at a time made a list by numpy (`tolist`, in C); any other iterable through the iterator
//! protocol. An item that is an exact `str`, the common key, is read in place: one type
//! comparison and `PyUnicode_AsUTF8AndSize`, its bytes copied into the segment, with no
//! reference taken. Any other item goes through [`with_key`] with a reference of its own.

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyList, PySlice, PyTuple};

use crate::keys::with_key;
use crate::segment::{Segment, BYTES_PER_KEY};

/// How a segment's reading ended.
#[derive(Debug)]
pub enum SegmentEnd {
    /// The segment is full; more keys may follow.
    Full,
    /// The keys ran out.
    Exhausted,
    /// An item that is not a key, or an iterator that raised: its error, after the keys before it.
    Bad(PyErr),
}

/// Where the keys come from.
#[derive(Debug)]
enum Source<'py> {
    /// An exact list or tuple and the index of its next item.
    Sequence(Sequence<'py>),
    /// A 1-D numpy array whose items are Python objects of their own (dtype `O`, `U` or `S`), the
    /// index of its next slice, and the slice being read.
    Array {
        array: Bound<'py, PyAny>,
        len: usize,
        next: usize,
        slice: Option<Sequence<'py>>,
    },
    Iterator(Bound<'py, PyIterator>),
}

/// An exact list or tuple, read by index.
#[derive(Debug)]
struct Sequence<'py> {
    object: Bound<'py, PyAny>,
    /// `PyList_GetItem` or `PyTuple_GetItem`: a borrowed reference, or null past the end.
    get_item: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
    next: usize,
}

/// A bulk call's keys, read a segment at a time.
#[derive(Debug)]
pub struct KeyReader<'py> {
    source: Source<'py>,
    /// The number of keys, or 0 where not known before reading them.
    len_hint: usize,
}

impl<'py> KeyReader<'py> {
    /// A reader of `keys`: a list, tuple or any other iterable.
    pub fn new(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        let source = match Sequence::new(keys) {
            Some(sequence) => Source::Sequence(sequence),
            None => Source::Iterator(keys.try_iter()?),
        };
        let len_hint = keys.len().unwrap_or(0);
        Ok(Self { source, len_hint })
    }

    /// A reader of a 1-D numpy array of Python objects, strings or bytes.
    pub fn array(array: &Bound<'py, PyAny>, len: usize) -> Self {
        Self {
            source: Source::Array {
                array: array.clone(),
                len,
                next: 0,
                slice: None,
            },
            len_hint: len,
        }
    }

    /// The number of keys, or 0 where not known before reading them.
    pub fn len_hint(&self) -> usize {
        self.len_hint
    }

    /// Appends keys to `segment` until it holds `max_keys`, or its bytes reach
    /// [`BYTES_PER_KEY`] times that, or the keys run out.
    pub fn read_segment(&mut self, max_keys: usize, segment: &mut Segment) -> SegmentEnd {
        let limit = Limit {
            keys: max_keys,
            bytes: max_keys.saturating_mul(BYTES_PER_KEY),
        };
        match &mut self.source {
            Source::Sequence(sequence) => sequence.read(limit, segment),
            Source::Array {
                array,
                len,
                next,
                slice,
            } => loop {
                if let Some(sequence) = slice {
                    match sequence.read(limit, segment) {
                        SegmentEnd::Exhausted => *slice = None,
                        end => return end,
                    }
                }
                if *next >= *len {
                    return SegmentEnd::Exhausted;
                }
                let end = (*next + limit.keys).min(*len);
                match array_slice(array, *next, end) {
                    Ok(sequence) => *slice = Some(sequence),
                    Err(err) => return SegmentEnd::Bad(err),
                }
                *next = end;
            },
            Source::Iterator(items) => read_iterator(items, limit, segment),
        }
    }
}

/// Items `start..end` of a numpy array as a list of Python objects.
fn array_slice<'py>(
    array: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
) -> PyResult<Sequence<'py>> {
    let slice = PySlice::new(array.py(), start as isize, end as isize, 1);
    let list = array.get_item(slice)?.call_method0("tolist")?;
    Sequence::new(&list).ok_or_else(|| PyRuntimeError::new_err("numpy's tolist gave no list"))
}

/// When a segment is full.
#[derive(Debug, Clone, Copy)]
struct Limit {
    keys: usize,
    bytes: usize,
}

impl Limit {
    #[inline]
    fn reached(self, segment: &Segment) -> bool {
        segment.len() >= self.keys || segment.byte_len() >= self.bytes
    }
}

impl<'py> Sequence<'py> {
    /// `keys` read by index, if it is an exact list or tuple.
    fn new(keys: &Bound<'py, PyAny>) -> Option<Self> {
        // Without a GIL another thread may drop a list's item while it is read: such builds
        // take the iterator protocol, whose items are references of their own.
        if cfg!(Py_GIL_DISABLED) {
            return None;
        }
        // Exact types only: a subclass may override `__iter__`, which the iterator protocol
        // then calls.
        let get_item = if keys.is_exact_instance_of::<PyList>() {
            ffi::PyList_GetItem
        } else if keys.is_exact_instance_of::<PyTuple>() {
            ffi::PyTuple_GetItem
        } else {
            return None;
        };
        Some(Self {
            object: keys.clone(),
            get_item,
            next: 0,
        })
    }

    /// Reads items from `next` on into `segment` until `limit` or the end.
    fn read(&mut self, limit: Limit, segment: &mut Segment) -> SegmentEnd {
        let py = self.object.py();
        while !limit.reached(segment) {
            let Ok(index) = ffi::Py_ssize_t::try_from(self.next) else {
                return SegmentEnd::Exhausted;
            };
            // SAFETY: `object` is an exact list or tuple (checked in `new`) that this reader
            // holds a reference to, and `get_item` is the C API's getter of that type, which
            // checks the index against the current length: it returns a borrowed reference to
            // the item, or null (with `IndexError` set) past the end. The interpreter is held
            // for the whole of `read` (`py` is its token), and the crate is built only for
            // interpreters with a GIL here (see `new`), so no other thread changes the list
            // while this runs.
            let item = unsafe { (self.get_item)(self.object.as_ptr(), index) };
            if item.is_null() {
                // The end: a list may also have been shortened by Python code a key ran.
                drop(PyErr::take(py));
                return SegmentEnd::Exhausted;
            }
            // SAFETY: `item` is a live object borrowed from the sequence just now, and nothing
            // has run since that could drop it.
            match unsafe { read_str(py, item, segment) } {
                StrRead::Read => {}
                StrRead::Bad(err) => return SegmentEnd::Bad(err),
                StrRead::NotStr => {
                    // SAFETY: as above. The new reference keeps the item alive whatever the
                    // code a key of another type may run (a memoryview's `tobytes`, the type's
                    // name for an error) does to the sequence.
                    let item = unsafe { Bound::from_borrowed_ptr(py, item) };
                    if let Err(err) = with_key(&item, |key| segment.push(key)) {
                        return SegmentEnd::Bad(err);
                    }
                }
            }
            self.next += 1;
        }
        SegmentEnd::Full
    }
}

/// What [`read_str`] made of an item.
#[derive(Debug)]
enum StrRead {
    /// An exact `str`, its UTF-8 now in the segment.
    Read,
    /// An item of another type: nothing read.
    NotStr,
    /// An exact `str` with no UTF-8 (a lone surrogate): its `UnicodeEncodeError`.
    Bad(PyErr),
}

/// Reads `item` into `segment` if it is an exact `str`, copying its UTF-8.
///
/// # Safety
/// `item` points to a live object, kept alive until this returns, with the interpreter held.
#[inline(always)]
unsafe fn read_str(py: Python<'_>, item: *mut ffi::PyObject, segment: &mut Segment) -> StrRead {
    // SAFETY: `item` is live (the caller's promise), so its type pointer can be read; of the
    // `str` type object only the address is taken.
    let is_str = unsafe { ffi::Py_TYPE(item) == &raw mut ffi::PyUnicode_Type };
    if !is_str {
        return StrRead::NotStr;
    }
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `item` is a live exact `str`. `PyUnicode_AsUTF8AndSize` (limited API since 3.10,
    // the wheel's minimum) runs no Python code: it returns the string's UTF-8 buffer (encoded
    // once with the object allocator, which starts no garbage collection, and cached in the
    // string), valid as long as the string lives; or null with an exception set.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(item, &mut size) };
    if data.is_null() {
        return StrRead::Bad(PyErr::fetch(py));
    }
    // CPython gives no negative size with a buffer; were it to, `with_key` reads the item.
    let Ok(size) = usize::try_from(size) else {
        return StrRead::NotStr;
    };
    // SAFETY: `data` points to `size` initialised bytes owned by `item`, which lives (and, a
    // `str` being immutable, is unchanged) until this returns; they are copied before it does.
    let bytes = unsafe { core::slice::from_raw_parts(data.cast::<u8>(), size) };
    segment.push_bytes(bytes);
    StrRead::Read
}

/// Reads items of an iterator into `segment` until `limit` or the end.
fn read_iterator(
    items: &mut Bound<'_, PyIterator>,
    limit: Limit,
    segment: &mut Segment,
) -> SegmentEnd {
    while !limit.reached(segment) {
        let item = match items.next() {
            None => return SegmentEnd::Exhausted,
            Some(Err(err)) => return SegmentEnd::Bad(err),
            Some(Ok(item)) => item,
        };
        // SAFETY: `item` is an owned reference: the object lives until it is dropped.
        match unsafe { read_str(items.py(), item.as_ptr(), segment) } {
            StrRead::Read => {}
            StrRead::Bad(err) => return SegmentEnd::Bad(err),
            StrRead::NotStr => {
                if let Err(err) = with_key(&item, |key| segment.push(key)) {
                    return SegmentEnd::Bad(err);
                }
            }
        }
    }
    SegmentEnd::Full
}
