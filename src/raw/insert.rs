//! Inserting one key: into either bucket under its locks; if both are full, along a
//! [`CuckooPath`] searched without locks, "no path" confirmed by a validated search; when racing
//! writers keep spoiling that, under every stripe lock. `SHARED` is the locks' (`stripe.rs`).

use super::index::{BucketIndex, Candidates, Fingerprint, Place};
use super::path::{self, CuckooPath, SearchQueue};
use super::stripe::{AllStripesGuard, Guard, Stripes};
use super::{Insertion, RawFilter};
use crate::sync::MODEL_CHECKED;

/// Optimistic attempts of an insert before it locks every stripe (the Consistency docs name it).
const PATH_ATTEMPTS: usize = if MODEL_CHECKED { 3 } else { 64 };

impl<P: Place> RawFilter<P> {
    /// Inserts the hash's fingerprint (with `unique`, unless present); on `Full` nothing changed.
    #[inline]
    pub(crate) fn insert<const SHARED: bool>(&self, hash: u64, unique: bool) -> Insertion {
        self.insert_located::<SHARED>(self.placement.candidates(hash), unique)
    }

    /// [`Self::insert`] of located candidates.
    #[inline]
    pub(crate) fn insert_located<const SHARED: bool>(
        &self,
        c: Candidates,
        unique: bool,
    ) -> Insertion {
        // Stripe lines travel while the buckets load; a plain narrow insert's second only if used.
        self.stripes.prefetch_for_write(c.first);
        if !unique && self.table.word {
            self.table.words.buckets().prefetch_word(c.second);
        } else if unique || !self.codec.is_plain_narrow() {
            self.stripes.prefetch_for_write(c.second);
        } else {
            self.table.prefetch(c.second);
        }
        self.try_place::<SHARED>(&c, unique)
            .unwrap_or_else(|| self.insert_searching::<SHARED>(c, unique))
    }

    /// [`Self::insert_by_path`] with the thread's queue, out of line.
    #[inline(never)]
    fn insert_searching<const SHARED: bool>(&self, c: Candidates, unique: bool) -> Insertion {
        path::with_queue(|queue| self.insert_by_path::<SHARED>(c, unique, queue))
    }

    /// [`Self::insert_located`] with a queue for the path search.
    #[inline(always)]
    pub(super) fn insert_candidates<const SHARED: bool>(
        &self,
        c: Candidates,
        unique: bool,
        queue: &mut SearchQueue,
    ) -> Insertion {
        match self.try_place::<SHARED>(&c, unique) {
            Some(done) => done,
            None => self.insert_by_path::<SHARED>(c, unique, queue),
        }
    }

    /// [`Self::try_place`] after a path went stale, out of line so that its reads are not hoisted.
    #[cold]
    #[inline(never)]
    fn try_place_again<const SHARED: bool>(
        &self,
        c: &Candidates,
        unique: bool,
    ) -> Option<Insertion> {
        self.try_place::<SHARED>(c, unique)
    }

    /// [`Self::insert_candidates`] after a first [`Self::try_place`] found no room.
    #[inline(never)]
    fn insert_by_path<const SHARED: bool>(
        &self,
        c: Candidates,
        unique: bool,
        queue: &mut SearchQueue,
    ) -> Insertion {
        for attempt in 0..PATH_ATTEMPTS {
            // A table being split takes nothing: its caller asks again elsewhere.
            if !self.admits(Some(c.fp)) {
                return Insertion::Full;
            }
            if attempt > 0 {
                if let Some(done) = self.try_place_again::<SHARED>(&c, unique) {
                    return done;
                }
            }
            // Hops are checked as made; "no path" by a second, validated search.
            let path = match self.search(&c, queue, None) {
                Some(path) => Some(path),
                None => match self.search(&c, queue, Some(&self.stripes)) {
                    None if queue.unchanged(&self.stripes) => {
                        return self.full_unless_present(c, unique)
                    }
                    found => found,
                },
            };
            if let Some(done) = path.and_then(|path| self.shift::<SHARED>(&path, &c, unique, None))
            {
                return done;
            }
        }
        self.insert_exclusive::<SHARED>(c, unique, queue)
    }

