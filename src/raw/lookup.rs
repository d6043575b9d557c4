//! Every read of a [`RawFilter`]: one key, a batch of keys with their buckets prefetched, counts
//! of copies. A key's two buckets are read under an optimistic stamp check and probed in the
//! form its table stores buckets in. The form is fixed when the filter is built, so the dispatch
//! in [`RawFilter::contains_located`] always branches the same way; bucket words need no stamps
//! (`word.rs` gives their protocol).

use super::bucket::LaneMasks;
use super::index::{BucketIndex, Candidates, Fingerprint, Place};
use super::stripe::Stamps;
use super::table::Buckets;
use super::{semisort, RawFilter, READ_RETRIES};
use crate::sync::{Backoff, Ordering};

/// How many keys ahead of its probe [`RawFilter::contains_hashes`] prefetches a key's buckets:
/// enough to keep the core's outstanding misses busy. Sixteen answered faster than eight in
/// tables up to the size of the L3 cache, and as fast in larger ones.
const AHEAD: usize = 16;

impl<P: Place> RawFilter<P> {
    /// A lookup of one hash. Bucket words (the default filter's) and narrow packed buckets are
    /// read here rather than through [`Self::contains_located`], so that a lookup that must
    /// retry starts again from the hash: only the hash, not the candidates, stays live across
    /// the optimistic read, which saves the caller's loop registers it would otherwise spill.
    /// Narrow semi-sorted buckets are inline too; every wider form is a call, so that its code
    /// takes no registers in the caller's loop.
    #[inline(always)]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        let c = self.placement.candidates(hash);
        if self.layout.is_word() {
            return match self.try_read_words(&c) {
                Some(answer) => answer,
                None => self.contains_word_contended_hash(hash),
            };
        }
        if self.layout.is_narrow() {
            let read = self.stripes.begin_read(c.first, c.second);
            let hit = self.holds_narrow(&c);
            if read.validate() {
                return hit;
            }
            return self.contains_contended(hash);
        }
        if self.layout.is_narrow_semi_sorted() {
            return self.contains_narrow_semi_sorted(c);
        }
        self.contains_other_forms(c)
    }

    /// [`Self::contains_located`] of the forms [`Self::contains`] does not inline, out of line
    /// so that they take no registers in the caller's loop.
    #[inline(never)]
    fn contains_other_forms(&self, c: Candidates) -> bool {
        self.contains_located(c)
    }

    /// [`Self::contains`] of narrow buckets after a writer got in the way of its first read.
    #[cold]
    #[inline(never)]
    fn contains_contended(&self, hash: u64) -> bool {
        let c = self.placement.candidates(hash);
        self.read_pair_contended(c, move || self.holds_narrow(&c))
    }

    /// The one lookup of a key's candidates, for single and batched lookups and for each level
    /// of a growable filter (candidates from its chunks' `locate_and_prefetch`). Which bucket form
    /// the table has is fixed when the filter is built, so the branch always goes the same way.
    /// Buckets of at most 64 bits, plain or semi-sorted, stay inline and small: a lookup that
    /// misses the cache waits for memory, and the fewer instructions each one needs, the more
    /// consecutive lookups the CPU overlaps. The compiler gives a caller's loop one copy per
    /// form, so the forms do not compete for registers.
    #[inline(always)]
    pub(crate) fn contains_located(&self, c: Candidates) -> bool {
        if self.layout.is_word() {
            self.contains_word(c)
        } else if self.layout.is_narrow() {
            self.read_pair(c, move || self.holds_narrow(&c))
        } else if self.layout.is_narrow_semi_sorted() {
            self.contains_narrow_semi_sorted(c)
        } else if self.layout.is_mid_semi_sorted() {
            self.contains_mid_semi_sorted(c.fp, c.first, c.second)
        } else if self.layout.is_wide_semi_sorted() {
            self.contains_wide_semi_sorted(c.fp, c.first, c.second)
        } else {
            // The fields one by one, in registers: a `Candidates` argument would go through
            // the stack on every lookup, as the branch is resolved only at run time.
            self.contains_other(c.fp, c.first, c.second)
        }
    }

    /// [`Self::read_pair`] of [`Self::holds_narrow_semi_sorted`] (semi-sorted buckets of up to 64
    /// bits: one word-pair load each, compared encoded), written out because the compiler does
    /// not inline a closure this large that the contended path also takes.
    #[inline(always)]
    fn contains_narrow_semi_sorted(&self, c: Candidates) -> bool {
        let read = self.stripes.begin_read(c.first, c.second);
        let answer = self.holds_narrow_semi_sorted(&c);
        if read.validate() {
            answer
        } else {
            self.read_pair_contended(c, move || self.holds_narrow_semi_sorted(&c))
        }
    }

    /// Whether either narrow semi-sorted bucket holds the fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_narrow_semi_sorted(&self, c: &Candidates) -> bool {
        let lanes = self.layout.semi_sorted_lanes();
        let probe = lanes.probe(c.fp);
        let [first, second] = self.table.load_narrow_pair(c.first, c.second);
        lanes.holds(first, &probe) | lanes.holds(second, &probe)
    }

    /// [`Self::contains_located`] for semi-sorted buckets of 65 to 76 bits: each bucket's code
    /// and remainders are two narrow loads, compared encoded as narrow buckets are. Out of line,
    /// as the other wide forms.
    #[inline(never)]
    fn contains_mid_semi_sorted(
        &self,
        fp: Fingerprint,
        first: BucketIndex,
        second: BucketIndex,
    ) -> bool {
        let c = Candidates { fp, first, second };
        let lanes = self.layout.semi_sorted_lanes();
        let probe = lanes.probe(fp);
        let holds = move |bucket| {
            let code = self.table.load_narrow(bucket);
            let remainders = self.table.load_narrow_from(bucket, semisort::CODE_BITS);
            lanes.holds_parts(code, remainders, &probe)
        };
        self.read_pair(c, move || holds(first) | holds(second))
    }

    /// [`Self::contains_located`] for semi-sorted buckets of 80 to 124 bits: each bucket's code
    /// and its two pairs of remainders are three narrow loads, compared encoded. The second pair
    /// is read from the window that ends where the bucket ends, so no load reaches past it.
    #[inline(never)]
    fn contains_wide_semi_sorted(
        &self,
        fp: Fingerprint,
        first: BucketIndex,
        second: BucketIndex,
    ) -> bool {
        let c = Candidates { fp, first, second };
        let lanes = self.layout.pair_lanes();
        let probe = lanes.probe(fp);
        self.read_pair(c, move || {
            self.holds_wide_semi_sorted(first, &probe) | self.holds_wide_semi_sorted(second, &probe)
        })
    }

    /// Whether the wide semi-sorted bucket holds the probe's fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_wide_semi_sorted(&self, bucket: BucketIndex, probe: &semisort::PairProbe) -> bool {
        let lanes = self.layout.pair_lanes();
        let (last, shift) = lanes.last_window();
        let code = self.table.load_narrow(bucket);
        let low = self.table.load_narrow_from(bucket, semisort::CODE_BITS);
        let high = self.table.load_narrow_from(bucket, last) >> shift;
        lanes.holds_parts(code, low, high, probe)
    }

    /// Whether either narrow bucket holds the fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_narrow(&self, c: &Candidates) -> bool {
        self.probe().holds_narrow(c)
    }

    /// [`Self::contains_located`] for buckets of more than 64 bits, out of line to keep the
    /// common forms small.
    #[inline(never)]
    fn contains_other(&self, fp: Fingerprint, first: BucketIndex, second: BucketIndex) -> bool {
        let c = Candidates { fp, first, second };
        let pattern = self.layout.broadcast(c.fp);
        self.read_pair(c, move || {
            self.layout.matches(&self.table.load(c.first), pattern)
                | self.layout.matches(&self.table.load(c.second), pattern)
        })
    }

    /// Copies of the hash's fingerprint in its two buckets.
    pub(crate) fn count(&self, hash: u64) -> usize {
        self.count_located(self.placement.candidates(hash))
    }

    /// Copies of the candidates' fingerprint in their buckets.
    fn count_located(&self, c: Candidates) -> usize {
        self.read_pair(c, || {
            let first = self.layout.count(&self.table.load(c.first), c.fp);
            if c.first == c.second {
                first
            } else {
                first + self.layout.count(&self.table.load(c.second), c.fp)
            }
        })
    }

    /// Whether copies of the hash's fingerprint fill every slot of its buckets. Then no path of
    /// moves can make room for one more (each copy's alternate is the other full bucket), nor can
    /// a split (a split moves a fingerprint's copies together): only a table hashing the item
    /// anew could, so growing for it would add a level per copy.
    pub(crate) fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.copies_fill(self.placement.candidates(hash))
    }

    /// [`Self::copies_fill_buckets`] of located candidates.
    pub(crate) fn copies_fill(&self, c: Candidates) -> bool {
        let buckets = if c.first == c.second { 1 } else { 2 };
        self.count_located(c) >= buckets * self.bucket_size()
    }

    /// Runs `look`, which reads the candidate buckets, so that what it reads is consistent: optimistically, validated
    /// by the stripe stamps. The common case stays small enough to inline, so that consecutive
    /// lookups overlap their cache misses; retries live out of line.
    #[inline(always)]
    pub(super) fn read_pair<R>(&self, c: Candidates, look: impl Fn() -> R) -> R {
        match self.try_read_pair(&c, &look) {
            Some(answer) => answer,
            None => self.read_pair_contended(c, look),
        }
    }

    /// One optimistic read: `look`'s answer if no writer touched either stripe meanwhile.
    #[inline(always)]
    fn try_read_pair<R>(&self, c: &Candidates, look: &impl Fn() -> R) -> Option<R> {
        let read = self.stripes.begin_read(c.first, c.second);
        let answer = look();
        read.validate().then_some(answer)
    }

    /// [`Self::read_pair`] after a writer got in the way: a few more optimistic tries, then the
    /// locks, so that a reader cannot starve.
    #[cold]
    #[inline(never)]
    fn read_pair_contended<R>(&self, c: Candidates, look: impl Fn() -> R) -> R {
        let backoff = Backoff::new();
        for _ in 0..READ_RETRIES {
            backoff.snooze();
            if let Some(answer) = self.try_read_pair(&c, &look) {
                return answer;
            }
        }
        let _guard = self.stripes.lock_pair(c.first, c.second);
        look()
    }
}

