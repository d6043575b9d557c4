pub(crate) use core::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};

/// Waits a little before a spin loop tries again: a few CPU pause hints first, then yielding the
/// thread so that a lock holder that was preempted (likely when threads outnumber cores) can run.
#[derive(Debug, Default)]
pub(crate) struct Backoff(crossbeam_utils::Backoff);

impl Backoff {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub(crate) fn snooze(&self) {
        self.0.snooze();
    }
}

/// Asks the CPU to start bringing `word`'s cache line in, without waiting for it. A hint only:
/// it never faults, changes nothing and may be ignored.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has (it is in the baseline target),
    // and it never dereferences its argument in a way that can fault: prefetching any address,
    // even an invalid one, is defined to have no architectural effect. The pointer comes from a
    // live reference anyway.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(word.as_ptr() as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// Like [`prefetch`], but asks for the line in a state this core may write, so that a writer
/// about to lock a stripe another core touched last fetches it ahead instead of when it locks
/// (`PREFETCHW`, on CPUs without it a read prefetch).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch_write(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as for `prefetch`: a prefetch hint never faults and has no architectural effect,
    // whatever the address, and this one comes from a live reference.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        _mm_prefetch::<_MM_HINT_ET0>(word.as_ptr() as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// Asks the kernel to back `memory` with transparent huge pages where it can. Advice only: the
/// memory stays as it is, and where the kernel declines (or this is not Linux) nothing happens.
#[allow(unsafe_code)]
pub(crate) fn advise_huge_pages<T>(memory: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = memory.as_mut_ptr() as usize;
        let end = start + core::mem::size_of_val(memory);
        // madvise wants a page-aligned start; only whole pages inside `memory` are advised.
        let (first, last) = (start.next_multiple_of(PAGE), end & !(PAGE - 1));
        if first < last {
            // SAFETY: [first, last) lies inside `memory`, which we borrow mutably, so it is
            // mapped memory of ours that no one else is using. MADV_HUGEPAGE changes only how
            // the kernel backs the pages, never their contents or whether they are mapped, so
            // no Rust reference or value can observe it. The return value is ignored on
            // purpose: a kernel without huge pages simply says no.
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

/// `len` atomic words, every one 0, or `None` if the memory cannot be had. The words come from a
/// zeroed allocation, so fresh pages the allocator maps for a large table stay untouched (and
/// not resident) until written, and memory advice given before the first write still applies.
#[allow(unsafe_code)]
pub(crate) fn zeroed_words(len: usize) -> Option<Box<[AtomicU64]>> {
    use std::alloc::{alloc_zeroed, Layout};
    if len == 0 {
        return Some(Box::new([]));
    }
    let layout = Layout::array::<AtomicU64>(len).ok()?;
    // SAFETY: `layout` has a non-zero size (len ≥ 1 words of 8 bytes), as `alloc_zeroed` needs,
    // and a null result is returned as `None` before anything else. Otherwise the block comes
    // from the global allocator with `layout`, which is exactly the layout a `Box<[AtomicU64]>` of
    // `len` elements frees itself with (size 8·len, align 8), and no one else owns it. It is
    // zero-filled, and `AtomicU64` has the in-memory representation of `u64`, whose all-zero bit
    // pattern is 0: each of the `len` elements is a valid `AtomicU64::new(0)`.
    unsafe {
        let ptr = alloc_zeroed(layout).cast::<AtomicU64>();
        if ptr.is_null() {
            return None;
        }
        Some(Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_changes_nothing() {
        let words: Vec<AtomicU64> = (0..64).map(AtomicU64::new).collect();
        for word in &words {
            prefetch(word);
            prefetch_write(word);
        }
        assert!(words
            .iter()
            .enumerate()
            .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64));
    }

    #[test]
    fn zeroed_words_are_zero_writable_and_refused_when_impossible() {
        for len in [0usize, 1, 3, 1000, (4 << 20) / 8 + 5] {
            let mut words = zeroed_words(len).unwrap();
            assert_eq!(words.len(), len);
            assert!(words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
            advise_huge_pages(&mut words);
            for (i, word) in words.iter().enumerate() {
                word.store(i as u64 ^ 0xa5a5, Ordering::Relaxed);
            }
            assert!(words
                .iter()
                .enumerate()
                .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64 ^ 0xa5a5));
        }
        // Past isize::MAX bytes, and 256 TiB: more than the address space.
        assert!(zeroed_words(usize::MAX / 4).is_none());
        assert!(zeroed_words(1 << 45).is_none());
    }

    #[test]
    fn huge_page_advice_keeps_memory_as_it_was() {
        // Unaligned at both ends, and large enough to hold whole huge pages.
        let mut words: Vec<u64> = (0..(5 << 20) / 8 + 3).map(|i| i * 7).collect();
        advise_huge_pages(&mut words[1..]);
        advise_huge_pages(&mut words[..0]);
        advise_huge_pages(&mut words[..1]);
        assert!(words.iter().enumerate().all(|(i, &w)| w == i as u64 * 7));
        words.push(1);
        assert_eq!(words.last(), Some(&1));
    }
}
