//! Arbitrary bytes into the expiring filter's decoder, by `from_bytes` and by `read_from`: the
//! two agree, never panic, and an accepted filter works as a filter.
#![no_main]

use concurrent_cuckoo_filter::ExpiringCuckooFilter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let from_bytes = ExpiringCuckooFilter::from_bytes(bytes);
    let read_from = ExpiringCuckooFilter::read_from(bytes);
    assert_eq!(from_bytes.is_ok(), read_from.is_ok());
    if let Ok(filter) = from_bytes {
        for key in 0..64u64 {
            let _ = filter.insert(&key);
            assert!(filter.contains(&key));
        }
        let _ = filter.to_bytes();
    }
});
