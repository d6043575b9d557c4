pub(crate) use core::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};

use core::ptr::NonNull;
use std::alloc::Layout;

/// A spin loop's wait: pause hints, then yields, so that a preempted lock holder can run.
pub(crate) use crossbeam_utils::Backoff;

/// Asks the CPU to start bringing `word`'s cache line in: a hint, which never faults.
#[inline(always)]
pub(crate) fn prefetch(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    prefetch_hint::<{ core::arch::x86_64::_MM_HINT_T0 }>(word);
    let _ = word;
}

/// [`prefetch`] for writing (`PREFETCHW`): a stripe another core wrote arrives before the lock.
#[inline(always)]
pub(crate) fn prefetch_write(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    prefetch_hint::<{ core::arch::x86_64::_MM_HINT_ET0 }>(word);
    let _ = word;
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_hint<const HINT: i32>(word: &AtomicU64) {
    // SAFETY: `_mm_prefetch` needs SSE, in the x86_64 baseline; a prefetch of any address, even
    // an invalid one, never faults and has no architectural effect (this one is a live reference).
    unsafe { core::arch::x86_64::_mm_prefetch::<HINT>(word.as_ptr() as *const i8) }
}

/// Asks the kernel for transparent huge pages under `memory`: advice, which it may decline.
#[allow(unsafe_code)]
pub(crate) fn advise_huge_pages<T>(memory: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = memory.as_ptr() as usize;
        let end = start + core::mem::size_of_val(memory);
        // madvise wants a page-aligned start; only whole pages inside `memory` are advised.
        let (first, last) = (start.next_multiple_of(PAGE), end & !(PAGE - 1));
        if first < last {
            // SAFETY: [first, last) lies inside `memory`, which we borrow, so it stays mapped for
            // the call. MADV_HUGEPAGE changes only how the kernel backs the pages, never their
            // contents or mapping, which no Rust value can observe. A refusal is ignored.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = memory;
}

/// The bytes of a transparent huge page on x86_64 (and on aarch64 with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// A table's atomic words, zeroed and untouched: on an allocation of their own (from its first
/// 2 MiB boundary, advised onto huge pages, with `huge_pages`) or inside a file mapping.
pub(crate) struct TableWords {
    /// The first word: `block`, or past it to the first huge-page boundary in it.
    words: NonNull<AtomicU64>,
    len: usize,
    /// The allocation as the allocator gave it, freed with `layout`.
    block: NonNull<u8>,
    layout: Layout,
    /// The mapping mapped words keep alive (unwind safe, as filters are); `None` on the heap.
    #[cfg(target_os = "linux")]
    mapping: Option<std::sync::Arc<dyn Send + Sync + std::panic::RefUnwindSafe>>,
}

/// `len` table words, every one 0, or `None` if the memory cannot be had (see [`TableWords`]).
pub(crate) fn table_words(len: usize, huge_pages: bool) -> Option<TableWords> {
    let slack = if huge_pages { HUGE_PAGE } else { 0 };
    let bytes = len.checked_mul(8)?.checked_add(slack)?;
    let layout = Layout::from_size_align(bytes, core::mem::align_of::<AtomicU64>()).ok()?;
    let block = if layout.size() == 0 {
        NonNull::<AtomicU64>::dangling().cast::<u8>()
    } else {
        // SAFETY: `layout` has a non-zero size, as `alloc_zeroed` needs; a null result is
        // returned as `None` before anything else.
        #[allow(unsafe_code)]
        let block = unsafe { std::alloc::alloc_zeroed(layout) };
        NonNull::new(block)?
    };
    // Bytes up to the first 2 MiB boundary: fewer than `slack`, and a multiple of 8 (the
    // block is 8-aligned, a boundary too), so the words are aligned and inside the block.
    let offset = if huge_pages {
        (block.as_ptr() as usize).wrapping_neg() % HUGE_PAGE
    } else {
        0
    };
    let words = TableWords {
        words: NonNull::new(block.as_ptr().wrapping_add(offset).cast::<AtomicU64>())?,
        len,
        block,
        layout,
        #[cfg(target_os = "linux")]
        mapping: None,
    };
    if huge_pages {
        advise_huge_pages(&words);
    }
    Some(words)
}

#[cfg(target_os = "linux")]
impl TableWords {
    /// `len` words from `words` on, inside `mapping`: `Mapping::words` checked them, 8-aligned.
    pub(crate) fn mapped(
        words: NonNull<AtomicU64>,
        len: usize,
        mapping: std::sync::Arc<dyn Send + Sync + std::panic::RefUnwindSafe>,
    ) -> Self {
        Self {
            words,
            len,
            block: NonNull::dangling(),
            // Size 0: `Drop` frees nothing.
            layout: Layout::new::<()>(),
            mapping: Some(mapping),
        }
    }

    /// Another handle on the same mapped words; `None` for words on the heap (one owner).
    pub(crate) fn share(&self) -> Option<Self> {
        let mapping = self.mapping.clone()?;
        Some(Self::mapped(self.words, self.len, mapping))
    }
}

impl core::ops::Deref for TableWords {
    type Target = [AtomicU64];

    #[inline(always)]
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `words` is non-null and aligned for `AtomicU64` (dangling when `len` is 0), and
        // its `len` words lie inside the block (`table_words` reserves `slack` bytes for the
        // offset), zero-filled by `alloc_zeroed`: all-zero bits are a valid `AtomicU64`. `self`
        // owns the block and frees it only when dropped, so it outlives the borrow. Mapped words
        // lie inside a mapping `Mapping::words` checked to hold them, 8-aligned, kept mapped by
        // `self`'s `Arc`; any bits are a valid `u64`, touched by every process only atomically.
        // The file must keep its length while mapped (shrunk: SIGBUS), which the live file's
        // shared `flock` tells cooperating programs (docs/shared.md).
        #[allow(unsafe_code)]
        unsafe {
            core::slice::from_raw_parts(self.words.as_ptr(), self.len)
        }
    }
}

impl Drop for TableWords {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: `block` came from the global allocator with exactly `self.layout`, and this
            // is the only place it is freed, once, when no borrow of the words can be left.
            #[allow(unsafe_code)]
            unsafe {
                std::alloc::dealloc(self.block.as_ptr(), self.layout);
            }
        }
    }
}

// SAFETY: `TableWords` owns its block as a `Box<[AtomicU64]>` owns its slice (no other pointer to
// it is ever made), or shares a mapping through an `Arc` of a `Send + Sync` handle, and
// `AtomicU64` is `Send` and `Sync`: sending or sharing the owner sends or shares nothing else.
#[allow(unsafe_code)]
unsafe impl Send for TableWords {}
// SAFETY: as for `Send`.
#[allow(unsafe_code)]
unsafe impl Sync for TableWords {}

impl core::fmt::Debug for TableWords {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TableWords")
            .field("len", &self.len)
            .field("reserved_bytes", &self.layout.size())
            .finish()
    }
}

#[cfg(test)]
#[path = "../../tests/unit/sync/std.rs"]
mod tests;
