//! Every read of a [`RawFilter`]: one key, a batch with prefetching, counts. A key's two buckets
//! are read under an optimistic stamp check (bucket words need none, `bucket_word.rs`) and probed
//! in their table's [`BucketForm`], dispatched once on fields, not through methods.

use super::bucket::{BucketForm, RawBucket};
use super::index::{BucketIndex, Buckets, Candidates, Fingerprint, Lanes, Place, Stamps};
use super::stripe::READ_RETRIES;
use super::RawFilter;
use crate::sync::{Backoff, Ordering};

/// How far ahead a batch prefetches, and from what table size (figures: docs/benchmarks.md).
pub(crate) const AHEAD: usize = 16;

const LOOKUP_PREFETCH_MIN_BYTES: usize = 384 << 10;

impl<P: Place> RawFilter<P> {
    #[inline(always)]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        // A retry starts again from the hash, so only it stays live across the read.
        self.contains_by(self.placement.candidates(hash), move || {
            self.placement.candidates(hash)
        })
    }

    /// A lookup of located candidates: a batch's, and each level's of a growable filter.
    #[inline(always)]
    pub(crate) fn contains_located(&self, c: Candidates) -> bool {
        self.contains_by(c, move || c)
    }

    /// Every form's lookup; `again` gives a retry its candidates.
    #[inline(always)]
    fn contains_by(&self, c: Candidates, again: impl Fn() -> Candidates) -> bool {
        if self.table.word {
            return self.look_words(self.probe(), &c, again);
        }
        let stamps = self.stripes.stamps.stamps();
        if self.codec.form == BucketForm::Narrow {
            return self.look_stamped(stamps, &c, again, |c| self.probe().holds_narrow(c));
        }
        match self.codec.semi_sorted_lanes() {
            Some(lanes) => self.look_stamped(stamps, &c, again, |c| {
                let probe = lanes.probe(c.fp);
                let [first, second] = self.table.words.buckets().narrow_pair(c.first, c.second);
                lanes.holds(first, &probe) | lanes.holds(second, &probe)
            }),
            // The fields one by one, in registers, not a `Candidates` through the stack.
            None => self.contains_other(c.fp, c.first, c.second),
        }
    }

    /// `holds`, validated by `stamps`; retried from `again`'s candidates out of line.
    #[inline(always)]
    fn look_stamped(
        &self,
        stamps: Stamps<'_>,
        c: &Candidates,
        again: impl Fn() -> Candidates,
        holds: impl Fn(&Candidates) -> bool,
    ) -> bool {
        let read = stamps.begin_read(c.first, c.second);
        let hit = holds(c);
        if read.validate() {
            return hit;
        }
        self.contains_contended(again)
    }

    #[cold]
    #[inline(never)]
    fn contains_contended(&self, again: impl Fn() -> Candidates) -> bool {
        let c = again();
        let pattern = self.codec.broadcast(c.fp);
        let look = |a: &RawBucket, b: &RawBucket| self.holds_either(a, b, pattern);
        self.read_buckets_contended(c.first, c.second, look)
    }

    /// [`BucketForm::Other`] but narrow semi-sorted buckets, out of line.
    #[inline(never)]
    fn contains_other(&self, fp: Fingerprint, first: BucketIndex, second: BucketIndex) -> bool {
        let pattern = self.codec.broadcast(fp);
        self.read_buckets(first, second, |a, b| self.holds_either(a, b, pattern))
    }

    /// Whether either bucket holds the fingerprint whose broadcast is `pattern`.
    #[inline(always)]
    fn holds_either(&self, a: &RawBucket, b: &RawBucket, pattern: u128) -> bool {
        self.codec.matches(a, pattern) | self.codec.matches(b, pattern)
    }

    pub(crate) fn count(&self, hash: u64) -> usize {
        self.count_located(self.placement.candidates(hash))
    }

    fn count_located(&self, c: Candidates) -> usize {
        self.read_buckets(c.first, c.second, |a, b| {
            let first = self.codec.count(a, c.fp);
            if c.first == c.second {
                first
            } else {
                first + self.codec.count(b, c.fp)
            }
        })
    }

    /// Whether copies of the hash's fingerprint fill its buckets: then no path (each copy's
    /// alternate is the other full bucket) nor split makes room, and growing would add a level
    /// per copy.
    pub(crate) fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.copies_fill(self.placement.candidates(hash))
    }

    pub(crate) fn copies_fill(&self, c: Candidates) -> bool {
        let buckets = if c.first == c.second { 1 } else { 2 };
        self.count_located(c) >= buckets * self.bucket_size()
    }

    /// `look` at two buckets loaded in a state they really had; retried out of line.
    #[inline(always)]
    pub(super) fn read_buckets<R>(
        &self,
        a: BucketIndex,
        b: BucketIndex,
        look: impl Fn(&RawBucket, &RawBucket) -> R,
    ) -> R {
        let load = || look(&self.table.load(a), &self.table.load(b));
        match self.stripes.try_read_pair(a, b, &load) {
            Some(answer) => answer,
            None => self.read_buckets_contended(a, b, look),
        }
    }

    /// [`Self::read_buckets`] after a writer got in the way: a few more tries, then the locks,
    /// or for a reader that cannot lock, [`Self::read_unlocked`].
    #[cold]
    #[inline(never)]
    fn read_buckets_contended<R>(
        &self,
        a: BucketIndex,
        b: BucketIndex,
        look: impl Fn(&RawBucket, &RawBucket) -> R,
    ) -> R {
        #[cfg(all(target_os = "linux", not(loom)))]
        if let Some(shared) = self.stripes.read_only_locks() {
            return self.read_unlocked(shared, a, b, look);
        }
        let load = || look(&self.table.load(a), &self.table.load(b));
        self.stripes.read_pair_contended(a, b, load)
    }
}

