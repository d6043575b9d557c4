//! A table of one word per bucket: each bucket one aligned `AtomicU64` holding its fingerprints
//! and a version, so that a lookup needs no stripe stamps.
//!
//! ```text
//! bit  63 ........ 48 47 ................................ 0
//!      version (16)   slot b-1 | ... | slot 1 | slot 0     (b·f ≤ 48 bits, the rest 0)
//! ```
//!
//! **Writers** lock and stamp stripes as in a packed table (lock groups of one bucket), so they
//! exclude each other and every other reader (path searches, counts, removes, snapshots) still
//! validates against the stamps. A store to a bucket word, under its stripe lock, is a `Relaxed`
//! load (only the holder writes it) and a `Release` store of the new fingerprints with the
//! version plus one. A move stores the fingerprint's new bucket first, then clears the old one
//! ([`RawFilter::move_narrow`](super::RawFilter) updates `to` before `from`), under both locks.
//!
//! **A lookup** of candidates `(A, B)` reads no stamp: it loads `A`, then `B` (`Acquire`), then
//! `A` again. A fingerprint found in either word is a hit, whatever the reload says. A miss is
//! trusted only when the reload of `A` returns the very same word, version included; otherwise
//! the lookup tries again, and after [`super::stripe::READ_RETRIES`] tries reads under both
//! stripes' locks, so a reader cannot starve.
//!
//! # Why no stored item is missed
//!
//! Take an item whose insert finished before the lookup began and which is not removed meanwhile.
//! (Copies of one fingerprint in one pair of buckets are interchangeable: a remove takes one copy,
//! and the items left are still covered by the copies left, so it is enough to follow one copy.)
//! Every write that touches the copy holds the stripe of each bucket it writes, so the stores to
//! `A` are totally ordered by happens-before through the lock, and so are those to `B`; a move of
//! the copy holds both, so the moves `M1, M2, ...` are ordered among all of them. The copy only
//! ever moves between `A` and `B`, its own two buckets, and a move `Mi` stores the destination
//! (`Di`) before it clears the source (`Ci`), so at every moment the copy is in `A` or `B`.
//!
//! Let the lookup's loads be `r1` (of `A`), `r2` (of `B`) and `r3` (of `A` again), and let `r1`
//! and `r3` read the same store `S` of `A` (the same word, version included: see below). Let `Mi`
//! be the last move whose store to `A` is at or before `S` in `A`'s modification order (`i = 0`:
//! none, and the insert's store is the copy's placement).
//! - If after `Mi` the copy is in `A`, then `S` holds it, and `r1` finds it.
//! - Otherwise it is in `B` from `Mi` until the next move `Mi+1`. Then `Ci` (the clear of `A`, or
//!   for `i = 0` the insert's store into `B`, finished before the lookup) happens before `r1`:
//!   `S` is `Ci` or a later store by a later holder of `A`'s lock, and `r1` acquires `S`. So
//!   `Di`, the store of the copy into `B`, happens before `r2`, which therefore reads `Di` or a
//!   later store of `B`. Could `r2` read `Ci+1`, the clear of `B`, or later? Then `Di+1`, the
//!   store of the copy into `A` that precedes it, happens before `r2` (which acquires it) and so
//!   before `r3`, and `r3` could not read `S`, which is before `Di+1` in `A`'s order (read-read
//!   coherence). So `r2` reads a store of `B` between `Di` and `Ci+1`: one that holds the copy.
//!
//! Either way a load sees the copy; a miss whose `r1` and `r3` agree cannot happen. Only `A` is
//! rechecked: the argument needs `A` pinned across the load of `B`, and nothing about `B` after
//! it. `r3` may be `Relaxed`: it is ordered after `r2` by `r2`'s `Acquire`, and coherence does
//! the rest.
//!
//! **Versions.** `r1` and `r3` may read two different stores with the same word only if the
//! fingerprints came back the same and the 16-bit version went round: a multiple of 65536 stores
//! to `A` between a lookup's two loads of it, that is, while the lookup executes a few
//! instructions (unless its thread is preempted between them for as long as 65536 writes to one
//! bucket take, several milliseconds). Even then a wrong miss needs the copy to have moved out of
//! `B` into `A` in that window too.

use super::bucket::BucketCodec;
use super::bucket::{WORD_FINGERPRINTS as FINGERPRINTS, WORD_VERSION_SHIFT as VERSION_SHIFT};
use super::index::{BucketIndex, Fingerprint};
use super::table::Table;
use crate::sync::Ordering;

impl Table {
    /// Stores what `change` makes of the bucket's fingerprints, if anything, and moves the version
    /// on; whether it stored. The caller holds the bucket's stripe lock, so no store comes between
    /// the load and the store; `Release`, so a lookup that reads this word also sees what the
    /// holder stored before (a move's destination, before its source is cleared).
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

    /// Puts `fp` into the first empty slot of a bucket word and moves its version on; `false` if
    /// the bucket is full. The caller holds the bucket's stripe lock, as for
    /// [`Self::update_word`].
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

