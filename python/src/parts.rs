//! A bulk call's segment split across threads: pieces of it hashed and worked on by the calling
//! thread and helpers of its own. The filter is shared by threads as it is, so the pieces need
//! no lock of ours.
//!
//! Threads are the caller's choice (`threads=` of the bulk calls, 1 by default): a call on one
//! thread leaves the other cores to other Python threads, each releasing the interpreter for its
//! own filter work, and a call on several gives one Python thread more cores.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::bulk::Keys;

/// Keys per piece a split segment is cut into: the threads take pieces one at a time until none
/// is left, so a thread the machine does not run for a while leaves its share to the others
/// rather than holding up the segment.
const PIECE: usize = 1 << 13;

/// The most threads a bulk call may ask for.
pub const MAX_THREADS: usize = 256;

/// A segment's keys, the buffer their hashes go into, and the answers (empty where the call has
/// none), split alike.
#[derive(Debug)]
pub struct Part<'a> {
    pub keys: Keys<'a>,
    pub hashes: &'a mut [u64],
    pub answers: &'a mut [bool],
}

impl<'a> Part<'a> {
    /// `hashes` is as long as `keys`; `answers` as long or empty.
    pub fn new(keys: Keys<'a>, hashes: &'a mut [u64], answers: &'a mut [bool]) -> Self {
        debug_assert_eq!(keys.len(), hashes.len());
        debug_assert!(answers.is_empty() || answers.len() == keys.len());
        Self {
            keys,
            hashes,
            answers,
        }
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (keys, other_keys) = self.keys.split_at(mid);
        let (hashes, other_hashes) = self.hashes.split_at_mut(mid);
        let (answers, other_answers) = self.answers.split_at_mut(mid.min(self.answers.len()));
        (
            Self::new(keys, hashes, answers),
            Self::new(other_keys, other_hashes, other_answers),
        )
    }
}

/// `work` on `part`: whole on the calling thread if `threads` is 1 (or the part is small), or
/// else cut into pieces that the calling thread and `threads - 1` others take in turn, no new
/// piece being taken once `work` returned a result `go_on` refuses. The results of the pieces
/// done, in the order of the pieces.
pub fn in_parts<R: Send>(
    threads: usize,
    part: Part<'_>,
    work: impl Fn(Part<'_>) -> R + Sync,
    go_on: impl Fn(&R) -> bool + Sync,
) -> Vec<R> {
    let pieces = part.keys.len().div_ceil(PIECE);
    let threads = threads.min(pieces);
    if threads <= 1 {
        return vec![work(part)];
    }
    let mut queue = Vec::with_capacity(pieces);
    let mut rest = part;
    while rest.keys.len() > PIECE {
        let (piece, tail) = rest.split_at(PIECE);
        queue.push(piece);
        rest = tail;
    }
    queue.push(rest);
    let queue = Mutex::new(queue.into_iter().enumerate());
    let stop = AtomicBool::new(false);
    let take_pieces = || {
        let mut done = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            // The lock is held only to take a piece; a poisoned one means a piece panicked.
            let Some((at, piece)) = queue.lock().ok().and_then(|mut queue| queue.next()) else {
                break;
            };
            let result = work(piece);
            if !go_on(&result) {
                stop.store(true, Ordering::Relaxed);
            }
            done.push((at, result));
        }
        done
    };
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(take_pieces)).collect();
        let mut done = take_pieces();
        for helper in helpers {
            // A panic in a piece goes on in the caller, where PyO3 makes it an exception.
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|&(at, _)| at);
    done.into_iter().map(|(_, result)| result).collect()
}
