//! A bulk call's keys read from Python into [`Keys`] a segment at a time, interpreter held
//! (docs/python.md, "Bulk calls").

use numpy::ndarray::s;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyByteArray, PyBytes, PyIterator, PyList, PyMemoryView};
use pyo3::types::{PySlice, PyString};
use pyo3::types::{PyTuple, PyType};

use crate::keys::{type_name, with_key, Keys};

/// The characters a buffer format may start with to say its byte order and alignment.
const ORDERS: &[char] = &['@', '=', '<', '>', '!'];

#[derive(Debug)]
pub enum Reader<'py> {
    /// A numpy array of 64-bit integer patterns, viewed in place, and its next index.
    Ints(PyReadonlyArray1<'py, u64>, usize),
    /// Another numpy array, a slice at a time: next index, the dtype integers widen to (`None`:
    /// text and objects, listed), the reader of the slice.
    Slices(
        Bound<'py, PyAny>,
        usize,
        Option<&'static str>,
        Option<Box<Self>>,
    ),
    Sequence(Sequence<'py>),
    Iterator(Bound<'py, PyIterator>),
}

impl<'py> Reader<'py> {
    /// A reader of `keys`: a numpy array, a pandas integer series, or any iterable of keys.
    pub fn new(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = keys.py();
        // A view of bytes (format "B" or "c", a `bytes`' or `bytearray`'s, maybe after a byte
        // order: ctypes' "<B") is one key too.
        let view = keys.is_instance_of::<PyMemoryView>();
        let view_format = || keys.getattr("format")?.extract::<String>();
        let of_bytes = |format: String| matches!(format.trim_start_matches(ORDERS), "B" | "c");
        if keys.is_instance_of::<PyString>()
            || keys.is_instance_of::<PyBytes>()
            || keys.is_instance_of::<PyByteArray>()
            || (view && of_bytes(view_format()?))
        {
            return Err(PyTypeError::new_err(format!(
                "expected a collection of keys, got one {}: pass a list of it, or use the \
                 single-key method",
                type_name(keys)
            )));
        }
        // Masked entries hold no keys: refused, as a pandas column's missing values are.
        static MASKED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        if keys.is_instance(MASKED.import(py, "numpy.ma", "MaskedArray")?)?
            && keys.getattr("mask")?.call_method0("any")?.is_truthy()?
        {
            return Err(PyValueError::new_err(
                "keys have masked values, which are not keys: pass the others (keys.compressed())",
            ));
        }
        // A view of numbers is read as the array it is (memoryview iterates no format with a
        // byte order, nor more dimensions than one), its memory shared.
        let converted = match view {
            true => Some(py.import("numpy")?.call_method1("asarray", (keys,))?),
            false => pandas_integers(keys)?,
        };
        let keys = converted.as_ref().unwrap_or(keys);
        let Ok(array) = keys.cast::<PyUntypedArray>() else {
            return Self::items(keys);
        };
        let (dtype, ndim) = (array.dtype(), array.ndim());
        if ndim != 1 {
            let message = format!("expected a 1-D array of keys, got {ndim} dimensions");
            return Err(PyValueError::new_err(message));
        }
        // Integers widen to their sign's 64-bit type, each hashing as the int it equals; a view
        // of `u64`s needs alignment and whole-item strides (a record array's field has neither).
        let wide = match dtype.kind() {
            // Fixed-width text and bytes, numpy 2's variable-width text (`T`), objects.
            b'U' | b'S' | b'T' | b'O' => None,
            b'i' => Some("int64"),
            b'u' | b'b' => Some("uint64"),
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "keys must be integers, strings or bytes, not an array of dtype {}",
                    dtype.str()?
                )))
            }
        };
        let native = dtype.itemsize() == 8
            && dtype.is_native_byteorder() != Some(false)
            && array.is_aligned()
            && array.strides()[0] % 8 == 0;
        match wide {
            Some(_) if native => Ok(Self::Ints(u64_bits(keys)?, 0)),
            _ => Ok(Self::Slices(keys.clone(), 0, wide, None)),
        }
    }

    /// A reader of an iterable's items: by index if it is an exact list or tuple.
    fn items(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match Sequence::new(keys) {
            Some(sequence) => Self::Sequence(sequence),
            None => Self::Iterator(keys.try_iter()?),
        })
    }

    /// Appends up to `max` keys to `keys` (fewer if it fills first); whether more may follow.
    pub fn read(&mut self, max: usize, keys: &mut Keys) -> PyResult<bool> {
        match self {
            Self::Ints(array, next) => {
                let end = (*next + max).min(array.len());
                let view = array.as_array().slice_move(s![*next..end]);
                match view.as_slice() {
                    Some(values) => keys.ints.extend_from_slice(values),
                    None => keys.ints.extend(view.iter()),
                }
                *next = end;
                Ok(end < array.len())
            }
            Self::Sequence(sequence) => sequence.read(max, keys),
            Self::Slices(array, next, wide, slice) => loop {
                if let Some(items) = slice {
                    if items.read(max, keys)? {
                        return Ok(true);
                    }
                }
                let len = array.len()?;
                if *next >= len || keys.is_full(max) {
                    return Ok(*next < len);
                }
                let end = (*next + max - keys.len()).min(len);
                let items = PySlice::new(array.py(), *next as isize, end as isize, 1);
                let items = array.get_item(items)?;
                *slice = Some(Box::new(match wide {
                    Some(wide) => {
                        Self::Ints(u64_bits(&items.call_method1("astype", (*wide,))?)?, 0)
                    }
                    None => Self::items(&items.call_method0("tolist")?)?,
                }));
                *next = end;
            },
            Self::Iterator(items) => {
                while !keys.is_full(max) {
                    let Some(item) = items.next().transpose()? else {
                        return Ok(false);
                    };
                    with_key(&item, |key| keys.push(key))?;
                }
                Ok(true)
            }
        }
    }
}

