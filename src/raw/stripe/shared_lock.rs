//! Taking, journaling, releasing and recovering a stripe that other processes share (the
//! protocol: [`crate::raw::owners`]).

use std::time::Instant;

use super::super::owners::{SharedLocks, LIVENESS_BOUND};
use super::{lock_stamp, try_lock, Held, StripeIndex, Stripes};
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
        loop {
            match owner.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return self.lock_owned_stamp(shared, stripe),
                Err(now) if now != held => {
                    // Another holder: its own time starts now.
                    held = now;
                    since = Instant::now();
                }
                Err(_) => {}
            }
            if since.elapsed() >= LIVENESS_BOUND {
                if !shared.registry.is_alive(held)
                    && owner
                        .compare_exchange(held, me, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return self.recover(shared, stripe);
                }
                since = Instant::now();
            }
            backoff.snooze();
        }
    }

    /// Takes the stamp of `stripe`, whose owner word the caller has just taken from 0. Its last
    /// holder unlocked the stamp before the owner word, so it is free; but an unregistered
    /// opener's private copy can hold a live writer's lock bit copied after the owner word it
    /// reads as 0, which never unlocks there: after [`LIVENESS_BOUND`] it takes that over too.
    fn lock_owned_stamp(&self, shared: &SharedLocks, stripe: StripeIndex) {
        let stamp = &self.stamps[stripe];
        if !shared.registry.is_private() {
            return lock_stamp(stamp);
        }
        let (backoff, since) = (Backoff::new(), Instant::now());
        while !try_lock(stamp) {
            if since.elapsed() >= LIVENESS_BOUND {
                return self.recover(shared, stripe);
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
