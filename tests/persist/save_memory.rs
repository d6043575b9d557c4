//! Saving takes no copy of the table: `write_to` streams it, `to_bytes` allocates its bytes
//! once, and a buffer too short for the bytes is an error.

use std::io::ErrorKind;

use concurrent_cuckoo_filter::{GrowableCuckooFilter, TableLayout};

use super::allocation::total_allocation;
use super::*;

/// What a save may allocate besides the bytes it returns: a few kilobytes of buffers and locks.
const SMALL: usize = 64 << 10;

fn fixed_filters() -> Vec<ConcurrentCuckooFilter> {
    [TableLayout::BucketWord, TableLayout::Packed]
        .into_iter()
        .map(|layout| {
            let filter = ConcurrentCuckooFilter::builder()
                .capacity(1_000_000)
                .layout(layout)
                .build()
                .unwrap();
            filter.try_extend(0..900_000u64).unwrap();
            filter
        })
        .collect()
}

fn grown() -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(10_000)
        .split_depth(3)
        .build()
        .unwrap();
    filter.try_extend(0..500_000u64).unwrap();
    assert!(filter.level_count() > 1);
    filter
}

#[test]
fn write_to_allocates_no_copy_of_the_table() {
    for filter in fixed_filters() {
        let (written, bytes) = total_allocation(|| filter.write_to(io::sink()));
        written.unwrap();
        assert!(filter.memory_usage() > 20 * SMALL);
        assert!(bytes < SMALL, "{:?}: {bytes} bytes", filter.layout());
    }
    let filter = grown();
    let (written, bytes) = total_allocation(|| filter.write_to(io::sink()));
    written.unwrap();
    assert!(bytes < SMALL, "growable: {bytes} bytes");
}

#[test]
fn to_bytes_allocates_its_bytes_once() {
    for filter in fixed_filters() {
        let (out, bytes) = total_allocation(|| filter.to_bytes());
        assert_eq!(out.len() as u64, filter.serialized_len());
        assert!(
            bytes < out.len() + SMALL,
            "{:?}: {bytes} for {}",
            filter.layout(),
            out.len()
        );
    }
    let filter = grown();
    let (out, bytes) = total_allocation(|| filter.to_bytes());
    assert_eq!(out.len() as u64, filter.serialized_len());
    assert!(
        bytes < out.len() + SMALL,
        "growable: {bytes} for {}",
        out.len()
    );
}

#[test]
fn a_buffer_of_serialized_len_takes_the_bytes_and_a_shorter_one_is_an_error() {
    let filter = &fixed_filters()[0];
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    filter.write_to(&mut buffer[..]).unwrap();
    assert_eq!(buffer, filter.to_bytes());
    for short in [0, 50, 100, buffer.len() / 2, buffer.len() - 1] {
        let err = filter.write_to(&mut buffer[..short]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WriteZero, "{short} bytes");
    }
    // The filter is unlocked after a failed write.
    filter.insert(&u64::MAX).unwrap();

    let filter = grown();
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    filter.write_to(&mut buffer[..]).unwrap();
    assert_eq!(buffer, filter.to_bytes());
    let err = filter.write_to(&mut buffer[..1000]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WriteZero);
    filter.insert(&u64::MAX).unwrap();
}
