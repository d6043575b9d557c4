//! Making room: a breadth-first search, read without locks, from an insert's two full buckets to
//! the nearest bucket with a free slot (empty or expired), then its moves from the free end
//! back, each under the stripes of its two buckets and checked again there, the destination
//! stored (fingerprint and tag) before the source is cleared. A fingerprint only ever moves
//! between its own two buckets with its tag, under both their locks, so a validated lookup finds
//! it in one of them throughout; a move changes no item's presence, so a failed insert changed
//! nothing. The search is the plain filter's (`raw/path.rs`) on the raw core's queue: the
//! shortest path, so the fewest moves and locks, and a search that ends in a bounded number of
//! reads where a random walk at 95% load may take hundreds of hops.

use super::core::Table;
use super::slots::BUCKET_SIZE;
use crate::raw::{Guard, Place, SearchNode, SearchQueue, WRITE_PREFETCH_MIN_BYTES};

/// Most fingerprints one path moves: the plain filter's default for 4-slot buckets.
pub(crate) const MAX_HOPS: usize = 5;
/// Most buckets one search reads: the plain filter's default.
const MAX_SEARCH_BUCKETS: usize = 2000;

/// What a search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Search {
    /// The node of the queue whose bucket had a free slot: its path leads back to a root.
    Room(usize),
    /// No bucket within the limits had one.
    NoRoom,
}

impl Table {
    /// Searches from `roots` for the nearest bucket with a slot free in generation `g`, a ring
    /// of buckets (one hop further) at a time. In a table the caches hold, each bucket is read as
    /// it is listed, and the search ends at the first with room; in a larger one, a ring's
    /// buckets are prefetched as they are listed and read once it is whole, so that their loads
    /// overlap (the plain filter's search, `raw/path.rs`). With `validate`, each bucket's stripe
    /// stamp is recorded before it is read, so that [`SearchQueue::unchanged`] can confirm a
    /// [`Search::NoRoom`].
    pub(crate) fn search(
        &self,
        roots: [usize; 2],
        g: u64,
        queue: &mut SearchQueue,
        validate: bool,
    ) -> Search {
        queue.clear();
        let root_count = if roots[0] == roots[1] { 1 } else { 2 };
        for (i, &root) in roots[..root_count].iter().enumerate() {
            queue.push(SearchNode {
                bucket: root as u32,
                parent: i as u32,
                fp: 0,
                stamp: 0,
            });
        }
        let prefetch = self.slots.memory_usage() >= WRITE_PREFETCH_MIN_BYTES;
        let mut ring = 0..queue.len();
        for depth in 0..=MAX_HOPS {
            // Buckets listed unread are read now: every ring of a prefetched table, and the
            // roots, which the insert just read full under their locks, if the search validates.
            if (depth == 0 && validate) || (depth > 0 && prefetch) {
                for at in ring.clone() {
                    if self.read_node(&mut queue.nodes_mut()[at], g, validate) {
                        return Search::Room(at);
                    }
                }
            }
            if depth == MAX_HOPS {
                break;
            }
            for parent in ring.clone() {
                let from = queue.nodes()[parent].bucket as usize;
                for fp in self.fingerprints_of(from) {
                    if queue.len() == MAX_SEARCH_BUCKETS {
                        break;
                    }
                    let to = self.placement.alternate(from, fp);
                    // An empty slot would have ended the search; a fingerprint whose buckets
                    // coincide cannot make room by moving.
                    if fp == 0 || to == from {
                        continue;
                    }
                    let mut node = SearchNode {
                        bucket: to as u32,
                        parent: parent as u32,
                        fp,
                        stamp: 0,
                    };
                    if prefetch {
                        self.slots.prefetch(to);
                        queue.push(node);
                        continue;
                    }
                    let room = self.read_node(&mut node, g, validate);
                    queue.push(node);
                    if room {
                        return Search::Room(queue.len() - 1);
                    }
                }
            }
            if ring.end == queue.len() {
                break;
            }
            ring = ring.end..queue.len();
        }
        Search::NoRoom
    }

    /// Whether the node's bucket has a slot free in generation `g`; with `validate`, its
    /// stripe's stamp recorded first.
    #[inline(always)]
    fn read_node(&self, node: &mut SearchNode, g: u64, validate: bool) -> bool {
        if validate {
            node.stamp = self.stripes.stamp(node.bucket as usize);
        }
        self.free_lanes(node.bucket as usize, g) != 0
    }

