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
