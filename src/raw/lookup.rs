//! Every read of a [`RawFilter`]: one key, a batch with prefetching, counts of copies. A key's
//! two buckets are read under an optimistic stamp check and probed in their table's
//! [`BucketForm`] (one dispatch, [`RawFilter::contains_by`]); bucket words need no stamps
//! (`bucket_word.rs`). A lookup of bucket words or narrow packed buckets runs code of this file
//! and `index.rs` alone, reading flags and lane masks as fields, not through methods.

use super::bucket::BucketForm;
use super::index::{BucketIndex, Buckets, Candidates, Fingerprint, Lanes, Place, Stamps};
use super::semisort::NarrowLanes;
use super::stripe::READ_RETRIES;
use super::RawFilter;
use crate::sync::{Backoff, Ordering};

/// How many keys ahead of its probe a batch prefetches a key's buckets (docs/benchmarks.md,
/// "Where a lookup's time goes").
pub(crate) const AHEAD: usize = 16;

impl<P: Place> RawFilter<P> {
    /// A lookup of one hash.
    #[inline(always)]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        // A retry starts again from the hash: only it stays live across the read, not the
        // candidates, sparing the caller's loop registers.
        self.contains_by(self.placement.candidates(hash), move || {
            self.placement.candidates(hash)
        })
    }

    /// A lookup of located candidates: a batch's, and each level's of a growable filter.
    #[inline(always)]
    pub(crate) fn contains_located(&self, c: Candidates) -> bool {
        self.contains_by(c, move || c)
    }

    /// The lookup of every form; `again` gives a retry its candidates. Forms of at most 64 bits
    /// inline (consecutive lookups overlap their misses); bucket words first, by their flag.
    #[inline(always)]
    fn contains_by(&self, c: Candidates, again: impl Fn() -> Candidates + Copy) -> bool {
        if self.table.word {
            return match self.try_read_words(&c) {
                Some(answer) => answer,
                None => self.contains_word_contended(again),
            };
        }
        if self.codec.form == BucketForm::Narrow {
            let read = self.stripes.stamps.begin_read(c.first, c.second);
            let hit = self.holds_narrow(&c);
            if read.validate() {
                return hit;
            }
            return self.contains_contended(again, |c| self.holds_narrow(c));
        }
        match self.codec.semi_sorted_lanes() {
            // Semi-sorted buckets of at most 64 bits, the paper's, stay inline.
            Some(lanes) => {
                let read = self.stripes.stamps.begin_read(c.first, c.second);
                let hit = self.holds_narrow_semi_sorted(lanes, &c);
                if read.validate() {
                    return hit;
                }
                self.contains_contended(again, |c| self.holds_narrow_semi_sorted(lanes, c))
            }
            // The fields one by one, in registers, not a `Candidates` through the stack.
            None => self.contains_other(c.fp, c.first, c.second),
        }
    }

    /// [`Self::contains_by`] of stamped buckets after a writer got in the way of its first read.
    #[cold]
    #[inline(never)]
    fn contains_contended(
        &self,
        again: impl Fn() -> Candidates,
        holds: impl Fn(&Candidates) -> bool,
    ) -> bool {
        let c = again();
        self.read_pair_contended(c, move || holds(&c))
    }

    /// Whether either narrow semi-sorted bucket holds the fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_narrow_semi_sorted(&self, lanes: &NarrowLanes, c: &Candidates) -> bool {
        let probe = lanes.probe(c.fp);
        let [first, second] = self.table.words.buckets().narrow_pair(c.first, c.second);
        lanes.holds(first, &probe) | lanes.holds(second, &probe)
    }

    /// Whether either narrow bucket holds the fingerprint. Unvalidated.
    #[inline(always)]
    fn holds_narrow(&self, c: &Candidates) -> bool {
        self.probe().holds_narrow(c)
    }

    /// [`BucketForm::Other`] but narrow semi-sorted buckets: both buckets loaded whole and
    /// compared by the codec, out of line to keep the common forms small.
    #[inline(never)]
    fn contains_other(&self, fp: Fingerprint, first: BucketIndex, second: BucketIndex) -> bool {
        let c = Candidates { fp, first, second };
        let pattern = self.codec.broadcast(c.fp);
        self.read_pair(c, move || {
            self.codec.matches(&self.table.load(c.first), pattern)
                | self.codec.matches(&self.table.load(c.second), pattern)
        })
    }

    /// Copies of the hash's fingerprint in its two buckets.
    pub(crate) fn count(&self, hash: u64) -> usize {
        self.count_located(self.placement.candidates(hash))
    }

    /// Copies of the candidates' fingerprint in their buckets.
    fn count_located(&self, c: Candidates) -> usize {
        self.read_pair(c, || {
            let first = self.codec.count(&self.table.load(c.first), c.fp);
            if c.first == c.second {
                first
            } else {
                first + self.codec.count(&self.table.load(c.second), c.fp)
            }
        })
    }

    /// Whether copies of the hash's fingerprint fill every slot of its buckets: then no path (each
    /// copy's alternate is the other full bucket) nor split (which moves copies together) makes
    /// room for one more, and growing for it would add a level per copy.
    pub(crate) fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.copies_fill(self.placement.candidates(hash))
    }

    /// [`Self::copies_fill_buckets`] of located candidates.
    pub(crate) fn copies_fill(&self, c: Candidates) -> bool {
        let buckets = if c.first == c.second { 1 } else { 2 };
        self.count_located(c) >= buckets * self.bucket_size()
    }

    /// Runs `look`, which reads the candidate buckets, validated by the stripe stamps.
    #[inline(always)]
    pub(super) fn read_pair<R>(&self, c: Candidates, look: impl Fn() -> R) -> R {
        self.stripes.read_pair(c.first, c.second, look)
    }

    /// [`Stripes::read_pair_contended`](super::Stripes::read_pair_contended) of `c`, taken
    /// whole so the batch loop keeps its registers.
    #[cold]
    #[inline(never)]
    fn read_pair_contended<R>(&self, c: Candidates, look: impl Fn() -> R) -> R {
        self.stripes.read_pair_contended(c.first, c.second, look)
    }
}

