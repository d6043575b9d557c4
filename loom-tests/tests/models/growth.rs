//! The races a growable filter adds: a lookup and a remove racing the addition of a level, two
//! `insert_unique`s of one item racing growth, `len` across levels, and the refusal of an item's
//! own copies.
//!
//! Every model uses the same two levels: level 0 has one chunk of 2 buckets of two 8-bit slots,
//! which may split once; level 1 has 4 buckets. The chunk is split before each model starts, by
//! a key whose first route bit is 1 (`s`), so chunk 0 is as deep as it can be. Its bucket 0 is
//! filled with `a` and `b`, which cannot move (both their buckets are bucket 0), so an insert of
//! a key that stays in chunk 0 and whose buckets are both bucket 0 finds level 0 full and adds
//! level 1.

use std::sync::OnceLock;

use concurrent_cuckoo_filter::{DebugCandidates, GrowableCuckooFilter, InsertError};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom_tests::{check, KeyIsHash};

type Filter = GrowableCuckooFilter<KeyIsHash>;

/// Keys chosen for their candidates in both levels. All but `s` stay in chunk 0.
#[derive(Clone, Copy, Debug)]
struct Keys {
    /// Splits the first chunk: its first route bit is 1.
    s: u64,
    /// Fill bucket 0 of chunk 0.
    a: u64,
    b: u64,
    /// Level-0 buckets (1, 1): fits in level 0.
    x: u64,
    /// Level-0 buckets (0, 0), so they need level 1; `y` shares `x`'s fingerprint and buckets in
    /// level 1, `z` does not.
    y: u64,
    z: u64,
}

fn build() -> Filter {
    GrowableCuckooFilter::builder()
        .capacity(1)
        .split_depth(1)
        .level_shape(2, 2, 8, 2)
        .search_limits(2, 6)
        .item_locks(2)
        .hasher(KeyIsHash)
        .build()
        .expect("a model's shape is valid")
}

/// Level-0 candidates are those of the key itself; level-1 ones need a filter that has grown,
/// so the keys are searched once, in a filter of the same shape, and reused by every execution.
fn keys() -> Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    if KEYS.get().is_none() {
        // One thread, one execution; but every key tried reads a level slot, a loom branch.
        let mut search = loom::model::Builder::new();
        search.max_branches = 10_000_000;
        search.check(|| {
            let filter = build();
            let candidates = (1..u64::MAX).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let level0 = |key: u64| filter.debug_candidates(0, &key);
            // The first chunk's fingerprints carry the first route bit as their lowest bit,
            // until it splits: asked of a filter that never does.
            let unsplit = build();
            let stays = |key: u64| unsplit.debug_candidates(0, &key).fingerprint & 1 == 0;
            let mut in_bucket_0 = candidates.clone().filter(|&k| {
                matches!(
                    level0(k),
                    DebugCandidates {
                        first: 0,
                        second: 0,
                        ..
                    }
                )
            });
            let a = in_bucket_0.find(|&k| stays(k)).unwrap();
            let b = in_bucket_0
                .find(|&k| stays(k) && level0(k).fingerprint != level0(a).fingerprint)
                .unwrap();
            let s = in_bucket_0.find(|&k| !stays(k)).unwrap();
            let x = candidates
                .clone()
                .find(|&k| {
                    stays(k)
                        && matches!(
                            level0(k),
                            DebugCandidates {
                                first: 1,
                                second: 1,
                                ..
                            }
                        )
                })
                .unwrap();
            prefill(
                &filter,
                &Keys {
                    s,
                    a,
                    b,
                    x,
                    y: 0,
                    z: 0,
                },
                true,
            );
            let fps = [level0(a).fingerprint, level0(b).fingerprint];
            let mut growers =
                in_bucket_0.filter(|&k| stays(k) && !fps.contains(&level0(k).fingerprint));
            let first = growers.next().unwrap();
            filter.insert(&first).unwrap();
            assert_eq!(filter.level_count(), 2);
            let level1 = |key: u64| filter.debug_candidates(1, &key);
            let y = growers.clone().find(|&k| level1(k) == level1(x)).unwrap();
            let z = growers
                .find(|&k| level1(k).fingerprint != level1(x).fingerprint)
                .unwrap();
            let _ = KEYS.set(Keys { s, a, b, x, y, z });
        });
    }
    *KEYS.get().expect("the search found every key")
}

/// Fills `filter` as every model starts: `a` and `b` in bucket 0 of chunk 0, `s` splitting the
/// chunk, and `x` too if `with_x`. Four items, three without `x`.
fn prefill(filter: &Filter, keys: &Keys, with_x: bool) {
    filter.insert(&keys.a).unwrap();
    filter.insert(&keys.b).unwrap();
    filter.insert(&keys.s).unwrap();
    if with_x {
        filter.insert(&keys.x).unwrap();
    }
    assert_eq!(filter.level_count(), 1);
    assert_eq!(
        filter.level_stats()[0].buckets,
        4,
        "the first chunk has split"
    );
}

/// A filter holding `a`, `b` and `s` in level 0, and `x` too if `with_x`.
fn prefilled(keys: &Keys, with_x: bool) -> Arc<Filter> {
    let filter = Arc::new(build());
    prefill(&filter, keys, with_x);
    filter
}

fn spawn<T: Send + 'static>(
    filter: &Arc<Filter>,
    op: impl FnOnce(&Filter) -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    let filter = Arc::clone(filter);
    loom::thread::spawn(move || op(&filter))
}

