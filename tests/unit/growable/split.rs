use super::*;
use crate::raw::{Geometry, Insertion, SearchLimits, Shape};

const BUCKETS: usize = 1024;
const CORE_BITS: u32 = 8;
const ROUTE_BITS: u32 = 4;

fn chunk(placement: SplitPlacement, depth: u32) -> RawFilter<SplitPlacement> {
    let geometry = Geometry {
        shape: Shape {
            bucket_count: BUCKETS,
            bucket_size: 4,
            fingerprint_bits: placement.fingerprint_bits(),
            semi_sorted: false,
            bucket_words: false,
        },
        stripes: 16,
        limits: SearchLimits {
            max_hops: 5,
            max_search_buckets: 2000,
        },
    };
    RawFilter::new_chunk(geometry, placement, depth).unwrap()
}

fn hashes(count: u64, salt: u64) -> impl Iterator<Item = u64> {
    (0..count).map(move |i| crate::raw::level_hash(i ^ salt << 40, 3))
}

/// Splits `chunk` at its depth into a new chunk, as the owner of a split does.
fn split(chunk: &RawFilter<SplitPlacement>) -> RawFilter<SplitPlacement> {
    let state = chunk.split_state();
    assert!(chunk.try_seal(state));
    assert!(!chunk.try_seal(state), "sealed once");
    let depth = state.depth();
    let mut child = self::chunk(chunk.placement().child(depth), depth + 1);
    chunk.copy_moving_into(&mut child);
    chunk.purge_moved_and_unseal();
    child
}

#[test]
fn a_split_keeps_every_key_in_the_chunk_its_route_now_leads_to() {
    let root = chunk(SplitPlacement::new(BUCKETS, CORE_BITS, 0, ROUTE_BITS), 0);
    let keys: Vec<u64> = hashes(3800, 1).collect();
    for &hash in &keys {
        assert_eq!(root.insert::<false>(hash, false), Insertion::Inserted);
    }
    let one = split(&root);
    let two = split(&root);
    let chunk_of = |hash: u64| match route_of(hash) & 3 {
        0 => &root,
        1 | 3 => &one,
        _ => &two,
    };
    for &hash in &keys {
        assert!(chunk_of(hash).contains(hash), "{hash:#x} lost");
    }
    // Exact counts: every key in exactly one chunk.
    for (chunk, routes) in [(&root, [0, 0]), (&one, [1, 3]), (&two, [2, 2])] {
        let expected = keys
            .iter()
            .filter(|&&hash| routes.contains(&(route_of(hash) & 3)))
            .count();
        assert_eq!(chunk.len(), expected);
    }
    assert_eq!(root.split_state().depth(), 2);
    assert_eq!(one.split_state().depth(), 1);
    // The root refuses keys it gave away and takes its own.
    let given = hashes(100, 2)
        .find(|&hash| route_of(hash) & 3 != 0)
        .unwrap();
    assert_eq!(root.insert::<false>(given, false), Insertion::Full);
    let own = hashes(100, 2)
        .find(|&hash| route_of(hash) & 3 == 0)
        .unwrap();
    assert_eq!(root.insert::<false>(own, false), Insertion::Inserted);
    assert!(root.remove::<false>(own));
    let len = root.len();
    let kept = keys.iter().find(|&&hash| route_of(hash) & 3 == 0).unwrap();
    assert!(root.remove::<false>(*kept));
    assert_eq!(root.len(), len - 1);
}

#[test]
fn a_sealed_chunk_refuses_every_write_and_answers_every_read() {
    let root = chunk(SplitPlacement::new(BUCKETS, CORE_BITS, 0, ROUTE_BITS), 0);
    let keys: Vec<u64> = hashes(2000, 3).collect();
    for &hash in &keys {
        assert_eq!(root.insert::<false>(hash, false), Insertion::Inserted);
    }
    assert!(root.try_seal(root.split_state()));
    assert!(root.split_state().is_sealed());
    let fresh = hashes(50, 4).next().unwrap();
    assert_eq!(root.insert::<false>(fresh, false), Insertion::Full);
    assert!(!root.remove::<false>(keys[0]));
    assert_eq!(root.len(), keys.len());
    assert!(keys.iter().all(|&hash| root.contains(hash)));
}

#[test]
fn growth_bits_are_spent_one_per_split() {
    let root = SplitPlacement::new(BUCKETS, 12, 0, 6);
    assert_eq!((root.fingerprint_bits(), root.max_depth()), (18, 6));
    let child = root.child(2);
    assert_eq!((child.fingerprint_bits(), child.max_depth()), (15, 6));
    let last = child.child(5);
    assert_eq!((last.fingerprint_bits(), last.max_depth()), (12, 6));
    // A moved fingerprint keeps its core and loses the route bits up to the split's.
    let fp = 0b1010_1010_1010 << 6 | 0b101_100;
    assert!(root.moves(fp, 2) && !root.moves(fp, 0));
    assert_eq!(root.moved(fp, 2), 0b1010_1010_1010 << 3 | 0b101);
}