// Bucket words (`bucket_word.rs` gives the argument that no stored item is missed).
impl<P: Place> RawFilter<P> {
    /// Whether the table has one word per bucket.
    pub(crate) fn has_bucket_words(&self) -> bool {
        self.codec.is_word()
    }

    /// One read of both words: a hit, a miss confirmed by the first word unchanged, or `None`.
    #[inline(always)]
    pub(super) fn try_read_words(&self, c: &Candidates) -> Option<bool> {
        self.probe().try_read_words(c)
    }

    /// A lookup of bucket words after a writer changed the first word under its read: a few
    /// more tries, then the locks of both stripes, under which the words cannot change.
    #[cold]
    #[inline(never)]
    pub(super) fn contains_word_contended(&self, again: impl Fn() -> Candidates) -> bool {
        let c = again();
        let backoff = Backoff::new();
        for _ in 0..READ_RETRIES {
            backoff.snooze();
            if let Some(answer) = self.try_read_words(&c) {
                return answer;
            }
        }
        let _guard = self.stripes.lock_pair::<true>(c.first, c.second);
        // Under the locks no writer changes either word, so the first read is final.
        let answer = self.try_read_words(&c);
        debug_assert!(answer.is_some());
        answer.unwrap_or(true)
    }
}

impl<P: Place> RawFilter<P> {
    /// `answers[i] = contains(hashes[i])`. In a large table each key's buckets are prefetched
    /// [`AHEAD`] keys before its probe; in one the caches hold, each key is one `contains`.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        debug_assert_eq!(hashes.len(), answers.len());
        match (self.codec.form, self.table.lookups_worth_prefetching()) {
            (BucketForm::Word, false) => self.contains_each_word(hashes, answers),
            (BucketForm::Narrow, false) => self.contains_each_narrow(hashes, answers),
            (_, false) => {
                for (answer, &hash) in answers.iter_mut().zip(hashes) {
                    *answer = self.contains(hash);
                }
            }
            (BucketForm::Word, true) => self.contains_blocks_word(hashes, answers),
            (BucketForm::Narrow, true) => self.contains_blocks_narrow(hashes, answers),
            (_, true) => {
                let prefetch = |bucket| self.table.prefetch(bucket);
                contains_blocks(hashes, answers, self.placement, prefetch, |c| {
                    self.contains_located(*c)
                });
            }
        }
    }

    /// [`contains_blocks`] of bucket words, with what the lookups read of the filter in
    /// registers.
    #[inline(never)]
    fn contains_blocks_word(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        let prefetch = |bucket| probe.buckets.prefetch_word(bucket);
        contains_blocks(hashes, answers, probe.placement, prefetch, |c| match probe
            .try_read_words(c)
        {
            Some(answer) => answer,
            None => self.contains_word_contended(move || *c),
        });
    }

    /// [`Self::contains_blocks_word`] of narrow packed buckets.
    #[inline(never)]
    fn contains_blocks_narrow(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        let prefetch = |bucket| probe.buckets.prefetch_narrow(bucket);
        contains_blocks(hashes, answers, probe.placement, prefetch, |c| {
            let read = probe.stamps.begin_read(c.first, c.second);
            let hit = probe.holds_narrow(c);
            if read.validate() {
                hit
            } else {
                self.read_pair_contended(*c, move || self.holds_narrow(c))
            }
        });
    }

    /// [`Self::contains_hashes`] of bucket words in a table the caches hold; out of line, so
    /// the prefetching loops keep their registers.
    #[inline(never)]
    fn contains_each_word(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        for (answer, &hash) in answers.iter_mut().zip(hashes) {
            *answer = match probe.try_read_words(&probe.placement.candidates(hash)) {
                Some(answer) => answer,
                None => self.contains_word_contended(move || probe.placement.candidates(hash)),
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
                let again = move || probe.placement.candidates(hash);
                self.contains_contended(again, |c| self.holds_narrow(c))
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

/// What a lookup in buckets of at most 64 bits reads of the filter, copied into locals: a run of
/// lookups keeps it in registers, where fields would be read again after every `Acquire` load.
#[derive(Clone, Copy, Debug)]
struct Probe<'a, P> {
    placement: P,
    buckets: Buckets<'a>,
    stamps: Stamps<'a>,
    lanes: Lanes,
}

impl<P: Place> RawFilter<P> {
    /// What a lookup reads of the filter besides buckets and stamps, copied.
    #[inline(always)]
    fn probe(&self) -> Probe<'_, P> {
        Probe {
            placement: self.placement,
            buckets: self.table.words.buckets(),
            stamps: self.stripes.stamps.stamps(),
            lanes: self.codec.narrow,
        }
    }
}

impl<P: Place> Probe<'_, P> {
    /// One read of both bucket words: a hit, a miss confirmed by the first word unchanged, or
    /// `None` (`bucket_word.rs` gives the argument).
    #[inline(always)]
    fn try_read_words(self, c: &Candidates) -> Option<bool> {
        let pattern = self.lanes.broadcast(c.fp);
        let [first_word, second_word] = [c.first, c.second].map(|b| self.buckets.word(b));
        let first = first_word.load(Ordering::Acquire);
        let second = second_word.load(Ordering::Acquire);
        // The version bits are above every lane, where the lane test does not look.
        let hit = self.lanes.zero_lane_pair(first ^ pattern, second ^ pattern);
        // Reloaded on a hit too: cheaper than a branch on the answer, which mispredicts.
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

/// `answers[i] = look(candidates of hashes[i])`, each key's buckets prefetched [`AHEAD`] keys
/// before its probe. Key `i` waits in slot `i % AHEAD` of a ring, which takes key `i + AHEAD`
/// once `i` is probed: whole laps with no branch on where the keys end (a loop small enough to
/// keep the filter's fields in registers), then the keys short of a lap, then the last `AHEAD`.
#[inline(always)]
pub(crate) fn contains_blocks<P: Place>(
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
        // Indexed, not zipped: no bounds check is left, and fewer pointers stay live.
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