// Bucket words (`word.rs` gives the argument that no stored item is missed).
impl<P: Place> RawFilter<P> {
    /// Whether the table has one word per bucket.
    pub(crate) fn has_bucket_words(&self) -> bool {
        self.layout.is_word()
    }

    /// A lookup in a table of one word per bucket: see the module docs.
    #[inline(always)]
    pub(super) fn contains_word(&self, c: Candidates) -> bool {
        match self.try_read_words(&c) {
            Some(answer) => answer,
            // The fields one by one, in registers, so that a caller's candidates need not be
            // copied to its stack for a call it nearly never makes.
            None => self.contains_word_contended(c.fp, c.first, c.second),
        }
    }

    /// One read of both words: a hit, a miss confirmed by the first word unchanged, or `None`.
    /// The words' addresses and the lane masks are taken before the first load, so that they
    /// stay in registers rather than be read from the filter again after each `Acquire`.
    #[inline(always)]
    pub(super) fn try_read_words(&self, c: &Candidates) -> Option<bool> {
        self.probe().try_read_words(c)
    }

    /// [`Self::contains_word_contended`] of a hash: only the hash stays live across the first
    /// read, not the candidates.
    #[cold]
    #[inline(never)]
    pub(super) fn contains_word_contended_hash(&self, hash: u64) -> bool {
        let c = self.placement.candidates(hash);
        self.contains_word_contended(c.fp, c.first, c.second)
    }