/// A 64-bit integer array viewed as the `u64`s of its bits.
fn u64_bits<'py>(array: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, u64>> {
    let bits = array.call_method1("view", ("uint64",))?;
    Ok(bits.cast::<PyArray1<u64>>()?.try_readonly()?)
}

/// A pandas integer series or array as a numpy array; `ValueError` if a pandas column of
/// integers, text or objects has missing values (`None` for a column read as it is).
fn pandas_integers<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let module = keys.get_type().module();
    if !module.is_ok_and(|module| module.to_str().is_ok_and(|m| m.starts_with("pandas"))) {
        return Ok(None);
    }
    let Ok(dtype) = keys.getattr("dtype") else {
        return Ok(None);
    };
    let kind = dtype
        .getattr("kind")
        .and_then(|kind| kind.extract::<String>());
    let integers = matches!(kind.as_deref(), Ok("i" | "u" | "b"));
    if !integers && !matches!(kind.as_deref(), Ok("O" | "U" | "S")) {
        return Ok(None);
    }
    let missing = match keys.call_method0("isna") {
        Ok(missing) => missing.call_method0("any")?,
        // A `MultiIndex` has no missing values to look for: its items (tuples) are read.
        Err(err) if err.is_instance_of::<PyNotImplementedError>(keys.py()) => return Ok(None),
        Err(err) => return Err(err),
    };
    if missing.is_truthy()? {
        return Err(PyValueError::new_err(format!(
            "keys of dtype {dtype} have missing values, which are not keys: drop them first \
             (keys.dropna()), then pass the rest (or keys.dropna().to_numpy())"
        )));
    }
    if !integers {
        return Ok(None);
    }
    // A nullable dtype's `numpy_dtype` is its values'; a numpy dtype or a sparse one (whose
    // values are dense in `to_numpy`) has none, and is not a numpy dtype to convert to.
    let Ok(dtype) = dtype.getattr("numpy_dtype") else {
        return Ok(Some(keys.call_method0("to_numpy")?));
    };
    let kwargs = [("dtype", dtype)].into_py_dict(keys.py())?;
    Ok(Some(keys.call_method("to_numpy", (), Some(&kwargs))?))
}

