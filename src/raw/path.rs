//! Finding room: a breadth-first search of the cuckoo graph for a path to an empty slot.
//!
//! As in libcuckoo, the search reads buckets without locks, so what it finds may be stale by the
//! time it is used. [`CuckooPath`] records, for each hop, which fingerprint should move out of
//! which bucket; the mover checks each hop again under the stripe locks before it moves anything.
//! Breadth-first (rather than the paper's random walk) finds the shortest path, so the fewest
//! fingerprints move and the fewest locks are taken.

use super::bucket::BucketLayout;
use super::index::{BucketIndex, Fingerprint, Placement};
use super::table::Table;

/// How far and how wide the search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SearchLimits {
    /// Most fingerprints one path moves (libcuckoo uses 5).
    pub(crate) max_hops: usize,
    /// Most buckets the search reads.
    pub(crate) max_buckets: usize,
}

/// The longest path [`SearchLimits::max_hops`] may ask for.
pub(crate) const MAX_HOPS: usize = 8;

/// Hops a search may take by default: libcuckoo's 5, but 8 for 2-slot buckets, whose narrow
/// search tree would otherwise stop filling at about 82% instead of 87%.
pub(crate) fn default_max_hops(slots: usize) -> usize {
    if slots == 2 {
        8
    } else {
        5
    }
}

/// A chain of moves that ends in an empty slot: `fps[k]` moves from `buckets[k]` to its alternate
/// `buckets[k + 1]`, and `buckets[hops]` had an empty slot when the search read it. Done from the
/// last hop back to the first, each move fills a hole and opens one a step nearer the start, so
/// that at the end `buckets[0]`, one of the new item's buckets, has room.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CuckooPath {
    buckets: [BucketIndex; MAX_HOPS + 1],
    fps: [Fingerprint; MAX_HOPS],
    hops: usize,
}

impl CuckooPath {
    /// The moves, last first: `(from, to, fingerprint)`.
    pub(crate) fn moves_backwards(
        &self,
    ) -> impl Iterator<Item = (BucketIndex, BucketIndex, Fingerprint)> + '_ {
        (0..self.hops)
            .rev()
            .map(|k| (self.buckets[k], self.buckets[k + 1], self.fps[k]))
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    bucket: u32,
    /// Index of the node this one was reached from; a root points to itself.
    parent: u32,
    /// The fingerprint that would move from the parent's bucket into this one.
    fp: Fingerprint,
    depth: u8,
}

/// Searches from `roots` for the nearest bucket with an empty slot. `None` when there is none
/// within the limits: the table is, for this item, full.
pub(crate) fn search(
    table: &Table,
    layout: &BucketLayout,
    placement: &Placement,
    roots: [BucketIndex; 2],
    limits: SearchLimits,
) -> Option<CuckooPath> {
    let mut queue: Vec<Node> = Vec::with_capacity(limits.max_buckets.min(64));
    let root_count = if roots[0] == roots[1] { 1 } else { 2 };
    for (i, &root) in roots[..root_count].iter().enumerate() {
        queue.push(Node {
            bucket: root as u32,
            parent: i as u32,
            fp: 0,
            depth: 0,
        });
    }
    let mut next = 0;
    while next < queue.len() {
        let node = queue[next];
        let raw = table.load(node.bucket as usize);
        if layout.has_free(&raw) {
            return Some(path_to(&queue, next));
        }
        if (node.depth as usize) < limits.max_hops {
            for &fp in layout.fingerprints(&raw).as_slice() {
                if queue.len() == limits.max_buckets {
                    break;
                }
                let to = placement.alternate(node.bucket as usize, fp);
                // A fingerprint whose two buckets coincide cannot make room by moving.
                if fp != 0 && to != node.bucket as usize {
                    // Children are read only after the rest of this level: start their loads now,
                    // so the search waits for many cache misses at once, not one after another.
                    table.prefetch(to);
                    queue.push(Node {
                        bucket: to as u32,
                        parent: next as u32,
                        fp,
                        depth: node.depth + 1,
                    });
                }
            }
        }
        next += 1;
    }
    None
}

fn path_to(queue: &[Node], end: usize) -> CuckooPath {
    let hops = queue[end].depth as usize;
    let mut path = CuckooPath {
        buckets: [0; MAX_HOPS + 1],
        fps: [0; MAX_HOPS],
        hops,
    };
    let mut at = end;
    for k in (0..=hops).rev() {
        let node = queue[at];
        path.buckets[k] = node.bucket as BucketIndex;
        if k > 0 {
            path.fps[k - 1] = node.fp;
        }
        at = node.parent as usize;
    }
    path
}