    /// [`Self::contains_word`] after a writer changed the first word under its read: a few more
    /// tries, then the locks of both stripes, under which the words cannot change.
    #[cold]
    #[inline(never)]
    pub(super) fn contains_word_contended(
        &self,
        fp: Fingerprint,
        first: BucketIndex,
        second: BucketIndex,
    ) -> bool {
        let c = Candidates { fp, first, second };
        let backoff = Backoff::new();
        for _ in 0..READ_RETRIES {
            backoff.snooze();
            if let Some(answer) = self.try_read_words(&c) {
                return answer;
            }
        }
        let _guard = self.stripes.lock_pair(c.first, c.second);
        // Under the locks no writer changes either word, so the first read is final.
        let answer = self.try_read_words(&c);
        debug_assert!(answer.is_some());
        answer.unwrap_or(true)
    }
}

// Many keys at once. A lookup in a table far larger than the caches waits most of its time for
// two cache misses; one key at a time, the CPU overlaps only the few misses its reorder window
// reaches, where prefetching each key's buckets several keys before its probe keeps that many
// keys' misses in flight. In a table the L2 cache holds the prefetches only cost instructions,
// so they are skipped there.
impl<P: Place> RawFilter<P> {
    /// `answers[i] = contains(hashes[i])`. In a large table each key's buckets are prefetched
    /// [`AHEAD`] keys before its probe, so that they are on their way from memory meanwhile.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        debug_assert_eq!(hashes.len(), answers.len());
        if !self.table.lookups_worth_prefetching() {
            // Nothing to overlap: each key's lookup as one `contains`, with no candidates
            // stored between passes.
            if self.layout.is_word() {
                self.contains_each_word(hashes, answers);
            } else if self.layout.is_narrow() {
                self.contains_each_narrow(hashes, answers);
            } else {
                for (answer, &hash) in answers.iter_mut().zip(hashes) {
                    *answer = self.contains(hash);
                }
            }
            return;
        }
        if self.layout.is_word() {
            self.contains_blocks_word(hashes, answers);
        } else if self.layout.is_narrow() {
            self.contains_blocks_narrow(hashes, answers);
        } else {
            let prefetch = |bucket| self.table.prefetch(bucket);
            self.contains_blocks(hashes, answers, self.placement, prefetch, |c| {
                self.contains_located(*c)
            });
        }
    }

    /// [`Self::contains_blocks`] of bucket words, with what the lookups read of the filter in
    /// registers.
    #[inline(never)]
    fn contains_blocks_word(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        let prefetch = |bucket| probe.buckets.prefetch_word(bucket);
        self.contains_blocks(hashes, answers, probe.placement, prefetch, |c| match probe
            .try_read_words(c)
        {
            Some(answer) => answer,
            None => self.contains_word_contended(c.fp, c.first, c.second),
        });
    }

    /// [`Self::contains_blocks_word`] of narrow packed buckets.
    #[inline(never)]
    fn contains_blocks_narrow(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        let prefetch = |bucket| probe.buckets.prefetch_narrow(bucket);
        self.contains_blocks(hashes, answers, probe.placement, prefetch, |c| {
            let read = probe.stamps.begin_read(c.first, c.second);
            let hit = probe.holds_narrow(c);
            if read.validate() {
                hit
            } else {
                self.read_pair_contended(*c, move || self.holds_narrow(c))
            }
        });
    }

    /// `answers[i] = look(candidates of hashes[i])`, each key's buckets prefetched [`AHEAD`]
    /// keys before its probe. The candidates wait in a ring of `AHEAD` slots, key `i` in slot
    /// `i % AHEAD`: the slot a key is probed from then takes the key `AHEAD` places after it.
    /// The keys go round the ring in whole laps, slot by slot with no branch on where the keys
    /// end, a loop small enough that what the lookups read of the filter stays in registers.
    /// The keys short of a lap follow, then the last `AHEAD`, which are only probed.
    #[inline(always)]
    fn contains_blocks(
        &self,
        hashes: &[u64],
        answers: &mut [bool],
        placement: P,
        prefetch: impl Fn(BucketIndex),
        look: impl Fn(&Candidates) -> bool,
    ) {
        let locate = |hash| {
            let c = placement.candidates(hash);
            prefetch(c.first);
            prefetch(c.second);
            c
        };
        let len = hashes.len().min(answers.len());
        let lead = len.min(AHEAD);
        let mut ring = [Candidates::default(); AHEAD];
        for (slot, &hash) in ring.iter_mut().zip(hashes) {
            *slot = locate(hash);
        }
        let (probed_ahead, tail) = answers[..len].split_at_mut(len - lead);
        let mut answer_laps = probed_ahead.chunks_exact_mut(AHEAD);
        let mut hash_laps = hashes[lead..len].chunks_exact(AHEAD);
        for (answers, hashes) in (&mut answer_laps).zip(&mut hash_laps) {
            // Indexed rather than zipped: the chunks are `AHEAD` long, so no bounds check is
            // left, and the loop keeps fewer pointers live (and runs fewer instructions, as
            // callgrind counts them) than with three zipped iterators.
            for (j, slot) in ring.iter_mut().enumerate() {
                answers[j] = look(slot);
                *slot = locate(hashes[j]);
            }
        }
        let rest = answer_laps.into_remainder();
        for ((slot, answer), &hash) in ring.iter_mut().zip(&mut *rest).zip(hash_laps.remainder()) {
            *answer = look(slot);
            *slot = locate(hash);
        }
        ring.rotate_left(rest.len());
        for (answer, c) in tail.iter_mut().zip(&ring) {
            *answer = look(c);
        }
    }

    /// [`Self::contains_hashes`] of bucket words in a table the caches hold, with what the
    /// lookups read of the filter in registers. Out of line, so that the prefetching loops do
    /// not take its registers.
    #[inline(never)]
    fn contains_each_word(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        for (answer, &hash) in answers.iter_mut().zip(hashes) {
            *answer = match probe.try_read_words(&probe.placement.candidates(hash)) {
                Some(answer) => answer,
                None => self.contains_word_contended_hash(hash),
            };
        }
    }

    /// [`Self::contains_each_word`] of narrow packed buckets.
    #[inline(never)]
    fn contains_each_narrow(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        for (answer, &hash) in answers.iter_mut().zip(hashes) {
            let c = probe.placement.candidates(hash);
            let read = probe.stamps.begin_read(c.first, c.second);
            let hit = probe.holds_narrow(&c);
            *answer = if read.validate() {
                hit
            } else {
                self.contains_contended(hash)
            };
        }
    }
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

