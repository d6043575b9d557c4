//! The path search's queue of buckets, and the queue each thread keeps between searches.

use super::index::Fingerprint;
use super::stripe::Stripes;
use crate::sync::MODEL_CHECKED;

/// A bucket the search reached, and how.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) bucket: u32,
    /// Index of the node this one was reached from; a root points to itself.
    pub(crate) parent: u32,
    /// The fingerprint that would move from the parent's bucket into this one.
    pub(crate) fp: Fingerprint,
    /// The stamp of the bucket's stripe, loaded just before the bucket was first read.
    pub(crate) stamp: u64,
}

/// The search's queue, in a buffer that only grows.
#[derive(Debug, Default)]
pub(crate) struct SearchQueue {
    pub(super) nodes: Vec<Node>,
}

/// Nodes a thread keeps room for between searches: the default limit's, with room to spare.
const KEPT_NODES: usize = 4096;

/// Runs `work` with this thread's [`SearchQueue`], or a new one (nested, torn down, loom).
pub(crate) fn with_queue<R>(work: impl FnOnce(&mut SearchQueue) -> R) -> R {
    use core::cell::Cell;
    thread_local! {
        static QUEUE: Cell<SearchQueue> = const {
            Cell::new(SearchQueue { nodes: Vec::new() })
        };
    }
    if MODEL_CHECKED {
        return work(&mut SearchQueue::default());
    }
    let mut queue = QUEUE.try_with(Cell::take).unwrap_or_default();
    let result = work(&mut queue);
    if queue.nodes.capacity() <= KEPT_NODES {
        // Fails only while the thread is torn down: the queue is dropped instead.
        let _ = QUEUE.try_with(|cell| cell.set(queue));
    }
    result
}

impl SearchQueue {
    /// Whether every bucket the last validated search read is unchanged: its "no path" held.
    pub(crate) fn unchanged(&self, stripes: &Stripes) -> bool {
        stripes.unchanged(
            self.nodes
                .iter()
                .map(|node| (node.bucket as usize, node.stamp)),
        )
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/queue.rs"]
mod tests;
