//! A snapshot under concurrent writes is a state the filter really had.

use super::*;

#[test]
fn snapshots_taken_during_writes_are_consistent() {
    const WINDOW: u64 = 60_000;
    const THREADS: u64 = 2;
    // About 84% full once both windows are: inserts often have to move fingerprints.
    let filter = Arc::new(build(4, 12, 135_000, 11));
    let stop = Arc::new(AtomicBool::new(false));
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let key = |thread: u64, i: u64| thread << 40 | i;

    // Each writer keeps a sliding window: it inserts key i, then removes key i - WINDOW, then
    // publishes i + 1. So in any state the filter really has, a writer's keys are one run.
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, stop, progress) = (filter.clone(), stop.clone(), progress.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    filter.insert(&key(t, i)).expect("the window always fits");
                    if i >= WINDOW {
                        assert!(filter.remove(&key(t, i - WINDOW)));
                    }
                    i += 1;
                    progress[t as usize].store(i, Ordering::Release);
                }
            })
        })
        .collect();

    let mut snapshots = 0;
    while snapshots < 40 {
        let before: Vec<u64> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
        if before.iter().any(|&p| p < WINDOW) {
            std::thread::yield_now();
            continue;
        }
        let bytes = if snapshots % 2 == 0 {
            filter.to_bytes()
        } else {
            let mut out = Vec::new();
            filter.write_to(&mut out).unwrap();
            out
        };
        let after: Vec<u64> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
        // The decoder checks that the recorded count matches the table: a torn copy would not.
        let copy = ConcurrentCuckooFilter::from_bytes(&bytes).expect("a consistent snapshot");
        let mut least = 0;
        let mut most = 0;
        for t in 0..THREADS {
            let (b, a) = (before[t as usize], after[t as usize]);
            // Inserted before the copy began and not removed before it ended: must be there.
            let must = a.saturating_sub(WINDOW - 1)..b;
            assert!(
                must.clone().all(|i| copy.contains(&key(t, i))),
                "snapshot {snapshots}: a key of thread {t} in {must:?} is missing"
            );
            least += b.min(WINDOW);
            most += (a + 1).min(WINDOW + 1);
        }
        assert!(
            (least..=most).contains(&(copy.len() as u64)),
            "snapshot {snapshots}: {} items, not in {least}..={most}",
            copy.len()
        );
        snapshots += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
}
