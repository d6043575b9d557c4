//! Generations move on, and the sweep clears expired slots before their tags come back
//! (docs/expiry.md, "The sweep", and guarantee 2 for why it suffices); a jump of more than `G`
//! generations empties the table under all its locks.

use super::core::Table;
use crate::raw::Guard;
use crate::sync::{Backoff, Ordering};

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
        let n = self.settings.bucket_count as u64;
        for claimed in first..first + count.min(n) {
            self.sweep_bucket(spread(claimed % n, n));
        }
    }

    /// Clears `bucket`'s expired slots under its stripe lock, if a validated read finds any.
    fn sweep_bucket(&self, bucket: usize) {
        let read = self.stripes.begin_read(bucket, bucket);
        let expired = |g| {
            let masks = self.masks(bucket, 0, g, 0);
            masks.expired & !masks.empty
        };
        if expired(self.clock.current()) == 0 && read.validate() {
            return;
        }
        let mut guard = self.stripes.lock_one::<false>(bucket);
        let g = self.clock.current();
        let mut expired = expired(g);
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
                    self.clear(Some(target));
                } else {
                    let n = self.settings.bucket_count as u64;
                    self.sweep(self.clock.sweep_debt(g + 1, self.ages, n));
                    self.clock.publish(g + 1, false);
                }
            }
            self.clock.end_advance();
        }
    }

    /// Empties every slot, publishing `publish` (if any) before the locks let writers in.
    pub(crate) fn clear(&self, publish: Option<u64>) {
        let mut all = self.stripes.lock_all();
        self.slots.clear();
        all.clear_counts();
        if let Some(target) = publish {
            self.clock.publish(target, true);
        }
    }

    /// Publishes past `g`, expiring the oldest generation early; `false` if `g` is the last.
    pub(crate) fn expire_early(&self, g: u64) -> bool {
        let Some(next) = g.checked_add(1) else {
            return false;
        };
        if self.clock.current() == g && self.early_counted.fetch_max(next, Ordering::Relaxed) < next
        {
            self.early_expiries.fetch_add(1, Ordering::Relaxed);
        }
        self.clock.move_ahead(next);
        self.advance(next);
        true
    }
}

/// Regions of the table that consecutive sweep claims visit in turn.
const REGIONS: u64 = 64;

/// The bucket of the `x`-th claim of a pass over `n` buckets: consecutive claims (other
/// threads') in different regions, each region in order. A bijection of `0..n`, so a pass of
/// claims covers the table.
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
