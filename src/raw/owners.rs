//! Stripe locks that survive the death of their holder, for a table in a file that several
//! processes map (the protocol: docs/shared.md, "Why each guarantee holds across processes").
//!
//! A registered opener holds an OFD lock on its slot's byte and the owner id
//! `(slot + 1) << 32 | epoch`. A stripe's lock record is its owner word, then a journal: the
//! words of the buckets its holder named when it locked, copied before its first store, so that
//! recovering a dead holder's stripe (`stripe/shared_lock.rs`) undoes whole what it did. A guard
//! empties its journals before it unlocks, a move's source's last: a kill in between leaves at
//! most a second copy. Tables of bucket words journal nothing (docs/shared.md says why).

use std::fs::File;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use super::bucket::BucketCodec;
use super::table::Table;
use crate::sync::mapping::byte_is_locked;
use crate::sync::{fence, AtomicU64, Ordering, TableWords};

/// Words of a stripe's lock record: the owner word, the count of journal entries, and
/// [`ENTRIES`] entries of [`ENTRY`] words, then spare.
pub(crate) const STRIDE: usize = 24;
/// Buckets one lock can journal per stripe: a move names three.
const ENTRIES: usize = 3;
/// Words of an entry: the bucket plus one, then its old words (a 256-bit bucket spans five).
const ENTRY: usize = 6;
/// How long a waiter spins on a held stripe before it asks whether the holder is alive.
pub(crate) const LIVENESS_BOUND: Duration = Duration::from_millis(10);
/// Dead holders a read-only opener remembers: each killed writer leaves at most three stripes
/// (or every one) until a writer recovers them.
const DEAD_KEPT: usize = 16;

/// Who may hold stripes here, and how to tell whether another holder is alive.
#[derive(Debug)]
pub(crate) struct Registry {
    /// This opener's owner id; `u64::MAX` for an unregistered (read-only) opener.
    pub(super) me: u64,
    /// The file's epoch words, one per registration slot.
    epochs: TableWords,
    /// The byte offset of slot 0's epoch word in the file: slot `s`'s lock byte is `8 s` past it.
    offset: u64,
    /// A description of the file that holds no OFD lock, to ask about others' locks.
    query: File,
    /// This opener's own description of the file, holding its slot's lock.
    _own: Option<File>,
    /// The last [`DEAD_KEPT`] holders this opener found dead (owner ids are never reused; all
    /// ones is never a holder's), so that its later reads and locks of their stripes need not
    /// wait out [`LIVENESS_BOUND`] again, whichever dead holder's it met in between.
    found_dead: [AtomicU64; DEAD_KEPT],
    /// Where in `found_dead` the next holder found dead goes.
    next_dead: AtomicUsize,
    /// How many times [`Self::is_alive`] was asked, for tests.
    #[cfg(test)]
    pub(super) asked: AtomicUsize,
}

impl Registry {
    /// Registers in the first free slot: `Ok(None)` if every slot is held.
    pub(crate) fn register(
        query: File,
        own: File,
        epochs: TableWords,
        offset: u64,
    ) -> std::io::Result<Option<Self>> {
        for slot in 0..epochs.len() {
            if crate::sync::mapping::try_lock_byte(&own, offset + 8 * slot as u64)? {
                return Ok(Some(Self {
                    me: next_id(&epochs, slot),
                    _own: Some(own),
                    ..Self::unregistered(query, epochs, offset)
                }));
            }
        }
        Ok(None)
    }

    /// Takes the next epoch of this opener's slot as its id while one of the stripes' `owners`
    /// names it: a machine crash lost the epoch's increment that made that holder's id, which
    /// others may have found dead and may take over at any time, so no id is a second opener's.
    pub(crate) fn take_unused_id(&mut self, owners: impl Iterator<Item = u64>) {
        let mut named: Vec<u64> = owners
            .filter(|owner| owner >> 32 == self.me >> 32)
            .collect();
        named.sort_unstable();
        while named.binary_search(&self.me).is_ok() {
            self.me = next_id(&self.epochs, (self.me >> 32) as usize - 1);
        }
    }

    /// An opener that holds no slot, for reading only.
    pub(crate) fn unregistered(query: File, epochs: TableWords, offset: u64) -> Self {
        Self {
            me: u64::MAX,
            epochs,
            offset,
            query,
            _own: None,
            found_dead: core::array::from_fn(|_| AtomicU64::new(u64::MAX)),
            next_dead: AtomicUsize::new(0),
            #[cfg(test)]
            asked: AtomicUsize::new(0),
        }
    }

    /// Whether this opener is unregistered (`Access::ReadOnly`): it never locks, nor writes.
    pub(super) fn is_read_only(&self) -> bool {
        self.me == u64::MAX
    }

    /// Whether this opener found `owner` dead before ([`Self::found_dead`]).
    pub(super) fn known_dead(&self, owner: u64) -> bool {
        (self.found_dead.iter()).any(|dead| dead.load(Ordering::Relaxed) == owner)
    }

    /// Remembers that `owner`, which [`Self::is_alive`] said is not, is dead.
    pub(super) fn found_dead(&self, owner: u64) {
        let at = self.next_dead.fetch_add(1, Ordering::Relaxed) % DEAD_KEPT;
        self.found_dead[at].store(owner, Ordering::Relaxed);
    }

