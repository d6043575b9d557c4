//! Writers killed while others keep working on the same file: the survivors wait at most the
//! bound of docs/shared.md for a dead writer's stripes, and lose nothing.

use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};

use crate::child::{self, command, spawn};
use crate::{create, TempPath};

/// The words a child appended to `path`.
fn words(path: &std::path::Path) -> Vec<u64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// Two survivor processes insert, remove and look up for the whole test while writers (half of
/// them flushing every 16 keys) are killed at random points in a filter filled to 90%, and
/// processes that only open the file come and go meanwhile: the survivors finish, no call of
/// theirs waited past the bound (2 s here: 10 ms per stripe a dead writer held, and a machine
/// of 2 cores shared by every process of the test), every acknowledged key is found, `verify`
/// passes and `len` is within what the kills may add.
#[test]
fn survivors_of_killed_writers_wait_a_bounded_time_and_lose_nothing() {
    const KILLS: u64 = 60;
    for packed in [true, false] {
        let path = TempPath::new("survivors");
        let filter = create(&path.0, packed, 50_000);
        let prefill = filter.capacity() as u64 * 90 / 100 - KILLS * 30 - 800;
        for key in 0..prefill {
            filter.insert(&(key | 1 << 62)).unwrap();
        }
        let survivor_acks: Vec<TempPath> = (0..2).map(|_| TempPath::new("survivor")).collect();
        let survivors: Vec<_> = survivor_acks
            .iter()
            .enumerate()
            .map(|(s, acks)| {
                std::fs::write(&acks.0, b"").unwrap();
                spawn(
                    "survivor",
                    &path.0,
                    &[
                        ("CCF_BASE", ((s as u64 + 1) << 50).to_string()),
                        ("CCF_ACKS", acks.0.display().to_string()),
                        ("CCF_MILLIS", "4000".to_string()),
                    ],
                )
            })
            .collect();
        let acks = TempPath::new("victims");
        let mut acked = Vec::new();
        let mut seed = Instant::now().elapsed().as_nanos() as u64 | 1;
        for round in 0..KILLS {
            std::fs::write(&acks.0, b"").unwrap();
            let mut victim = command(
                "writer",
                &path.0,
                &[
                    ("CCF_BASE", ((round + 1) << 40).to_string()),
                    ("CCF_ACKS", acks.0.display().to_string()),
                ],
            );
            if round % 2 == 1 {
                victim.env("CCF_FLUSH", "1");
            }
            let mut victim = victim.spawn().unwrap();
            let opener = std::thread::spawn({
                let path = path.0.clone();
                move || ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite).map(drop)
            });
            child::kill_after(&mut victim, &mut seed, 2_000, 15_000);
            opener.join().unwrap().unwrap();
            acked.extend(words(&acks.0));
        }
        let mut slowest = Duration::ZERO;
        for (mut survivor, acks) in survivors.into_iter().zip(&survivor_acks) {
            assert!(survivor.wait().unwrap().success(), "a survivor failed");
            let words = words(&acks.0);
            let [.., done, micros] = words[..] else {
                panic!("a survivor reported nothing")
            };
            assert_eq!(done, u64::MAX, "a survivor did not finish");
            slowest = slowest.max(Duration::from_micros(micros));
            acked.extend_from_slice(&words[..words.len() - 2]);
        }
        filter.verify().unwrap();
        let missing = acked.iter().filter(|&&key| !filter.contains(&key)).count();
        assert_eq!(missing, 0, "packed {packed}: acknowledged keys lost");
        let (len, floor) = (filter.len() as u64, prefill + acked.len() as u64);
        assert!(
            (floor..=floor + 3 * KILLS).contains(&len),
            "packed {packed}: len {len}, {floor} acknowledged, {KILLS} kills"
        );
        eprintln!(
            "packed {packed}: {KILLS} kills, {} acknowledged keys found, a survivor's slowest call {slowest:?}",
            acked.len()
        );
        assert!(
            slowest < Duration::from_secs(2),
            "a survivor waited {slowest:?} on dead writers' stripes"
        );
    }
}