    /// The insert of last resort: under every stripe lock no writer can spoil its search.
    #[cold]
    #[inline(never)]
    fn insert_exclusive<const SHARED: bool>(
        &self,
        c: Candidates,
        unique: bool,
        queue: &mut SearchQueue,
    ) -> Insertion {
        let mut all = self.stripes.lock_all();
        if !self.admits(Some(c.fp)) {
            return Insertion::Full;
        }
        all.journal([c.first, c.second]);
        let placed = self.place(&c, unique, &mut all);
        all.settle([c.first, c.second]);
        if let Some(done) = placed {
            return done;
        }
        let Some(path) = self.search(&c, queue, None) else {
            return Insertion::Full;
        };
        let done = self.shift::<SHARED>(&path, &c, unique, Some(&mut all));
        debug_assert!(done.is_some(), "a path found under every lock stays valid");
        done.unwrap_or(Insertion::Full)
    }

    /// A path search from the candidates' buckets; with `stripes`, one that can be validated.
    fn search(
        &self,
        c: &Candidates,
        queue: &mut SearchQueue,
        stripes: Option<&Stripes>,
    ) -> Option<CuckooPath> {
        path::search(
            self,
            stripes,
            [c.first, c.second],
            self.geometry.limits,
            queue,
        )
    }

    /// `Full`, unless `unique` and a racing writer has meanwhile inserted the same fingerprint.
    fn full_unless_present(&self, c: Candidates, unique: bool) -> Insertion {
        if unique && self.contains_located(c) {
            Insertion::Present
        } else {
            Insertion::Full
        }
    }

    /// Puts the fingerprint into either bucket (with `unique`, unless present). `None`: no room.
    #[inline(always)]
    fn try_place<const SHARED: bool>(&self, c: &Candidates, unique: bool) -> Option<Insertion> {
        if !unique && self.table.word {
            self.try_place_narrow::<SHARED, true>(c)
        } else if !unique && self.codec.is_plain_narrow() {
            self.try_place_narrow::<SHARED, false>(c)
        } else {
            self.try_place_general::<SHARED>(c, unique)
        }
    }

    /// [`Self::try_place`] of a plain insert into buckets of at most 64 bits, one stripe locked;
    /// compiled apart for bucket words (`WORD`), so the default filter's common insert takes no
    /// other form's branches (docs/benchmarks.md).
    #[inline(always)]
    fn try_place_narrow<const SHARED: bool, const WORD: bool>(
        &self,
        c: &Candidates,
    ) -> Option<Insertion> {
        let load = |bucket| match WORD {
            true => self.table.load_word_fingerprints(bucket),
            false => self.table.load_bits(bucket),
        };
        let bucket = self.roomier_narrow(c, load(c.first), || load(c.second))?;
        if bucket != c.first {
            self.stripes.prefetch_for_write(bucket);
        }
        if !WORD && self.place_one::<SHARED>(bucket, c.fp) {
            return Some(Insertion::Inserted);
        }
        if WORD {
            let mut guard = self.stripes.lock_one::<SHARED>(bucket);
            if self.admits(Some(c.fp)) && self.table.place_in_word(bucket, c.fp, &self.codec) {
                guard.add(bucket, 1);
                return Some(Insertion::Inserted);
            }
        }
        self.place_locked::<SHARED>(c, false)
    }

    /// [`Self::place`] under the locks of both buckets, taken here.
    #[inline(never)]
    fn place_locked<const SHARED: bool>(&self, c: &Candidates, unique: bool) -> Option<Insertion> {
        self.place(
            c,
            unique,
            &mut self.stripes.lock_pair::<SHARED>(c.first, c.second),
        )
    }

    /// [`Self::try_place`] of a unique insert, or of buckets wider than 64 bits.
    fn try_place_general<const SHARED: bool>(
        &self,
        c: &Candidates,
        unique: bool,
    ) -> Option<Insertion> {
        // A look without locks first: both buckets fetched, no locks for two without room.
        let (first, second) = (self.table.load(c.first), self.table.load(c.second));
        let free = (self.codec.has_free(&first), self.codec.has_free(&second));
        if !free.0 && !free.1 {
            let pattern = self.codec.broadcast(c.fp);
            if !unique
                || !(self.codec.matches(&first, pattern) || self.codec.matches(&second, pattern))
            {
                return None;
            }
        }
        if !unique {
            // One bucket's stripe only; both below if the look was stale.
            let bucket = if free.0 { c.first } else { c.second };
            if self.place_one::<SHARED>(bucket, c.fp) {
                return Some(Insertion::Inserted);
            }
        }
        self.place_locked::<SHARED>(c, unique)
    }

