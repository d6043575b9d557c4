//! Iterable keys on several threads: the calling thread reads the next chunk of keys from
//! Python (which needs the interpreter, and so one thread) while helper threads hash and work on
//! the pieces of the chunk before; then it helps them finish, with the interpreter released.
//!
//! Held keys are dropped only by the calling thread while attached: helpers hand each piece's
//! chunk back with its result, so every reference to a Python object is released under the
//! interpreter, and at most the chunk being read and the one being worked on are alive.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use pyo3::prelude::*;

use crate::keys::{read_chunk, HeldKey};

/// Keys per piece of a chunk, the unit a thread takes.
const PIECE: usize = 1 << 13;

/// Pieces per chunk read at a time: enough that each thread has several to take.
const PIECES_PER_CHUNK_AND_THREAD: usize = 4;

/// Keys `start..end` of a chunk, the `index`-th piece of the call.
struct Piece {
    chunk: Arc<Vec<HeldKey>>,
    start: usize,
    end: usize,
    index: usize,
}

/// A piece done (its result) or skipped (`None`), and its chunk, for the calling thread to drop.
type Done<R> = (usize, Option<R>, Arc<Vec<HeldKey>>);

#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    more: Condvar,
}

#[derive(Default)]
struct QueueState {
    pieces: VecDeque<Piece>,
    closed: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // Nothing that can panic runs under this lock, so a poisoned one still holds a queue.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, chunk: Vec<HeldKey>, next_index: &mut usize) {
        let chunk = Arc::new(chunk);
        let mut state = self.lock();
        for start in (0..chunk.len()).step_by(PIECE) {
            state.pieces.push_back(Piece {
                chunk: Arc::clone(&chunk),
                start,
                end: (start + PIECE).min(chunk.len()),
                index: *next_index,
            });
            *next_index += 1;
        }
        drop(state);
        self.more.notify_all();
    }

    fn try_pop(&self) -> Option<Piece> {
        self.lock().pieces.pop_front()
    }

    /// The next piece, waiting for one; `None` once the queue is closed and empty.
    fn wait_pop(&self) -> Option<Piece> {
        let mut state = self.lock();
        loop {
            if let Some(piece) = state.pieces.pop_front() {
                return Some(piece);
            }
            if state.closed {
                return None;
            }
            state = self
                .more
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.more.notify_all();
    }
}

/// Closes the queue however the calling thread leaves, so that no helper waits forever.
struct CloseOnDrop<'a>(&'a Queue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// `work` on every key of the iterable `keys`, a piece at a time, on the calling thread and
/// `threads - 1` helpers; no piece is started once `work` returned a result `go_on` refuses.
/// The results of the pieces done, in key order. An item that is not a key (or an iterator
/// that raises) ends the call with its error, after the keys before it were worked on.
pub fn pipelined<R: Send>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    threads: usize,
    work: impl Fn(&[HeldKey]) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let mut items = keys.try_iter()?;
    let chunk = PIECE * PIECES_PER_CHUNK_AND_THREAD * threads;
    // Room for a whole chunk only where the keys may fill it.
    let len_hint = keys.len().unwrap_or(PIECE);
    let queue = Queue::default();
    let done: Mutex<Vec<Done<R>>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let run = |piece: Piece| {
        let result = (!stop.load(Ordering::Relaxed)).then(|| {
            let result = work(&piece.chunk[piece.start..piece.end]);
            if !go_on(&result) {
                stop.store(true, Ordering::Relaxed);
            }
            result
        });
        let mut done = done.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        done.push((piece.index, result, piece.chunk));
    };
    let help = || {
        while let Some(piece) = queue.try_pop() {
            run(piece);
        }
    };
    let mut results = Vec::new();
    // Attached: keeps the results, drops the chunks (and so the Python references) of pieces done.
    let retire = |results: &mut Vec<(usize, R)>| {
        let finished =
            std::mem::take(&mut *done.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        results.extend(
            finished
                .into_iter()
                .filter_map(|(index, result, _chunk)| Some((index, result?))),
        );
    };
    let outcome = std::thread::scope(|scope| {
        let closer = CloseOnDrop(&queue);
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                scope.spawn(|| {
                    while let Some(piece) = queue.wait_pop() {
                        run(piece);
                    }
                })
            })
            .collect();
        let mut next_index = 0;
        let outcome = loop {
            let mut held = Vec::with_capacity(chunk.min(len_hint));
            let bad = read_chunk(&mut items, chunk, &mut held);
            py.detach(help);
            retire(&mut results);
            if stop.load(Ordering::Relaxed) {
                break Ok(());
            }
            let last = held.len() < chunk;
            queue.push(held, &mut next_index);
            if let Some(bad) = bad {
                break Err(bad);
            }
            if last {
                break Ok(());
            }
        };
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
        outcome
    });
    retire(&mut results);
    outcome?;
    results.sort_unstable_by_key(|&(index, _)| index);
    Ok(results.into_iter().map(|(_, result)| result).collect())
}
