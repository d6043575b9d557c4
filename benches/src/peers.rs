//! One interface over this crate's filter and every peer it is measured against, so the
//! criterion benches, the paper reproduction and the reference run drive them with the same loop.
//!
//! Each filter hashes keys with its own crate's hasher (this crate: XXH3; `bloomfilter`,
//! `fastbloom`, the cuckoo peers: SipHash-1-3; `qfilter`: foldhash; the split block Bloom filter
//! and the d-left counting Bloom filter: this crate's XXH3).

use crate::dlcbf::DlCbf;
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher as SipHasher;
use std::hash::BuildHasher;

/// A filter as the benchmarks drive it: keys are `u64` and every operation takes `&self`. The
/// single-threaded peers sit in a `RefCell` (a flag check per call), the shared ones behind the
/// lock a user would put around them.
pub trait Peer {
    /// Name in bench ids, tables and plot legends.
    const NAME: &'static str;
    /// Whether it can remove items (the Bloom filters cannot).
    const DELETES: bool = true;
    /// An empty filter sized for `items` items the way a user of its crate asks for it.
    fn with_capacity(items: usize) -> Self
    where
        Self: Sized;
    fn contains(&self, key: u64) -> bool;
    /// `false` when the filter is full.
    fn insert(&self, key: u64) -> bool;
    /// Only called when [`Self::DELETES`].
    fn remove(&self, key: u64) -> bool;
    /// Bytes of the filter's table.
    fn memory(&self) -> usize;
}

/// Bits per item of this crate's default filter at its capacity (12-bit fingerprints, 95%).
pub const OURS_BITS_PER_ITEM: f64 = 12.0 / 0.95;

/// Items that take `mib` MiB at `bits_per_item` bits each.
pub fn items_for_bits(mib: usize, bits_per_item: f64) -> usize {
    ((mib << 20) as f64 * 8.0 / bits_per_item) as usize
}

/// Items this crate's default filter holds at its capacity in `mib` MiB.
pub fn items_for_mib(mib: usize) -> usize {
    items_for_bits(mib, OURS_BITS_PER_ITEM)
}

/// The operations of a [`Peer`] of this crate: `self` followed by `$field` is the wrapped filter.
macro_rules! ours {
    ($($field:tt)*) => {
        #[inline]
        fn contains(&self, key: u64) -> bool {
            ConcurrentCuckooFilter::contains(&self$($field)*, &key)
        }
        #[inline]
        fn insert(&self, key: u64) -> bool {
            ConcurrentCuckooFilter::insert(&self$($field)*, &key).is_ok()
        }
        #[inline]
        fn remove(&self, key: u64) -> bool {
            ConcurrentCuckooFilter::remove(&self$($field)*, &key)
        }
        fn memory(&self) -> usize {
            self$($field)*.memory_usage()
        }
    };
}

/// This crate's default filter (12-bit fingerprints, 4-slot buckets, XXH3) as a user sizes it:
/// run at its capacity it is 95% full.
impl Peer for ConcurrentCuckooFilter {
    const NAME: &'static str = "ours";
    fn with_capacity(items: usize) -> Self {
        ConcurrentCuckooFilter::with_capacity(items)
    }
    ours!();
}

/// This crate's default filter given the headroom the power-of-two peers get: sized for 1.5
/// times the items, so it runs about 63% full.
#[derive(Debug)]
pub struct Roomy(pub ConcurrentCuckooFilter);

impl Peer for Roomy {
    const NAME: &'static str = "ours-1.5x";
    fn with_capacity(items: usize) -> Self {
        Self(ConcurrentCuckooFilter::with_capacity(items * 3 / 2))
    }
    ours!(.0);
}

/// This crate's filter with semi-sorted 4-slot buckets: 13-bit fingerprints stored in 12 bits,
/// the same memory as the default at half its false positive rate.
#[derive(Debug)]
pub struct SemiSorted(pub ConcurrentCuckooFilter);

impl Peer for SemiSorted {
    const NAME: &'static str = "ours semi-sorted";
    fn with_capacity(items: usize) -> Self {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(items)
            .fingerprint_bits(13)
            .semi_sorted(true)
            .build()
            .expect("a valid configuration");
        Self(filter)
    }
    ours!(.0);
}

