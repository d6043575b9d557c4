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

// ---------------------------------------------------------------------------------------------
// Round trips.

#[test]
fn every_configuration_round_trips_with_every_answer() {
    let plain = [2, 4, 8]
        .into_iter()
        .flat_map(|slots| (4..=32).map(move |bits| (slots, bits, false)));
    let semi_sorted = (5..=32).map(|bits| (4, bits, true));
    for (slots, bits, semi_sorted) in plain.chain(semi_sorted) {
        {
            let filter = ConcurrentCuckooFilter::builder()
                .capacity(1500)
                .bucket_size(slots)
                .fingerprint_bits(bits)
                .semi_sorted(semi_sorted)
                .hasher(DefaultHashBuilder::with_seed(u64::from(bits)))
                .build()
                .unwrap();
            let keys = fill(&filter, 1400, u64::from(bits));
            assert!(keys.len() > 500, "b={slots} f={bits}: {}", keys.len());
            let bytes = filter.to_bytes();
            let copy = ConcurrentCuckooFilter::from_bytes(&bytes)
                .unwrap_or_else(|err| panic!("b={slots} f={bits}: {err}"));
            assert_same(&filter, &copy, &keys);

            let mut streamed = Vec::new();
            filter.write_to(&mut streamed).unwrap();
            assert_eq!(streamed, bytes);
            let copy = ConcurrentCuckooFilter::read_from(&bytes[..]).unwrap();
            assert_same(&filter, &copy, &keys);

            // The copy is a working filter of its own.
            for key in &keys {
                assert!(copy.remove(key), "b={slots} f={bits}");
            }
            assert_eq!(copy.len(), 0);
            assert_eq!(filter.len(), keys.len());
        }
    }
}

#[test]
fn empty_full_and_tiny_filters_round_trip() {
    let empty = build(4, 12, 100, 1);
    assert_same(
        &empty,
        &ConcurrentCuckooFilter::from_bytes(&empty.to_bytes()).unwrap(),
        &[],
    );

    let full = build(4, 16, 2000, 2);
    let keys = fill(&full, 1_000_000, 2);
    assert!(full.load_factor() > 0.9);
    assert_same(
        &full,
        &ConcurrentCuckooFilter::from_bytes(&full.to_bytes()).unwrap(),
        &keys,
    );

    for buckets in 1..=5 {
        let tiny = ConcurrentCuckooFilter::builder()
            .buckets(buckets)
            .bucket_size(2)
            .fingerprint_bits(5)
            .build()
            .unwrap();
        let keys = fill(&tiny, 100, 3);
        let bytes = tiny.to_bytes();
        assert_same(
            &tiny,
            &ConcurrentCuckooFilter::from_bytes(&bytes).unwrap(),
            &keys,
        );
    }
}

#[test]
fn seed_stripes_and_search_limits_are_kept() {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(5000)
        .hasher(DefaultHashBuilder::with_seed(99))
        .stripes(64)
        .search_limits(3, 100)
        .build()
        .unwrap();
    let keys = fill(&filter, 4000, 9);
    let bytes = filter.to_bytes();
    assert_eq!(get_u64(&bytes, STRIPES_AT), 64);
    assert_eq!(get_u64(&bytes, MAX_SEARCH_BUCKETS_AT), 100);
    assert_eq!(bytes[MAX_HOPS_AT], 3);
    let copy = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(copy.hasher().seed(), 99);
    assert_same(&filter, &copy, &keys);
}

#[test]
fn stripes_that_could_never_be_locked_are_not_recorded() {
    // Three 48-bit buckets: lock groups of 4 buckets, so one group and one useful stripe.
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(3)
        .stripes(1 << 20)
        .build()
        .unwrap();
    let keys = fill(&filter, 8, 4);
    let bytes = filter.to_bytes();
    assert_eq!(get_u64(&bytes, STRIPES_AT), 1);
    let copy = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
    assert!(copy.memory_usage() < filter.memory_usage() / 1000);
    assert!(keys.iter().all(|key| copy.contains(key)));
    assert_eq!(copy.to_bytes(), bytes);

    // A header that asks for them anyway is refused, so every accepted input is canonical.
    let mut asking = bytes.clone();
    set_u64(&mut asking, STRIPES_AT, 2);
    reseal(&mut asking);
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&asking).unwrap_err(),
        DecodeError::InvalidGeometry {
            field: "stripes",
            value: 2
        }
    );
}

