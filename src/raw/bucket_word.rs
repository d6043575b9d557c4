//! A table of one word per bucket, so that a lookup needs no stripe stamps: each an aligned
//! `AtomicU64`, slot `i`'s fingerprint at bit `i·f` (`b·f ≤ 48`, the rest 0), a version in the
//! top 16 bits.
//!
//! **Writers** lock and stamp stripes as in a packed table (lock groups of one bucket), so other
//! readers (path searches, counts, removes, snapshots) still validate against the stamps. A store,
//! under the stripe lock, is a `Relaxed` load and a `Release` store of the new fingerprints with
//! the version plus one. A move stores the fingerprint's new bucket, then clears the old
//! ([`RawFilter::move_narrow`](super::RawFilter)), under both locks.
//!
//! **A lookup** of candidates `(A, B)` reads no stamp: it loads `A`, then `B` (`Acquire`), then
//! `A` again. A fingerprint found in either word is a hit, whatever the reload says; a miss is
//! trusted only when the reload of `A` returns the very same word, version included. Else it
//! tries again, and after [`super::stripe::READ_RETRIES`] tries reads under both stripes' locks.
//!
//! # Why no stored item is missed
//!
//! Follow one copy of an item inserted before the lookup began and not removed meanwhile (copies
//! of one fingerprint in one pair are interchangeable: a remove takes one, the rest cover the
//! items left). Every write of it holds the stripe of each bucket it writes, so the stores to
//! `A` are totally ordered by happens-before through the lock, as are those to `B`, and the
//! moves `M1, M2, ...` (holding both) among all of them. A move `Mi` stores the destination
//! (`Di`) before it clears the source (`Ci`), so at every moment the copy is in `A` or `B`.
//!
//! Let the loads be `r1` (of `A`), `r2` (of `B`), `r3` (of `A`), with `r1` and `r3` reading the
//! same store `S` of `A`, and `Mi` the last move whose store to `A` is at or before `S` in `A`'s
//! modification order (`i = 0`: none, the insert's store is the copy's placement).
//! - If after `Mi` the copy is in `A`, then `S` holds it, and `r1` finds it.
//! - Otherwise it is in `B` until `Mi+1`. `Ci` (the clear of `A`, or for `i = 0` the insert's
//!   store into `B`, finished before the lookup) happens before `r1`: `S` is `Ci` or a later
//!   store by a later holder of `A`'s lock, and `r1` acquires `S`. So `Di`, the store of the copy
//!   into `B`, happens before `r2`, which reads `Di` or later. If `r2` read `Ci+1` (the clear of
//!   `B`) or later, `Di+1` (into `A`) would happen before `r2` and so before `r3`, and `r3` could
//!   not read `S`, before `Di+1` in `A`'s order (read-read coherence). So `r2` reads a store of
//!   `B` between `Di` and `Ci+1`: one that holds the copy.
//!
//! Only `A` is rechecked: the argument pins `A` across the load of `B`, nothing about `B` after.
//! `r3` may be `Relaxed`: `r2`'s `Acquire` orders it after `r2`, and coherence does the rest.
//!
//! **Versions.** `r1` and `r3` read two different stores with the same word only if the
//! fingerprints came back the same and the 16-bit version went round: 65536 stores to `A` between
//! two loads a few instructions apart (or across a preemption), and a wrong miss needs the copy to
//! have moved from `B` into `A` in that window too.

use super::bucket::BucketCodec;
use super::bucket::{WORD_FINGERPRINTS as FINGERPRINTS, WORD_VERSION_SHIFT as VERSION_SHIFT};
use super::index::{BucketIndex, Fingerprint};
use super::table::Table;
use crate::sync::Ordering;

impl Table {
    /// Stores what `change` makes of the fingerprints, if anything, with the version moved on;
    /// under the stripe lock, so no store comes between the load and the store; `Release`, so a
    /// lookup that reads it also sees what the holder stored before (a move's destination).
    #[inline(always)]
    pub(super) fn update_word(
        &self,
        bucket: BucketIndex,
        change: impl FnOnce(u64) -> Option<u64>,
    ) -> bool {
        let word = self.words.buckets().word(bucket);
        let current = word.load(Ordering::Relaxed);
        let Some(fingerprints) = change(current & FINGERPRINTS) else {
            return false;
        };
        debug_assert_eq!(fingerprints & !FINGERPRINTS, 0);
        let version = (current & !FINGERPRINTS).wrapping_add(1 << VERSION_SHIFT);
        word.store(version | fingerprints, Ordering::Release);
        true
    }

    /// Puts `fp` into the first empty slot, as [`Self::update_word`] stores; `false` if full.
    #[inline(always)]
    pub(super) fn place_in_word(
        &self,
        bucket: BucketIndex,
        fp: Fingerprint,
        codec: &BucketCodec,
    ) -> bool {
        let word = self.words.buckets().word(bucket);
        let current = word.load(Ordering::Relaxed);
        let Some(shift) = codec.first_free_narrow(current & FINGERPRINTS) else {
            return false;
        };
        // The version is the top bits: the add wraps it without touching the fingerprints.
        word.store(
            current.wrapping_add(1 << VERSION_SHIFT) | u64::from(fp) << shift,
            Ordering::Release,
        );
        true
    }

    /// Unvalidated.
    #[inline(always)]
    pub(super) fn load_word_fingerprints(&self, bucket: BucketIndex) -> u64 {
        self.words.buckets().word(bucket).load(Ordering::Relaxed) & FINGERPRINTS
    }

    /// Whether bits from `bits` up are set, which the encoder writes 0.
    pub(super) fn has_bits_above(&self, bucket: BucketIndex, bits: u32) -> bool {
        self.words[bucket].load(Ordering::Relaxed) >> bits != 0
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/bucket_word.rs"]
mod tests;
