//! Keys read from Python on several threads: the calling thread reads the next segment of keys
//! (which needs the interpreter, and so one thread) while helper threads hash and work on the
//! pieces of the segment before; then it helps them finish, with the interpreter released.
//!
//! A segment holds no reference to a Python object, so any thread may drop it; at most the
//! segment being read and the one being worked on are alive.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use pyo3::prelude::*;

use crate::reader::{KeyReader, SegmentEnd};
use crate::segment::{Segment, SegmentKeys};

/// Keys per piece of a segment, the unit a thread takes.
const PIECE: usize = 1 << 13;

/// Pieces per segment read at a time: enough that each thread has several to take.
const PIECES_PER_SEGMENT_AND_THREAD: usize = 4;

/// Keys `start..end` of a segment, the `index`-th piece of the call.
#[derive(Debug)]
struct Piece {
    segment: Arc<Segment>,
    start: usize,
    end: usize,
    index: usize,
}

/// A piece done (its result) or skipped (`None`), and its segment, handed back so that the
/// calling thread reuses the segment's memory once every piece of it is done.
type Done<R> = (usize, Option<R>, Arc<Segment>);

#[derive(Debug, Default)]
struct Queue {
    state: Mutex<QueueState>,
    more: Condvar,
}

#[derive(Debug, Default)]
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

    fn push(&self, segment: Segment, next_index: &mut usize) {
        let segment = Arc::new(segment);
        let mut state = self.lock();
        for start in (0..segment.len()).step_by(PIECE) {
            state.pieces.push_back(Piece {
                segment: Arc::clone(&segment),
                start,
                end: (start + PIECE).min(segment.len()),
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
#[derive(Debug)]
struct CloseOnDrop<'a>(&'a Queue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// `work` on every key `reader` reads, a piece at a time, on the calling thread and
/// `threads - 1` helpers; no piece is started once `work` returned a result `go_on` refuses.
/// The results of the pieces done, in key order. An item that is not a key (or an iterator
/// that raises) ends the call with its error, after the keys before it were worked on.
pub fn pipelined<R: Send>(
    py: Python<'_>,
    mut reader: KeyReader<'_>,
    threads: usize,
    work: impl Fn(SegmentKeys<'_>) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> PyResult<Vec<R>> {
    let segment_keys = PIECE * PIECES_PER_SEGMENT_AND_THREAD * threads;
    // Room for a whole segment only where the keys may fill it.
    let room = segment_keys.min(match reader.len_hint() {
        0 => PIECE,
        len => len,
    });
    let queue = Queue::default();
    let done: Mutex<Vec<Done<R>>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let run = |piece: Piece| {
        let result = (!stop.load(Ordering::Relaxed)).then(|| {
            let result = work(piece.segment.keys().slice(piece.start..piece.end));
            if !go_on(&result) {
                stop.store(true, Ordering::Relaxed);
            }
            result
        });
        let mut done = done.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        done.push((piece.index, result, piece.segment));
    };
    let help = || {
        while let Some(piece) = queue.try_pop() {
            run(piece);
        }
    };
    let mut results = Vec::new();
    // Keeps the results of the pieces done, and the memory of a segment all of whose are.
    let mut spare = None;
    let retire = |results: &mut Vec<(usize, R)>, spare: &mut Option<Segment>| {
        let finished =
            std::mem::take(&mut *done.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        for (index, result, segment) in finished {
            results.extend(result.map(|result| (index, result)));
            if let Ok(segment) = Arc::try_unwrap(segment) {
                *spare = Some(segment);
            }
        }
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
            let mut segment = spare.take().unwrap_or_else(|| Segment::with_capacity(room));
            segment.clear();
            let end = reader.read_segment(segment_keys, &mut segment);
            py.detach(help);
            retire(&mut results, &mut spare);
            if stop.load(Ordering::Relaxed) {
                break Ok(());
            }
            queue.push(segment, &mut next_index);
            match end {
                SegmentEnd::Full => {}
                SegmentEnd::Exhausted => break Ok(()),
                SegmentEnd::Bad(err) => break Err(err),
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
    retire(&mut results, &mut spare);
    outcome?;
    results.sort_unstable_by_key(|&(index, _)| index);
    Ok(results.into_iter().map(|(_, result)| result).collect())
}