#[test]
fn search_limits_beyond_reach_or_cap_are_not_recorded() {
    for (slots, hops, asked, recorded) in [
        (2, 8, 2000, 1022),
        (4, 5, 5000, 2730),
        (4, 2, 1000, 42),
        (8, 8, usize::MAX, 1 << 20),
    ] {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(100)
            .bucket_size(slots)
            .search_limits(hops, asked)
            .build()
            .unwrap();
        let bytes = filter.to_bytes();
        assert_eq!(get_u64(&bytes, MAX_SEARCH_BUCKETS_AT), recorded);
        assert_eq!(bytes[MAX_HOPS_AT] as usize, hops);
        let mut more = bytes.clone();
        set_u64(&mut more, MAX_SEARCH_BUCKETS_AT, recorded + 1);
        reseal(&mut more);
        assert_eq!(
            decode_err(&more),
            DecodeError::InvalidGeometry {
                field: "max_search_buckets",
                value: recorded + 1
            }
        );
    }
}

/// Hands out its bytes a few at a time, as a socket might.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn read_from_reads_exactly_one_filter_from_a_slow_stream() {
    let first = build(4, 12, 3000, 5);
    let first_keys = fill(&first, 2500, 5);
    let second = build(8, 20, 500, 6);
    let second_keys = fill(&second, 400, 6);
    let mut stream = Vec::new();
    first.write_to(&mut stream).unwrap();
    second.write_to(&mut stream).unwrap();
    stream.extend_from_slice(b"and then something else");

    for step in [1, 7, 4096, usize::MAX] {
        let mut reader = Trickle {
            bytes: &stream,
            step,
        };
        let a = ConcurrentCuckooFilter::read_from(&mut reader).unwrap();
        let b = ConcurrentCuckooFilter::read_from(&mut reader).unwrap();
        assert_same(&first, &a, &first_keys);
        assert_same(&second, &b, &second_keys);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"and then something else");
    }
}

// ---------------------------------------------------------------------------------------------
// Hashers.

/// A hasher with its own identity, that takes only even seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EvenSeeded(u64);

impl BuildHasher for EvenSeeded {
    type Hasher = <DefaultHashBuilder as BuildHasher>::Hasher;
    fn build_hasher(&self) -> Self::Hasher {
        DefaultHashBuilder::with_seed(self.0 ^ 0x5555).build_hasher()
    }
}

impl StableHashBuilder for EvenSeeded {
    const HASHER_ID: u64 = u64::from_le_bytes(*b"test-evn");
    fn seed(&self) -> u64 {
        self.0
    }
    fn from_seed(seed: u64) -> Option<Self> {
        (seed % 2 == 0).then_some(Self(seed))
    }
}

#[test]
fn a_filter_is_only_read_back_with_its_own_hash_function() {
    let custom = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .hasher(EvenSeeded(42))
        .build()
        .unwrap();
    for key in 0..500u64 {
        custom.insert(&key).unwrap();
    }
    let bytes = custom.to_bytes();
    assert_eq!(get_u64(&bytes, HASHER_ID_AT), EvenSeeded::HASHER_ID);
    assert_eq!(get_u64(&bytes, SEED_AT), 42);
    let copy = ConcurrentCuckooFilter::<EvenSeeded>::decode(&bytes).unwrap();
    assert_eq!(copy.hasher(), &EvenSeeded(42));
    assert!((0..500u64).all(|key| copy.contains(&key)));
    let copy = ConcurrentCuckooFilter::<EvenSeeded>::decode_from(&bytes[..]).unwrap();
    assert_eq!(copy.len(), 500);

    let default_id = <DefaultHashBuilder as StableHashBuilder>::HASHER_ID;
    assert_eq!(default_id.to_le_bytes(), *b"ccf-xxh3");
    let mismatch = DecodeError::HasherMismatch {
        expected: default_id,
        found: EvenSeeded::HASHER_ID,
    };
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&bytes).unwrap_err(),
        mismatch
    );
    assert_eq!(
        ConcurrentCuckooFilter::read_from(&bytes[..]).unwrap_err(),
        mismatch
    );
    let plain = build(4, 12, 1000, 7).to_bytes();
    assert!(matches!(
        ConcurrentCuckooFilter::<EvenSeeded>::decode(&plain),
        Err(DecodeError::HasherMismatch { .. })
    ));

    let mut odd = bytes.clone();
    set_u64(&mut odd, SEED_AT, 43);
    reseal(&mut odd);
    assert_eq!(
        ConcurrentCuckooFilter::<EvenSeeded>::decode(&odd).unwrap_err(),
        DecodeError::InvalidSeed { seed: 43 }
    );
}

// ---------------------------------------------------------------------------------------------
// Every error, by the check that finds it.