    /// The bucket's fingerprints, without its version. Unvalidated, as [`Table::load`].
    #[inline(always)]
    pub(super) fn load_word_fingerprints(&self, bucket: BucketIndex) -> u64 {
        self.words.buckets().word(bucket).load(Ordering::Relaxed) & FINGERPRINTS
    }

    /// Whether the bucket's word has bits set from `bits` up (its version, or bits between its
    /// fingerprints and its version), in a table read from outside, whose encoder writes them 0.
    pub(super) fn has_bits_above(&self, bucket: BucketIndex, bits: u32) -> bool {
        self.words[bucket].load(Ordering::Relaxed) >> bits != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::raw::bucket::{
        fits_bucket_word as fits, BucketCodec, WORD_VERSION_BITS as VERSION_BITS,
    };
    use crate::raw::index::Place;
    use crate::raw::RawFilter;

    #[test]
    fn every_store_moves_the_version_on_and_touches_no_other_bucket() {
        let codec = BucketCodec::word(4, 12);
        assert_eq!(codec.bucket_bits(), 64);
        let table = Table::new(5, &codec).unwrap();
        let word = |bucket: usize| table.words[bucket].load(Ordering::Relaxed);
        let mut raw = [0u128; 2];
        assert!(codec.insert(&mut raw, 0xabc));
        // Past a wrap of the 16-bit version: it goes round and leaves the fingerprints alone.
        for store in 1..=(1u64 << VERSION_BITS) + 3 {
            table.store(2, &raw);
            assert_eq!(word(2) >> VERSION_SHIFT, store % (1 << VERSION_BITS));
            assert_eq!(table.load(2), raw);
        }
        assert!([0, 1, 3, 4].iter().all(|&bucket| word(bucket) == 0));
        // What a snapshot copies has no versions.
        assert_eq!(table.copy_words()[2], raw[0] as u64);
        assert!(table.has_bits_above(2, codec.limb_bits()));
        assert!(!table.has_bits_above(1, codec.limb_bits()));
    }

    #[test]
    fn a_placed_fingerprint_takes_the_first_empty_slot_and_moves_the_version_on_through_its_wrap() {
        let codec = BucketCodec::word(4, 12);
        let table = Table::new(3, &codec).unwrap();
        let word = |bucket: usize| table.words[bucket].load(Ordering::Relaxed);
        for (i, fp) in [0x111, 0x222, 0x333, 0x444].into_iter().enumerate() {
            assert!(table.place_in_word(1, fp, &codec));
            assert_eq!(word(1) >> VERSION_SHIFT, i as u64 + 1);
            assert_eq!(word(1) >> (12 * i) & 0xfff, u64::from(fp));
        }
        // Full: nothing stored, the version unchanged.
        let full = word(1);
        assert!(!table.place_in_word(1, 0x555, &codec));
        assert_eq!(word(1), full);
        // The last version before the wrap: the next placement wraps it to 0 and keeps the
        // fingerprints, and no other bucket changes.
        let (held, hole) = (0xabc << 24 | 0xdef, 0x777 << 12);
        table.words[2].store(0xffff << VERSION_SHIFT | held, Ordering::Relaxed);
        assert!(table.place_in_word(2, 0x777, &codec));
        assert_eq!(word(2), held | hole);
        assert_eq!(word(0), 0);
        assert_eq!(word(1), full);
    }

    #[test]
    fn the_locked_read_after_the_retries_answers_as_the_optimistic_one() {
        use crate::raw::{Geometry, SearchLimits, Shape};
        let filter = RawFilter::new(&Geometry {
            shape: Shape {
                bucket_count: 300,
                bucket_size: 4,
                fingerprint_bits: 12,
                semi_sorted: false,
                bucket_words: true,
            },
            stripes: 4,
            limits: SearchLimits {
                max_hops: 5,
                max_search_buckets: 2000,
            },
        })
        .unwrap();
        let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let stored: Vec<u64> = (0..1100).map(hash).collect();
        for &h in &stored {
            assert_eq!(
                filter.insert::<false>(h, false),
                super::super::Insertion::Inserted
            );
        }
        let mut hits = 0;
        for h in stored.iter().copied().chain((5000..15_000).map(hash)) {
            let c = filter.placement.candidates(h);
            let answer = filter.contains_located(c);
            assert_eq!(filter.contains_word_contended(move || c), answer);
            hits += usize::from(answer);
        }
        // Every member, and a few of the others (false positives at about 0.2%).
        assert!((1100..1200).contains(&hits), "{hits}");
        assert!(stored.iter().all(|&h| filter.contains(h)));
    }

    #[test]
    fn buckets_fit_a_word_with_a_16_bit_version_or_are_refused() {
        assert!(fits(4, 12) && fits(2, 24) && fits(8, 6));
        assert!(!fits(4, 13) && !fits(2, 25) && !fits(8, 7));
    }
}