/// What a lookup in one table of buckets of at most 64 bits reads of the filter besides the
/// buckets and stamps, copied into locals: a run of lookups keeps it in registers, where the
/// filter's fields would be read again after every `Acquire` load.
#[derive(Clone, Copy, Debug)]
struct Probe<'a, P> {
    placement: P,
    buckets: Buckets<'a>,
    stamps: Stamps<'a>,
    lanes: LaneMasks,
}

impl<P: Place> RawFilter<P> {
    /// What a lookup reads of the filter besides buckets and stamps, copied.
    #[inline(always)]
    fn probe(&self) -> Probe<'_, P> {
        Probe {
            placement: self.placement,
            buckets: self.table.buckets(),
            stamps: self.stripes.stamps(),
            lanes: self.layout.lane_masks(),
        }
    }
}

impl<P: Place> Probe<'_, P> {
    /// One read of both bucket words: a hit, a miss confirmed by the first word unchanged, or
    /// `None` (`word.rs` gives the argument).
    #[inline(always)]
    fn try_read_words(self, c: &Candidates) -> Option<bool> {
        let pattern = self.lanes.broadcast(c.fp);
        let [first_word, second_word] = [c.first, c.second].map(|b| self.buckets.word(b));
        let first = first_word.load(Ordering::Acquire);
        let second = second_word.load(Ordering::Acquire);
        // The version bits are above every lane, where the lane test does not look.
        let hit = self.lanes.zero_lane_pair(first ^ pattern, second ^ pattern);
        // A hit needs no check, but the reload (of a line just read) is cheaper than a branch
        // on the answer, which a mix of hits and misses mispredicts.
        let unchanged = first_word.load(Ordering::Relaxed) == first;
        (hit | unchanged).then_some(hit)
    }

    /// Whether either narrow bucket holds the fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_narrow(self, c: &Candidates) -> bool {
        let pattern = self.lanes.broadcast(c.fp);
        let [first, second] = self.buckets.narrow_pair(c.first, c.second);
        self.lanes.zero_lane_pair(first ^ pattern, second ^ pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::{Geometry, SearchLimits, Shape};

    /// A filter whose table is large enough to be prefetched, with `stored` items.
    fn prefetched(shape: Shape, stored: &[u64]) -> RawFilter {
        let filter = RawFilter::new(&Geometry {
            shape,
            stripes: 64,
            limits: SearchLimits {
                max_hops: 5,
                max_search_buckets: 2000,
            },
        })
        .unwrap();
        assert!(filter.table.lookups_worth_prefetching(), "{shape:?}");
        for &hash in stored {
            assert_eq!(
                filter.insert(hash, false),
                super::super::Insertion::Inserted
            );
        }
        filter
    }

    #[test]
    fn prefetched_batches_of_every_length_answer_as_single_lookups() {
        let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
        let stored: Vec<u64> = (0..20_000).map(hash).collect();
        // Members and non-members interleaved.
        let queries: Vec<u64> = (0..80).map(|i| hash(i * 500)).collect();
        // Bucket words, narrow packed buckets, and semi-sorted buckets of 76 bits: the three
        // loops the prefetching batch has.
        for (bucket_size, fingerprint_bits, semi_sorted, bucket_words) in [
            (4, 12, false, true),
            (4, 12, false, false),
            (4, 20, true, false),
        ] {
            let shape = Shape {
                bucket_count: 1 << 20,
                bucket_size,
                fingerprint_bits,
                semi_sorted,
                bucket_words,
            };
            let filter = prefetched(shape, &stored);
            // Every length up to past two laps of the ring, from every start up to one lap.
            for start in 0..=AHEAD {
                for end in start..queries.len() {
                    let hashes = &queries[start..end];
                    let mut answers = vec![false; hashes.len()];
                    filter.contains_hashes(hashes, &mut answers);
                    let single: Vec<bool> = hashes.iter().map(|&h| filter.contains(h)).collect();
                    assert_eq!(answers, single, "{shape:?} {start}..{end}");
                    assert!(hashes
                        .iter()
                        .zip(&answers)
                        .all(|(h, &found)| found || !stored.contains(h)));
                }
            }
            assert!(queries.iter().any(|&h| filter.contains(h)));
        }
    }
}
