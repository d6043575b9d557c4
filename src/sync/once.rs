//! A slot written once and read without locks: how a growing filter publishes a new level.
//!
//! A normal build wraps `std`'s `OnceLock`: readers pay one `Acquire` load, and threads that ask
//! to fill a slot another thread is filling wait parked, not spinning. Under loom the slot's state
//! is a loom atomic, so that models see the publication (the `Release` store that makes a filled
//! slot visible, and the `Acquire` load that reads it) and explore every order around it; the
//! value itself sits in a `OnceLock` that only the filling thread writes, before it publishes.

#[cfg(not(loom))]
mod imp {
    use std::sync::OnceLock;

    #[derive(Debug)]
    pub(crate) struct OnceSlot<T>(OnceLock<T>);

    impl<T> OnceSlot<T> {
        pub(crate) fn new() -> Self {
            Self(OnceLock::new())
        }

        /// The value, if the slot has been filled.
        #[inline(always)]
        pub(crate) fn get(&self) -> Option<&T> {
            self.0.get()
        }

        /// The value, filling the slot with `init` first if it is empty. One thread runs `init`;
        /// the others wait for it, parked.
        pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
            self.0.get_or_init(init)
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::super::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    const EMPTY: u64 = 0;
    const FILLING: u64 = 1;
    const FULL: u64 = 2;

    #[derive(Debug)]
    pub(crate) struct OnceSlot<T> {
        state: AtomicU64,
        value: OnceLock<T>,
    }

    impl<T> OnceSlot<T> {
        pub(crate) fn new() -> Self {
            Self {
                state: AtomicU64::new(EMPTY),
                value: OnceLock::new(),
            }
        }

        pub(crate) fn get(&self) -> Option<&T> {
            if self.state.load(Ordering::Acquire) == FULL {
                self.value.get()
            } else {
                None
            }
        }

        pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
            let mut init = Some(init);
            loop {
                if let Some(value) = self.get() {
                    return value;
                }
                // A weak exchange may fail spuriously: then the loop tries again.
                if self
                    .state
                    .compare_exchange_weak(EMPTY, FILLING, Ordering::Acquire, Ordering::Acquire)
                    .is_ok()
                {
                    if let Some(init) = init.take() {
                        let _ = self.value.set(init());
                    }
                    self.state.store(FULL, Ordering::Release);
                } else {
                    loom::thread::yield_now();
                }
            }
        }
    }
}

pub(crate) use self::imp::OnceSlot;
