//! Finding room: a breadth-first search of the cuckoo graph for a path to a free slot, in any
//! table that implements [`PathTable`] (the plain filter's, and the expiring filter's).
//!
//! As in libcuckoo, the search reads buckets without locks, so a [`CuckooPath`] may be stale
//! when used: the mover checks each hop again under the stripe locks. "No path", a claim that
//! the item has no room, is checked by a search validated like a lookup: given the stripes, it
//! loads each bucket's stamp before reading it, and [`SearchQueue::unchanged`] checks them all
//! at the end; if any moved, "no path" may hold at no moment. Breadth-first (not the paper's
//! random walk) finds the shortest path: the fewest moves and locks.

use super::index::{BucketIndex, Fingerprint, Place};
use super::queue::Node;
pub(crate) use super::queue::{with_queue, SearchQueue};
use super::stripe::Stripes;
use super::RawFilter;

/// How far and how wide the search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SearchLimits {
    /// Most fingerprints one path moves (libcuckoo uses 5).
    pub(crate) max_hops: usize,
    /// Most buckets the search reads.
    pub(crate) max_search_buckets: usize,
}

/// The longest path [`SearchLimits::max_hops`] may ask for.
pub(crate) const MAX_HOPS: usize = 8;

/// Hops a search may take by default: libcuckoo's 5, but 8 for 2-slot buckets, whose narrow
/// search tree would otherwise stop filling at about 82% instead of 87%.
pub(crate) fn default_max_hops(bucket_size: usize) -> usize {
    if bucket_size == 2 {
        8
    } else {
        5
    }
}

/// What the search reads of a table, each bucket without locks. Implemented by tables whose
/// writers lock the raw core's [`Stripes`], which a validated search is given.
pub(crate) trait PathTable {
    /// Whether an unvalidated search skips reading the roots, which its caller has just read
    /// full under their locks (a table whose free slots cost more to find than its
    /// fingerprints). A root freed since is expanded as if full.
    const SKIPS_FULL_ROOTS: bool = false;

    /// Whether `bucket` has a free slot.
    fn has_room(&self, bucket: BucketIndex) -> bool;

    /// Hands `bucket`'s fingerprints to `each`, slot by slot, while it returns `true`. If the
    /// read shows a free slot (freed since the search found the bucket full), returns `true`
    /// instead, listing nothing: a path to it is as good.
    fn fingerprints(&self, bucket: BucketIndex, each: impl FnMut(Fingerprint) -> bool) -> bool;

    /// The other bucket of `fp`, which is in `bucket`.
    fn alternate(&self, bucket: BucketIndex, fp: Fingerprint) -> BucketIndex;

    /// Asks for `bucket`'s lines, to be read later.
    fn prefetch(&self, bucket: BucketIndex);

    /// Whether the table is past the caches: then a ring's buckets are prefetched as listed
    /// and read once it is whole.
    fn prefetch_rings(&self) -> bool;
}

