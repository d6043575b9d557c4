//! A slot written once and read without locks: how a growing filter publishes a new level. A
//! `OnceLock` (readers pay one `Acquire` load); under loom its state is a loom atomic, so models
//! explore every order around the publication (`Release` store, `Acquire` load), and the value
//! sits in a `OnceLock` only the filling thread writes, before it publishes.

#[cfg(not(loom))]
mod imp {
    use std::sync::{Mutex, OnceLock, PoisonError};

    #[derive(Debug)]
    pub(crate) struct OnceSlot<T> {
        value: OnceLock<T>,
        /// Held by the thread running a fallible fill, which `OnceLock` cannot run on stable.
        filling: Mutex<()>,
    }

    impl<T> OnceSlot<T> {
        pub(crate) fn new() -> Self {
            Self {
                value: OnceLock::new(),
                filling: Mutex::new(()),
            }
        }

        #[inline(always)]
        pub(crate) fn get(&self) -> Option<&T> {
            self.value.get()
        }

        /// The value, filled by `init` first if empty; other fillers wait parked meanwhile.
        pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
            self.value.get_or_init(init)
        }

        /// [`Self::get_or_init`] that may fail: the slot stays empty for the next filler to try.
        pub(crate) fn get_or_try_init<E>(
            &self,
            init: impl FnOnce() -> Result<T, E>,
        ) -> Result<&T, E> {
            if let Some(value) = self.value.get() {
                return Ok(value);
            }
            // A fill that panicked left nothing behind: the lock is only a turn.
            let _turn = self.filling.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(value) = self.value.get() {
                return Ok(value);
            }
            let value = init()?;
            Ok(self.value.get_or_init(|| value))
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
            match self.get_or_try_init(|| Ok::<T, ()>(init())) {
                Ok(value) => value,
                Err(()) => unreachable!("an infallible fill failed"),
            }
        }

        pub(crate) fn get_or_try_init<E>(
            &self,
            init: impl FnOnce() -> Result<T, E>,
        ) -> Result<&T, E> {
            let mut init = Some(init);
            loop {
                if let Some(value) = self.get() {
                    return Ok(value);
                }
                if self
                    .state
                    .compare_exchange_weak(EMPTY, FILLING, Ordering::Acquire, Ordering::Acquire)
                    .is_ok()
                {
                    // Only the first turn of this call fills: `get` would have returned otherwise.
                    let init = init.take().expect("a slot is filled at most once per call");
                    match init() {
                        Ok(value) => {
                            let _ = self.value.set(value);
                            self.state.store(FULL, Ordering::Release);
                        }
                        Err(error) => {
                            self.state.store(EMPTY, Ordering::Release);
                            return Err(error);
                        }
                    }
                } else {
                    loom::thread::yield_now();
                }
            }
        }
    }
}

pub(crate) use self::imp::OnceSlot;

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/sync/once.rs"]
mod tests;