    /// Puts the fingerprint into `bucket` under its stripe alone; `false` if it has no room.
    #[inline(always)]
    fn place_one<const SHARED: bool>(&self, bucket: BucketIndex, fp: Fingerprint) -> bool {
        let mut guard = self.stripes.lock_one::<SHARED>(bucket);
        if !self.admits(Some(fp)) {
            return false;
        }
        let placed = if self.codec.is_plain_narrow() {
            self.table.update_bits(bucket, |bits| {
                let shift = self.codec.first_free_narrow(bits)?;
                Some(bits | u64::from(fp) << shift)
            })
        } else {
            let mut raw = self.table.load(bucket);
            let placed = self.codec.insert(&mut raw, fp);
            if placed {
                self.table.store(bucket, &raw);
            }
            placed
        };
        if placed {
            guard.add(bucket, 1);
        }
        placed
    }

    /// The candidate a plain narrow insert fills (architecture.md, "The roomier bucket near full").
    #[inline(always)]
    fn roomier_narrow(
        &self,
        c: &Candidates,
        first: u64,
        second: impl FnOnce() -> u64,
    ) -> Option<BucketIndex> {
        let first = self.codec.free_lanes_narrow(first);
        if first & first.wrapping_sub(1) != 0 {
            return Some(c.first);
        }
        let second = self.codec.free_lanes_narrow(second());
        if first | second == 0 {
            None
        } else if second.trailing_zeros() < first.trailing_zeros() {
            Some(c.second)
        } else {
            Some(c.first)
        }
    }

    /// [`Self::try_place`] under `guard`, which holds the stripes of both buckets.
    fn place(&self, c: &Candidates, unique: bool, guard: &mut impl Guard) -> Option<Insertion> {
        if !self.admits(Some(c.fp)) {
            return None;
        }
        let mut buckets = [self.table.load(c.first), self.table.load(c.second)];
        if unique {
            let pattern = self.codec.broadcast(c.fp);
            if buckets.iter().any(|raw| self.codec.matches(raw, pattern)) {
                return Some(Insertion::Present);
            }
        }
        let mut order = [(c.first, 0), (c.second, 1)];
        if self.codec.is_plain_narrow() {
            // First the bucket an insert without locks would pick from the same bits.
            let bits = buckets.map(|raw| raw[0] as u64);
            if self.roomier_narrow(c, bits[0], || bits[1])? != c.first {
                order.reverse();
            }
        }
        for (bucket, at) in order {
            if self.codec.insert(&mut buckets[at], c.fp) {
                self.table.store(bucket, &buckets[at]);
                guard.add(bucket, 1);
                return Some(Insertion::Inserted);
            }
        }
        None
    }

    /// Makes a path's moves from its empty end back, the new fingerprint taking the slot the last
    /// frees under the same locks (no other insert takes it). `None` if a hop went invalid (or
    /// there is none); each move made kept every item in one of its buckets. `all`: all held.
    fn shift<const SHARED: bool>(
        &self,
        path: &CuckooPath,
        c: &Candidates,
        unique: bool,
        mut all: Option<&mut AllStripesGuard<'_>>,
    ) -> Option<Insertion> {
        let mut moves = path.moves_backwards().peekable();
        while let Some((from, to, moved)) = moves.next() {
            let placing = moves.peek().is_none().then_some((c, unique));
            let hop = match all.as_deref_mut() {
                // One hop at a time in a live file's journal: earlier hops are final.
                Some(all) => {
                    all.journal([from, to]);
                    let hop = self.move_held(from, to, moved, placing, all);
                    all.settle([from, to]);
                    hop
                }
                None => self.move_fingerprint::<SHARED>(from, to, moved, placing),
            };
            match hop {
                Hop::Stale => return None,
                Hop::Moved => {}
                Hop::Placed(done) => return Some(done),
            }
        }
        None
    }

