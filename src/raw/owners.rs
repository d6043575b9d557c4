//! Stripe locks that survive the death of their holder, for a table in a file that several
//! processes map (docs/shared.md).
//!
//! Each process that opens the file for writing registers: it takes an OFD write lock on the
//! byte of a free registration slot (the kernel drops it when the process dies) and moves that
//! slot's epoch on. Its owner id is `(slot + 1) << 32 | epoch`, so an owner is alive iff its
//! slot's byte is locked by someone and the slot's epoch is still its own: a new process that
//! reuses the slot (or the dead one's pid) has another epoch.
//!
//! Each stripe has a lock record of [`STRIDE`] words in the file: its owner word, then a
//! journal of the bucket write in flight. A writer takes a stripe by a CAS of the owner word
//! from 0 to its id, then the stamp's lock bit; it releases the stamp, then the owner word. A
//! waiter that has spun for [`LIVENESS_BOUND`] checks the owner; a dead owner's stripe is taken
//! over by a CAS of the owner word and recovered ([`super::stripe::Stripes`]): the journal's
//! pre-image restored, the count recomputed from the buckets, the version moved on.
//!
//! A write that spans two or more words (a packed bucket across a word boundary, a wide
//! bucket) first copies the old words and their place into the journal of the bucket's stripe
//! (held by the writer, so no one else writes the record), publishes it, stores, and clears
//! it: a kill between two word stores leaves the pre-image to restore. Single-word stores need
//! no journal: they cannot tear.

use std::fs::File;
use std::time::Duration;

use super::bucket::BucketCodec;
use super::table::Table;
use crate::sync::mapping::byte_is_locked;
use crate::sync::{fence, AtomicU64, Ordering, TableWords};

/// Words of a stripe's lock record: the owner word, the journal state, up to five old words.
pub(crate) const STRIDE: usize = 8;
/// Old words a journal keeps: a 256-bit bucket starting anywhere in a word spans five.
const JOURNAL_WORDS: usize = 5;
/// How long a waiter spins on a held stripe before it asks whether the holder is alive.
pub(crate) const LIVENESS_BOUND: Duration = Duration::from_millis(10);

/// Who may hold stripes here, and how to tell whether another holder is alive.
#[derive(Debug)]
pub(crate) struct Registry {
    /// This opener's owner id; `u64::MAX` for an unregistered (private, read-only) opener.
    me: u64,
    /// The file's epoch words, one per registration slot.
    epochs: TableWords,
    /// The byte offset of slot 0's epoch word in the file: slot `s`'s lock byte is `8 s` past it.
    offset: u64,
    /// A description of the file that holds no OFD lock, to ask about others' locks.
    query: File,
    /// This opener's own description of the file, holding its slot's lock; closed when dropped.
    _own: Option<File>,
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
                let epoch = epochs[slot].fetch_add(1, Ordering::AcqRel).wrapping_add(1);
                return Ok(Some(Self {
                    me: (slot as u64 + 1) << 32 | (epoch & 0xffff_ffff),
                    epochs,
                    offset,
                    query,
                    _own: Some(own),
                }));
            }
        }
        Ok(None)
    }

    /// An opener that holds no slot: its locks exist only in its private copy of the pages.
    pub(crate) fn unregistered(query: File, epochs: TableWords, offset: u64) -> Self {
        Self {
            me: u64::MAX,
            epochs,
            offset,
            query,
            _own: None,
        }
    }

    /// Whether `owner` may still be running. An id naming no slot is garbage: dead.
    fn is_alive(&self, owner: u64) -> bool {
        if owner == self.me {
            return true;
        }
        let slot = (owner >> 32).wrapping_sub(1);
        let Some(epoch) = usize::try_from(slot).ok().and_then(|s| self.epochs.get(s)) else {
            return false;
        };
        epoch.load(Ordering::Acquire) & 0xffff_ffff == owner & 0xffff_ffff
            && byte_is_locked(&self.query, self.offset + 8 * slot)
    }
}

