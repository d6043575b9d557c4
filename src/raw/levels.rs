//! What a filter of several levels needs from each level: an independent hash per level, a
//! prefetch of an item's buckets, and locks that serialize unique inserts of one item across all
//! levels.

use super::index::{Candidates, Place};
use super::stripe::{StripeGuard, Stripes};
use super::RawFilter;

/// The hash an item has in level `level`: level 0 uses the item's hash as it is, so that a
/// one-level filter places items exactly as a fixed-size one; every later level remixes it
/// (the finalizer of MurmurHash3 over the hash plus a per-level odd constant), so that two items
/// that share a fingerprint and buckets in one level are independent in every other.
#[inline(always)]
pub(crate) fn level_hash(hash: u64, level: usize) -> u64 {
    if level == 0 {
        return hash;
    }
    let mut x = hash.wrapping_add((level as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl<P: Place> RawFilter<P> {
    /// Starts the loads of the candidates' buckets and their stripes' stamps.
    #[inline(always)]
    pub(crate) fn prefetch_candidates(&self, c: &Candidates) {
        self.stripes.prefetch_for_read(c.first);
        self.stripes.prefetch_for_read(c.second);
        self.table.prefetch(c.first);
        self.table.prefetch(c.second);
    }
}

/// Locks by item hash, independent of any level's stripes. A unique insert holds its item's lock
/// while it checks every level and inserts into one, so two unique inserts of one item never
/// overlap. Nothing else takes these locks, and a holder takes level stripes only after, so they
/// add no lock-order cycle.
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
    pub(crate) fn lock(&self, hash: u64) -> StripeGuard<'_> {
        let lock = (hash >> 32) as usize & (self.stripes.count() - 1);
        self.stripes.lock_pair(lock, lock)
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
    fn level_zero_keeps_the_hash_and_later_levels_remix_it() {
        assert_eq!(level_hash(12345, 0), 12345);
        let remixed: Vec<u64> = (1..8).map(|level| level_hash(12345, level)).collect();
        for (i, a) in remixed.iter().enumerate() {
            assert_ne!(*a, 12345);
            assert!(remixed[i + 1..].iter().all(|b| b != a));
        }
    }

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
