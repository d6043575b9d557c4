//! What an expiring filter forgets by: its window (a count of inserts or a duration), what a time
//! window does past its capacity, the clock it reads, and the age arithmetic of its slot tags.

use core::time::Duration;

/// How long an expiring filter remembers an item: the last `n` inserts, or a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Window {
    /// The last `n` inserts (every `insert` and `insert_unique` call counts, a refresh too).
    Items(u64),
    /// A duration of the filter's clock.
    Time(Duration),
}

/// What a time window does when its table has no room for an insert, which happens only past
/// its capacity: more than `capacity·(1 + 1/G)` inserts within `window·(1 + 1/G)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Overflow {
    /// The insert fails with [`InsertError::Full`](crate::InsertError::Full), changing nothing.
    #[default]
    Error,
    /// The oldest generation expires early (the generation moves on by one) and the insert is
    /// tried again: items inserted before then are found for less than the window.
    /// At the last generation a `u64` counts, there is none to move on to: the insert fails as
    /// with `Error`.
    ExpireEarly,
}

/// The clock a time window reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clock {
    /// The monotonic clock (`std::time::Instant`), from the filter's build.
    #[default]
    Monotonic,
    /// A clock the caller drives with
    /// [`advance_to`](crate::ExpiringCuckooFilter::advance_to): event time, or tests.
    Manual,
}

/// `d` in nanoseconds, saturating.
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Bits of the age tag beside each fingerprint.
pub(crate) const TAG_BITS: u32 = 4;

/// The age arithmetic of tags: a slot is `fp << 4 | g mod 16`, `g` the generation it was stored
/// in, live while its age is at most `G`; the sweep clears it before its age could reach 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ages {
    /// `G`, the generations a window spans.
    pub(crate) generations: u64,
}

impl Ages {
    pub(crate) const TAG_MASK: u64 = (1 << TAG_BITS) - 1;

    /// The most generations tags allow: the sweep needs `2^t − G − 1 ≥ 1` generations.
    pub(crate) const MAX_GENERATIONS: u32 = (1 << TAG_BITS) - 2;

    /// Generations between a slot's expiry and its tag's return, for the sweep's pass.
    pub(crate) fn sweep_generations(self) -> u64 {
        (1 << TAG_BITS) - self.generations - 1
    }

    /// The slot of `fp` stored in generation `g`.
    #[inline(always)]
    pub(crate) fn slot(fp: u32, g: u64) -> u64 {
        (u64::from(fp) << TAG_BITS) | (g & Self::TAG_MASK)
    }

    /// The fingerprint a slot holds (0: empty).
    #[inline(always)]
    pub(crate) fn fingerprint(slot: u64) -> u64 {
        slot >> TAG_BITS
    }

    /// A slot's age in generation `g`.
    #[inline(always)]
    pub(crate) fn age(slot: u64, g: u64) -> u64 {
        g.wrapping_sub(slot) & Self::TAG_MASK
    }

    /// Which of four tags (the nibbles of `tags`' low 16 bits) are expired in generation `g`,
    /// bit `i` for tag `i`: the four ages at once, lane by lane `g − tag` modulo 16 with no
    /// borrow between lanes, then `age + (15 − G)` carrying out of its lane iff `age > G`.
    #[inline(always)]
    pub(crate) fn expired_lanes(self, tags: u64, g: u64) -> u32 {
        const HIGH: u64 = 0x8888;
        const LOW: u64 = 0x7777;
        let (x, y) = ((g & Self::TAG_MASK) * 0x1111, tags & 0xffff);
        let ages = ((x | HIGH) - (y & LOW)) ^ ((x ^ !y) & HIGH);
        let k = (Self::TAG_MASK - self.generations) * 0x1111;
        let carry_in = ((ages & LOW) + (k & LOW)) & HIGH;
        let carry = (ages & k | (ages | k) & carry_in) & HIGH;
        // Bits 3, 7, 11 and 15 gathered to bits 12 to 15 by one multiply (no two terms meet).
        ((((carry >> 3) * 0x1248) >> 12) & 0xf) as u32
    }
}

#[cfg(test)]
#[path = "../../tests/unit/expiring/window.rs"]
mod tests;
