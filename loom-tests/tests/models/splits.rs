//! The races a growable filter of split levels adds: a lookup and a remove racing the split of
//! their key's chunk, two `insert_unique`s of one item racing a split, and `len` across a split.
//!
//! Every model uses one level whose first chunk has 2 buckets of two 8-bit slots and may be split
//! once. Keys `a` and `b` move to the new chunk in the split (their first route bit is 1), `c`
//! and `d` stay; with all four in it the chunk is full, and inserting `e` splits it.

use std::sync::OnceLock;

use concurrent_cuckoo_filter::GrowableCuckooFilter;
use loom::sync::Arc;
use loom_tests::{check, KeyIsHash};

type Filter = GrowableCuckooFilter<KeyIsHash>;

#[derive(Clone, Copy, Debug)]
struct Keys {
    /// Move in the split.
    a: u64,
    b: u64,
    /// Stay.
    c: u64,
    d: u64,
    /// Splits the full chunk, and fits after the split.
    e: u64,
}

fn build() -> Filter {
    GrowableCuckooFilter::builder()
        .capacity(1)
        .level_shape(2, 2, 8, 1)
        .split_depth(1)
        .search_limits(2, 6)
        .item_locks(2)
        .hasher(KeyIsHash)
        .build()
        .expect("a model's shape is valid")
}

/// The first chunk's fingerprints carry the first route bit as their lowest bit.
fn moves(filter: &Filter, key: u64) -> bool {
    filter.debug_candidates(0, &key).fingerprint & 1 == 1
}

fn keys() -> Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    if KEYS.get().is_none() {
        let mut search = loom::model::Builder::new();
        search.max_branches = 10_000_000;
        search.check(|| {
            let filter = build();
            let capacity = filter.capacity();
            let candidates = (1..u64::MAX).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let fp = |key: u64| filter.debug_candidates(0, &key).fingerprint;
            let mut chosen: Vec<u64> = Vec::new();
            // Two that move and two that stay, with distinct fingerprints, all fitting.
            for want_move in [true, true, false, false] {
                let key = candidates
                    .clone()
                    .filter(|&k| moves(&filter, k) == want_move)
                    .find(|&k| chosen.iter().all(|&o| fp(o) != fp(k)))
                    .unwrap();
                filter.insert(&key).unwrap();
                chosen.push(key);
            }
            assert_eq!(filter.capacity(), capacity, "four keys fit in one chunk");
            let fresh = |k: u64, chosen: &[u64]| chosen.iter().all(|&o| fp(o) != fp(k));
            let e = candidates.clone().find(|&k| fresh(k, &chosen)).unwrap();
            filter.insert(&e).unwrap();
            assert_eq!(filter.level_count(), 1);
            assert_eq!(filter.capacity(), 2 * capacity, "e split the chunk");
            let _ = KEYS.set(Keys {
                a: chosen[0],
                b: chosen[1],
                c: chosen[2],
                d: chosen[3],
                e,
            });
        });
    }
    *KEYS.get().expect("the search found every key")
}

/// A filter whose one chunk holds `a` to `d`: full.
fn prefilled(keys: &Keys) -> Arc<Filter> {
    let filter = Arc::new(build());
    for key in [keys.a, keys.b, keys.c, keys.d] {
        filter.insert(&key).unwrap();
    }
    filter
}

fn spawn<T: Send + 'static>(
    filter: &Arc<Filter>,
    op: impl FnOnce(&Filter) -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    let filter = Arc::clone(filter);
    loom::thread::spawn(move || op(&filter))
}

/// One thread inserts `e`, splitting the chunk; the other looks up `a` (which moves) and `c`
/// (which stays). Both are found at every step of the split: before the new chunk is published,
/// while the old one still holds `a`, and after `a` is removed from it.
#[test]
fn a_lookup_racing_a_split_finds_every_inserted_item() {
    let keys = keys();
    check(1, move || {
        let filter = prefilled(&keys);
        let splitter = spawn(&filter, move |f| f.insert(&keys.e));
        assert!(filter.contains(&keys.a), "a moved, and was not found");
        assert!(filter.contains(&keys.c), "c stayed, and was not found");
        splitter.join().unwrap().unwrap();
        for key in [keys.a, keys.b, keys.c, keys.d, keys.e] {
            assert!(filter.contains(&key));
        }
        assert_eq!(filter.len(), 5);
    });
}

/// One thread inserts `e`, splitting the chunk; the other removes `a`, which moves. The remove
/// takes `a`'s copy wherever the split has it: never a no, never a copy left behind.
#[test]
fn a_remove_racing_a_split_takes_its_copy_wherever_it_is() {
    let keys = keys();
    check(1, move || {
        let filter = prefilled(&keys);
        let splitter = spawn(&filter, move |f| f.insert(&keys.e));
        assert!(filter.remove(&keys.a), "a was there");
        splitter.join().unwrap().unwrap();
        assert_eq!(filter.count(&keys.a), 0);
        assert_eq!(filter.len(), 4);
        assert!(filter.contains(&keys.b) && filter.contains(&keys.e));
    });
}

/// Both threads `insert_unique` `e`, which splits the full chunk; one of them first
/// `insert_unique`s `a`, which is there and moves in the split. Exactly one inserts `e`, and `a`
/// is found wherever the split has it, never inserted again into the chunk it left.
#[test]
fn racing_unique_inserts_of_one_item_insert_it_once_across_a_split() {
    let keys = keys();
    check(1, move || {
        let filter = prefilled(&keys);
        let other = spawn(&filter, move |f| f.insert_unique(&keys.e));
        assert_eq!(filter.insert_unique(&keys.a), Ok(false), "a is there");
        let mine = filter.insert_unique(&keys.e);
        let theirs = other.join().unwrap();
        let wins = usize::from(mine == Ok(true)) + usize::from(theirs == Ok(true));
        assert_eq!(wins, 1, "mine: {mine:?}, theirs: {theirs:?}");
        assert_eq!(filter.count(&keys.e), 1);
        assert_eq!(filter.count(&keys.a), 1);
        assert_eq!(filter.len(), 5);
    });
}

/// One thread inserts `e`, splitting the chunk, then removes `c`; the other reads `len`. The
/// filter holds 4 items, then 5, then 4: `len` never sees the remove without the insert (while
/// the split is under way it may count the two moving items twice).
#[test]
fn len_across_a_split_never_counts_a_remove_without_the_insert_before_it() {
    let keys = keys();
    check(1, move || {
        let filter = prefilled(&keys);
        let writer = spawn(&filter, move |f| {
            f.insert(&keys.e).unwrap();
            assert!(f.remove(&keys.c));
        });
        let len = filter.len();
        assert!((4..=7).contains(&len), "len {len} during the split");
        writer.join().unwrap();
        assert_eq!(filter.len(), 4);
    });
}