/// A valid encoding to break: 2-slot buckets of 12 bits, an odd bucket count, so that the last
/// word has padding bits.
fn sample() -> (ConcurrentCuckooFilter, Vec<u8>) {
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(101)
        .bucket_size(2)
        .fingerprint_bits(12)
        .build()
        .unwrap();
    fill(&filter, 150, 8);
    let bytes = filter.to_bytes();
    // 101 buckets of 24 bits end 56 bits into their last word, leaving 8 bits of padding.
    (filter, bytes)
}

fn decode_err(bytes: &[u8]) -> DecodeError {
    let err = ConcurrentCuckooFilter::from_bytes(bytes).unwrap_err();
    assert!(!err.to_string().is_empty());
    err
}

#[test]
fn each_kind_of_damage_gets_its_own_error() {
    let (_, good) = sample();
    let len = good.len() as u64;
    assert_eq!(len, 96 + 8 * get_u64(&good, TABLE_WORDS_AT));

    assert_eq!(decode_err(b"PK\x03\x04 a zip file"), DecodeError::BadMagic);
    assert_eq!(
        decode_err(&[]),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64,
            found: 0
        }
    );
    assert_eq!(
        decode_err(&good[..5]),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64,
            found: 5
        }
    );

    let mut future = good.clone();
    future[VERSION_AT] = 2;
    assert_eq!(
        decode_err(&future),
        DecodeError::UnsupportedVersion { version: 2 }
    );

    let mut flipped = good.clone();
    flipped[BUCKETS_AT] ^= 4;
    assert!(matches!(
        decode_err(&flipped),
        DecodeError::HeaderChecksumMismatch { .. }
    ));

    assert_eq!(
        decode_err(&good[..good.len() - 1]),
        DecodeError::Truncated {
            needed: len,
            found: len - 1
        }
    );
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        decode_err(&longer),
        DecodeError::TrailingBytes {
            expected: len,
            found: len + 1
        }
    );

    let mut table_flip = good.clone();
    table_flip[HEADER_LEN + 3] ^= 0x10;
    assert!(matches!(
        decode_err(&table_flip),
        DecodeError::ChecksumMismatch { .. }
    ));

    let mut padding = good.clone();
    let last = good.len() - 9;
    padding[last] |= 0x80;
    reseal(&mut padding);
    assert_eq!(decode_err(&padding), DecodeError::NonZeroPadding);

    let mut count = good.clone();
    let items = get_u64(&good, ITEMS_AT);
    set_u64(&mut count, ITEMS_AT, items + 1);
    reseal(&mut count);
    assert_eq!(
        decode_err(&count),
        DecodeError::ItemCountMismatch {
            header: items + 1,
            table: items
        }
    );
}

#[test]
fn every_out_of_range_field_is_named() {
    let (_, good) = sample();
    let byte_fields: [(usize, &str, &[u8]); 4] = [
        (BUCKET_SIZE_AT, "bucket_size", &[0, 1, 3, 5, 16, 255]),
        (
            FINGERPRINT_BITS_AT,
            "fingerprint_bits",
            &[0, 3, 33, 64, 255],
        ),
        (MAX_HOPS_AT, "max_hops", &[0, 9, 255]),
        (RESERVED_AT, "reserved", &[1, 128]),
    ];
    for (at, field, values) in byte_fields {
        for &value in values {
            let mut bytes = good.clone();
            bytes[at] = value;
            reseal(&mut bytes);
            assert_eq!(
                decode_err(&bytes),
                DecodeError::InvalidGeometry {
                    field,
                    value: value.into()
                },
            );
        }
    }
    let word_fields: [(usize, &str, &[u64]); 4] = [
        (BUCKETS_AT, "buckets", &[0, (1 << 32) + 1, u64::MAX]),
        (STRIPES_AT, "stripes", &[3, 1 << 40, u64::MAX]),
        // 2-slot buckets, 8 hops: a search reaches at most 2 + 4 + ... + 512 = 1022 buckets.
        (
            MAX_SEARCH_BUCKETS_AT,
            "max_search_buckets",
            &[0, 1, 1023, u64::MAX],
        ),
        (
            TABLE_WORDS_AT,
            "table_words",
            &[0, 1, 39, 1 << 40, u64::MAX],
        ),
    ];
    for (at, field, values) in word_fields {
        for &value in values {
            let mut bytes = good.clone();
            set_u64(&mut bytes, at, value);
            reseal(&mut bytes);
            assert_eq!(
                decode_err(&bytes),
                DecodeError::InvalidGeometry { field, value }
            );
        }
    }
    // One stripe for 2^32 slots: its count would not fit its 32 bits.
    let mut bytes = good.clone();
    set_u64(&mut bytes, BUCKETS_AT, 1 << 31);
    set_u64(&mut bytes, STRIPES_AT, 1);
    reseal(&mut bytes);
    assert_eq!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "stripes",
            value: 1
        }
    );
    // A bucket count that fits the table words of another: the word count must then disagree.
    let mut bytes = good.clone();
    set_u64(&mut bytes, BUCKETS_AT, 200);
    reseal(&mut bytes);
    assert!(matches!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "table_words",
            ..
        }
    ));
    // Capacity is informational: any value that fits a usize is kept.
    let mut bytes = good.clone();
    set_u64(&mut bytes, CAPACITY_AT, 12345);
    reseal(&mut bytes);
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&bytes)
            .unwrap()
            .capacity(),
        12345
    );
}

