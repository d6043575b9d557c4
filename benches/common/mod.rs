//! What the criterion benches (`benches/filter.rs`) and the paper reproduction
//! (`examples/paper.rs`) share: the keys, a small random number generator, and one interface
//! over this crate's filter and the concurrent Rust peers, so every filter runs the same loop.

#![allow(dead_code)] // each of the two targets uses its own subset

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use parking_lot::{Mutex, RwLock};
use std::collections::hash_map::DefaultHasher as SipHasher;

/// The `i`-th key: a bijective mix of `i` (the splitmix64 finalizer), so keys look random, the
/// keys of different indices never collide, and no key list has to be stored.
#[inline]
pub fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Indices at and above this are never inserted: their keys are the negative queries.
pub const ABSENT: u64 = 1 << 62;

/// wyrand: a fast generator for choosing queries and operations.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(key(seed))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (t as u64) ^ ((t >> 64) as u64)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-high.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// A filter as the benches drive it: keys are `u64`, every operation takes `&self`.
pub trait Subject: Send + Sync + Sized + 'static {
    /// Name in bench ids, tables and plot legends.
    const NAME: &'static str;
    /// Whether it can remove items (the Bloom filter cannot).
    const DELETES: bool = true;
    /// An empty filter sized for `items` items the way a user would ask for it.
    fn with_capacity(items: usize) -> Self;
    fn contains(&self, key: u64) -> bool;
    /// `false` when the filter is full.
    fn insert(&self, key: u64) -> bool;
    fn remove(&self, key: u64) -> bool;
    /// Bytes of the filter's table.
    fn memory(&self) -> usize;
}

/// This crate, default configuration (12-bit fingerprints, 4-slot buckets, xxh3).
pub struct Ours(pub ConcurrentCuckooFilter);

impl Subject for Ours {
    const NAME: &'static str = "ours";
    fn with_capacity(items: usize) -> Self {
        Self(ConcurrentCuckooFilter::with_capacity(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn memory(&self) -> usize {
        self.0.memory_usage()
    }
}

/// `atomic-cuckoo-filter`: lock-free reads and simple inserts, a filter-wide lock for evictions
/// and removes. Its defaults: 16-bit fingerprints, 4-slot buckets, a power-of-two bucket count,
/// SipHash-1-3.
pub struct Acf(pub atomic_cuckoo_filter::CuckooFilter);

impl Subject for Acf {
    const NAME: &'static str = "atomic-cuckoo-filter";
    fn with_capacity(items: usize) -> Self {
        Self(atomic_cuckoo_filter::CuckooFilter::with_capacity(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn memory(&self) -> usize {
        // `capacity()` is the slot count; fingerprints are 16 bits.
        self.0.capacity() * 2
    }
}

/// `cuckoofilter` (8-bit fingerprints, 4-slot buckets, power-of-two slot count, SipHash-1-3),
/// the single-threaded filter, as users share it today: behind a `parking_lot::Mutex`.
pub struct CfMutex(pub Mutex<cuckoofilter::CuckooFilter<SipHasher>>);

impl Subject for CfMutex {
    const NAME: &'static str = "cuckoofilter+Mutex";
    fn with_capacity(items: usize) -> Self {
        Self(Mutex::new(cuckoofilter::CuckooFilter::with_capacity(items)))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.lock().contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.lock().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.lock().delete(&key)
    }
    fn memory(&self) -> usize {
        self.0.lock().memory_usage()
    }
}

/// `cuckoofilter` behind a `parking_lot::RwLock`: lookups share the lock.
pub struct CfRwLock(pub RwLock<cuckoofilter::CuckooFilter<SipHasher>>);

impl Subject for CfRwLock {
    const NAME: &'static str = "cuckoofilter+RwLock";
    fn with_capacity(items: usize) -> Self {
        Self(RwLock::new(cuckoofilter::CuckooFilter::with_capacity(
            items,
        )))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.read().contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.write().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.write().delete(&key)
    }
    fn memory(&self) -> usize {
        self.0.read().memory_usage()
    }
}

/// Bits per item of this crate's default filter when full (12-bit fingerprints at 95% load):
/// the Bloom filter gets the same memory.
pub const OURS_BITS_PER_ITEM: f64 = 12.0 / 0.95;

/// `fastbloom::AtomicBloomFilter` with the memory our filter takes for the same items and the
/// best number of hash functions for them (9). Its default hasher: SipHash-1-3. No removes.
pub struct FastBloom(pub fastbloom::AtomicBloomFilter);

impl Subject for FastBloom {
    const NAME: &'static str = "fastbloom";
    const DELETES: bool = false;
    fn with_capacity(items: usize) -> Self {
        let bits = (items as f64 * OURS_BITS_PER_ITEM) as usize;
        Self(fastbloom::AtomicBloomFilter::with_num_bits(bits).expected_items(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("a Bloom filter cannot remove")
    }
    fn memory(&self) -> usize {
        self.0.num_bits() / 8
    }
}

/// The processor's name and the number of cores, for plot captions and reports.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .and_then(|rest| rest.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown CPU");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}
