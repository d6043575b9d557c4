//! Allocation: nothing larger than the input justifies.

use super::*;

/// The system allocator, noting the largest block each thread asks for.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
    let _ = TOTAL.try_with(|total| total.set(total.get() + size));
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
pub(super) fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|largest| largest.set(0));
    let result = f();
    (result, LARGEST.with(Cell::get))
}

/// The bytes this thread allocates while running `f`, freed or not.
pub(super) fn total_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    TOTAL.with(|total| total.set(0));
    let result = f();
    (result, TOTAL.with(Cell::get))
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
fn a_header_with_2_to_the_32_minus_1_buckets_is_checked_without_overflow() {
    // 2-slot buckets of 32-bit fingerprints: one word each, one lock group each.
    let mut bytes = build(2, 32, 10, 1).to_bytes();
    set_u64(&mut bytes, BUCKETS_AT, 0xFFFF_FFFF);
    set_u64(&mut bytes, TABLE_WORDS_AT, 0xFFFF_FFFF);
    set_u64(&mut bytes, STRIPES_AT, 0);
    set_u64(&mut bytes, ITEMS_AT, 0);
    bytes.truncate(HEADER_LEN + 8);
    reseal(&mut bytes);
    bytes.truncate(HEADER_LEN);
    let (result, largest) = largest_allocation(|| ConcurrentCuckooFilter::from_bytes(&bytes));
    assert_eq!(
        result.unwrap_err(),
        DecodeError::Truncated {
            needed: HEADER_LEN as u64 + 8 * 0xFFFF_FFFF + 8,
            found: HEADER_LEN as u64
        }
    );
    assert!(largest < 1024, "{largest} bytes");
    // Asking for every one of its 2^32 useful stripes is accepted, more is not.
    for (stripes, ok) in [(1u64 << 32, true), (1 << 33, false)] {
        let mut asking = bytes.clone();
        asking.extend_from_slice(&[0; 8]);
        set_u64(&mut asking, STRIPES_AT, stripes);
        reseal(&mut asking);
        asking.truncate(HEADER_LEN);
        let err = ConcurrentCuckooFilter::from_bytes(&asking).unwrap_err();
        assert_eq!(matches!(err, DecodeError::Truncated { .. }), ok, "{err}");
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
