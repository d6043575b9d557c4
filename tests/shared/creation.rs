//! Opening a live file while it is being created, and after its creator was killed half-way.

use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter, SharedError};

use crate::child::{self, spawn};
use crate::{create, TempPath};

/// What an opener racing the creator may get: not found yet, or the filter. A file being
/// created is the creator's until its header is whole (docs/shared.md): an opener waits for
/// it, so it never reads a half-made file as a damaged one.
fn open_racing_a_creator(path: &std::path::Path) -> Option<ConcurrentCuckooFilter> {
    loop {
        match ConcurrentCuckooFilter::open_shared(path, Access::ReadWrite) {
            Ok(filter) => return Some(filter),
            Err(SharedError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                std::hint::spin_loop();
            }
            Err(other) => panic!("an opener racing the creator got: {other}"),
        }
    }
}

/// Threads open a path (each open its own file description, so its `flock`s and OFD locks
/// race as other processes' would) while another creates the file there: every opener gets the
/// working filter, with the creator's key in it, never an error for a half-made file.
#[test]
fn openers_racing_the_creator_get_the_filter() {
    const ROUNDS: usize = 300;
    const OPENERS: usize = 3;
    for round in 0..ROUNDS {
        let path = TempPath::new("race");
        let packed = round % 2 == 0;
        std::thread::scope(|scope| {
            let openers: Vec<_> = (0..OPENERS)
                .map(|_| scope.spawn(|| open_racing_a_creator(&path.0)))
                .collect();
            let filter = create(&path.0, packed, 1_000);
            filter.insert(&7u64).unwrap();
            for opener in openers {
                let opened = opener.join().unwrap().unwrap();
                assert!(opened.contains(&7u64));
                opened.insert(&(round as u64)).unwrap();
                assert!(filter.contains(&(round as u64)));
            }
        });
    }
}

/// A creator process killed at random points while it creates files one after the other: a
/// file it finished (acknowledged after `create_shared` returned) opens and works; the one it
/// was making when killed gives a clear error or a working filter within the creation wait,
/// never a hang or a crash.
#[test]
fn a_creator_killed_half_way_leaves_an_error_or_a_filter() {
    let dir = TempPath::new("creators");
    std::fs::create_dir(&dir.0).unwrap();
    let mut seed = Instant::now().elapsed().as_nanos() as u64 | 1;
    let (mut errors, mut whole, mut unacknowledged) = (0, 0, 0);
    for round in 0..12u64 {
        let acks = dir.0.join(format!("acks-{round}"));
        std::fs::write(&acks, b"").unwrap();
        let prefix = dir.0.join(format!("r{round}-"));
        let mut child = spawn(
            "creator",
            &prefix,
            &[("CCF_ACKS", acks.display().to_string())],
        );
        child::kill_after(&mut child, &mut seed, 5_000, 20_000);
        let made = std::fs::read(&acks).unwrap().len() as u64 / 8;
        for n in 0.. {
            let path = dir.0.join(format!("r{round}-{n}"));
            if !path.exists() {
                assert!(n >= made, "acknowledged file {n} is gone");
                break;
            }
            unacknowledged += usize::from(n >= made);
            let start = Instant::now();
            let opened = ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite);
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "opening a dead creator's file took {:?}",
                start.elapsed()
            );
            match opened {
                Ok(filter) => {
                    whole += 1;
                    filter.verify().unwrap();
                    if n < made {
                        assert!(filter.contains(&n), "file {n} lost its key");
                    }
                    filter.insert(&u64::MAX).unwrap();
                    assert!(filter.contains(&u64::MAX));
                }
                Err(err) => {
                    assert!(n >= made, "acknowledged file {n}: {err}");
                    assert!(
                        err.to_string().contains(&path.display().to_string()),
                        "{err}"
                    );
                    errors += 1;
                }
            }
            let _ = std::fs::remove_file(&path);
        }
    }
    let _ = std::fs::remove_dir_all(&dir.0);
    eprintln!(
        "files of killed creators: {whole} opened, {errors} refused, {unacknowledged} not acknowledged"
    );
}
