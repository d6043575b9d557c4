//! The one scheduler of `threads=N`: while the calling thread reads the next segment of work
//! (which needs the interpreter, and so one thread), `N - 1` helpers work on the pieces of the
//! segment before; then it takes pieces too, with the interpreter released, until none is left.
//! Two segments are held, their memory reused turn about.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::prelude::*;

/// Units per piece, the share a thread takes at a time: threads take pieces until none is left,
/// so a thread the machine does not run for a while leaves its share to the others.
const PIECE: usize = 1 << 13;

/// The most threads a bulk call may ask for.
pub const MAX_THREADS: usize = 256;

/// Work that can be cut in pieces: `len()` units, any range of which is worked on alone.
pub trait Segment: Default + Sync {
    fn len(&self) -> usize;
    fn clear(&mut self);
}

/// `work` on every piece of the segments `read` fills (on the calling thread, attached; it
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
    let stop = AtomicBool::new(false);
    let mut results = Vec::new();
    let (mut segment, mut next) = (S::default(), S::default());
    let mut more = read(&mut segment);
    loop {
        let pieces = segment.len().div_ceil(PIECE);
        let taken = AtomicUsize::new(0);
        let take = || {
            let mut done = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let at = taken.fetch_add(1, Ordering::Relaxed);
                if at >= pieces {
                    break;
                }
                let result = work(&segment, at * PIECE..((at + 1) * PIECE).min(segment.len()));
                if !go_on(&result) {
                    stop.store(true, Ordering::Relaxed);
                }
                done.push((at, result));
            }
            done
        };
        let mut next_more = Ok(false);
        let mut done = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads.min(pieces))
                .map(|_| scope.spawn(take))
                .collect();
            if matches!(more, Ok(true)) {
                next.clear();
                next_more = read(&mut next);
            }
            py.detach(|| {
                let mut done = take();
                for helper in helpers {
                    // A panic in a piece goes on in the caller, where PyO3 makes it an exception.
                    done.extend(
                        helper
                            .join()
                            .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                    );
                }
                done
            })
        });
        done.sort_unstable_by_key(|&(at, _)| at);
        results.extend(done.into_iter().map(|(_, result)| result));
        if stop.load(Ordering::Relaxed) || !more? {
            return Ok(results);
        }
        std::mem::swap(&mut segment, &mut next);
        more = next_more;
    }
}
