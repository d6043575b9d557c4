//! The bulk calls: keys read from Python a segment at a time ([`Reader`]), hashed by the
//! filter's hasher and worked on through the crate's prehashed batch calls with the interpreter
//! released, on `threads` threads by the one scheduler of `threads=N` ([`in_pieces`]).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use concurrent_cuckoo_filter::{CuckooFilter, Kind};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::errors;
use crate::keys::Keys;
use crate::reader::Reader;

/// Keys per segment and thread: large enough that releasing the interpreter costs little beside
/// the segment's work, small enough that its buffers stay in cache.
const SEGMENT: usize = 1 << 16;

/// Keys per piece, the share a thread takes at a time: threads take pieces until none is left,
/// so a thread the machine does not run for a while leaves its share to the others.
const PIECE: usize = 1 << 13;

/// The most threads a bulk call may ask for.
pub const MAX_THREADS: usize = 256;

/// `work` on every piece of the segments `read` fills (on the calling thread, attached; it
/// returns whether more may follow), by the calling thread and `threads - 1` helpers: while
/// the caller reads the next segment, the helpers work on the one before; then the caller
/// takes pieces too, detached. Two segments are held, their memory reused turn about. No piece
/// is started once `go_on` refused a result. The results of the pieces done, in order; an error
/// of `read` comes after the work on what it read before it.
fn in_pieces<R: Send>(
    py: Python<'_>,
    threads: usize,
    mut read: impl FnMut(&mut Keys) -> PyResult<bool>,
    work: impl Fn(&Keys, Range<usize>) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let stop = AtomicBool::new(false);
    let mut results = Vec::new();
    let (mut segment, mut next) = (Keys::default(), Keys::default());
    let mut more = read(&mut segment);
    loop {
        let (len, taken) = (segment.len(), AtomicUsize::new(0));
        let take = || {
            let mut done = Vec::new();
            while !stop.load(Relaxed) {
                let at = taken.fetch_add(1, Relaxed);
                if at * PIECE >= len {
                    break;
                }
                let result = work(&segment, at * PIECE..((at + 1) * PIECE).min(len));
                if !go_on(&result) {
                    stop.store(true, Relaxed);
                }
                done.push((at, result));
            }
            done
        };
        let mut next_more = Ok(false);
        let mut done = std::thread::scope(|scope| {
            let helpers = threads.min(len.div_ceil(PIECE));
            let helpers: Vec<_> = (1..helpers).map(|_| scope.spawn(take)).collect();
            if matches!(more, Ok(true)) {
                next.clear();
                next_more = read(&mut next);
            }
            py.detach(|| {
                let mut done = take();
                for helper in helpers {
                    // A panic in a piece goes on in the caller, where PyO3 makes it an exception.
                    let theirs = helper
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p));
                    done.extend(theirs);
                }
                done
            })
        });
        done.sort_unstable_by_key(|&(at, _)| at);
        results.extend(done.into_iter().map(|(_, result)| result));
        if stop.load(Relaxed) || !more? {
            return Ok(results);
        }
        std::mem::swap(&mut segment, &mut next);
        more = next_more;
    }
}

/// `op` on `filter`'s hashes of each piece of `keys`, in order, until `go_on` refuses a result.
fn by_hash<K: Kind + Sync, R: Send>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    filter: &CuckooFilter<K>,
    op: impl Fn(&[u64]) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let mut reader = Reader::new(keys)?;
    // The hasher by value: its words stay in registers through the hashing loop.
    let hasher = *filter.hasher();
    let work = |keys: &Keys, range| op(&keys.hashes(range, hasher));
    let read = |keys: &mut Keys| reader.read(SEGMENT * threads, keys);
    in_pieces(py, threads, read, work, go_on)
}

/// Whether each key may be in `filter`, as numpy bools.
pub fn contains_many<'py, K: Kind + Sync>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    threads: usize,
    filter: &CuckooFilter<K>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let look_up = |hashes: &[u64]| {
        let mut answers = vec![false; hashes.len()];
        filter.contains_hash_batch_into(hashes, &mut answers);
        answers
    };
    let answers = by_hash(py, keys, threads, filter, look_up, |_| true)?;
    Ok(PyArray1::from_vec(py, py.detach(|| answers.concat())))
}

/// Inserts every key; how many went in, or a `FilterFullError` at the first that found no room
/// saying how many went in before it (counting `before`, the call's keys that went in earlier).
/// With one thread the keys go in in order; with more, pieces go in at once, and `inserted`
/// counts what went in of every piece tried.
pub fn add_many<K: Kind + Sync>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    before: usize,
    filter: &CuckooFilter<K>,
) -> PyResult<usize> {
    let extend = |hashes: &[u64]| filter.try_extend_hashes(hashes);
    let outcomes = by_hash(py, keys, threads, filter, extend, Result::is_ok)?;
    let inserted = outcomes.iter().map(|outcome| match outcome {
        Ok(n) => *n,
        Err(err) => err.inserted(),
    });
    let inserted = before + inserted.sum::<usize>();
    let Some(Err(err)) = outcomes.iter().find(|outcome| outcome.is_err()) else {
        return Ok(inserted - before);
    };
    let what = if threads == 1 { " before it" } else { "" };
    let message = format!("{err}; {inserted} keys of this call went in{what}");
    Err(errors::full(py, message, inserted))
}

/// Removes one copy of each key that is present; how many were.
pub fn discard_many<K: Kind + Sync>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    filter: &CuckooFilter<K>,
) -> PyResult<usize> {
    let remove = |hashes: &[u64]| {
        hashes
            .iter()
            .filter(|&&hash| filter.remove_hash(hash))
            .count()
    };
    let removed = by_hash(py, keys, threads, filter, remove, |_| true)?;
    Ok(removed.into_iter().sum())
}
