//! The one place that knows about loom: the crate's atomics, spin-wait and memory helpers, from
//! `core` and the OS in a normal build, from loom's models under `--cfg loom` (`loom-tests/`).

#[cfg(not(loom))]
mod std;
#[cfg(not(loom))]
pub(crate) use self::std::*;

#[cfg(loom)]
mod mocked;
#[cfg(loom)]
pub(crate) use self::mocked::*;

#[cfg(all(target_os = "linux", not(loom)))]
pub(crate) mod mapping;
mod once;
mod waiters;
pub(crate) use self::once::OnceSlot;
pub(crate) use self::waiters::Waiters;
/// A value on cache lines of its own, so that writes to its neighbours do not evict it.
pub(crate) use crossbeam_utils::CachePadded;

/// Whether loom explores this build, whose threads share one OS thread: fewer retries, no caches.
pub(crate) const MODEL_CHECKED: bool = cfg!(loom);