/// An exact list or tuple, read by index.
#[derive(Debug)]
pub struct Sequence<'py> {
    object: Bound<'py, PyAny>,
    /// `PyList_GetItem` or `PyTuple_GetItem`: a borrowed reference, or null past the end.
    get_item: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
    next: usize,
}

impl<'py> Sequence<'py> {
    /// `keys` if an exact list or tuple (a subclass may override `__iter__`); `None` without a
    /// GIL, where another thread may drop a list's item while it is read.
    fn new(keys: &Bound<'py, PyAny>) -> Option<Self> {
        let get_item = match keys {
            _ if cfg!(Py_GIL_DISABLED) => return None,
            _ if keys.is_exact_instance_of::<PyList>() => ffi::PyList_GetItem,
            _ if keys.is_exact_instance_of::<PyTuple>() => ffi::PyTuple_GetItem,
            _ => return None,
        };
        Some(Self {
            object: keys.clone(),
            get_item,
            next: 0,
        })
    }

    /// Reads items into `keys` until it is full (then `true`) or the end; out of line, where
    /// its loop compiles tighter.
    #[inline(never)]
    fn read(&mut self, max: usize, keys: &mut Keys) -> PyResult<bool> {
        let py = self.object.py();
        let left = self.object.len()?.saturating_sub(self.next);
        keys.reserve(left.min(max.saturating_sub(keys.len())));
        while !keys.is_full(max) {
            let index = self.next as ffi::Py_ssize_t;
            // SAFETY: `object` is an exact list or tuple (`new`) that this reader holds, and
            // `get_item` its type's C getter, which checks `index` (`next`, never past a length
            // it had: the cast keeps it) against the current length: a borrowed reference to the
            // item, or null (`IndexError` set) past the end. The interpreter is held and there is
            // a GIL (`new`), so the list changes only while Python code runs: only once a key of
            // another type holds a reference of its own (below), never before the item's use.
            let item = unsafe { (self.get_item)(self.object.as_ptr(), index) };
            if item.is_null() {
                // The end: a list may also have been shortened by Python code a key ran.
                drop(PyErr::take(py));
                return Ok(false);
            }
            // SAFETY: `item` is a live object borrowed from the sequence just now, and nothing
            // has run since that could drop it.
            if !unsafe { read_str(py, item, keys)? } {
                // SAFETY: as above; the new reference keeps the item alive whatever Python code
                // its reading runs (a memoryview's `tobytes`, an error's type name) does.
                let item = unsafe { Bound::from_borrowed_ptr(py, item) };
                with_key(&item, |key| keys.push(key))?;
            }
            self.next += 1;
        }
        Ok(true)
    }
}

/// Copies `item`'s UTF-8 into `keys` if it is an exact `str`; whether it was one.
///
/// # Safety
/// `item` points to a live object, kept alive until this returns, with the interpreter held.
#[inline(always)]
unsafe fn read_str(py: Python<'_>, item: *mut ffi::PyObject, keys: &mut Keys) -> PyResult<bool> {
    // SAFETY: `item` is live (the caller's promise), so its type pointer can be read; of the
    // `str` type object only the address is taken.
    if unsafe { ffi::Py_TYPE(item) != &raw mut ffi::PyUnicode_Type } {
        return Ok(false);
    }
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `item` is a live exact `str`. `PyUnicode_AsUTF8AndSize` (limited API since 3.10,
    // the wheel's minimum) runs no Python code: it returns the string's UTF-8 buffer (encoded
    // once with the object allocator, which starts no garbage collection, and cached in the
    // string), valid as long as the string lives; or null with an exception set.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(item, &mut size) };
    if data.is_null() {
        return Err(PyErr::fetch(py));
    }
    // CPython gives no negative size with a buffer; were it to, `with_key` reads the item.
    let Ok(size) = usize::try_from(size) else {
        return Ok(false);
    };
    // SAFETY: `data` points to `size` initialised bytes owned by `item`, which lives (and, a
    // `str` being immutable, is unchanged) until this returns; they are copied before it does.
    keys.push_bytes(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), size) });
    Ok(true)
}
