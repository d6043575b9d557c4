pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Under loom a spin loop must yield, or the model checker would explore it forever.
#[derive(Debug, Default)]
pub(crate) struct Backoff;

impl Backoff {
    pub(crate) fn new() -> Self {
        Self
    }

    #[inline]
    pub(crate) fn snooze(&self) {
        loom::thread::yield_now();
    }
}

/// A prefetch hint has no effect loom could observe.
#[inline(always)]
pub(crate) fn prefetch(_word: &AtomicU64) {}
