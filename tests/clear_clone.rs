//! `clear`, `Clone` and `Default` of both filters, alone and while other threads write.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DefaultHashBuilder, GrowableCuckooFilter, TableLayout,
};

const WRITERS: u64 = 3;

/// Keys of writer `t`: its own, never another's.
fn key(t: u64, i: u64) -> u64 {
    t << 40 | i
}

fn fixed(layout: TableLayout) -> ConcurrentCuckooFilter {
    ConcurrentCuckooFilter::builder()
        .capacity(200_000)
        .layout(layout)
        .build()
        .unwrap()
}

/// Both layouts of the fixed filter, and a growable filter that will split and add levels.
trait Filter: Send + Sync + Clone + 'static {
    fn insert(&self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    fn len(&self) -> usize;
    fn clear(&self);
    /// The filter read back from its own bytes: a decode checks that the item count the bytes
    /// record is the count their table holds.
    fn reloaded_len(&self) -> usize;
}

impl Filter for ConcurrentCuckooFilter {
    fn insert(&self, key: u64) -> bool {
        ConcurrentCuckooFilter::insert(self, &key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        ConcurrentCuckooFilter::contains(self, &key)
    }
    fn len(&self) -> usize {
        ConcurrentCuckooFilter::len(self)
    }
    fn clear(&self) {
        ConcurrentCuckooFilter::clear(self)
    }
    fn reloaded_len(&self) -> usize {
        ConcurrentCuckooFilter::from_bytes(&self.to_bytes())
            .unwrap()
            .len()
    }
}

impl Filter for GrowableCuckooFilter {
    fn insert(&self, key: u64) -> bool {
        GrowableCuckooFilter::insert(self, &key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        GrowableCuckooFilter::contains(self, &key)
    }
    fn len(&self) -> usize {
        GrowableCuckooFilter::len(self)
    }
    fn clear(&self) {
        GrowableCuckooFilter::clear(self)
    }
    fn reloaded_len(&self) -> usize {
        GrowableCuckooFilter::from_bytes(&self.to_bytes())
            .unwrap()
            .len()
    }
}

fn filters() -> Vec<Box<dyn Fn() -> Box<dyn Shared>>> {
    vec![
        Box::new(|| Box::new(fixed(TableLayout::BucketWord))),
        Box::new(|| Box::new(fixed(TableLayout::Packed))),
        Box::new(|| {
            Box::new(
                GrowableCuckooFilter::builder()
                    .capacity(1000)
                    .split_depth(2)
                    .build()
                    .unwrap(),
            )
        }),
    ]
}

/// The tests over any of the filters.
trait Shared {
    fn clear_alone(&self);
    fn clear_racing_writers(&self);
    fn clone_racing_writers(&self);
}

impl<F: Filter> Shared for F {
    fn clear_alone(&self) {
        for i in 0..50_000 {
            assert!(self.insert(key(0, i)));
        }
        let copy = self.clone();
        self.clear();
        assert_eq!(self.len(), 0);
        assert_eq!(self.reloaded_len(), 0);
        let found = (0..50_000).filter(|&i| self.contains(key(0, i))).count();
        assert_eq!(found, 0);
        // The copy is a filter of its own: the clear did not touch it.
        assert_eq!(copy.len(), 50_000);
        assert!((0..50_000).all(|i| copy.contains(key(0, i))));
        for i in 0..50_000 {
            assert!(self.insert(key(1, i)));
        }
        assert_eq!(self.len(), 50_000);
        assert!((0..50_000).all(|i| self.contains(key(1, i))));
    }

