//! Finding room: a breadth-first search of the cuckoo graph for a path to an empty slot.
//!
//! As in libcuckoo, the search reads buckets without locks, so what it finds may be stale by the
//! time it is used. [`CuckooPath`] records, for each hop, which fingerprint should move out of
//! which bucket; the mover checks each hop again under the stripe locks before it moves anything.
//! A path needs no more: its hops are checked where they are made. But a search that finds
//! nothing is a claim that the item has no room, so such a claim is checked by a search that is
//! validated like a lookup: given the stripes, it loads each bucket's stripe stamp before it reads
//! the bucket, and [`SearchQueue::unchanged`] checks them all again at the end. If any moved, the
//! buckets were read at different moments, and "no path" may hold at none of them.
//! Breadth-first (rather than the paper's random walk) finds the shortest path, so the fewest
//! fingerprints move and the fewest locks are taken.

use super::bucket::BucketCodec;
use super::index::{BucketIndex, Fingerprint, Place};
use super::queue::Node;
pub(crate) use super::queue::{with_queue, SearchQueue};
use super::stripe::Stripes;
use super::table::Table;

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

/// Searches from `roots` for the nearest bucket with an empty slot. `None` when there is none
/// within the limits: the table is, for this item, full, if the search was given `stripes` and
/// [`SearchQueue::unchanged`] confirms that no writer changed the buckets meanwhile.
///
/// The search goes a ring at a time (the buckets one more hop from the roots), listing the next
/// ring only if no bucket of this one has room. In a table the caches hold each bucket is read
/// as it is listed; in a larger one a ring's buckets are prefetched as listed and read once the
/// ring is whole (docs/benchmarks.md, "Where an insert's instructions go").
pub(crate) fn search(
    table: &Table,
    codec: &BucketCodec,
    placement: &impl Place,
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
        codec,
        placement,
        stripes,
        limits,
    };
    let end = match (stripes.is_some(), table.writes_worth_prefetching()) {
        (false, false) => search.rings::<false, false>(queue),
        (false, true) => search.rings::<false, true>(queue),
        (true, false) => search.rings::<true, false>(queue),
        (true, true) => search.rings::<true, true>(queue),
    };
    end.map(|end| path_to(queue.nodes(), end))
}

/// What a search reads, and how far it may go.
struct Search<'a, P> {
    table: &'a Table,
    codec: &'a BucketCodec,
    placement: &'a P,
    stripes: Option<&'a Stripes>,
    limits: SearchLimits,
}

