//! Locks by item hash for a filter of several levels: a unique insert holds its item's lock while
//! it checks every level, so that two unique inserts of one item never overlap.

use crate::raw::{StripeGuard, Stripes};

/// Locks by item hash, apart from every level's stripes: nothing else takes them, and a holder
/// takes level stripes only after, so they add no lock-order cycle.
#[derive(Debug)]
pub(crate) struct ItemLocks {
    stripes: Stripes,
}

impl ItemLocks {
    /// `count` locks, a power of two; `None` if their memory cannot be had.
    pub(crate) fn new(count: usize) -> Option<Self> {
        Some(Self {
            stripes: Stripes::new(count, 0, count, 1)?,
        })
    }

    /// Locks the hash's lock until the guard drops.
    pub(crate) fn lock(&self, hash: u64) -> StripeGuard<'_, false> {
        let lock = (hash >> 32) as usize & (self.stripes.count() - 1);
        self.stripes.lock_pair::<false>(lock, lock)
    }

    /// How many locks there are.
    pub(crate) fn count(&self) -> usize {
        self.stripes.count()
    }

    /// Bytes of the locks.
    pub(crate) fn memory_usage(&self) -> usize {
        self.stripes.memory_usage()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn an_item_lock_is_held_until_its_guard_drops() {
        let locks = ItemLocks::new(4).unwrap();
        let guard = locks.lock(7 << 32);
        drop(guard);
        // Taken again at once: the first guard released it.
        drop(locks.lock(7 << 32));
        assert_eq!(locks.memory_usage(), 32);
    }
}