/// The lock records of a shared table's stripes, and what recovering one needs.
#[derive(Debug)]
pub(crate) struct SharedLocks {
    records: TableWords,
    registry: Registry,
    /// The same table, to restore a journal's words and recount a stripe's buckets.
    table: Table,
    codec: BucketCodec,
}

impl SharedLocks {
    /// Lock records for `records.len() / STRIDE` stripes over `table`.
    pub(crate) fn new(
        records: TableWords,
        registry: Registry,
        table: Table,
        codec: BucketCodec,
    ) -> Self {
        Self {
            records,
            registry,
            table,
            codec,
        }
    }

    pub(crate) fn me(&self) -> u64 {
        self.registry.me
    }

    /// The owner word of `stripe`.
    #[inline]
    pub(crate) fn owner(&self, stripe: usize) -> &AtomicU64 {
        &self.records[stripe * STRIDE]
    }

    /// Whether `owner` may still be running.
    pub(crate) fn is_alive(&self, owner: u64) -> bool {
        self.registry.is_alive(owner)
    }

    /// Puts back the words of a bucket write that a dead holder of `stripe` began and did not
    /// end, and clears the journal. The caller holds the stripe (by its owner word).
    pub(crate) fn restore_journal(&self, stripe: usize) {
        let record = &self.records[stripe * STRIDE..(stripe + 1) * STRIDE];
        let state = record[1].load(Ordering::Acquire);
        if state != 0 {
            let (first, len) = ((state >> 3) as usize - 1, (state & 7) as usize);
            for (i, old) in record[2..2 + len.min(JOURNAL_WORDS)].iter().enumerate() {
                if let Some(word) = self.table.words.get(first + i) {
                    word.store(old.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            }
            record[1].store(0, Ordering::Release);
        }
    }

    /// Fingerprints in the buckets `stripe` guards: its lock groups of `1 << group_shift`
    /// buckets, every `stripes`-th from the `stripe`-th.
    pub(crate) fn count_of(&self, stripe: usize, group_shift: u32, stripes: usize) -> u64 {
        let (size, buckets) = (self.codec.bucket_size(), self.table.bucket_count());
        (stripe..buckets.div_ceil(1 << group_shift))
            .step_by(stripes)
            .flat_map(|group| (group << group_shift)..((group + 1) << group_shift).min(buckets))
            .map(|bucket| (size - self.codec.count(&self.table.load(bucket), 0)) as u64)
            .sum()
    }
}

/// Where a shared table journals its multi-word bucket writes: the stripes' lock records.
#[derive(Debug)]
pub(crate) struct Journal {
    records: TableWords,
    group_shift: u32,
    mask: usize,
}

impl Journal {
    pub(crate) fn new(records: TableWords, group_shift: u32, stripes: usize) -> Self {
        Self {
            records,
            group_shift,
            mask: stripes - 1,
        }
    }

    /// Records that `words[first..first + len]` are about to be stored for `bucket`: their old
    /// values, then (`Release`, and fenced before the stores that follow) where they are. The
    /// caller holds the bucket's stripe.
    pub(crate) fn begin(&self, bucket: usize, words: &[AtomicU64], first: usize, len: usize) {
        debug_assert!((1..=JOURNAL_WORDS).contains(&len));
        let stripe = (bucket >> self.group_shift) & self.mask;
        let record = &self.records[stripe * STRIDE..(stripe + 1) * STRIDE];
        for (old, word) in record[2..].iter().zip(&words[first..first + len]) {
            old.store(word.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        record[1].store(((first as u64 + 1) << 3) | len as u64, Ordering::Release);
        fence(Ordering::Release);
    }

    /// Clears `bucket`'s journal once its stores are done (`Release`: after them).
    pub(crate) fn end(&self, bucket: usize) {
        let stripe = (bucket >> self.group_shift) & self.mask;
        self.records[stripe * STRIDE + 1].store(0, Ordering::Release);
    }
}