    /// Makes the moves of the path to node `end` of `queue`, from the free end back; `false` at
    /// the first that is no longer valid (the moves before it stay: each is a valid move of a
    /// live fingerprint between its buckets).
    pub(crate) fn move_back(&self, queue: &SearchQueue, end: usize) -> bool {
        let nodes = queue.nodes();
        // Every stripe the moves lock travels at once, rather than one pair per move.
        let mut at = end;
        loop {
            self.stripes.prefetch_for_write(nodes[at].bucket as usize);
            if nodes[at].parent as usize == at {
                break;
            }
            at = nodes[at].parent as usize;
        }
        let mut at = end;
        while nodes[at].parent as usize != at {
            let node = nodes[at];
            let from = nodes[node.parent as usize].bucket as usize;
            if !self.move_one(from, node.bucket as usize, node.fp) {
                return false;
            }
            at = node.parent as usize;
        }
        true
    }

    /// Moves the live copy of `fp` in `from` to a free slot of `to`, its alternate bucket, with
    /// its tag; `false` if `from` no longer holds one or `to` has no free slot.
    fn move_one(&self, from: usize, to: usize, fp: u32) -> bool {
        let mut guard = self.stripes.lock_pair::<false>(from, to);
        let g = self.clock.current();
        let Some((i, slot)) = self.find_live(from, fp, g, 0) else {
            return false;
        };
        let free = self.free_lanes(to, g);
        if free == 0 {
            return false;
        }
        let j = free.trailing_zeros() as usize;
        debug_assert!(j < BUCKET_SIZE);
        let old = self.slots.get(to, j);
        self.slots.set(to, j, old, slot);
        if old == 0 {
            guard.add(to, 1);
        }
        self.slots.set(from, i, slot, 0);
        guard.add(from, -1);
        true
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::expiring::{ExpiringCuckooFilter, Window};
    use crate::raw::Candidates;

    fn hash(i: u64) -> u64 {
        let mut x = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ x >> 30).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ x >> 27).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ x >> 31
    }

    /// Fewest moves from `roots` to a bucket with a free slot, by plain breadth-first search.
    fn fewest_moves(table: &Table, roots: [usize; 2], g: u64) -> Option<usize> {
        let mut ring = roots.to_vec();
        for depth in 0..=MAX_HOPS {
            if ring.iter().any(|&b| table.free_lanes(b, g) != 0) {
                return Some(depth);
            }
            ring = ring
                .iter()
                .flat_map(|&b| {
                    table
                        .fingerprints_of(b)
                        .into_iter()
                        .map(move |fp| (fp, table.placement.alternate(b, fp)))
                        .filter(move |&(fp, to)| fp != 0 && to != b)
                        .map(|(_, to)| to)
                })
                .collect();
        }
        None
    }

    #[test]
    fn paths_are_shortest_real_moves_and_lose_nothing() {
        let window = 20_000u64;
        let settings = ExpiringCuckooFilter::builder(Window::Items(window))
            .settings()
            .unwrap();
        let table = Table::new(settings, 0, 0, 0).unwrap();
        let mut next = 0;
        for _ in 0..3 * window {
            table.insert(hash(next)).unwrap();
            next += 1;
        }
        let live = |table: &Table| (next - window..next).all(|i| table.contains(hash(i)));
        assert!(live(&table));
        let mut queue = SearchQueue::default();
        let (mut moved, mut hops_seen) = (0, [0; MAX_HOPS + 1]);
        for j in 0..20_000 {
            let Candidates { first, second, .. } = table.candidates(hash(1 << 40 | j));
            let g = table.clock.current();
            if table.free_lanes(first, g) | table.free_lanes(second, g) != 0 {
                continue;
            }
            let want = fewest_moves(&table, [first, second], g);
            let got = match table.search([first, second], g, &mut queue, false) {
                Search::Room(end) => Some(end),
                Search::NoRoom => None,
            };
            let Some(end) = got else {
                assert_eq!(want, None);
                continue;
            };
            // Every hop moves a live fingerprint of its bucket to that fingerprint's other one.
            let nodes = queue.nodes();
            let (mut at, mut hops) = (end, 0);
            while nodes[at].parent as usize != at {
                let from = nodes[nodes[at].parent as usize].bucket as usize;
                let fp = nodes[at].fp;
                assert_eq!(
                    table.placement.alternate(from, fp),
                    nodes[at].bucket as usize
                );
                assert!(table.find_live(from, fp, g, 0).is_some());
                at = nodes[at].parent as usize;
                hops += 1;
            }
            assert!([first, second].contains(&(nodes[at].bucket as usize)));
            assert_eq!(Some(hops), want, "not the shortest path");
            hops_seen[hops] += 1;
            let len = table.stripes.len();
            assert!(table.move_back(&queue, end));
            assert_ne!(table.free_lanes(nodes[at].bucket as usize, g), 0);
            // A move into an expired slot frees one: the count drops by one, never rises.
            let after = table.stripes.len();
            assert!(
                after <= len && after + hops >= len,
                "{len} slots, then {after}"
            );
            moved += 1;
        }
        assert!(live(&table), "a move lost an item");
        // Searches ended at one hop and at more, so both were checked.
        assert!(
            moved > 100 && hops_seen[2..].iter().sum::<usize>() > 0,
            "{hops_seen:?}"
        );
    }
}
