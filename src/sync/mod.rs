//! The one place that knows about loom.
//!
//! Everything in the crate that touches shared memory imports its atomics and its spin-wait helper
//! from here. A normal build re-exports `core`'s atomics; a `--cfg loom` build swaps in loom's
//! models so that `loom-tests/` can explore every interleaving of the stripe protocol.

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

/// Whether loom explores this build: retry budgets and per-thread caches read it, for loom's
/// threads share one system thread and every retry multiplies the interleavings it explores.
pub(crate) const MODEL_CHECKED: bool = cfg!(loom);
