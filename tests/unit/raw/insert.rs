use super::*;
use crate::raw::{Geometry, SearchLimits, Shape};

fn filter() -> RawFilter {
    RawFilter::new(&Geometry {
        shape: Shape {
            bucket_count: 500,
            bucket_size: 4,
            fingerprint_bits: 12,
            semi_sorted: false,
            bucket_words: false,
        },
        stripes: 8,
        limits: SearchLimits {
            max_hops: 5,
            max_search_buckets: 2000,
        },
    })
    .unwrap()
}

#[test]
fn a_plain_insert_or_remove_moves_only_the_stripe_of_the_bucket_it_writes() {
    let filter = filter();
    let (mut checked, mut queue) = (0, SearchQueue::default());
    for hash in (1..=400u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
        let c = filter.placement.candidates(hash);
        let stripes = [c.first, c.second].map(|b| filter.stripes.of(b));
        if stripes[0] == stripes[1] {
            continue;
        }
        let stamps = || [c.first, c.second].map(|b| filter.stripes.stamp(b));
        let before = stamps();
        let inserted = filter.insert_candidates::<false>(c, false, &mut queue);
        assert_eq!(inserted, Insertion::Inserted, "the table has room");
        let after = stamps();
        let moved: Vec<bool> = before.iter().zip(&after).map(|(b, a)| b != a).collect();
        assert_eq!(moved, [true, false], "the first bucket had room: {hash:#x}");
        assert!(filter.contains(hash));
        assert!(filter.remove::<false>(hash));
        assert_eq!(
            stamps()[1],
            after[1],
            "the remove left the second stripe alone"
        );
        assert_ne!(stamps()[0], after[0]);
        checked += 1;
    }
    assert!(checked > 300, "{checked} items on two stripes");
    assert_eq!(filter.len(), 0);
}

