//! Finding room: a breadth-first search (fewest moves and locks) of the cuckoo graph for a path
//! to a free slot, in any table that implements [`PathTable`]. As in libcuckoo, it reads buckets
//! without locks, so a [`CuckooPath`] may be stale when used: the mover checks each hop again
//! under the stripe locks. "No path", a claim that the item has no room, is checked by a search
//! validated like a lookup: given the stripes, it loads each bucket's stamp before reading it,
//! and [`SearchQueue::unchanged`] checks them all at the end; if any moved, it may hold at no
//! moment.

use super::index::{BucketIndex, Fingerprint, Place};
use super::queue::Node;
pub(crate) use super::queue::{with_queue, SearchQueue};
use super::stripe::Stripes;
use super::RawFilter;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SearchLimits {
    pub(crate) max_hops: usize,
    pub(crate) max_search_buckets: usize,
}

/// The longest path [`SearchLimits::max_hops`] may ask for.
pub(crate) const MAX_HOPS: usize = 8;

/// Hops by default: libcuckoo's 5, but 8 for 2-slot buckets, which fill to 87% instead of 82%.
pub(crate) fn default_max_hops(bucket_size: usize) -> usize {
    if bucket_size == 2 {
        8
    } else {
        5
    }
}

/// What the search reads of a table whose writers lock the raw core's [`Stripes`].
pub(crate) trait PathTable {
    /// Whether an unvalidated search skips reading the roots, which its caller has just read
    /// full under their locks. A root freed since is expanded as if full.
    const SKIPS_FULL_ROOTS: bool = false;

    fn has_room(&self, bucket: BucketIndex) -> bool;

    /// Hands `bucket`'s fingerprints to `each` while it returns `true`; if the bucket has a free
    /// slot (freed since the search found it full), returns `true` instead, listing nothing.
    fn fingerprints(&self, bucket: BucketIndex, each: impl FnMut(Fingerprint) -> bool) -> bool;

    /// The other bucket of `fp`, which is in `bucket`.
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex;

    fn prefetch(&self, bucket: BucketIndex);

    /// Whether a ring's buckets are prefetched as listed and read once it is whole.
    fn prefetch_rings(&self) -> bool;
}

impl<P: Place> PathTable for RawFilter<P> {
    #[inline(always)]
    fn has_room(&self, bucket: BucketIndex) -> bool {
        if self.codec.is_plain_narrow() {
            self.codec
                .first_free_narrow(self.table.load_bits(bucket))
                .is_some()
        } else {
            self.codec.has_free(&self.table.load(bucket))
        }
    }

    #[inline(always)]
    fn fingerprints(&self, bucket: BucketIndex, mut each: impl FnMut(Fingerprint) -> bool) -> bool {
        if self.codec.is_plain_narrow() {
            let bits = self.table.load_bits(bucket);
            if self.codec.first_free_narrow(bits).is_some() {
                return true;
            }
            self.codec.lane_fingerprints(bits).all(each);
        } else {
            let raw = self.table.load(bucket);
            if self.codec.has_free(&raw) {
                return true;
            }
            self.codec
                .fingerprints(&raw)
                .as_slice()
                .iter()
                .all(|&fp| each(fp));
        }
        false
    }

    #[inline(always)]
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex {
        self.placement.alternate(bucket, fp)
    }

    #[inline(always)]
    fn prefetch(&self, bucket: BucketIndex) {
        self.table.prefetch(bucket);
    }

    #[inline(always)]
    fn prefetch_rings(&self) -> bool {
        self.table.writes_worth_prefetching()
    }
}

/// A chain of moves that ends in a free slot: `fps[k]` moves from `buckets[k]` to its alternate
/// `buckets[k + 1]`, and `buckets[hops]` had a free slot when read. Done last hop first, each
/// move fills a hole and opens one nearer `buckets[0]`, one of the new item's buckets.
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

    /// The buckets the moves write, from the new item's to the free one.
    pub(crate) fn buckets(&self) -> &[BucketIndex] {
        &self.buckets[..=self.hops]
    }
}

/// Searches from `roots` for the nearest bucket with a free slot, a ring at a time. `None` is
/// "full" if the search was given `stripes` and [`SearchQueue::unchanged`] confirms it.
pub(crate) fn search(
    table: &impl PathTable,
    stripes: Option<&Stripes>,
    roots: [BucketIndex; 2],
    limits: SearchLimits,
    queue: &mut SearchQueue,
) -> Option<CuckooPath> {
    queue.nodes.clear();
    let root_count = if roots[0] == roots[1] { 1 } else { 2 };
    for (i, &root) in roots[..root_count].iter().enumerate() {
        queue.nodes.push(Node {
            bucket: root as u32,
            parent: i as u32,
            fp: 0,
            stamp: 0,
        });
    }
    // Each kind of search compiled apart: the flags cost no register in the loop.
    let search = Search {
        table,
        stripes,
        limits,
    };
    let end = match (stripes.is_some(), table.prefetch_rings()) {
        (false, false) => search.rings::<false, false>(queue),
        (false, true) => search.rings::<false, true>(queue),
        (true, false) => search.rings::<true, false>(queue),
        (true, true) => search.rings::<true, true>(queue),
    };
    end.map(|end| path_to(&queue.nodes, end))
}