    /// Moves one copy of `fp` from `from` to its alternate `to`, if still valid. With `placing`,
    /// the new fingerprint takes the slot it leaves; a unique one also locks its other bucket and
    /// first checks that neither holds it.
    fn move_fingerprint<const SHARED: bool>(
        &self,
        from: BucketIndex,
        to: BucketIndex,
        fp: Fingerprint,
        placing: Option<(&Candidates, bool)>,
    ) -> Hop {
        let mut guard = match placing {
            Some((c, true)) => {
                let other = if from == c.first { c.second } else { c.first };
                self.stripes.lock_buckets::<SHARED>([from, to, other])
            }
            _ => self.stripes.lock_pair::<SHARED>(from, to),
        };
        self.move_held(from, to, fp, placing, &mut guard)
    }

    /// [`Self::move_fingerprint`] under `guard`; out of line, so that its reads are not hoisted.
    #[inline(never)]
    fn move_held(
        &self,
        from: BucketIndex,
        to: BucketIndex,
        fp: Fingerprint,
        placing: Option<(&Candidates, bool)>,
        guard: &mut impl Guard,
    ) -> Hop {
        debug_assert_eq!(self.placement.alternate(from, fp), to);
        if !self.admits(placing.map(|(c, _)| c.fp)) {
            return Hop::Stale;
        }
        if let Some((c, true)) = placing {
            let pattern = self.codec.broadcast(c.fp);
            if self.codec.matches(&self.table.load(c.first), pattern)
                || self.codec.matches(&self.table.load(c.second), pattern)
            {
                return Hop::Placed(Insertion::Present);
            }
        }
        let change = Move {
            from,
            to,
            fp,
            new: placing.map(|(c, _)| c.fp),
        };
        let moved = if self.codec.is_plain_narrow() {
            self.move_narrow(change)
        } else {
            self.move_wide(change)
        };
        if !moved {
            return Hop::Stale;
        }
        guard.add(to, 1);
        match placing {
            Some(_) => Hop::Placed(Insertion::Inserted),
            None => {
                guard.add(from, -1);
                Hop::Moved
            }
        }
    }

    /// The stores of a narrow move under both locks: `to` gains `fp` first, then `from` loses it
    /// (and gains `new`), so a reader of bucket words finds `fp` at every moment. `false`, storing
    /// nothing, if `from` lacks `fp` or `to` room.
    #[inline(always)]
    fn move_narrow(&self, Move { from, to, fp, new }: Move) -> bool {
        let codec = &self.codec;
        let Some(out) = codec.slot_of_narrow(self.table.load_bits(from), fp) else {
            return false;
        };
        let stored = self.table.update_bits(to, |target| {
            let into = codec.first_free_narrow(target)?;
            Some(target | u64::from(fp) << into)
        });
        if stored {
            let change = u64::from(fp ^ new.unwrap_or(0)) << out;
            self.table.update_bits(from, |source| Some(source ^ change));
        }
        stored
    }

    /// [`Self::move_narrow`] of wider buckets.
    fn move_wide(&self, Move { from, to, fp, new }: Move) -> bool {
        let mut source = self.table.load(from);
        let mut target = self.table.load(to);
        if !self.codec.remove(&mut source, fp) || !self.codec.insert(&mut target, fp) {
            return false;
        }
        if let Some(new) = new {
            let placed = self.codec.insert(&mut source, new);
            debug_assert!(placed, "the slot fp left is free");
        }
        // No reader sees one store without the other: the stamps stay odd until both are in.
        self.table.store(to, &target);
        self.table.store(from, &source);
        true
    }
}

/// The stores of one hop: `fp` from `from` to `to`, and `new` into the slot it leaves.
#[derive(Clone, Copy, Debug)]
struct Move {
    from: BucketIndex,
    to: BucketIndex,
    fp: Fingerprint,
    new: Option<Fingerprint>,
}

/// What one move of a path did.
enum Hop {
    /// No longer valid: nothing changed.
    Stale,
    Moved,
    /// The last hop: the new fingerprint went in, or (unique) was found.
    Placed(Insertion),
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/raw/insert.rs"]
mod tests;
