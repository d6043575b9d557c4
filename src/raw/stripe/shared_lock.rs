//! Taking, journaling, releasing and recovering a stripe that other processes share (the
//! protocol: [`crate::raw::owners`]).

use std::time::Instant;

use super::super::owners::{SharedLocks, LIVENESS_BOUND};
use super::{lock_stamp, Held, StripeIndex, Stripes};
use crate::sync::{fence, Backoff, Ordering};

impl Stripes {
    /// Takes `stripe`: its owner word, then its stamp's lock bit. A holder that stays longer
    /// than [`LIVENESS_BOUND`] is asked after; a dead one's stripe is taken over and recovered.
    #[cold]
    #[inline(never)]
    pub(super) fn lock_shared(&self, shared: &SharedLocks, stripe: StripeIndex) {
        let owner = shared.owner(stripe);
        let me = shared.registry.me;
        let (backoff, mut held, mut since) = (Backoff::new(), 0, Instant::now());
        // Whether `held` was found dead before (on another stripe: ids are never reused): taken
        // over at once, so that a holder that died holding every stripe is waited for once.
        let mut known_dead = false;
        loop {
            match owner.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
                // Its last holder unlocked the stamp before the owner word: it is free, unless
                // a damaged file left it locked with no owner (a stamp page written back after
                // its owner word's), which no one will unlock: recovered as a dead holder's.
                Ok(_) if self.stamps[stripe].load(Ordering::Relaxed) & 1 == 1 => {
                    return self.recover(shared, stripe)
                }
                Ok(_) => return lock_stamp(&self.stamps[stripe]),
                Err(now) if now != held => {
                    // Another holder: its own time starts now.
                    held = now;
                    since = Instant::now();
                    known_dead = shared.registry.known_dead(held);
                }
                Err(_) => {}
            }
            if known_dead || since.elapsed() >= LIVENESS_BOUND {
                if (known_dead || !shared.registry.is_alive(held))
                    && owner
                        .compare_exchange(held, me, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    if !known_dead {
                        shared.registry.found_dead(held);
                    }
                    return self.recover(shared, stripe);
                }
                since = Instant::now();
            }
            backoff.snooze();
        }
    }

    /// Locks the stripes of `buckets` (repeat one to lock fewer) as [`Self::lock_buckets`] does,
    /// and journals each bucket in its stripe's record before the caller stores anything. The
    /// stripes returned put the first-named bucket's (a move's source) first, whose journal
    /// [`Self::unlock_shared`] empties last. Not generic: compiled once, with the journal.
    #[cold]
    #[inline(never)]
    pub(super) fn lock_shared_buckets(&self, shared: &SharedLocks, buckets: [usize; 3]) -> Held {
        let mut held = self.held(buckets);
        for &stripe in held.as_slice() {
            self.lock_shared(shared, stripe);
        }
        for bucket in buckets {
            shared.journal(self.of(bucket), bucket);
        }
        let first = self.of(buckets[0]);
        if let Some(at) = held.as_slice().iter().position(|&stripe| stripe == first) {
            held.stripes[..=at].rotate_right(1);
        }
        held
    }

    /// Unlocks the shared stripes a guard holds, `held[i]` having changed its count by
    /// `deltas[i]`: every journal emptied first, then each stamp and owner word, so a kill in
    /// between never undoes one half of a move another stripe already made final. The journals
    /// go in reverse, `held[0]`'s (a move's source's) last: a kill between two restores the
    /// source while the destination keeps its copy (a second copy), never the destination alone.
    #[cold]
    #[inline(never)]
    pub(super) fn unlock_shared(&self, shared: &SharedLocks, held: &[StripeIndex], deltas: &[i32]) {
        for &stripe in held.iter().rev() {
            shared.clear_journal(stripe);
        }
        for (&stripe, &delta) in held.iter().zip(deltas).rev() {
            self.store_unlocked(&self.stamps[stripe], delta);
            shared.owner(stripe).store(0, Ordering::Release);
        }
    }

    /// Makes a dead holder's stripe whole for the caller that took over its owner word, leaving
    /// it locked: the stamp locked, the journal restored, the count recomputed. The caller's
    /// unlock moves the version on, so a reader that read meanwhile fails to validate.
    fn recover(&self, shared: &SharedLocks, stripe: StripeIndex) {
        let stamp = &self.stamps[stripe];
        // Only the owner word's holder writes the stamp, so plain stores suffice.
        stamp.store(stamp.load(Ordering::Relaxed) | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        shared.restore_journal(stripe);
        let count = shared.count_of(stripe, self.stamps.group_shift(), self.count());
        let version = stamp.load(Ordering::Relaxed) & self.versions;
        stamp.store(count << self.count_shift | version, Ordering::Relaxed);
    }
}

/// What a reader that cannot lock (`Access::ReadOnly`) saw of a stripe: its stamp, and if a
/// dead holder left it locked, that holder, whose journal the reader reads through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) stamp: u64,
    /// 0 for an unlocked stripe, or a locked one whose owner word is 0 (a damaged file's).
    pub(crate) dead_owner: u64,
}

impl Seen {
    /// Whether a dead holder (or none) left the stripe locked: read as its recovery would leave it.
    pub(crate) fn abandoned(&self) -> bool {
        self.stamp & 1 == 1
    }
}

impl Stripes {
    /// The live file's lock records if this opener can only read them.
    #[inline]
    pub(crate) fn read_only_locks(&self) -> Option<&SharedLocks> {
        self.shared
            .as_deref()
            .filter(|shared| shared.registry.is_read_only())
    }

    /// `stripe` now, for a reader that cannot lock and last asked after a holder (or began to
    /// wait) at `since`; `None` while a holder that may be alive has it (asked after once
    /// [`LIVENESS_BOUND`] has passed since, which then restarts). Validated after the read by
    /// [`Self::still`].
    pub(crate) fn seen(
        &self,
        shared: &SharedLocks,
        stripe: StripeIndex,
        since: &mut Instant,
    ) -> Option<Seen> {
        let stamp = self.stamps[stripe].load(Ordering::Acquire);
        if stamp & 1 == 0 {
            return Some(Seen {
                stamp,
                dead_owner: 0,
            });
        }
        // A holder takes the owner word before the stamp and leaves it after: 0 is one in passing
        // (the stamp will have moved on when it is validated), or a damaged file's, no one's.
        let owner = shared.owner(stripe).load(Ordering::Acquire);
        let registry = &shared.registry;
        if !registry.known_dead(owner) {
            if since.elapsed() < LIVENESS_BOUND {
                return None;
            }
            if registry.is_alive(owner) {
                *since = Instant::now();
                return None;
            }
            registry.found_dead(owner);
        }
        Some(Seen {
            stamp,
            dead_owner: owner,
        })
    }

    /// Whether `stripe` is still as `seen`, after the reads it validates and an `Acquire` fence:
    /// no holder unlocked nor recovered it, so what was read is a state it really had.
    pub(crate) fn still(&self, shared: &SharedLocks, stripe: StripeIndex, seen: Seen) -> bool {
        self.stamps[stripe].load(Ordering::Relaxed) == seen.stamp
            && (!seen.abandoned()
                || shared.owner(stripe).load(Ordering::Relaxed) == seen.dead_owner)
    }

    pub(crate) fn group_shift(&self) -> u32 {
        self.stamps.group_shift()
    }

    /// The fingerprints a stamp counts.
    pub(crate) fn count_in(&self, stamp: u64) -> u64 {
        stamp >> self.count_shift
    }
}
