//! Threads parked until a state they wait on changes (writers of a chunk sealed for a split). The
//! waiter checks under the mutex and the waker takes it after the change, so no wake-up falls
//! between check and sleep. Under loom a waiter yields in a loop.

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

        /// Parks the thread while `blocked()`, checked again at every wake-up.
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

        /// Wakes every parked thread, after the state they wait on changed.
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