    fn clear_racing_writers(&self) {
        let filter = Arc::new(self.clone());
        let cleared = Arc::new(AtomicBool::new(false));
        let barrier = Arc::new(Barrier::new(WRITERS as usize + 1));
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let (filter, cleared, barrier) = (filter.clone(), cleared.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    // Every insert that starts after the clear returned: all must stay found.
                    let mut after = Vec::new();
                    let mut i = 0;
                    while after.len() < 20_000 {
                        let seen_clear = cleared.load(Ordering::Acquire);
                        // Bounded before the clear, so that a clear that comes late on a busy
                        // machine does not find the filter full.
                        if !seen_clear && i >= 20_000 {
                            std::thread::yield_now();
                            continue;
                        }
                        assert!(filter.insert(key(t, i)), "writer {t} key {i}");
                        if seen_clear {
                            after.push(i);
                        }
                        i += 1;
                    }
                    let missing = after.iter().filter(|&&i| !filter.contains(key(t, i)));
                    assert_eq!(missing.count(), 0, "writer {t}");
                    (after.len(), i)
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(std::time::Duration::from_millis(5));
        filter.clear();
        cleared.store(true, Ordering::Release);
        let mut after = 0;
        let mut all = 0;
        for writer in writers {
            let (counted, inserted) = writer.join().expect("a writer failed");
            after += counted;
            all += inserted as usize;
        }
        let len = filter.len();
        assert!(after <= len && len <= all, "{after} <= {len} <= {all}");
        assert_eq!(filter.reloaded_len(), len);
    }

    fn clone_racing_writers(&self) {
        let filter = Arc::new(self.clone());
        let done = Arc::new(AtomicBool::new(false));
        let progress: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| 0.into()).collect());
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let (filter, done, progress) = (filter.clone(), done.clone(), progress.clone());
                std::thread::spawn(move || {
                    let mut i = 0;
                    while !done.load(Ordering::Relaxed) && i < 60_000 {
                        assert!(filter.insert(key(t, i)), "writer {t} key {i}");
                        i += 1;
                        progress[t as usize].store(i, Ordering::Release);
                    }
                })
            })
            .collect();
        let mut copies = 0;
        // At least one copy, even if a descheduled test thread finds the writers done.
        while copies == 0
            || (copies < 20 && progress.iter().any(|p| p.load(Ordering::Relaxed) < 60_000))
        {
            // Keys each writer had inserted before the copy began must be in the copy.
            let before: Vec<u64> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
            let copy = (*filter).clone();
            for (t, &inserted) in before.iter().enumerate() {
                let missing = (0..inserted).filter(|&i| !copy.contains(key(t as u64, i)));
                assert_eq!(missing.count(), 0, "copy {copies}, writer {t}");
            }
            // Its count is its table's: a state the filter really had, not a torn one.
            assert_eq!(copy.reloaded_len(), copy.len(), "copy {copies}");
            assert!(copy.len() as u64 >= before.iter().sum::<u64>());
            copies += 1;
        }
        done.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.join().expect("a writer failed");
        }
    }
}

#[test]
fn clear_empties_the_filter_and_keeps_no_copy_of_another() {
    for make in filters() {
        make().clear_alone();
    }
}

#[test]
fn inserts_after_clear_returns_are_found_and_counted() {
    for make in filters() {
        make().clear_racing_writers();
    }
}

#[test]
fn a_clone_taken_while_others_write_is_a_state_the_filter_had() {
    for make in filters() {
        make().clone_racing_writers();
    }
}

#[test]
fn a_clone_of_a_grown_filter_has_its_levels_and_keeps_growing() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(1000)
        .split_depth(2)
        .build()
        .unwrap();
    filter.try_extend(0..30_000u64).unwrap();
    assert!(filter.level_count() > 1);
    let copy = filter.clone();
    assert_eq!(copy.level_count(), filter.level_count());
    assert_eq!(copy.capacity(), filter.capacity());
    assert_eq!(copy.to_bytes(), filter.to_bytes());
    copy.try_extend(30_000..100_000u64).unwrap();
    assert!((0..100_000u64).all(|key| copy.contains(&key)));
    assert_eq!(filter.len(), 30_000);
}

#[test]
fn default_is_the_smallest_filter_and_the_growable_one_grows() {
    let fixed = ConcurrentCuckooFilter::<DefaultHashBuilder>::default();
    let smallest = ConcurrentCuckooFilter::with_capacity(0);
    assert!(fixed.is_empty());
    assert_eq!(
        (fixed.capacity(), fixed.bucket_count()),
        (smallest.capacity(), smallest.bucket_count())
    );
    assert_eq!(fixed.to_bytes(), smallest.to_bytes());
    let growable = GrowableCuckooFilter::<DefaultHashBuilder>::default();
    assert_eq!(
        growable.to_bytes(),
        GrowableCuckooFilter::with_capacity(0).to_bytes()
    );
    growable.try_extend(0..100_000u64).unwrap();
    assert!((0..100_000u64).all(|key| growable.contains(&key)));
}