#[test]
fn unknown_flags_are_unsupported_and_the_semi_sorted_flag_is_checked() {
    let (_, good) = sample();
    for flags in [2u16, 0x8000, 0xffff] {
        let mut bytes = good.clone();
        bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&flags.to_le_bytes());
        reseal(&mut bytes);
        assert_eq!(decode_err(&bytes), DecodeError::UnsupportedFlags { flags });
    }
    // The sample has 2-slot buckets, which cannot be semi-sorted.
    let mut bytes = good.clone();
    bytes[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&1u16.to_le_bytes());
    reseal(&mut bytes);
    assert!(matches!(
        decode_err(&bytes),
        DecodeError::InvalidGeometry {
            field: "bucket_size",
            ..
        }
    ));
}

#[test]
fn a_semi_sorted_bucket_not_in_canonical_form_is_refused() {
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(64)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .build()
        .unwrap();
    fill(&filter, 100, 3);
    let good = filter.to_bytes();
    assert!(ConcurrentCuckooFilter::from_bytes(&good)
        .unwrap()
        .is_semi_sorted());
    // Bucket 5 starts at bit 5 · 48 = 240: its 12-bit prefix code, set past the last of 3876.
    let mut bytes = good.clone();
    let word = HEADER_LEN + 8 * (240 / 64);
    let mut value = get_u64(&bytes, word);
    value |= 0xfff << (240 % 64);
    set_u64(&mut bytes, word, value);
    reseal(&mut bytes);
    assert_eq!(decode_err(&bytes), DecodeError::InvalidBucket { bucket: 5 });
}

#[test]
fn reader_errors_are_passed_on() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "peer went away",
            ))
        }
    }
    let err = ConcurrentCuckooFilter::read_from(Failing).unwrap_err();
    assert!(matches!(
        &err,
        DecodeError::Io {
            kind: io::ErrorKind::ConnectionReset,
            ..
        }
    ));
    assert!(err.to_string().contains("peer went away"), "{err}");

    /// Interrupted once before every byte: retried, not reported.
    struct Interrupting<'a>(&'a [u8], bool);
    impl Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let one = buf.len().min(1);
            self.0.read(&mut buf[..one])
        }
    }
    let (filter, bytes) = sample();
    let copy = ConcurrentCuckooFilter::read_from(Interrupting(&bytes, false)).unwrap();
    assert_eq!(copy.len(), filter.len());
}

#[test]
fn decode_error_is_a_well_behaved_error() {
    fn is_error<E: std::error::Error + Clone + Eq + Send + Sync + 'static>(_: &E) {}
    let err = DecodeError::TrailingBytes {
        expected: 10,
        found: 13,
    };
    is_error(&err);
    assert_eq!(err.clone(), err);
    assert_eq!(
        err.to_string(),
        "3 trailing bytes after the cuckoo filter (13 bytes, the filter takes 10)"
    );
}

// ---------------------------------------------------------------------------------------------
// Allocation: nothing larger than the input justifies.

/// The system allocator, noting the largest block each thread asks for.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees are ours; `note` neither allocates nor unwinds.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// The largest allocation this thread makes while running `f`.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|largest| largest.set(0));
    let result = f();
    (result, LARGEST.with(Cell::get))
}

/// A header, with valid checksums, for the largest table there is: 2^32 buckets of eight 32-bit
/// fingerprints, 128 GiB.
fn huge_header() -> Vec<u8> {
    let mut bytes = build(8, 32, 10, 1).to_bytes();
    set_u64(&mut bytes, BUCKETS_AT, 1 << 32);
    set_u64(&mut bytes, TABLE_WORDS_AT, 1 << 34);
    set_u64(&mut bytes, ITEMS_AT, 0);
    bytes.truncate(HEADER_LEN + 8);
    reseal(&mut bytes);
    bytes.truncate(HEADER_LEN);
    bytes
}