    /// Whether `owner` may still be running; an id naming no slot is dead (a read-only opener's
    /// own, all ones, too: it never holds a stripe, so that owner word is a damaged file's).
    pub(super) fn is_alive(&self, owner: u64) -> bool {
        #[cfg(test)]
        self.asked.fetch_add(1, Ordering::Relaxed);
        if owner == self.me {
            return !self.is_read_only();
        }
        let slot = (owner >> 32).wrapping_sub(1);
        let Some(epoch) = usize::try_from(slot).ok().and_then(|s| self.epochs.get(s)) else {
            return false;
        };
        epoch.load(Ordering::Acquire) & 0xffff_ffff == owner & 0xffff_ffff
            && byte_is_locked(&self.query, self.offset + 8 * slot)
    }
}

/// The owner id of `slot`'s next epoch, which this call takes.
fn next_id(epochs: &[AtomicU64], slot: usize) -> u64 {
    let epoch = epochs[slot].fetch_add(1, Ordering::AcqRel).wrapping_add(1);
    (slot as u64 + 1) << 32 | (epoch & 0xffff_ffff)
}

/// The lock records of a shared table's stripes, and what recovering one needs.
#[derive(Debug)]
pub(crate) struct SharedLocks {
    /// [`STRIDE`] words per stripe.
    pub(super) records: TableWords,
    pub(super) registry: Registry,
    /// The same table, to restore a journal's words and recount a stripe's buckets.
    pub(super) table: Table,
    pub(super) codec: BucketCodec,
}

impl SharedLocks {
    #[inline]
    pub(crate) fn owner(&self, stripe: usize) -> &AtomicU64 {
        &self.records[stripe * STRIDE]
    }

    fn record(&self, stripe: usize) -> &[AtomicU64] {
        &self.records[stripe * STRIDE..(stripe + 1) * STRIDE]
    }

    /// Copies `bucket`'s words into the journal of `stripe`, its stripe, which the caller holds
    /// and has not written since it locked it or last emptied its journal: published (`Release`,
    /// fenced before the stores that follow) as one more entry. Nothing for bucket words, nor for
    /// a bucket the journal names already.
    #[inline]
    pub(crate) fn journal(&self, stripe: usize, bucket: usize) {
        if self.codec.is_word() {
            return;
        }
        let record = self.record(stripe);
        let used = record[1].load(Ordering::Relaxed) as usize;
        let named = (0..used.min(ENTRIES))
            .any(|i| record[2 + ENTRY * i].load(Ordering::Relaxed) == bucket as u64 + 1);
        if named || used >= ENTRIES {
            debug_assert!(named, "more than {ENTRIES} buckets of one stripe");
            return;
        }
        let entry = &record[2 + ENTRY * used..2 + ENTRY * (used + 1)];
        entry[0].store(bucket as u64 + 1, Ordering::Relaxed);
        let words = &self.table.words[self.table.word_range(bucket, 1)];
        for (old, word) in entry[1..].iter().zip(words) {
            old.store(word.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        record[1].store(used as u64 + 1, Ordering::Release);
        fence(Ordering::Release);
    }

    /// Empties the journal of `stripe` once its holder's stores are done (`Release`: after them).
    #[inline]
    pub(crate) fn clear_journal(&self, stripe: usize) {
        #[cfg(test)]
        super::stall::point();
        self.record(stripe)[1].store(0, Ordering::Release);
    }

    /// Puts back the buckets a dead holder of `stripe` journaled and clears the journal; the
    /// caller holds the stripe by its owner word.
    pub(crate) fn restore_journal(&self, stripe: usize) {
        for (first, old_words) in self.journal_entries(stripe) {
            for (word, old) in self.table.words[first..].iter().zip(old_words) {
                word.store(old.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        self.record(stripe)[1].store(0, Ordering::Release);
    }

    /// Puts the journal of `stripe` over `words`, a copy of the table's words from `from`:
    /// what [`Self::restore_journal`] would store there, for a reader that cannot.
    pub(crate) fn put_back_journal(&self, stripe: usize, from: usize, words: &mut [u64]) {
        for (first, old_words) in self.journal_entries(stripe) {
            for (at, old) in (first..).zip(old_words) {
                if let Some(word) = at.checked_sub(from).and_then(|i| words.get_mut(i)) {
                    *word = old.load(Ordering::Relaxed);
                }
            }
        }
    }

    /// Each journaled bucket's first word in the table and its old words.
    fn journal_entries(&self, stripe: usize) -> impl Iterator<Item = (usize, &[AtomicU64])> {
        let record = self.record(stripe);
        let used = (record[1].load(Ordering::Acquire) as usize).min(ENTRIES);
        record[2..2 + ENTRY * used]
            .chunks_exact(ENTRY)
            .filter_map(|entry| {
                let bucket = entry[0].load(Ordering::Relaxed).wrapping_sub(1) as usize;
                (bucket < self.table.bucket_count()).then(|| {
                    let words = self.table.word_range(bucket, 1);
                    (words.start, &entry[1..1 + words.len()])
                })
            })
    }

    /// Fingerprints in the buckets `stripe` guards: every `stripes`-th lock group from its own.
    pub(crate) fn count_of(&self, stripe: usize, group_shift: u32, stripes: usize) -> u64 {
        let (size, buckets) = (self.codec.bucket_size(), self.table.bucket_count());
        (stripe..buckets.div_ceil(1 << group_shift))
            .step_by(stripes)
            .flat_map(|group| (group << group_shift)..((group + 1) << group_shift).min(buckets))
            .map(|bucket| (size - self.codec.count(&self.table.load(bucket), 0)) as u64)
            .sum()
    }
}
