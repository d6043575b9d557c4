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
        most_nodes = most_nodes.max(queue.nodes.len());
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
        let last = queue.nodes.last().unwrap().bucket as usize;
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