/// `atomic-cuckoo-filter`: lock-free reads and simple inserts, a filter-wide lock for evictions
/// and removes. Its defaults: 16-bit fingerprints, 4-slot buckets, a power-of-two bucket count.
impl Peer for atomic_cuckoo_filter::CuckooFilter {
    const NAME: &'static str = "atomic-cuckoo-filter";
    fn with_capacity(items: usize) -> Self {
        atomic_cuckoo_filter::CuckooFilter::with_capacity(items)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::contains(self, &key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::insert(self, &key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::remove(self, &key)
    }
    fn memory(&self) -> usize {
        // `capacity()` is the slot count; fingerprints are 16 bits.
        self.capacity() * 2
    }
}

/// The `cuckoofilter` crate's filter: 8-bit fingerprints, 4-slot buckets, a power-of-two slot
/// count. On `Err` from `add` the key went in and a random other fingerprint was dropped; an
/// insert counts as failed all the same.
pub type Cuckoofilter = cuckoofilter::CuckooFilter<SipHasher>;

/// The `cuckoofilter` crate's single-threaded filter behind `$lock`: `$read` and `$write` take it.
macro_rules! cuckoofilter_behind {
    ($lock:ident, $name:literal, $read:ident, $write:ident) => {
        impl Peer for $lock<Cuckoofilter> {
            const NAME: &'static str = $name;
            fn with_capacity(items: usize) -> Self {
                $lock::new(Cuckoofilter::with_capacity(items))
            }
            #[inline]
            fn contains(&self, key: u64) -> bool {
                self.$read().contains(&key)
            }
            #[inline]
            fn insert(&self, key: u64) -> bool {
                self.$write().add(&key).is_ok()
            }
            #[inline]
            fn remove(&self, key: u64) -> bool {
                self.$write().delete(&key)
            }
            fn memory(&self) -> usize {
                self.$read().memory_usage()
            }
        }
    };
}

// As users share it between threads: behind a `parking_lot` lock.
cuckoofilter_behind!(Mutex, "cuckoofilter+Mutex", lock, lock);
cuckoofilter_behind!(RwLock, "cuckoofilter+RwLock", read, write);
// On one thread.
cuckoofilter_behind!(RefCell, "cuckoofilter", borrow, borrow_mut);

/// `fastbloom::AtomicBloomFilter` with the memory this crate's filter takes for the same items
/// and the best number of hash functions for that (9). No removes.
impl Peer for fastbloom::AtomicBloomFilter {
    const NAME: &'static str = "fastbloom";
    const DELETES: bool = false;
    fn with_capacity(items: usize) -> Self {
        let bits = (items as f64 * OURS_BITS_PER_ITEM) as usize;
        fastbloom::AtomicBloomFilter::with_num_bits(bits).expected_items(items)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        fastbloom::AtomicBloomFilter::contains(self, &key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        fastbloom::AtomicBloomFilter::insert(self, &key);
        true
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("a Bloom filter cannot remove")
    }
    fn memory(&self) -> usize {
        self.num_bits() / 8
    }
}

/// Bits per item of the paper's Bloom filters (Table 3).
pub const BLOOM_BITS_PER_ITEM: usize = 13;

/// A single-threaded filter that cannot remove, in a `RefCell`: `$insert` and `$contains` are
/// expressions of `$f` (the filter) and `$key`.
macro_rules! insert_only {
    ($ty:ty, $name:literal, |$f:ident, $key:ident| $insert:expr, $contains:expr,
     with_capacity: |$items:ident| $new:expr, memory: $memory:expr) => {
        impl Peer for RefCell<$ty> {
            const NAME: &'static str = $name;
            const DELETES: bool = false;
            fn with_capacity($items: usize) -> Self {
                RefCell::new($new)
            }
            #[inline]
            fn contains(&self, $key: u64) -> bool {
                let $f = self.borrow();
                $contains
            }
            #[inline]
            fn insert(&self, $key: u64) -> bool {
                let mut $f = self.borrow_mut();
                $insert;
                true
            }
            fn remove(&self, _key: u64) -> bool {
                unreachable!("a Bloom filter cannot remove")
            }
            fn memory(&self) -> usize {
                let $f = self.borrow();
                $memory
            }
        }
    };
}

// The standard Bloom filter of `bloomfilter` at 13 bits per item, the best number of hash
// functions for that (9).
insert_only!(bloomfilter::Bloom<u64>, "BF", |f, key| f.set(&key), f.check(&key),
    with_capacity: |items| {
        let bytes = (items * BLOOM_BITS_PER_ITEM).div_ceil(8);
        bloomfilter::Bloom::new(bytes, items).expect("a valid Bloom filter")
    },
    memory: (f.len() / 8) as usize);

// `fastbloom`'s standard Bloom filter at 13 bits per item.
insert_only!(fastbloom::BloomFilter, "BF (fastbloom)", |f, key| f.insert(&key), f.contains(&key),
    with_capacity: |items| {
        fastbloom::BloomFilter::with_num_bits(items * BLOOM_BITS_PER_ITEM).expected_items(items)
    },
    memory: f.num_bits() / 8);

/// The split block Bloom filter of `sbbf-rs-safe` (256-bit blocks, 8 bits set per item), fed
/// this crate's XXH3 hash of each key.
#[derive(Debug)]
pub struct Blocked(sbbf_rs_safe::Filter, DefaultHashBuilder);

insert_only!(Blocked, "blk-BF", |f, key| { let hash = f.1.hash_one(key); f.0.insert_hash(hash) },
    f.0.contains_hash(f.1.hash_one(key)),
    with_capacity: |items| {
        Blocked(sbbf_rs_safe::Filter::new(BLOOM_BITS_PER_ITEM, items), DefaultHashBuilder::new())
    },
    memory: f.0.as_bytes().len());

/// Remainder bits of the paper's quotient filter.
pub const QF_REMAINDER_BITS: u8 = 9;

/// `qfilter`, a rank-select quotient filter with the paper's 9-bit remainders, with the
/// power-of-two slot count that holds `items` at 90%.
impl Peer for RefCell<qfilter::Filter> {
    const NAME: &'static str = "QF";
    fn with_capacity(items: usize) -> Self {
        let slots = (items * 10).div_ceil(9).next_power_of_two();
        let qbits = slots.trailing_zeros() as u8;
        let filter =
            qfilter::Filter::with_fingerprint_size(items as u64, qbits + QF_REMAINDER_BITS)
                .expect("a valid quotient filter");
        RefCell::new(filter)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.borrow().contains(key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.borrow_mut().insert_duplicated(key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.borrow_mut().remove(key)
    }
    fn memory(&self) -> usize {
        self.borrow().memory_usage()
    }
}

/// The d-left counting Bloom filter with `items` cells.
impl Peer for RefCell<DlCbf> {
    const NAME: &'static str = "dl-CBF";
    fn with_capacity(items: usize) -> Self {
        RefCell::new(DlCbf::new(items))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.borrow().contains(key)
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.borrow_mut().insert(key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.borrow_mut().remove(key)
    }
    fn memory(&self) -> usize {
        self.borrow().memory()
    }
}
