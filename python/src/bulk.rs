//! The bulk calls: keys read a segment at a time, hashed and worked on by the crate's prehashed
//! batch calls with the interpreter released, on `threads` threads ([`Call::in_pieces`]).

use std::panic;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use concurrent_cuckoo_filter::{CuckooFilter, Kind};
use numpy::{PyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

use crate::args::{self, Arg};
use crate::errors;
use crate::keys::Keys;
use crate::reader::Reader;

/// Keys per segment and thread, enough that releasing the interpreter costs little.
const SEGMENT: usize = 1 << 16;

/// Keys a thread takes at a time, so that one the machine does not run leaves the rest to others.
const PIECE: usize = 1 << 13;

/// A bulk call: its keys, worked on by `threads` threads, and the filter.
pub struct Call<'a, 'py, K> {
    keys: &'a Bound<'py, PyAny>,
    threads: usize,
    filter: &'a CuckooFilter<K>,
}

impl<'a, 'py, K: Kind + Sync> Call<'a, 'py, K> {
    pub fn new(
        keys: &'a Bound<'py, PyAny>,
        threads: Arg,
        filter: &'a CuckooFilter<K>,
    ) -> PyResult<Self> {
        let threads = args::threads(threads)?;
        Ok(Self {
            keys,
            threads,
            filter,
        })
    }

    /// `op` on the hashes of every piece of the keys, by the caller and `threads - 1` helpers:
    /// while the caller reads the next segment (attached), the helpers work on the one before;
    /// then the caller takes pieces too, detached. No piece starts once `go_on` refused a
    /// result. The results of the pieces done, in order; a bad key's error after the keys before.
    fn in_pieces<R: Send>(
        &self,
        op: impl Fn(&[u64]) -> R + Sync,
        go_on: impl Fn(&R) -> bool + Sync,
    ) -> PyResult<Vec<R>> {
        let mut reader = Reader::new(self.keys)?;
        // The hasher by value: its words stay in registers through the hashing loop.
        let hasher = *self.filter.hasher();
        let stop = AtomicBool::new(false);
        let mut results = Vec::new();
        let (mut segment, mut next) = (Keys::default(), Keys::default());
        let mut more = reader.read(SEGMENT * self.threads, &mut segment);
        loop {
            let (len, taken) = (segment.len(), AtomicUsize::new(0));
            let take = || {
                let mut done = Vec::new();
                while !stop.load(Relaxed) {
                    let at = taken.fetch_add(1, Relaxed);
                    if at * PIECE >= len {
                        break;
                    }
                    let result =
                        op(&segment.hashes(at * PIECE..((at + 1) * PIECE).min(len), hasher));
                    stop.fetch_or(!go_on(&result), Relaxed);
                    done.push((at, result));
                }
                done
            };
            let mut next_more = Ok(false);
            let mut done = std::thread::scope(|scope| {
                let helpers = self.threads.min(len.div_ceil(PIECE));
                // A helper the system refuses to start is left out: the others take its pieces.
                let helpers: Vec<_> = (1..helpers)
                    .map_while(|_| std::thread::Builder::new().spawn_scoped(scope, take).ok())
                    .collect();
                if matches!(more, Ok(true)) {
                    next.clear();
                    // Ctrl-C's `KeyboardInterrupt` ends the call here, as a bad key does.
                    let py = self.keys.py();
                    next_more = py
                        .check_signals()
                        .and_then(|()| reader.read(SEGMENT * self.threads, &mut next));
                }
                self.keys.py().detach(|| {
                    let mut done = take();
                    for helper in helpers {
                        // A panic in a piece goes on in the caller; PyO3 makes it an exception.
                        let theirs = helper.join().unwrap_or_else(|p| panic::resume_unwind(p));
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

    pub fn contains_many(&self) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let look_up = |hashes: &[u64]| {
            let mut answers = vec![false; hashes.len()];
            self.filter.contains_hash_batch_into(hashes, &mut answers);
            answers
        };
        // An input that says its length (an array view of stride 0, a memoryview of one, a
        // `range`) may claim more keys than memory holds answers for: said before any lookup,
        // rather than the allocator aborting on the way.
        let mut all = Vec::new();
        let claimed = match self.keys.cast::<PyUntypedArray>() {
            Ok(array) => Some(array.len()),
            Err(_) => self.keys.len().ok(),
        };
        if let Some(claimed) = claimed {
            all.try_reserve_exact(claimed).map_err(|_| {
                let message = format!("no memory for the answers to {claimed} keys");
                PyMemoryError::new_err(message)
            })?;
        }
        let answers = self.in_pieces(look_up, |_| true)?;
        let py = self.keys.py();
        py.detach(|| {
            answers
                .iter()
                .for_each(|piece| all.extend_from_slice(piece))
        });
        Ok(PyArray1::from_vec(py, all))
    }

    /// Inserts every key; how many, or `FilterFullError` counting those in and `before` (on one
    /// thread a prefix; on more, what went in of every piece tried).
    pub fn add_many(&self, before: usize) -> PyResult<usize> {
        let extend = |hashes: &[u64]| self.filter.try_extend_hashes(hashes);
        let outcomes = self.in_pieces(extend, Result::is_ok)?;
        let inserted = outcomes.iter().map(|outcome| match outcome {
            Ok(n) => *n,
            Err(err) => err.inserted(),
        });
        let inserted = before + inserted.sum::<usize>();
        let Some(Err(err)) = outcomes.iter().find(|outcome| outcome.is_err()) else {
            return Ok(inserted - before);
        };
        let what = if self.threads == 1 { " before it" } else { "" };
        let message = format!("{err}; {inserted} keys of this call went in{what}");
        Err(errors::full(self.keys.py(), message, inserted))
    }

    pub fn discard_many(&self) -> PyResult<usize> {
        let remove = |hashes: &[u64]| {
            hashes
                .iter()
                .filter(|&&h| self.filter.remove_hash(h))
                .count()
        };
        Ok(self.in_pieces(remove, |_| true)?.into_iter().sum())
    }
}