#[test]
fn a_header_that_promises_a_huge_table_allocates_nothing_big() {
    let header = huge_header();
    let (result, largest) = largest_allocation(|| ConcurrentCuckooFilter::from_bytes(&header));
    assert_eq!(
        result.unwrap_err(),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64 + 8 * (1 << 34) + 8,
            found: HEADER_LEN as u64
        }
    );
    assert!(largest < 1024, "{largest} bytes");

    // From a stream that delivers 1 MiB of table and stops: memory follows what arrived.
    let mut stream = header.clone();
    stream.resize(HEADER_LEN + (1 << 20), 0);
    let (result, largest) = largest_allocation(|| {
        ConcurrentCuckooFilter::read_from(Trickle {
            bytes: &stream,
            step: 5000,
        })
    });
    assert!(matches!(result, Err(DecodeError::Truncated { .. })));
    assert!(largest <= 4 << 20, "{largest} bytes");

    // Forty bytes of anything: nothing more than a few hundred bytes.
    for fill in [0u8, 0xff] {
        let mut forty = header[..40].to_vec();
        forty[16..].fill(fill);
        let (result, largest) = largest_allocation(|| ConcurrentCuckooFilter::from_bytes(&forty));
        assert!(result.is_err());
        assert!(largest < 1024, "{largest} bytes");
    }
}

#[test]
fn decoding_allocates_in_proportion_to_the_input() {
    let filter = build(4, 12, 200_000, 3);
    fill(&filter, 150_000, 3);
    let bytes = filter.to_bytes();
    let (copy, largest) = largest_allocation(|| ConcurrentCuckooFilter::from_bytes(&bytes));
    assert_eq!(copy.unwrap().len(), 150_000);
    assert!(largest <= bytes.len() + 64, "{largest} > {}", bytes.len());
    let (copy, largest) = largest_allocation(|| ConcurrentCuckooFilter::read_from(&bytes[..]));
    assert_eq!(copy.unwrap().len(), 150_000);
    assert!(
        largest <= 2 * bytes.len(),
        "{largest} > 2 × {}",
        bytes.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Random corruptions never panic and are always rejected.

/// Valid encodings of several configurations, built once.
fn samples() -> &'static [Vec<u8>] {
    static SAMPLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut samples = Vec::new();
        for (i, (slots, bits, capacity)) in [
            (2, 8, 200),
            (4, 12, 300),
            (4, 13, 100),
            (8, 16, 250),
            (8, 20, 120),
            (4, 32, 60),
            (2, 5, 40),
        ]
        .into_iter()
        .enumerate()
        {
            let filter = build(slots, bits, capacity, i as u64);
            fill(&filter, capacity * 3 / 4, i as u64);
            samples.push(filter.to_bytes());
        }
        let tiny = ConcurrentCuckooFilter::builder()
            .buckets(1)
            .bucket_size(2)
            .fingerprint_bits(4)
            .build()
            .unwrap();
        tiny.insert(&1u64).unwrap();
        samples.push(tiny.to_bytes());
        samples
    })
}

#[derive(Clone, Debug)]
enum Corruption {
    /// Flip these bits (positions taken modulo the input's bits).
    Flip(Vec<usize>),
    /// Keep only this many bytes (modulo the length).
    Truncate(usize),
    /// Append these bytes.
    Extend(Vec<u8>),
    /// Overwrite bytes from this position (modulo the length) with these.
    Overwrite(usize, Vec<u8>),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        vec(any::<usize>(), 1..4).prop_map(Corruption::Flip),
        any::<usize>().prop_map(Corruption::Truncate),
        vec(any::<u8>(), 1..64).prop_map(Corruption::Extend),
        (any::<usize>(), vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Corruption::Overwrite(at, bytes)),
    ]
}