struct Search<'a, T> {
    table: &'a T,
    stripes: Option<&'a Stripes>,
    limits: SearchLimits,
}

impl<T: PathTable> Search<'_, T> {
    /// The index of the node the search from the queued roots ends at. `VALIDATE` records each
    /// bucket's stamp before reading it; `PREFETCH` reads a ring once it is whole.
    fn rings<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
    ) -> Option<usize> {
        let mut ring = 0..queue.nodes.len();
        for depth in 0..=self.limits.max_hops {
            // Listed unread: the roots (unless skipped), and every ring of a prefetched table.
            let roots = VALIDATE || !T::SKIPS_FULL_ROOTS;
            if (depth == 0 && roots) || (depth > 0 && PREFETCH) {
                if let Some(end) = ring
                    .clone()
                    .find(|&at| self.read::<VALIDATE>(&mut queue.nodes[at]))
                {
                    return Some(end);
                }
            }
            if depth == self.limits.max_hops || queue.nodes.len() >= self.limits.max_search_buckets
            {
                break;
            }
            // A ring cut short by the bucket limit is still read, then the search ends.
            for parent in ring.clone() {
                match self.expand::<VALIDATE, PREFETCH>(queue, parent) {
                    Listed::Room(end) => return Some(end),
                    Listed::AtLimit => break,
                    Listed::Full => {}
                }
            }
            ring = ring.end..queue.nodes.len();
        }
        None
    }

    /// Whether the node's bucket has room, its stamp recorded first if `VALIDATE`.
    #[inline(always)]
    fn read<const VALIDATE: bool>(&self, node: &mut Node) -> bool {
        let bucket = node.bucket as usize;
        if let (true, Some(stripes)) = (VALIDATE, self.stripes) {
            node.stamp = stripes.stamp(bucket);
        }
        self.table.has_room(bucket)
    }

    /// Lists the buckets the fingerprints of node `parent`'s bucket would move to.
    #[inline(always)]
    fn expand<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
        parent: usize,
    ) -> Listed {
        let from = queue.nodes[parent].bucket as usize;
        let mut listed = Listed::Full;
        let room = self.table.fingerprints(
            from,
            #[inline(always)]
            |fp| {
                listed = self.child::<VALIDATE, PREFETCH>(queue, from, parent, fp);
                matches!(listed, Listed::Full)
            },
        );
        if room {
            Listed::Room(parent)
        } else {
            listed
        }
    }

    /// Lists the bucket `fp` would move to from `from`, read unless it is prefetched.
    #[inline(always)]
    fn child<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
        from: BucketIndex,
        parent: usize,
        fp: Fingerprint,
    ) -> Listed {
        if queue.nodes.len() == self.limits.max_search_buckets {
            return Listed::AtLimit;
        }
        let to = self.table.alternate(from, fp);
        // A fingerprint whose two buckets coincide cannot make room by moving.
        if fp == 0 || to == from {
            return Listed::Full;
        }
        let mut node = Node {
            bucket: to as u32,
            parent: parent as u32,
            fp,
            stamp: 0,
        };
        if PREFETCH {
            self.table.prefetch(to);
            queue.nodes.push(node);
            return Listed::Full;
        }
        let room = self.read::<VALIDATE>(&mut node);
        queue.nodes.push(node);
        if room {
            Listed::Room(queue.nodes.len() - 1)
        } else {
            Listed::Full
        }
    }
}

/// What listing the children of a bucket did.
enum Listed {
    /// Every bucket listed has no room or is yet to be read.
    Full,
    /// The node at this index, the parent or a child just listed, has room.
    Room(usize),
    AtLimit,
}

/// The path to node `end`, back to a root (the node that is its own parent), then reversed.
fn path_to(queue: &[Node], end: usize) -> CuckooPath {
    let mut path = CuckooPath {
        buckets: [0; MAX_HOPS + 1],
        fps: [0; MAX_HOPS],
        hops: 0,
    };
    let mut at = end;
    while queue[at].parent as usize != at && path.hops < MAX_HOPS {
        path.buckets[path.hops] = queue[at].bucket as BucketIndex;
        path.fps[path.hops] = queue[at].fp;
        path.hops += 1;
        at = queue[at].parent as usize;
    }
    path.buckets[path.hops] = queue[at].bucket as BucketIndex;
    path.buckets[..=path.hops].reverse();
    path.fps[..path.hops].reverse();
    path
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/path.rs"]
mod tests;
