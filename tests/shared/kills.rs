use std::time::{Duration, Instant};

use crate::child::{self, spawn};
use crate::{create, TempPath};

/// Kills of writer processes in this test; `SHARED_KILLS=n` runs more.
fn kills() -> u64 {
    std::env::var("SHARED_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// Writer processes killed (SIGKILL) at random points while inserting, removing and moving
/// fingerprints in a filter filled to 85%: after each, every acknowledged key is found, `len`
/// stays within what a kill may add (docs/shared.md: at most a moved fingerprint's second copy,
/// a scratch key inserted and not yet removed, an insert not yet acknowledged), and `verify`
/// passes, which also recovers the stripes the dead writer held.
#[test]
fn killed_writers_lose_nothing_acknowledged_and_block_no_one() {
    let rounds = kills();
    for packed in [true, false] {
        let path = TempPath::new("kills");
        let acks = TempPath::new("acks");
        let capacity = 60_000 + rounds as usize * 40;
        let filter = create(&path.0, packed, capacity);
        let prefill = (filter.capacity() as u64) * 85 / 100 - rounds * 30;
        for key in 0..prefill {
            filter.insert(&(key | 1 << 62)).unwrap();
        }
        let mut seed = Instant::now().elapsed().as_nanos() as u64 | 1;
        let mut acked: Vec<u64> = Vec::new();
        let mut slowest = Duration::ZERO;
        for round in 0..rounds / 2 {
            std::fs::write(&acks.0, b"").unwrap();
            let base = (round + 1) << 40;
            let mut child = spawn(
                "writer",
                &path.0,
                &[
                    ("CCF_BASE", base.to_string()),
                    ("CCF_ACKS", acks.0.display().to_string()),
                ],
            );
            child::kill_after(&mut child, &mut seed, 3_000, 12_000);
            let bytes = std::fs::read(&acks.0).unwrap();
            acked.extend(
                bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
            );
            // The next writer on the same stripes must not wait on the dead one beyond the
            // liveness bound: verify locks every stripe, recovering the dead writer's.
            let start = Instant::now();
            filter.verify().unwrap();
            slowest = slowest.max(start.elapsed());
            let missing = acked.iter().find(|&&key| !filter.contains(&key));
            assert!(
                missing.is_none(),
                "acknowledged key {missing:?} lost, round {round}"
            );
            let len = filter.len() as u64;
            let floor = prefill + acked.len() as u64;
            let kills = round + 1;
            assert!(
                (floor..=floor + 3 * kills).contains(&len),
                "len {len}, {floor} acknowledged, {kills} kills"
            );
        }
        // Counts exact to the last item after the file is reopened and checked.
        drop(filter);
        let again = concurrent_cuckoo_filter::ConcurrentCuckooFilter::open_shared(
            &path.0,
            concurrent_cuckoo_filter::Access::ReadWrite,
        )
        .unwrap();
        again.verify().unwrap();
        assert!(acked.iter().all(|key| again.contains(key)));
        eprintln!(
            "packed {packed}: {} kills, {} acknowledged keys found, slowest verify {slowest:?}",
            rounds / 2,
            acked.len()
        );
        assert!(
            slowest < Duration::from_secs(2),
            "a waiter took {slowest:?} to get past dead writers' stripes"
        );
    }
}

/// A read-only opener looks up, copies and checks the file while writers are killed at random
/// points and a survivor process recovers their stripes as it meets them: no lookup nor copy
/// misses a key whose insert was acknowledged before it began, and every copy and check passes
/// (the dead writers' stripes read as their recovery will leave them).
#[test]
fn a_read_only_opener_misses_nothing_while_writers_are_killed() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};

    const KILLS: u64 = 40;
    for packed in [true, false] {
        let path = TempPath::new("read-only-kills");
        let (acks, survivor_acks) = (TempPath::new("acks"), TempPath::new("survivor"));
        let filter = create(&path.0, packed, 60_000);
        let prefill = filter.capacity() as u64 * 85 / 100 - KILLS * 30 - 800;
        for key in 0..prefill {
            filter.insert(&(key | 1 << 62)).unwrap();
        }
        drop(filter);
        std::fs::write(&survivor_acks.0, b"").unwrap();
        let vars = |base: u64, acks: &TempPath| {
            [
                ("CCF_BASE", base.to_string()),
                ("CCF_ACKS", acks.0.display().to_string()),
                ("CCF_MILLIS", "1500".to_string()),
            ]
        };
        let mut survivor = spawn("survivor", &path.0, &vars(1 << 50, &survivor_acks));
        let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
        let (acked, done) = (Mutex::new(Vec::new()), AtomicBool::new(false));
        let checks = std::thread::scope(|scope| {
            let checker = scope.spawn(|| {
                let mut checks = 0;
                while !done.load(Ordering::Relaxed) {
                    let keys: Vec<u64> = acked.lock().unwrap().clone();
                    let missing = keys.iter().find(|&&key| !reader.contains(&key));
                    assert!(missing.is_none(), "a lookup missed {missing:?}");
                    let copy = reader.clone();
                    let missing = keys.iter().find(|&&key| !copy.contains(&key));
                    assert!(missing.is_none(), "a copy missed {missing:?}");
                    copy.verify().unwrap();
                    reader.verify().unwrap();
                    checks += 1;
                }
                checks
            });
            let mut seed = Instant::now().elapsed().as_nanos() as u64 | 1;
            for round in 0..KILLS {
                std::fs::write(&acks.0, b"").unwrap();
                let mut writer = spawn("writer", &path.0, &vars((round + 1) << 40, &acks)[..2]);
                child::kill_after(&mut writer, &mut seed, 3_000, 12_000);
                let bytes = std::fs::read(&acks.0).unwrap();
                let keys = bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()));
                acked.lock().unwrap().extend(keys);
            }
            done.store(true, Ordering::Relaxed);
            checker.join().unwrap()
        });
        assert!(survivor.wait().unwrap().success(), "the survivor failed");
        let acked = acked.into_inner().unwrap();
        assert!((0..prefill).all(|key| reader.contains(&(key | 1 << 62))));
        assert!(acked.iter().all(|key| reader.contains(key)));
        reader.verify().unwrap();
        eprintln!("packed {packed}: {KILLS} kills, {checks} rounds of lookups, copies and checks");
    }
}