impl<P: Place> PathTable for RawFilter<P> {
    /// Buckets of plain fingerprints in 64 bits read as one `u64`, inline.
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
            for fp in self.codec.lane_fingerprints(bits) {
                if !each(fp) {
                    break;
                }
            }
        } else {
            let raw = self.table.load(bucket);
            if self.codec.has_free(&raw) {
                return true;
            }
            for &fp in self.codec.fingerprints(&raw).as_slice() {
                if !each(fp) {
                    break;
                }
            }
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

/// Searches from `roots` for the nearest bucket with a free slot. `None` when there is none
/// within the limits: the table is full for this item if the search was given `stripes` and
/// [`SearchQueue::unchanged`] confirms no writer changed the buckets meanwhile.
///
/// A ring at a time (the buckets one more hop out), the next listed only if none of this one
/// has room; past the caches a ring is prefetched as listed and read once whole
/// (docs/benchmarks.md, "Where an insert's instructions go").
pub(crate) fn search(
    table: &impl PathTable,
    stripes: Option<&Stripes>,
    roots: [BucketIndex; 2],
    limits: SearchLimits,
    queue: &mut SearchQueue,
) -> Option<CuckooPath> {
    queue.clear();
    let root_count = if roots[0] == roots[1] { 1 } else { 2 };
    for (i, &root) in roots[..root_count].iter().enumerate() {
        queue.push(Node {
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
    end.map(|end| path_to(queue.nodes(), end))
}

/// What a search reads, and how far it may go.
struct Search<'a, T> {
    table: &'a T,
    stripes: Option<&'a Stripes>,
    limits: SearchLimits,
}

impl<T: PathTable> Search<'_, T> {
    /// The search from the queued roots: the index of the node it ends at. `VALIDATE` records
    /// each bucket's stamp before reading it; `PREFETCH` reads a ring once it is whole.
    fn rings<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
    ) -> Option<usize> {
        let mut ring = 0..queue.len();
        for depth in 0..=self.limits.max_hops {
            // Listed unread: the roots (unless skipped), and every ring of a prefetched table.
            let roots = VALIDATE || !T::SKIPS_FULL_ROOTS;
            if (depth == 0 && roots) || (depth > 0 && PREFETCH) {
                if let Some(end) = ring
                    .clone()
                    .find(|&at| self.read::<VALIDATE>(&mut queue.nodes_mut()[at]))
                {
                    return Some(end);
                }
            }
            if depth == self.limits.max_hops || queue.len() >= self.limits.max_search_buckets {
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
            ring = ring.end..queue.len();
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

    /// Lists the buckets the fingerprints of node `parent`'s bucket would move to, or ends the
    /// search at the parent if it has room ([`PathTable::fingerprints`]).
    #[inline(always)]
    fn expand<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
        parent: usize,
    ) -> Listed {
        let from = queue.nodes()[parent].bucket as usize;
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

    /// Lists the bucket `fp` would move to from `from`, and reads it unless it is prefetched.
    #[inline(always)]
    fn child<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
        from: BucketIndex,
        parent: usize,
        fp: Fingerprint,
    ) -> Listed {
        if queue.len() == self.limits.max_search_buckets {
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
            queue.push(node);
            return Listed::Full;
        }
        let room = self.read::<VALIDATE>(&mut node);
        queue.push(node);
        if room {
            Listed::Room(queue.len() - 1)
        } else {
            Listed::Full
        }
    }
}

/// What listing the children of a bucket did.
enum Listed {
    /// Every bucket listed has no room or is yet to be read (or there was none to list).
    Full,
    /// The node at this index, the parent or a child just listed, was read and has room.
    Room(usize),
    /// The search is at its limit: nothing listed.
    AtLimit,
}

/// The path to node `end`, by its parents back to a root (the node that is its own parent).
fn path_to(queue: &[Node], end: usize) -> CuckooPath {
    let mut back = [0u32; MAX_HOPS + 1];
    let (mut at, mut hops) = (end, 0);
    while queue[at].parent as usize != at && hops < MAX_HOPS {
        back[hops] = at as u32;
        hops += 1;
        at = queue[at].parent as usize;
    }
    back[hops] = at as u32;
    let mut path = CuckooPath {
        buckets: [0; MAX_HOPS + 1],
        fps: [0; MAX_HOPS],
        hops,
    };
    for k in 0..=hops {
        let node = queue[back[hops - k] as usize];
        path.buckets[k] = node.bucket as BucketIndex;
        if k > 0 {
            path.fps[k - 1] = node.fp;
        }
    }
    path
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::raw::{Geometry, Shape};

    /// [`search`] of this filter, validated against its stripes.
    fn validated(
        filter: &RawFilter,
        roots: [BucketIndex; 2],
        limits: SearchLimits,
        queue: &mut SearchQueue,
    ) -> Option<CuckooPath> {
        search(filter, Some(&filter.stripes), roots, limits, queue)
    }

    /// A filter of `bucket_count` 4-slot buckets of 12-bit fingerprints, each full but for about
    /// one in `free_one_in`.
    fn nearly_full(bucket_count: usize, free_one_in: u64, seed: u64) -> RawFilter {
        let filter = RawFilter::new(&Geometry {
            shape: Shape {
                bucket_count,
                bucket_size: 4,
                fingerprint_bits: 12,
                semi_sorted: false,
                bucket_words: false,
            },
            stripes: 64,
            limits: SearchLimits {
                max_hops: 5,
                max_search_buckets: 2000,
            },
        })
        .unwrap();
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        for bucket in 0..bucket_count {
            let mut raw = [0u128; 2];
            let used = if next() % free_one_in == 0 { 3 } else { 4 };
            for _ in 0..used {
                assert!(filter.codec.insert(&mut raw, (next() % 4095) as u32 + 1));
            }
            filter.table.store(bucket, &raw);
        }
        filter
    }

    /// Fewest moves to an empty slot from either root, by plain breadth-first search; `None`
    /// beyond `max_hops`.
    fn fewest_moves(filter: &RawFilter, roots: [BucketIndex; 2], max_hops: usize) -> Option<usize> {
        let RawFilter {
            table,
            codec,
            placement,
            ..
        } = filter;
        let mut ring: Vec<BucketIndex> = roots.to_vec();
        for depth in 0..=max_hops {
            if ring.iter().any(|&b| codec.has_free(&table.load(b))) {
                return Some(depth);
            }
            ring = ring
                .iter()
                .flat_map(|&b| {
                    let fps = codec.fingerprints(&table.load(b));
                    let to: Vec<_> = fps
                        .as_slice()
                        .iter()
                        .map(|&fp| placement.alternate(b, fp))
                        .filter(|&to| to != b)
                        .collect();
                    to
                })
                .collect();
        }
        None
    }

    #[test]
    fn paths_are_shortest_and_every_hop_is_a_real_move() {
        let filter = nearly_full(5000, 40, 7);
        for max_hops in [2, 3] {
            let limits = SearchLimits {
                max_hops,
                max_search_buckets: usize::MAX,
            };
            let most_nodes = shortest_paths_from_2000_roots(&filter, limits);
            // Two hops from two roots of 4 slots list at most 2 + 8 + 32 buckets; three hops
            // read up to 170, and the shorter searches after them reuse a longer buffer.
            assert_eq!(most_nodes > 42, max_hops == 3, "{most_nodes} nodes");
        }
    }

    #[test]
    fn paths_are_shortest_in_a_table_whose_rings_are_prefetched_and_read_whole() {
        // 800,000 buckets of 48 bits: 4.8 MB, past the prefetch threshold, where a ring's
        // buckets are read once all are listed rather than as each is.
        let filter = nearly_full(800_000, 40, 7);
        assert!(filter.prefetch_rings());
        let limits = SearchLimits {
            max_hops: 2,
            max_search_buckets: usize::MAX,
        };
        shortest_paths_from_2000_roots(&filter, limits);
    }

    /// Checks the searches from 2000 roots against [`fewest_moves`]; returns the most nodes one
    /// search queued.
    fn shortest_paths_from_2000_roots(filter: &RawFilter, limits: SearchLimits) -> usize {
        let RawFilter {
            table,
            codec,
            placement,
            ..
        } = filter;
        let mut queue = SearchQueue::default();
        let (mut found, mut missing, mut most_nodes) = (0, 0, 0);
        for root in 0..2000 {
            let roots = [root, placement.alternate(root, root as u32 % 4095 + 1)];
            let want = fewest_moves(filter, roots, limits.max_hops);
            let path = validated(filter, roots, limits, &mut queue);
            most_nodes = most_nodes.max(queue.len());
            assert_eq!(path.map(|p| p.hops), want, "roots {roots:?}");
            // A search that is not validated finds the same shortest path.
            let unvalidated = search(filter, None, roots, limits, &mut queue);
            assert_eq!(unvalidated.map(|p| p.hops), want, "roots {roots:?}");
            let Some(path) = path else {
                missing += 1;
                continue;
            };
            found += 1;
            assert!(roots.contains(&path.buckets[0]));
            assert!(codec.has_free(&table.load(path.buckets[path.hops])));
            for (from, to, fp) in path.moves_backwards() {
                assert_eq!(placement.alternate(from, fp), to);
                assert!(
                    codec.count(&table.load(from), fp) > 0,
                    "{fp} is not in {from}"
                );
            }
        }
        // Both outcomes occur, so both were checked.
        assert!(
            found > 100 && missing > 0,
            "found {found}, missing {missing}"
        );
        most_nodes
    }

    #[test]
    fn the_bucket_limit_bounds_the_search_but_its_last_ring_is_still_read() {
        let filter = nearly_full(5000, 12, 11);
        let RawFilter {
            table,
            codec,
            placement,
            ..
        } = &filter;
        let mut queue = SearchQueue::default();
        for root in 0..2000 {
            let roots = [root, placement.alternate(root, 1)];
            let only_roots = SearchLimits {
                max_hops: 4,
                max_search_buckets: 2,
            };
            let path = validated(&filter, roots, only_roots, &mut queue);
            let root_free = roots.iter().any(|&b| codec.has_free(&table.load(b)));
            assert_eq!(path.is_some(), root_free);
            // Three buckets: the roots and the first child, which is read although the ring
            // it starts is cut short.
            let three = SearchLimits {
                max_hops: 4,
                max_search_buckets: 3,
            };
            let first_child = placement.alternate(
                roots[0],
                codec.fingerprints(&table.load(roots[0])).as_slice()[0],
            );
            let path = validated(&filter, roots, three, &mut queue);
            if !root_free && roots[0] != roots[1] && first_child != roots[0] {
                let child_free = codec.has_free(&table.load(first_child));
                assert_eq!(path.map(|p| p.hops), child_free.then_some(1));
            }
        }
    }

    #[test]
    fn a_search_that_finds_no_room_is_stale_once_a_bucket_it_read_changes() {
        let filter = nearly_full(5000, 40, 7);
        let RawFilter {
            placement, stripes, ..
        } = &filter;
        let mut queue = SearchQueue::default();
        // Three hops queue more nodes than two; the two sizes take turns in one queue, whose
        // buffer keeps the longer searches' nodes past the shorter ones'.
        let mut checked = [0; 2];
        for root in 0..4000 {
            let max_hops = 2 + root % 2;
            let limits = SearchLimits {
                max_hops,
                max_search_buckets: usize::MAX,
            };
            let roots = [root, placement.alternate(root, root as u32 % 4095 + 1)];
            if validated(&filter, roots, limits, &mut queue).is_some() {
                continue;
            }
            checked[max_hops - 2] += 1;
            assert!(queue.unchanged(stripes), "nothing was written");
            // The last bucket the search read: a write to its stripe makes the search stale,
            // and so does a writer still holding it.
            let last = queue.nodes().last().unwrap().bucket as usize;
            let guard = stripes.lock_pair::<false>(last, last);
            assert!(!queue.unchanged(stripes), "a read bucket is locked");
            drop(guard);
            assert!(!queue.unchanged(stripes), "a read bucket was written");
            // A search after the write reads the new stamps.
            assert!(validated(&filter, roots, limits, &mut queue).is_none());
            assert!(queue.unchanged(stripes));
        }
        assert!(
            checked[0] > 0 && checked[1] > 0,
            "roots without a path: {checked:?}"
        );
    }
}
