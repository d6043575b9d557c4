//! Decoding's peak memory, counted by an allocator that tracks every live byte. In a test binary
//! of its own, since the allocator is global, and with one test, so nothing else allocates
//! while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};

/// The system allocator, counting the bytes live and the most ever live at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees are ours; the counting neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes `f` held at its peak on top of what was live when it started, and its result.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = f();
    (result, PEAK.load(Ordering::Relaxed) - before)
}

/// Room for the stripes (4096 stamps, 32 KiB), the reader's 64 KiB chunk and small allocations.
const SLACK: usize = 128 << 10;

#[test]
fn decoding_holds_at_most_twice_its_input() {
    // Just under the 8 MiB from which a table is placed on huge pages, one huge page larger
    // than it needs (`HUGE_PAGE_MIN_BYTES`), so the bound is exact for both layouts.
    for (layout, capacity) in [
        (TableLayout::Packed, 5_300_000),
        (TableLayout::BucketWord, 3_900_000),
    ] {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(capacity)
            .layout(layout)
            .build()
            .unwrap();
        for key in 0..1_000_000u64 {
            filter.insert(&key).unwrap();
        }
        let bytes = filter.to_bytes();
        let input = bytes.len();
        assert!((8_000_000..8 << 20).contains(&input), "{layout}: {input}");

        // From a slice the caller holds: the table is the only large allocation.
        let (copy, extra) = peak_of(|| ConcurrentCuckooFilter::from_bytes(&bytes).unwrap());
        println!(
            "{layout} from_bytes: input {input} bytes, peak {} bytes",
            input + extra
        );
        assert_eq!(copy.len(), 1_000_000);
        assert!(
            input + extra <= 2 * input + SLACK,
            "{layout}: {extra} > {input}"
        );
        drop(copy);

        // From a reader: the bytes read and the table.
        let (copy, extra) = peak_of(|| ConcurrentCuckooFilter::read_from(&bytes[..]).unwrap());
        println!(
            "{layout} read_from: input {input} bytes, peak {extra} bytes besides the reader's"
        );
        assert_eq!(copy.len(), 1_000_000);
        assert!(
            extra <= 2 * input + SLACK,
            "{layout}: {extra} > 2 × {input}"
        );
        assert!((0..1_000_000u64).all(|key| copy.contains(&key)));
    }
}