// Bucket words (`bucket_word.rs` gives the argument that no stored item is missed).
impl<P: Place> RawFilter<P> {
    pub(crate) fn has_bucket_words(&self) -> bool {
        self.codec.is_word()
    }

    /// A bucket-word lookup; after a writer changed the first word, again from `again`.
    #[inline(always)]
    fn look_words(
        &self,
        probe: Probe<'_, P>,
        c: &Candidates,
        again: impl Fn() -> Candidates,
    ) -> bool {
        match probe.try_read_words(c) {
            Some(answer) => answer,
            None => self.contains_word_contended(again),
        }
    }

    /// A few more tries, then both stripes' locks, under which the words cannot change.
    #[cold]
    #[inline(never)]
    pub(super) fn contains_word_contended(&self, again: impl Fn() -> Candidates) -> bool {
        let c = again();
        let backoff = Backoff::new();
        for _ in 0..READ_RETRIES {
            backoff.snooze();
            if let Some(answer) = self.probe().try_read_words(&c) {
                return answer;
            }
        }
        #[cfg(all(target_os = "linux", not(loom)))]
        if self.stripes.read_only_locks().is_some() {
            // No lock to take: a bucket word's reads fail only while a writer changes it.
            loop {
                backoff.snooze();
                if let Some(answer) = self.probe().try_read_words(&c) {
                    return answer;
                }
            }
        }
        let _guard = self.stripes.lock_pair::<true>(c.first, c.second);
        let answer = self.probe().try_read_words(&c);
        debug_assert!(answer.is_some());
        answer.unwrap_or(true)
    }
}

impl<P: Place> RawFilter<P> {
    /// `answers[i] = contains(hashes[i])`.
    pub(crate) fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        debug_assert_eq!(hashes.len(), answers.len());
        let ahead = self.table.memory_usage() >= LOOKUP_PREFETCH_MIN_BYTES;
        match (self.codec.form, ahead) {
            (BucketForm::Word, false) => self.contains_each::<true>(hashes, answers),
            (BucketForm::Narrow, false) => self.contains_each::<false>(hashes, answers),
            (_, false) => {
                for (answer, &hash) in answers.iter_mut().zip(hashes) {
                    *answer = self.contains(hash);
                }
            }
            (BucketForm::Word, true) => self.contains_blocks_of::<true>(hashes, answers),
            (BucketForm::Narrow, true) => self.contains_blocks_of::<false>(hashes, answers),
            (_, true) => {
                let prefetch = |bucket| self.table.prefetch(bucket);
                contains_blocks(hashes, answers, self.placement, prefetch, |c| {
                    self.contains_located(*c)
                });
            }
        }
    }

    /// The lookup of bucket words (`WORD`) or of narrow packed buckets, with `probe` read once.
    #[inline(always)]
    fn look_in<const WORD: bool>(
        &self,
        probe: Probe<'_, P>,
        c: &Candidates,
        again: impl Fn() -> Candidates,
    ) -> bool {
        match WORD {
            true => self.look_words(probe, c, again),
            false => self.look_stamped(probe.stamps, c, again, |c| probe.holds_narrow(c)),
        }
    }

    #[inline(never)]
    fn contains_blocks_of<const WORD: bool>(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        let prefetch = |bucket| match WORD {
            true => probe.buckets.prefetch_word(bucket),
            false => probe.buckets.prefetch_narrow(bucket),
        };
        contains_blocks(hashes, answers, probe.placement, prefetch, |c| {
            self.look_in::<WORD>(probe, c, move || *c)
        });
    }

    #[inline(never)]
    fn contains_each<const WORD: bool>(&self, hashes: &[u64], answers: &mut [bool]) {
        let probe = self.probe();
        for (answer, &hash) in answers.iter_mut().zip(hashes) {
            let again = move || probe.placement.candidates(hash);
            *answer = self.look_in::<WORD>(probe, &again(), again);
        }
    }

    #[inline(always)]
    pub(crate) fn prefetch_candidates(&self, c: &Candidates) {
        self.stripes.prefetch_for_read(c.first);
        self.stripes.prefetch_for_read(c.second);
        self.table.prefetch(c.first);
        self.table.prefetch(c.second);
    }
}

/// What a lookup reads of the filter, in registers: fields are read again after each `Acquire`.
#[derive(Clone, Copy, Debug)]
struct Probe<'a, P> {
    placement: P,
    buckets: Buckets<'a>,
    stamps: Stamps<'a>,
    lanes: Lanes,
}

impl<P: Place> RawFilter<P> {
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
    /// A hit, a miss confirmed by the first word unchanged, or `None` (`bucket_word.rs`).
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

    #[inline(always)]
    fn holds_narrow(self, c: &Candidates) -> bool {
        let pattern = self.lanes.broadcast(c.fp);
        let [first, second] = self.buckets.narrow_pair(c.first, c.second);
        self.lanes.zero_lane_pair(first ^ pattern, second ^ pattern)
    }
}

/// `answers[i] = look(candidates of hashes[i])`, prefetched [`AHEAD`] keys ahead from a ring
/// (key `i` in slot `i % AHEAD`): whole laps with no branch on where the keys end, then the rest.
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