/// One thread inserts `y`, adding level 1; the other inserts `z`, which also needs level 1, and
/// looks it up at once, and looks up `a` in level 0. An item whose insert returned is found,
/// whichever thread added the level and however far the other is in publishing it.
#[test]
fn a_lookup_racing_the_addition_of_a_level_finds_every_inserted_item() {
    let keys = keys();
    // Both threads build or wait for level 1, which makes every preemption costly. The main
    // thread first waits (yielding, which costs no preemption) for the other to start, so that
    // bound 1 covers both orders: the main thread building the level, and the main thread
    // inserting right after the other published it.
    check(1, move || {
        let filter = prefilled(&keys, false);
        let started = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&started);
        let grower = spawn(&filter, move |f| {
            flag.store(true, Ordering::Release);
            f.insert(&keys.y)
        });
        while !started.load(Ordering::Acquire) {
            loom::thread::yield_now();
        }
        filter.insert(&keys.z).unwrap();
        assert!(filter.contains(&keys.z), "z was inserted, then not found");
        assert!(filter.contains(&keys.a));
        grower.join().unwrap().unwrap();
        assert!(filter.contains(&keys.y));
        assert_eq!(filter.level_count(), 2);
        assert_eq!(filter.len(), 5);
    });
}

/// One thread removes `x` (in level 0) while the other inserts `y`, which adds level 1 and there
/// takes the very fingerprint and buckets `x` has in level 1. Whenever the remove sees both
/// levels hold `x`'s fingerprint, it cannot tell which copy is `x`'s and removes neither: `y` is
/// never lost.
#[test]
fn a_remove_racing_the_addition_of_a_level_never_takes_another_items_copy() {
    let keys = keys();
    check(2, move || {
        let filter = prefilled(&keys, true);
        let grower = spawn(&filter, move |f| f.insert(&keys.y));
        let removed = filter.remove(&keys.x);
        grower.join().unwrap().unwrap();
        assert!(filter.contains(&keys.y), "y was inserted, then lost");
        // `y`'s copy in level 1 shows as `x` too.
        assert_eq!(filter.count(&keys.x), 2 - usize::from(removed));
        assert_eq!(filter.len(), 5 - usize::from(removed));
    });
}

/// One thread inserts `z`, adding level 1, then `insert_unique`s `x`, which goes to level 1; the
/// other `insert_unique`s `x` at once, which goes to level 0 if it counts one level. Exactly one
/// of them inserts, and one copy is stored.
#[test]
fn racing_unique_inserts_of_one_item_insert_it_once_across_a_new_level() {
    let keys = keys();
    check(2, move || {
        let filter = prefilled(&keys, false);
        let grower = spawn(&filter, move |f| {
            f.insert(&keys.z).unwrap();
            f.insert_unique(&keys.x)
        });
        let mine = filter.insert_unique(&keys.x);
        let theirs = grower.join().unwrap();
        let wins = usize::from(mine == Ok(true)) + usize::from(theirs == Ok(true));
        assert_eq!(wins, 1, "mine: {mine:?}, theirs: {theirs:?}");
        assert_eq!(filter.count(&keys.x), 1);
        assert_eq!(filter.len(), 5);
    });
}

/// One thread inserts `y`, adding level 1, then removes `a` from level 0; the other reads `len`.
/// The filter holds 3 items, then 4, then 3: `len` never sees the remove without the insert.
#[test]
fn len_across_levels_never_counts_a_remove_without_the_insert_before_it() {
    let keys = keys();
    check(3, move || {
        let filter = prefilled(&keys, false);
        let writer = spawn(&filter, move |f| {
            f.insert(&keys.y).unwrap();
            assert!(f.remove(&keys.a));
        });
        let len = filter.len();
        assert!((3..=4).contains(&len), "len {len} during the race");
        writer.join().unwrap();
        assert_eq!(filter.len(), 3);
        assert!(filter.contains(&keys.y) && filter.contains(&keys.b));
    });
}

/// Bucket 0 holds two copies of `a`, whose buckets are both bucket 0: a third copy has no room
/// in level 0, and a new level would not help the next copy either, so the insert is refused
/// without growing. One thread removes a copy of `a` and puts `b` in its place; the other
/// inserts one more `a`. That insert is refused only while `a`'s copies fill the bucket: once
/// the bucket holds `b`, a new level takes it. Nothing is lost and `len` is exact.
#[test]
fn an_items_own_copies_are_refused_only_while_they_fill_its_buckets() {
    let keys = keys();
    check(1, move || {
        let filter = Arc::new(build());
        filter.insert(&keys.a).unwrap();
        filter.insert(&keys.a).unwrap();
        filter.insert(&keys.s).unwrap();
        assert_eq!(filter.insert(&keys.a), Err(InsertError::Full));
        assert_eq!(filter.level_count(), 1, "grew for an item's own copies");
        let replaced = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&replaced);
        let writer = spawn(&filter, move |f| {
            assert!(f.remove(&keys.a));
            f.insert(&keys.b).unwrap();
            flag.store(true, Ordering::Release);
        });
        let replaced_before = replaced.load(Ordering::Acquire);
        let inserted = filter.insert(&keys.a);
        writer.join().unwrap();
        if replaced_before {
            assert_eq!(inserted, Ok(()), "refused beside another item's copy");
        }
        assert!(filter.contains(&keys.a) && filter.contains(&keys.b));
        assert_eq!(filter.len(), 3 + usize::from(inserted.is_ok()));
        if inserted.is_err() {
            assert_eq!(filter.level_count(), 1);
        }
    });
}
