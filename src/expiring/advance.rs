//! Generations move on, and the sweep clears expired slots before their tags come back.
//!
//! A slot tagged in generation `x` expires when `x + G + 1` is published and its tag value
//! returns at `x + 2^t`. Between them, `2^t − G − 1` generations, the sweep must pass over every
//! bucket: each insert claims [`Table::sweep_per_insert`] buckets from a shared cursor and clears
//! their expired slots under their stripe locks, and the thread that publishes generation `g + 1`
//! first checks that the buckets claimed since generation `g + 1 − (2^t − G − 1)` was published
//! cover the table, and sweeps what is missing itself (nothing, when inserts keep up: a count
//! window's inserts always do by construction; a sparse time window's publisher pays). A jump of
//! more than `G` generations, which only a time window makes after an idle spell, finds every
//! slot expired and empties the table under all its locks, as `clear` does.

use super::core::Table;
use crate::raw::Guard;
use crate::sync::Backoff;

impl Table {
    /// Sweeps the next `count` buckets of the shared cursor.
    pub(crate) fn sweep(&self, count: u64) {
        if count == 0 {
            return;
        }
        self.sweep_claimed(self.clock.claim_sweep(count), count);
    }

    /// Sweeps the `count` buckets claimed from the `first`-th on.
    #[inline(always)]
    pub(crate) fn sweep_claimed(&self, first: u64, count: u64) {
        let n = self.slots.bucket_count() as u64;
        for claimed in first..first + count.min(n) {
            self.sweep_bucket(spread(claimed % n, n));
        }
    }

    /// Clears the expired slots of `bucket`, under its stripe lock. Most buckets hold none: a
    /// read validated as a lookup's finds that with no lock and no write.
    fn sweep_bucket(&self, bucket: usize) {
        let read = self.stripes.begin_read(bucket, bucket);
        if self.expired_slots(bucket, self.clock.current()) == 0 && read.validate() {
            return;
        }
        let mut guard = self.stripes.lock_one::<false>(bucket);
        let g = self.clock.current();
        let mut expired = self.expired_slots(bucket, g);
        while expired != 0 {
            let i = expired.trailing_zeros() as usize;
            expired &= expired - 1;
            let slot = self.slots.get(bucket, i);
            self.slots.set(bucket, i, slot, 0);
            guard.add(bucket, -1);
        }
    }

    /// Publishes generations until the current one is at least `target`.
    pub(crate) fn advance(&self, target: u64) {
        let backoff = Backoff::new();
        while self.clock.current() < target {
            if !self.clock.try_begin_advance() {
                backoff.snooze();
                continue;
            }
            let g = self.clock.current();
            if g < target {
                if target - g > self.ages.generations {
                    self.empty_into(target);
                } else {
                    let n = self.slots.bucket_count() as u64;
                    let debt = match self.clock.sweep_debt(g + 1, self.ages, n) {
                        debt if debt > 0 && self.clock.positions_sweep() => n,
                        debt => debt,
                    };
                    self.sweep(debt);
                    self.clock.publish(g + 1, false);
                }
            }
            self.clock.end_advance();
        }
    }

    /// Empties the table, all of whose slots have expired by `target`, and publishes `target`.
    fn empty_into(&self, target: u64) {
        let mut all = self.stripes.lock_all();
        self.slots.clear();
        all.clear_counts();
        self.clock.publish(target, true);
    }

    /// The generation an insert stores in moves on past `g`, and the oldest one expires early;
    /// a time window's clock moves on with it. `false` if `g` is the last generation there is.
    pub(crate) fn expire_early(&self, g: u64) -> bool {
        let Some(next) = g.checked_add(1) else {
            return false;
        };
        if self.clock.current() == g {
            self.early_expiries
                .fetch_add(1, crate::sync::Ordering::Relaxed);
        }
        self.clock.move_ahead(next);
        self.advance(next);
        true
    }
}

/// Regions of the table that consecutive sweep claims visit in turn.
const REGIONS: u64 = 64;

/// The bucket of the `x`-th claim of a pass over `n` buckets: consecutive claims, made by
/// different threads, land in different regions (their own cache lines and stripes), and each
/// region is swept in order. A bijection of `0..n`, so a pass of claims still covers the table.
#[inline(always)]
fn spread(x: u64, n: u64) -> usize {
    // Odd: consecutive claims, `span` buckets apart, never share a stripe (a power of two of
    // them, bucket by bucket).
    let span = (n / REGIONS).saturating_sub(1) | 1;
    let spread = (span * REGIONS).min(n);
    (if x < spread {
        (x % REGIONS) * span + x / REGIONS
    } else {
        x
    }) as usize
}

#[cfg(test)]
#[path = "../../tests/unit/expiring/advance.rs"]
mod tests;
