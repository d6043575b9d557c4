use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};

use crate::child::{keys_of, spawn};
use crate::{create, TempPath};

/// Four processes of two threads each insert, remove and look up on one file at once.
#[test]
fn processes_share_one_filter_with_no_false_negative_and_an_exact_len() {
    const PROCESSES: u64 = 4;
    const KEYS: u64 = 20_000;
    for packed in [false, true] {
        let path = TempPath::new("processes");
        let filter = create(&path.0, packed, 200_000);
        let children: Vec<_> = (0..PROCESSES)
            .map(|p| {
                spawn(
                    "mixed",
                    &path.0,
                    &[("CCF_P", p.to_string()), ("CCF_N", KEYS.to_string())],
                )
            })
            .collect();
        for mut child in children {
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
