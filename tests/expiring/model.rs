//! A property test against an exact model: the last `W` inserts in a queue, and a map of each
//! key's last position. Every key the model holds must be found.

use std::collections::{HashMap, VecDeque};

use concurrent_cuckoo_filter::{ExpiringCuckooFilter, Window};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u16),
    InsertUnique(u16),
    Remove(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u16..300).prop_map(Op::Insert),
        3 => (0u16..300).prop_map(Op::InsertUnique),
        1 => (0u16..300).prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_key_of_the_models_window_is_found(
        window in 1u64..200,
        generations in 1u32..=14,
        ops in proptest::collection::vec(op(), 1..1500),
    ) {
        let filter = ExpiringCuckooFilter::builder(Window::Items(window))
            .generations(generations)
            .false_positive_rate(1e-7)
            .build()
            .unwrap();
        let mut queue: VecDeque<u16> = VecDeque::new();
        let mut last: HashMap<u16, u64> = HashMap::new();
        let mut position = 0u64;
        for op in ops {
            match op {
                Op::Insert(k) | Op::InsertUnique(k) => {
                    let live = last.get(&k).is_some_and(|&at| position < at + window);
                    let unique = matches!(op, Op::InsertUnique(_));
                    let new = if unique {
                        filter.insert_unique(&k).unwrap()
                    } else {
                        filter.insert(&k).unwrap();
                        !live
                    };
                    if unique && live {
                        prop_assert!(!new, "key {} live in the model, unique said new", k);
                    }
                    last.insert(k, position);
                    queue.push_back(k);
                    position += 1;
                    if queue.len() as u64 > window {
                        queue.pop_front();
                    }
                }
                Op::Remove(k) => {
                    let live = last.get(&k).is_some_and(|&at| position < at + window);
                    if live {
                        prop_assert!(filter.remove(&k));
                        last.remove(&k);
                    }
                }
            }
            for (&k, &at) in &last {
                if position < at + window {
                    prop_assert!(filter.contains(&k), "key {} of position {} missed at {}", k, at, position);
                }
            }
        }
    }
}
