//! Threads parked until a state they wait on changes: writers that found a chunk sealed for a
//! split sleep here instead of spinning, and the splitter wakes them when it is done.
//!
//! A normal build parks on a `Condvar`; the waiter checks its condition under the mutex, and the
//! waker takes the mutex after changing the state, so no wake-up falls between the check and the
//! sleep. Under loom a waiter yields in a loop, which the model checker sees.

#[cfg(not(loom))]
mod imp {
    use std::sync::{Condvar, Mutex, PoisonError};

    #[derive(Debug, Default)]
    pub(crate) struct Waiters {
        lock: Mutex<()>,
        woken: Condvar,
    }

    impl Waiters {
        pub(crate) fn new() -> Self {
            Self::default()
        }

        /// Parks the thread for as long as `blocked` says so, checking again at every wake-up.
        pub(crate) fn wait_while(&self, blocked: impl Fn() -> bool) {
            // The mutex guards nothing but the check: a panic elsewhere leaves nothing broken.
            let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            while blocked() {
                guard = self
                    .woken
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }

        /// Wakes every parked thread, after the state they wait on has changed.
        pub(crate) fn wake_all(&self) {
            drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
            self.woken.notify_all();
        }
    }
}

#[cfg(loom)]
mod imp {
    #[derive(Debug, Default)]
    pub(crate) struct Waiters;

    impl Waiters {
        pub(crate) fn new() -> Self {
            Self
        }

        pub(crate) fn wait_while(&self, blocked: impl Fn() -> bool) {
            while blocked() {
                loom::thread::yield_now();
            }
        }

        pub(crate) fn wake_all(&self) {}
    }
}

pub(crate) use self::imp::Waiters;

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/sync/waiters.rs"]
mod tests;
