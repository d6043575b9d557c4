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
    for depth in 0..=LIMITS.max_hops {
        if ring.iter().any(|&b| table.free_lanes(b, g) != 0) {
            return Some(depth);
        }
        ring = ring
            .iter()
            .flat_map(|&b| {
                table
                    .slots
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
    let (mut moved, mut hops_seen) = (0, [0; LIMITS.max_hops + 1]);
    for j in 0..20_000 {
        let Candidates { first, second, .. } = table.placement.candidates(hash(1 << 40 | j));
        let g = table.clock.current();
        if table.free_lanes(first, g) | table.free_lanes(second, g) != 0 {
            continue;
        }
        let want = fewest_moves(&table, [first, second], g);
        let Some(path) = table.search([first, second], g, &mut queue, false) else {
            assert_eq!(want, None);
            continue;
        };
        // Every hop moves a live fingerprint of its bucket to that fingerprint's other one.
        for (from, to, fp) in path.moves_backwards() {
            assert_eq!(table.placement.alternate(from, fp), to);
            assert!(table.find_live(from, fp, g, 0).is_some());
        }
        let root = path.buckets()[0];
        assert!([first, second].contains(&root));
        let hops = path.buckets().len() - 1;
        assert_eq!(Some(hops), want, "not the shortest path");
        hops_seen[hops] += 1;
        let len = table.stripes.len();
        assert!(table.move_back(&path));
        assert_ne!(table.free_lanes(root, g), 0);
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
