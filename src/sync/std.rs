pub(crate) use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_changes_nothing() {
        let words: Vec<AtomicU64> = (0..64).map(AtomicU64::new).collect();
        for word in &words {
            prefetch(word);
        }
        assert!(words
            .iter()
            .enumerate()
            .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64));
    }
}
