use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};

use crate::child::{keys_of, spawn};
use crate::{create, TempPath};

/// `processes` children each inserting and removing `keys` keys per thread ([`child`]'s "mixed").
fn spawn_mixed(path: &std::path::Path, processes: u64, keys: u64) -> Vec<std::process::Child> {
    (0..processes)
        .map(|p| {
            let vars = [("CCF_P", p.to_string()), ("CCF_N", keys.to_string())];
            spawn("mixed", path, &vars)
        })
        .collect()
}

/// Four processes of two threads each insert, remove and look up on one file at once.
#[test]
fn processes_share_one_filter_with_no_false_negative_and_an_exact_len() {
    const PROCESSES: u64 = 4;
    const KEYS: u64 = 20_000;
    for packed in [false, true] {
        let path = TempPath::new("processes");
        let filter = create(&path.0, packed, 200_000);
        for mut child in spawn_mixed(&path.0, PROCESSES, KEYS) {
            assert!(child.wait().unwrap().success(), "a child failed");
        }
        let kept = PROCESSES * 2 * KEYS / 2;
        assert_eq!(filter.len() as u64, kept);
        for p in 0..PROCESSES {
            for t in 0..2 {
                for (i, key) in keys_of(p, t, KEYS).enumerate() {
                    if i % 2 == 1 {
                        assert!(filter.contains(&key), "false negative {key}");
                    }
                }
            }
        }
        filter.verify().unwrap();
        let reopened = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
        assert_eq!(reopened.len() as u64, kept);
    }
}

/// A read-only opener looks up, copies and checks the file while two processes insert and
/// remove in it, moving the keys already there: it never misses one of those, nor does a
/// copy it takes, and once the writers are gone it counts what they left.
#[test]
fn a_read_only_opener_misses_nothing_while_processes_write() {
    const KEYS: u64 = 40_000;
    for packed in [false, true] {
        let path = TempPath::new("read-only-live");
        let filter = create(&path.0, packed, 200_000);
        let resident: Vec<u64> = (0..40_000u64).map(|i| i | 1 << 40).collect();
        for key in &resident {
            filter.insert(key).unwrap();
        }
        let reader = ConcurrentCuckooFilter::open_shared(&path.0, Access::ReadOnly).unwrap();
        let mut children = spawn_mixed(&path.0, 2, KEYS);
        let mut rounds = 0;
        loop {
            assert!(
                resident.iter().all(|key| reader.contains(key)),
                "a lookup missed"
            );
            let copy = reader.clone();
            assert!(
                resident.iter().all(|key| copy.contains(key)),
                "a copy missed"
            );
            copy.verify().unwrap();
            rounds += 1;
            if children
                .iter_mut()
                .all(|child| child.try_wait().unwrap().is_some())
            {
                break;
            }
        }
        for mut child in children {
            assert!(child.wait().unwrap().success(), "a child failed");
        }
        eprintln!(
            "packed {packed}: {rounds} rounds of lookups and copies while the children wrote"
        );
        reader.verify().unwrap();
        assert_eq!(
            reader.len() as u64,
            resident.len() as u64 + 2 * 2 * KEYS / 2
        );
        assert_eq!(reader.clone().len(), reader.len());
    }
}