impl<P: Place> Search<'_, P> {
    /// The search from the roots queued, ring by ring: the index of the node it ends at. With
    /// `VALIDATE`, each bucket's stripe stamp is recorded before it is read; with `PREFETCH`,
    /// buckets are prefetched as they are listed and read once their ring is whole.
    fn rings<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
    ) -> Option<usize> {
        let mut ring = 0..queue.len();
        for depth in 0..=self.limits.max_hops {
            // Buckets listed unread are read now: the roots, and every ring of a prefetched
            // table.
            if depth == 0 || PREFETCH {
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
            // A ring cut short by the bucket limit is still read (as listed, or on the next
            // turn), then the search ends.
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

    /// Whether the node's bucket has room, its stripe's stamp recorded first for a validated
    /// search.
    #[inline(always)]
    fn read<const VALIDATE: bool>(&self, node: &mut Node) -> bool {
        let bucket = node.bucket as usize;
        if let (true, Some(stripes)) = (VALIDATE, self.stripes) {
            node.stamp = stripes.stamp(bucket);
        }
        has_room(self.table, self.codec, bucket)
    }

    /// Lists the buckets the fingerprints of node `parent`'s bucket would move to.
    /// A writer may have made room in the parent since the scan: a path to it is as good, and
    /// listing fewer children than the scan saw could end the search with room left. Buckets of
    /// plain fingerprints in 64 bits are read as one `u64`, slot by slot.
    #[inline(always)]
    fn expand<const VALIDATE: bool, const PREFETCH: bool>(
        &self,
        queue: &mut SearchQueue,
        parent: usize,
    ) -> Listed {
        let from = queue.nodes()[parent].bucket as usize;
        let mut listed = Listed::Full;
        if self.codec.is_plain_narrow() {
            let bits = self.table.load_bits(from);
            if self.codec.first_free_narrow(bits).is_some() {
                return Listed::Room(parent);
            }
            for fp in self.codec.lane_fingerprints(bits) {
                listed = self.child::<VALIDATE, PREFETCH>(queue, from, parent, fp);
                if !matches!(listed, Listed::Full) {
                    break;
                }
            }
        } else {
            let raw = self.table.load(from);
            if self.codec.has_free(&raw) {
                return Listed::Room(parent);
            }
            for &fp in self.codec.fingerprints(&raw).as_slice() {
                listed = self.child::<VALIDATE, PREFETCH>(queue, from, parent, fp);
                if !matches!(listed, Listed::Full) {
                    break;
                }
            }
        }
        listed
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
        let to = self.placement.alternate(from, fp);
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

/// Whether the bucket has an empty slot. Buckets of plain fingerprints in 64 bits are read as
/// one `u64`, inline: the search reads every bucket it reaches this way.
#[inline(always)]
fn has_room(table: &Table, codec: &BucketCodec, bucket: BucketIndex) -> bool {
    if codec.is_plain_narrow() {
        codec.first_free_narrow(table.load_bits(bucket)).is_some()
    } else {
        codec.has_free(&table.load(bucket))
    }
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
    use crate::raw::index::Placement;

    /// A table of 4-slot buckets to search, with its codec, placement and stripes.
    struct Searched {
        table: Table,
        codec: BucketCodec,
        placement: Placement,
        stripes: Stripes,
    }

    impl Searched {
        /// [`search`] of this table, validated against the stripes.
        fn search(
            &self,
            roots: [BucketIndex; 2],
            limits: SearchLimits,
            queue: &mut SearchQueue,
        ) -> Option<CuckooPath> {
            let Self {
                table,
                codec,
                placement,
                stripes,
            } = self;
            search(table, codec, placement, Some(stripes), roots, limits, queue)
        }
    }

    /// A table of `bucket_count` 4-slot buckets, each full but for about one in `free_one_in`.
    fn nearly_full(bucket_count: usize, free_one_in: u64, seed: u64) -> Searched {
        let codec = BucketCodec::new(4, 12, false);
        let table = Table::new(bucket_count, &codec).unwrap();
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
                assert!(codec.insert(&mut raw, (next() % 4095) as u32 + 1));
            }
            table.store(bucket, &raw);
        }
        let stripes = Stripes::new(64, Table::lock_group_shift(&codec), bucket_count, 4).unwrap();
        let placement = Placement::new(bucket_count, 12);
        Searched {
            table,
            codec,
            placement,
            stripes,
        }
    }

    /// Fewest moves to an empty slot from either root, by plain breadth-first search; `None`
    /// beyond `max_hops`.
    fn fewest_moves(
        searched: &Searched,
        roots: [BucketIndex; 2],
        max_hops: usize,
    ) -> Option<usize> {
        let Searched {
            table,
            codec,
            placement,
            ..
        } = searched;
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
        let searched = nearly_full(5000, 40, 7);
        for max_hops in [2, 3] {
            let limits = SearchLimits {
                max_hops,
                max_search_buckets: usize::MAX,
            };
            let most_nodes = shortest_paths_from_2000_roots(&searched, limits);
            // Two hops from two roots of 4 slots list at most 2 + 8 + 32 buckets; three hops
            // read up to 170, and the shorter searches after them reuse a longer buffer.
            assert_eq!(most_nodes > 42, max_hops == 3, "{most_nodes} nodes");
        }
    }

    #[test]
    fn paths_are_shortest_in_a_table_whose_rings_are_prefetched_and_read_whole() {
        // 800,000 buckets of 48 bits: 4.8 MB, past the prefetch threshold, where a ring's
        // buckets are read once all are listed rather than as each is.
        let searched = nearly_full(800_000, 40, 7);
        assert!(searched.table.writes_worth_prefetching());
        let limits = SearchLimits {
            max_hops: 2,
            max_search_buckets: usize::MAX,
        };
        shortest_paths_from_2000_roots(&searched, limits);
    }

    /// Checks the searches from 2000 roots against [`fewest_moves`]; returns the most nodes one
    /// search queued.
    fn shortest_paths_from_2000_roots(searched: &Searched, limits: SearchLimits) -> usize {
        let Searched {
            table,
            codec,
            placement,
            ..
        } = searched;
        let mut queue = SearchQueue::default();
        let (mut found, mut missing, mut most_nodes) = (0, 0, 0);
        for root in 0..2000 {
            let roots = [root, placement.alternate(root, root as u32 % 4095 + 1)];
            let want = fewest_moves(searched, roots, limits.max_hops);
            let path = searched.search(roots, limits, &mut queue);
            most_nodes = most_nodes.max(queue.len());
            assert_eq!(path.map(|p| p.hops), want, "roots {roots:?}");
            // A search that is not validated finds the same shortest path.
            let unvalidated = search(table, codec, placement, None, roots, limits, &mut queue);
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
        let searched = nearly_full(5000, 12, 11);
        let Searched {
            table,
            codec,
            placement,
            ..
        } = &searched;
        let mut queue = SearchQueue::default();
        for root in 0..2000 {
            let roots = [root, placement.alternate(root, 1)];
            let only_roots = SearchLimits {
                max_hops: 4,
                max_search_buckets: 2,
            };
            let path = searched.search(roots, only_roots, &mut queue);
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
            let path = searched.search(roots, three, &mut queue);
            if !root_free && roots[0] != roots[1] && first_child != roots[0] {
                let child_free = codec.has_free(&table.load(first_child));
                assert_eq!(path.map(|p| p.hops), child_free.then_some(1));
            }
        }
    }

    #[test]
    fn a_search_that_finds_no_room_is_stale_once_a_bucket_it_read_changes() {
        let searched = nearly_full(5000, 40, 7);
        let Searched {
            placement, stripes, ..
        } = &searched;
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
            if searched.search(roots, limits, &mut queue).is_some() {
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
            assert!(searched.search(roots, limits, &mut queue).is_none());
            assert!(queue.unchanged(stripes));
        }
        assert!(
            checked[0] > 0 && checked[1] > 0,
            "roots without a path: {checked:?}"
        );
    }
}
