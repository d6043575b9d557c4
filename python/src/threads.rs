//! The one scheduler of `threads=N`: the calling thread reads a segment of work (which needs the
//! interpreter, and so one thread) while `N - 1` helpers work on the pieces of the segment
//! before; then it helps them finish, with the interpreter released. At most the segment being
//! read and the one being worked on are alive, and the memory of one all of whose pieces are done
//! is reused for the next.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use pyo3::prelude::*;

/// Units per piece, the share a thread takes at a time: threads take pieces until none is left,
/// so a thread the machine does not run for a while leaves its share to the others.
const PIECE: usize = 1 << 13;

/// The most threads a bulk call may ask for.
pub const MAX_THREADS: usize = 256;

/// Work that can be cut in pieces: `len()` units, any range of which is worked on alone.
pub trait Segment: Default + Send + Sync {
    fn len(&self) -> usize;
    fn clear(&mut self);
}

/// Units `range` of a segment, the `index`-th piece of the call.
struct Piece<S> {
    segment: Arc<S>,
    range: Range<usize>,
    index: usize,
}

/// A piece's index, its result (`None` if skipped) and its segment, handed back so that the
/// calling thread reuses the segment's memory once every piece of it is done.
type Done<S, R> = (usize, Option<R>, Arc<S>);

/// A lock that a panic elsewhere does not make unusable: nothing that can panic runs under ours.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pieces waiting, and whether the calling thread will push no more.
struct Queue<S> {
    state: Mutex<(VecDeque<Piece<S>>, bool)>,
    more: Condvar,
}

impl<S> Queue<S> {
    fn push(&self, segment: S, next_index: &mut usize, len: usize) {
        let segment = Arc::new(segment);
        let mut state = lock(&self.state);
        for start in (0..len).step_by(PIECE) {
            let range = start..(start + PIECE).min(len);
            let segment = Arc::clone(&segment);
            state.0.push_back(Piece {
                segment,
                range,
                index: *next_index,
            });
            *next_index += 1;
        }
        drop(state);
        self.more.notify_all();
    }

    /// The next piece; if `wait`, waiting for one until the queue is closed.
    fn pop(&self, wait: bool) -> Option<Piece<S>> {
        let mut state = lock(&self.state);
        loop {
            if let Some(piece) = state.0.pop_front() {
                return Some(piece);
            }
            if state.1 || !wait {
                return None;
            }
            state = self.more.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Closes the queue however the calling thread leaves, so that no helper waits forever.
struct Closer<'a, S>(&'a Queue<S>);

impl<S> Drop for Closer<'_, S> {
    fn drop(&mut self) {
        lock(&self.0.state).1 = true;
        self.0.more.notify_all();
    }
}

/// `work` on every piece of the segments `read` fills (attached, on the calling thread; it
/// returns whether more may follow), on the calling thread and `threads - 1` helpers; no piece
/// is started once `work` returned a result `go_on` refuses. The results of the pieces done, in
/// order. An error of `read` ends the call after the work on what it read before it.
pub fn in_pieces<S: Segment, R: Send>(
    py: Python<'_>,
    threads: usize,
    mut read: impl FnMut(&mut S) -> PyResult<bool>,
    work: impl Fn(&S, Range<usize>) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let queue = Queue {
        state: Mutex::new((VecDeque::new(), false)),
        more: Condvar::new(),
    };
    let done: Mutex<Vec<Done<S, R>>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let run = |piece: Piece<S>| {
        let result = (!stop.load(Ordering::Relaxed)).then(|| {
            let result = work(&piece.segment, piece.range);
            if !go_on(&result) {
                stop.store(true, Ordering::Relaxed);
            }
            result
        });
        lock(&done).push((piece.index, result, piece.segment));
    };
    let help = || {
        while let Some(piece) = queue.pop(false) {
            run(piece);
        }
    };
    let mut results = Vec::new();
    let mut spare = None;
    let mut retire = |results: &mut Vec<(usize, R)>| {
        for (index, result, segment) in std::mem::take(&mut *lock(&done)) {
            results.extend(result.map(|result| (index, result)));
            spare = Arc::try_unwrap(segment).ok().or(spare.take());
        }
        spare.take()
    };
    let mut outcome = Ok(());
    std::thread::scope(|scope| {
        let closer = Closer(&queue);
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                scope.spawn(|| {
                    while let Some(piece) = queue.pop(true) {
                        run(piece);
                    }
                })
            })
            .collect();
        let mut next_index = 0;
        let mut segment = S::default();
        loop {
            segment.clear();
            let more = read(&mut segment);
            // The segment before is done while this one was read, or now.
            py.detach(help);
            let reuse = retire(&mut results);
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let len = segment.len();
            queue.push(
                std::mem::replace(&mut segment, reuse.unwrap_or_default()),
                &mut next_index,
                len,
            );
            match more {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => {
                    outcome = Err(err);
                    break;
                }
            }
        }
        py.detach(|| {
            help();
            drop(closer);
            for helper in helpers {
                // A panic in a piece goes on in the caller, where PyO3 makes it an exception.
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
            }
        });
    });
    retire(&mut results);
    outcome?;
    results.sort_unstable_by_key(|&(index, _)| index);
    Ok(results.into_iter().map(|(_, result)| result).collect())
}