fn corrupt(good: &[u8], corruption: &Corruption) -> Vec<u8> {
    let mut bytes = good.to_vec();
    match corruption {
        Corruption::Flip(bits) => {
            for &bit in bits {
                let bit = bit % (bytes.len() * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
        }
        Corruption::Truncate(len) => bytes.truncate(len % bytes.len()),
        Corruption::Extend(more) => bytes.extend_from_slice(more),
        Corruption::Overwrite(at, with) => {
            let at = at % bytes.len();
            let end = (at + with.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&with[..end - at]);
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_encodings_are_rejected(sample in 0..8usize, damage in corruption()) {
        let good = &samples()[sample];
        let bad = corrupt(good, &damage);
        prop_assume!(bad != *good);
        let err = ConcurrentCuckooFilter::from_bytes(&bad);
        prop_assert!(err.is_err(), "{damage:?} was accepted");
        let streamed = ConcurrentCuckooFilter::read_from(&bad[..]);
        if let Corruption::Extend(_) = damage {
            // A stream may go on after the filter: read_from reads the filter and stops.
            let trailing = matches!(err, Err(DecodeError::TrailingBytes { .. }));
            prop_assert!(trailing, "{:?}", err);
            prop_assert_eq!(&streamed.unwrap().to_bytes(), good);
        } else {
            prop_assert_eq!(streamed.err(), err.err());
        }
    }

    #[test]
    fn random_bytes_are_rejected(bytes in vec(any::<u8>(), 0..600)) {
        prop_assert!(ConcurrentCuckooFilter::from_bytes(&bytes).is_err());
        prop_assert!(ConcurrentCuckooFilter::read_from(&bytes[..]).is_err());
    }

    #[test]
    fn random_bytes_after_a_valid_start_are_rejected(
        sample in 0..8usize,
        keep in 0..=HEADER_LEN + 8,
        tail in vec(any::<u8>(), 0..600),
    ) {
        let good = &samples()[sample];
        let mut bytes = good[..keep.min(good.len())].to_vec();
        bytes.extend_from_slice(&tail);
        prop_assume!(!bytes.starts_with(good));
        prop_assert!(ConcurrentCuckooFilter::from_bytes(&bytes).is_err());
        prop_assert!(ConcurrentCuckooFilter::read_from(&bytes[..]).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// A snapshot under concurrent writes is a state the filter really had.

#[test]
fn snapshots_taken_during_writes_are_consistent() {
    const WINDOW: u64 = 60_000;
    const THREADS: u64 = 2;
    // About 84% full once both windows are: inserts often have to move fingerprints.
    let filter = Arc::new(build(4, 12, 135_000, 11));
    let stop = Arc::new(AtomicBool::new(false));
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let key = |thread: u64, i: u64| thread << 40 | i;

    // Each writer keeps a sliding window: it inserts key i, then removes key i - WINDOW, then
    // publishes i + 1. So in any state the filter really has, a writer's keys are one run.
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (filter, stop, progress) = (filter.clone(), stop.clone(), progress.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    filter.insert(&key(t, i)).expect("the window always fits");
                    if i >= WINDOW {
                        assert!(filter.remove(&key(t, i - WINDOW)));
                    }
                    i += 1;
                    progress[t as usize].store(i, Ordering::Release);
                }
            })
        })
        .collect();

    let mut snapshots = 0;
    while snapshots < 40 {
        let before: Vec<u64> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
        if before.iter().any(|&p| p < WINDOW) {
            std::thread::yield_now();
            continue;
        }
        let bytes = if snapshots % 2 == 0 {
            filter.to_bytes()
        } else {
            let mut out = Vec::new();
            filter.write_to(&mut out).unwrap();
            out
        };
        let after: Vec<u64> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
        // The decoder checks that the recorded count matches the table: a torn copy would not.
        let copy = ConcurrentCuckooFilter::from_bytes(&bytes).expect("a consistent snapshot");
        let mut least = 0;
        let mut most = 0;
        for t in 0..THREADS {
            let (b, a) = (before[t as usize], after[t as usize]);
            // Inserted before the copy began and not removed before it ended: must be there.
            let must = a.saturating_sub(WINDOW - 1)..b;
            assert!(
                must.clone().all(|i| copy.contains(&key(t, i))),
                "snapshot {snapshots}: a key of thread {t} in {must:?} is missing"
            );
            least += b.min(WINDOW);
            most += (a + 1).min(WINDOW + 1);
        }
        assert!(
            (least..=most).contains(&(copy.len() as u64)),
            "snapshot {snapshots}: {} items, not in {least}..={most}",
            copy.len()
        );
        snapshots += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Golden files: bytes written by format version 1, which every later version must read.

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The golden filters, rebuilt: name, filter, and a check of its members.
fn golden_filters() -> Vec<(&'static str, ConcurrentCuckooFilter)> {
    let a = ConcurrentCuckooFilter::builder()
        .capacity(3000)
        .build()
        .unwrap();
    for key in 0..2500u64 {
        a.insert(&key).unwrap();
    }
    for i in 0..200 {
        a.insert(&format!("golden-{i}")).unwrap();
    }
    let b = ConcurrentCuckooFilter::builder()
        .capacity(600)
        .bucket_size(8)
        .fingerprint_bits(20)
        .hasher(DefaultHashBuilder::with_seed(0xc0ffee))
        .stripes(4)
        .search_limits(4, 500)
        .build()
        .unwrap();
    for key in 0..500u64 {
        b.insert(&key).unwrap();
    }
    let c = ConcurrentCuckooFilter::builder()
        .capacity(1000)
        .false_positive_rate(0.001)
        .build()
        .unwrap();
    for key in 0..900u64 {
        c.insert(&key).unwrap();
    }
    vec![
        ("golden-v1-b4-f12.bin", a),
        ("golden-v1-b8-f20-seeded.bin", b),
        ("golden-v1-b4-f13-semi-sorted.bin", c),
    ]
}

#[test]
fn golden_files_decode_with_their_members() {
    let read = |name: &str| {
        let bytes = std::fs::read(data_dir().join(name)).unwrap();
        ConcurrentCuckooFilter::from_bytes(&bytes).unwrap()
    };

    let a = read("golden-v1-b4-f12.bin");
    assert_eq!(a.len(), 2700);
    assert_eq!(
        (a.bucket_count(), a.bucket_size(), a.fingerprint_bits()),
        (790, 4, 12)
    );
    assert_eq!(a.capacity(), 3002);
    assert_eq!(a.hasher(), &DefaultHashBuilder::new());
    assert!((0..2500u64).all(|key| a.contains(&key)));
    assert!((0..200).all(|i| a.contains(&format!("golden-{i}"))));
    let false_positives = (10_000..110_000u64).filter(|key| a.contains(key)).count();
    assert!(false_positives < 300, "{false_positives}");

    let b = read("golden-v1-b8-f20-seeded.bin");
    assert_eq!(b.len(), 500);
    assert_eq!(
        (b.bucket_count(), b.bucket_size(), b.fingerprint_bits()),
        (78, 8, 20)
    );
    assert_eq!(b.capacity(), 605);
    assert_eq!(b.hasher().seed(), 0xc0ffee);
    assert!(format!("{b:?}").contains("stripes: 4"), "{b:?}");
    assert!((0..500u64).all(|key| b.contains(&key)));
    assert!(!b.contains(&"golden-0"));

    let c = read("golden-v1-b4-f13-semi-sorted.bin");
    assert_eq!(c.len(), 900);
    assert!(c.is_semi_sorted());
    assert_eq!((c.bucket_size(), c.fingerprint_bits()), (4, 13));
    assert!((0..900u64).all(|key| c.contains(&key)));
}

/// This version writes exactly the golden bytes (or, with `CCF_WRITE_GOLDEN=1`, writes them).
/// When a new format version comes, this test moves to new files; the old ones stay, read by
/// [`golden_files_decode_with_their_members`].
#[test]
fn golden_files_are_what_this_version_writes() {
    let write = std::env::var_os("CCF_WRITE_GOLDEN").is_some();
    for (name, filter) in golden_filters() {
        let path = data_dir().join(name);
        if write {
            std::fs::create_dir_all(data_dir()).unwrap();
            std::fs::write(&path, filter.to_bytes()).unwrap();
        } else {
            let golden = std::fs::read(&path).unwrap();
            assert!(golden == filter.to_bytes(), "{name} differs");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// FORMAT.md, reimplemented from its text alone: its hash, its placement, and a reader that answers
// lookups on a golden file.

const PHI: u64 = 0x9e37_79b9_7f4a_7c15;

/// The default hasher as FORMAT.md describes it, over a key's byte stream.
fn spec_hash(bytes: &[u8], seed: u64) -> u64 {
    if bytes.len() <= 64 {
        return xxh3_64_with_seed(bytes, seed);
    }
    let folded = bytes.len().div_ceil(64) - 1;
    let mut state = seed;
    for block in bytes[..folded * 64].chunks(64) {
        state = xxh3_64_with_seed(block, state);
    }
    xxh3_64_with_seed(
        &bytes[folded * 64..],
        state ^ (folded as u64).wrapping_mul(PHI),
    )
}

/// FORMAT.md's placement: (fingerprint, first bucket, second bucket).
fn spec_placement(hash: u64, buckets: u64, bits: u32) -> (u64, u64, u64) {
    let fp = (((hash & 0xffff_ffff) * ((1u64 << bits) - 1)) >> 32) + 1;
    let first = ((hash >> 32) * buckets) >> 32;
    let mixed = ((fp.wrapping_mul(PHI) >> 32) * buckets) >> 32;
    (fp, first, (mixed + buckets - first) % buckets)
}

/// Hashes as exactly the bytes it holds.
struct RawBytes<'a>(&'a [u8]);

impl Hash for RawBytes<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}

#[test]
fn format_md_hash_and_placement_are_the_crates() {
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    for seed in [0, 1, 0x5eed_c0ff_ee15_f00d] {
        let hasher = DefaultHashBuilder::with_seed(seed);
        for len in 0..=data.len() {
            let bytes = &data[..len];
            assert_eq!(
                hasher.hash_one(RawBytes(bytes)),
                spec_hash(bytes, seed),
                "n={len}"
            );
        }
        assert_eq!(
            hasher.hash_one(0x0102_0304_0506_0708u64),
            spec_hash(&0x0102_0304_0506_0708u64.to_le_bytes(), seed)
        );
        assert_eq!(hasher.hash_one("key"), spec_hash(b"key\xff", seed));
    }
    for (slots, bits, capacity) in [(4, 12, 3000), (2, 32, 1000), (8, 5, 70_000)] {
        let filter = build(slots, bits, capacity, 77);
        let buckets = filter.bucket_count() as u64;
        for key in 0..2000u64 {
            let (fp, first, second) = filter.debug_candidates(&key);
            let hash = spec_hash(&key.to_le_bytes(), 77);
            assert_eq!(
                spec_placement(hash, buckets, bits),
                (fp.into(), first as u64, second as u64)
            );
        }
    }
}

#[test]
fn a_reader_written_from_format_md_answers_on_a_golden_file() {
    let bytes = std::fs::read(data_dir().join("golden-v1-b4-f12.bin")).unwrap();
    assert_eq!(bytes[..8], *b"\x89CCF\r\n\x1a\n");
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    assert_eq!(get_u64(&bytes, HEADER_CHECKSUM_AT), xxh3_64(&bytes[..80]));
    let end = bytes.len() - 8;
    assert_eq!(get_u64(&bytes, end), xxh3_64(&bytes[..end]));
    let (slots, bits) = (
        bytes[BUCKET_SIZE_AT] as u64,
        bytes[FINGERPRINT_BITS_AT] as u32,
    );
    let buckets = get_u64(&bytes, BUCKETS_AT);
    let seed = get_u64(&bytes, SEED_AT);
    let words = get_u64(&bytes, TABLE_WORDS_AT);
    assert_eq!(words, (buckets * slots * bits as u64).div_ceil(64));
    assert_eq!(bytes.len() as u64, 96 + 8 * words);
    let bit = |k: u64| get_u64(&bytes, HEADER_LEN + 8 * (k / 64) as usize) >> (k % 64) & 1;
    let fingerprint = |bucket: u64, slot: u64| {
        let start = (bucket * slots + slot) * bits as u64;
        (0..bits as u64).fold(0, |fp, i| fp | bit(start + i) << i)
    };
    let stored = (0..buckets)
        .flat_map(|b| (0..slots).map(move |s| (b, s)))
        .filter(|&(b, s)| fingerprint(b, s) != 0)
        .count();
    assert_eq!(stored as u64, get_u64(&bytes, ITEMS_AT));
    let used = buckets * slots * bits as u64;
    assert!((used..words * 64).all(|k| bit(k) == 0), "padding");
    let holds = |bucket: u64, fp: u64| (0..slots).any(|s| fingerprint(bucket, s) == fp);
    for key in 0..2500u64 {
        let hash = spec_hash(&key.to_le_bytes(), seed);
        let (fp, first, second) = spec_placement(hash, buckets, bits);
        assert!(holds(first, fp) || holds(second, fp), "key {key}");
    }
    for i in 0..200 {
        let mut key = format!("golden-{i}").into_bytes();
        key.push(0xff);
        let (fp, first, second) = spec_placement(spec_hash(&key, seed), buckets, bits);
        assert!(holds(first, fp) || holds(second, fp), "golden-{i}");
    }
}

/// With `CCF_WRITE_FUZZ_SEEDS=1`, writes small valid encodings for the fuzzer to start from.
#[test]
fn fuzz_seeds() {
    if std::env::var_os("CCF_WRITE_FUZZ_SEEDS").is_none() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bytes) in samples().iter().enumerate() {
        std::fs::write(dir.join(format!("sample-{i}.bin")), bytes).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// serde goes through the same bytes.

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_through_the_same_bytes() {
    let filter = build(4, 16, 1000, 21);
    let keys = fill(&filter, 800, 21);
    let json = serde_json::to_string(&filter).unwrap();
    let numbers: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(numbers, filter.to_bytes());
    let copy: ConcurrentCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_same(&filter, &copy, &keys);

    let mut bad = numbers.clone();
    bad[200] ^= 1;
    let err = serde_json::from_str::<ConcurrentCuckooFilter>(&serde_json::to_string(&bad).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    assert!(serde_json::from_str::<ConcurrentCuckooFilter>("\"text\"").is_err());
    assert!(serde_json::from_str::<ConcurrentCuckooFilter>("[1, 2, 300]").is_err());
}
