//! Persistence: round trips of every configuration, golden files, every error, allocation bounds,
//! random corruptions, snapshots under concurrent writes, and serde.
//!
//! Regenerate the golden files (only when the format version changes, keeping the old ones) with
//! `CCF_WRITE_GOLDEN=1 cargo test --release --test persist golden`, and the fuzzer's seed inputs
//! with `CCF_WRITE_FUZZ_SEEDS=1 cargo test --release --test persist fuzz_seeds`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DecodeError, DefaultHashBuilder, StableHashBuilder,
};
use proptest::collection::vec;
use proptest::prelude::*;
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

// ---------------------------------------------------------------------------------------------
// The layout, as FORMAT.md gives it: the tests patch fields by these offsets.

const VERSION_AT: usize = 8;
const FLAGS_AT: usize = 10;
const BUCKET_SIZE_AT: usize = 12;
const FINGERPRINT_BITS_AT: usize = 13;
const MAX_HOPS_AT: usize = 14;
const RESERVED_AT: usize = 15;
const BUCKETS_AT: usize = 16;
const STRIPES_AT: usize = 24;
const MAX_SEARCH_BUCKETS_AT: usize = 32;
const CAPACITY_AT: usize = 40;
const HASHER_ID_AT: usize = 48;
const SEED_AT: usize = 56;
const ITEMS_AT: usize = 64;
const TABLE_WORDS_AT: usize = 72;
const HEADER_CHECKSUM_AT: usize = 80;
const HEADER_LEN: usize = 88;

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn set_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Recomputes both checksums, as FORMAT.md defines them, so that a test can reach the checks
/// behind them.
fn reseal(bytes: &mut [u8]) {
    let header = xxh3_64(&bytes[..HEADER_CHECKSUM_AT]);
    set_u64(bytes, HEADER_CHECKSUM_AT, header);
    let end = bytes.len() - 8;
    let whole = xxh3_64(&bytes[..end]);
    set_u64(bytes, end, whole);
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn build(slots: usize, bits: u32, capacity: usize, seed: u64) -> ConcurrentCuckooFilter {
    ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .bucket_size(slots)
        .fingerprint_bits(bits)
        .hasher(DefaultHashBuilder::with_seed(seed))
        .build()
        .unwrap()
}

/// Inserts distinct keys until `count` are in or an insert fails; returns the keys inserted.
fn fill(filter: &ConcurrentCuckooFilter, count: usize, salt: u64) -> Vec<u64> {
    let mut keys = Vec::with_capacity(count);
    for i in 0..count as u64 {
        let key = i ^ (salt << 40);
        if filter.insert(&key).is_err() {
            break;
        }
        keys.push(key);
    }
    keys
}

/// Asserts that `copy` is `original` as far as anyone can tell: same shape, same count, the same
/// answer to every member and to a range of other keys, and the same bytes.
fn assert_same(original: &ConcurrentCuckooFilter, copy: &ConcurrentCuckooFilter, keys: &[u64]) {
    assert_eq!(format!("{original:?}"), format!("{copy:?}"));
    assert_eq!(copy.len(), original.len());
    assert_eq!(copy.capacity(), original.capacity());
    assert_eq!(copy.bucket_count(), original.bucket_count());
    assert_eq!(copy.bucket_size(), original.bucket_size());
    assert_eq!(copy.fingerprint_bits(), original.fingerprint_bits());
    assert_eq!(copy.hasher(), original.hasher());
    assert!(keys.iter().all(|key| copy.contains(key)));
    for key in keys.iter().step_by(7) {
        assert_eq!(copy.count(key), original.count(key));
    }
    let others = (1u64 << 60)..(1u64 << 60) + 20_000;
    assert!(others
        .clone()
        .all(|key| copy.contains(&key) == original.contains(&key)));
    assert_eq!(copy.to_bytes(), original.to_bytes());
}

mod allocation;
mod bucket_word;
mod corruption;
mod errors;
mod golden;
mod growable_corruption;
mod growable_split;
mod hashers;
mod round_trip;
mod save_memory;
mod snapshot;
mod spec;
mod split_damage;

use corruption::samples;
use errors::decode_err;
use golden::data_dir;
use round_trip::Trickle;
