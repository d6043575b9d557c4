//! The bulk calls: keys read from Python a segment at a time ([`Reader`]), hashed by the
//! filter's hasher and worked on through the crate's prehashed batch calls with the interpreter
//! released, on `threads` threads ([`in_pieces`]).

use concurrent_cuckoo_filter::{DefaultHashBuilder, ExtendError};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::errors;
use crate::keys::Keys;
use crate::reader::Reader;
use crate::threads::in_pieces;

/// Keys per segment and thread: large enough that releasing the interpreter costs little beside
/// the segment's work, small enough that its buffers stay in cache.
const SEGMENT: usize = 1 << 16;

/// `op` on `hasher`'s hashes of each piece of `keys`, in order.
fn by_hash<R: Send>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    hasher: &DefaultHashBuilder,
    op: impl Fn(&[u64]) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let mut reader = Reader::new(keys)?;
    let work = |keys: &Keys, range| op(&keys.hashes(range, hasher));
    let read = |keys: &mut Keys| reader.read(SEGMENT * threads, keys);
    in_pieces(py, threads, read, work, go_on)
}

/// Whether each key may be in the filter (`contains` answers a batch of hashes), as numpy bools.
pub fn contains_many<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    threads: usize,
    hasher: &DefaultHashBuilder,
    contains: impl Fn(&[u64], &mut [bool]) + Sync,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let look_up = |hashes: &[u64]| {
        let mut answers = vec![false; hashes.len()];
        contains(hashes, &mut answers);
        answers
    };
    let answers = by_hash(py, keys, threads, hasher, look_up, |_| true)?;
    Ok(PyArray1::from_vec(py, py.detach(|| answers.concat())))
}

/// Inserts every key (`extend` inserts a batch of hashes); how many went in, or a
/// `FilterFullError` at the first that found no room, saying how many went in before it
/// (counting `before`, the keys of the call that went in earlier). With one thread the keys go
/// in in order, and those before the one with no room all went in; with more, pieces go in at
/// once, and `inserted` counts what went in of every piece tried.
pub fn add_many(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    before: usize,
    hasher: &DefaultHashBuilder,
    extend: impl Fn(&[u64]) -> Result<usize, ExtendError> + Sync,
) -> PyResult<usize> {
    let mut inserted = before;
    let mut full = None;
    for outcome in by_hash(py, keys, threads, hasher, extend, Result::is_ok)? {
        match outcome {
            Ok(n) => inserted += n,
            Err(err) => {
                inserted += err.inserted();
                full.get_or_insert(err);
            }
        }
    }
    let Some(err) = full else {
        return Ok(inserted - before);
    };
    let what = if threads == 1 { " before it" } else { "" };
    let message = format!("{err}; {inserted} keys of this call went in{what}");
    Err(errors::full(py, message, inserted))
}

/// Removes one copy of each key that is present (`remove` removes one by hash); how many were.
pub fn discard_many(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    hasher: &DefaultHashBuilder,
    remove: impl Fn(u64) -> bool + Sync,
) -> PyResult<usize> {
    let remove = |hashes: &[u64]| hashes.iter().filter(|&&hash| remove(hash)).count();
    Ok(by_hash(py, keys, threads, hasher, remove, |_| true)?
        .into_iter()
        .sum())
}