#[test]
fn an_insert_under_every_lock_does_what_an_uncontended_optimistic_one_does() {
    let hashes: Vec<u64> = (1..=2200u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let (optimistic, exclusive) = (filter(), filter());
    let mut queue = SearchQueue::default();
    let candidates = |hash| optimistic.placement.candidates(hash);
    let by_path: Vec<_> = hashes
        .iter()
        .map(|&h| optimistic.insert_candidates::<false>(candidates(h), false, &mut queue))
        .collect();
    let by_lock: Vec<_> = hashes
        .iter()
        .map(|&h| exclusive.insert_exclusive::<false>(candidates(h), false, &mut queue))
        .collect();
    assert_eq!(by_path, by_lock);
    // The table fills up, and a path had to be found for some items: both branches ran.
    let full = by_lock.iter().filter(|&&r| r == Insertion::Full).count();
    assert!(full > 0 && full < 500, "{full} inserts were full");
    assert!(exclusive.len() > 1900, "{} stored", exclusive.len());
    // The same moves: the same table, and counts that add up.
    let copy = |filter: &RawFilter| {
        let locked = filter.lock_table();
        let mut words = vec![0; locked.data_words()];
        locked.read_words(0, &mut words);
        (words, locked.items())
    };
    assert_eq!(copy(&optimistic), copy(&exclusive));
    let stored = by_lock
        .iter()
        .filter(|&&r| r == Insertion::Inserted)
        .count();
    assert_eq!(exclusive.len(), stored);
    for (&hash, &result) in hashes.iter().zip(&by_lock) {
        if result == Insertion::Inserted {
            assert!(exclusive.contains(hash));
        }
    }
    // A unique insert under every lock finds what is there.
    assert_eq!(
        exclusive.insert_exclusive::<false>(candidates(hashes[0]), true, &mut queue),
        Insertion::Present
    );
}

/// A writer of a live file stopped for good at each store of an insert that moves fingerprints
/// along a path (`raw/stall.rs`: a writer killed there): once its stripes are recovered, every
/// acknowledged item is found, the table verifies, and `len` is within docs/shared.md's bound.
#[cfg(all(test, target_os = "linux"))]
mod killed {
    use std::path::PathBuf;
    use std::sync::{mpsc, Arc};

    use super::*;
    use crate::raw::stall;
    use crate::sync::Ordering::Relaxed;
    use crate::{ConcurrentCuckooFilter, TableLayout};

    /// An owner id no process can hold (slot 199 of 128): a dead writer.
    const DEAD: u64 = 200 << 32 | 1;

    /// Keys whose inserts are stopped at every point, each in its own table.
    const PROBES: usize = 4;

    /// Points of the least insert [`probe`] picks: two hops of two bucket stores each, one bucket
    /// in two words, and the two journals of each hop emptied (both hops cross stripes).
    const MIN_STOPS: usize = 9;

    /// How the stopped writer inserts.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Way {
        /// Under every stripe lock (`insert_exclusive`).
        Exclusive,
        /// Hop by hop, each under the locks of its two buckets (`insert_candidates`).
        ByPath,
    }

    /// The filter and the items it acknowledged, built the same way for every stop.
    struct Filled {
        filter: Arc<ConcurrentCuckooFilter>,
        path: PathBuf,
        acknowledged: Vec<u64>,
        /// The first key not tried.
        next: u64,
    }

    /// The `n`-th hash of the keys this test inserts.
    fn hash(n: u64) -> u64 {
        (n + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// A live packed filter of 256 buckets over 8 stripes, filled to 95%.
    fn filled(semi_sorted: bool, name: &str) -> Filled {
        let path = std::env::temp_dir().join(format!("ccf-stall-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let filter = ConcurrentCuckooFilter::builder()
            .buckets(256)
            .stripes(8)
            .layout(TableLayout::Packed)
            .fingerprint_bits(if semi_sorted { 13 } else { 12 })
            .semi_sorted(semi_sorted)
            .create_shared(&path)
            .unwrap();
        let mut acknowledged = Vec::new();
        let mut n = 0;
        while filter.len() < 256 * 4 * 95 / 100 {
            if filter.insert_hash(hash(n)).is_ok() {
                acknowledged.push(hash(n));
            }
            n += 1;
        }
        Filled {
            filter: Arc::new(filter),
            path,
            acknowledged,
            next: n,
        }
    }

    /// Whether `bucket`'s bits straddle two words.
    fn straddles(raw: &RawFilter, bucket: usize) -> bool {
        let bits = raw.codec.bucket_bits() as u64;
        (bucket as u64 * bits) % 64 + bits > 64
    }

    /// The `nth` key not yet inserted whose buckets are both full and whose path has a hop from a
    /// stripe to a higher one, a hop from a stripe to a lower one, and writes a bucket that
    /// straddles two words: its insert can tear a bucket, and split a hop across two journals
    /// emptied in either order of the stripes.
    fn probe(raw: &RawFilter, from_key: u64, nth: usize) -> Candidates {
        let mut queue = SearchQueue::default();
        (from_key..from_key + 10_000)
            .map(|n| raw.placement.candidates(hash(n)))
            .filter(|c| {
                let full = [c.first, c.second]
                    .iter()
                    .all(|&b| !raw.codec.has_free(&raw.table.load(b)));
                let Some(path) = full.then(|| raw.search(c, &mut queue, None)).flatten() else {
                    return false;
                };
                let crossings = path
                    .moves_backwards()
                    .map(|(from, to, _)| raw.stripes.of(from).cmp(&raw.stripes.of(to)));
                let both = crossings.fold([false; 2], |[up, down], crossing| {
                    [up || crossing.is_lt(), down || crossing.is_gt()]
                });
                both == [true, true] && path.buckets().iter().any(|&b| straddles(raw, b))
            })
            .nth(nth)
            .expect("a key that needs such a path")
    }

    /// Stops a writer inserting `way` at each of its stores and journal emptyings in turn, in a
    /// table built the same way each time, and checks what the other processes see once the dead
    /// writer's stripes are recovered. Returns how many stops it checked.
    fn every_stop_loses_nothing(semi_sorted: bool, way: Way, nth: usize) -> usize {
        for stop in 1.. {
            let name = format!("{semi_sorted}-{way:?}-{nth}-{stop}");
            let Filled {
                filter,
                path,
                acknowledged,
                next,
            } = filled(semi_sorted, &name);
            let c = probe(filter.raw(), next, nth);
            let (stopped, stops) = mpsc::channel();
            let (done, result) = mpsc::channel();
            let writer = Arc::clone(&filter);
            // Never joined when it stops: it stays parked, holding its locks, as a dead writer.
            drop(std::thread::spawn(move || {
                stall::arm(stop, stopped);
                let mut queue = SearchQueue::default();
                let raw = writer.raw();
                let inserted = match way {
                    Way::Exclusive => raw.insert_exclusive::<true>(c, false, &mut queue),
                    Way::ByPath => raw.insert_candidates::<true>(c, false, &mut queue),
                };
                stall::disarm();
                done.send(inserted).unwrap();
            }));
            let raw = filter.raw();
            let n = acknowledged.len();
            let finished = stops.recv().is_err();
            if finished {
                assert_eq!(result.recv().unwrap(), Insertion::Inserted, "{name}");
            } else {
                // The stopped writer dies: its stripes' owner words name a process that is gone.
                let shared = raw.stripes.shared.as_deref().unwrap();
                for stripe in 0..raw.stripe_count() {
                    if shared.owner(stripe).load(Relaxed) != 0 {
                        shared.owner(stripe).store(DEAD, Relaxed);
                    }
                }
            }
            let lost = acknowledged
                .iter()
                .filter(|&&h| !filter.contains_hash(h))
                .count();
            assert_eq!(lost, 0, "{name}: acknowledged items lost");
            filter.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
            // At most the new item, or a second copy of a fingerprint being moved, not both:
            // the new one takes its slot in the last hop.
            let len = filter.len();
            assert!((n..=n + 1).contains(&len), "{name}: len {len}, {n} items");
            if finished {
                assert_eq!(len, n + 1, "{name}");
                std::fs::remove_file(&path).unwrap();
                return stop - 1;
            }
            std::fs::remove_file(&path).unwrap();
        }
        unreachable!()
    }

    /// [`every_stop_loses_nothing`] in both packed forms, for each of [`PROBES`] keys.
    fn every_probe_loses_nothing(way: Way) {
        for semi_sorted in [true, false] {
            for nth in 0..PROBES {
                let stops = every_stop_loses_nothing(semi_sorted, way, nth);
                let name = format!("{semi_sorted}-{way:?}-{nth}");
                assert!(stops >= MIN_STOPS, "{name}: {stops} stops");
            }
        }
    }

    #[test]
    fn a_writer_killed_anywhere_in_an_insert_under_every_lock_loses_no_other_item() {
        every_probe_loses_nothing(Way::Exclusive);
    }

    #[test]
    fn a_writer_killed_anywhere_in_a_hop_by_hop_insert_loses_no_other_item() {
        every_probe_loses_nothing(Way::ByPath);
    }
}
