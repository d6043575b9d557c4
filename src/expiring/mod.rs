//! The expiring kind: a cuckoo filter that forgets, over a sliding window of inserts or of time
//! (docs/expiry.md). Each slot holds a fingerprint and a 4-bit age tag; a slot whose tag is out
//! of the window is free. Its files: docs/architecture.md, "Layers".

mod advance;
mod builder;
mod clock;
mod core;
mod lookup;
mod path;
mod persist;
mod slots;
mod window;
mod write;

use ::core::fmt;
use ::core::hash::{BuildHasher, Hash};
use ::core::time::Duration;
use std::io::{self, Read, Write};

use self::core::Table;
use self::write::Stored;
use crate::error::{InsertError, MergeError};
use crate::filter::kind::{Kind, Sealed};
use crate::filter::CuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::persist::{DecodeError, StableHashBuilder};
use crate::raw::Place;
use crate::sync::Ordering;

pub use self::builder::{ExpiringBuilder, DEFAULT_FALSE_POSITIVE_RATE, DEFAULT_GENERATIONS};
pub use self::window::{Clock, Overflow, Window};

/// A cuckoo filter that remembers items for a sliding window: the last `n` inserts, or a
/// duration. Build one with [`ExpiringCuckooFilter::builder`].
///
/// # Guarantees
///
/// With a window `W` split into `G` generations (`L = ceil(W/G)` inserts, or `D/G` of time), also
/// while other threads insert, remove, move fingerprints and advance generations (docs/expiry.md,
/// "The guarantees and why they hold"):
/// - no false negatives inside the window: an item inserted (or inserted again) at position or
///   time `t` is found at every point before `t + W`;
/// - bounded retention: from `t + (G + 1)·L` on (`W·(1 + 1/G)` when `G` divides `W`) it is found
///   only at the false positive rate;
/// - the false positive rate stays at most the rate asked for, at every point of a stream of any
///   length;
/// - a count window never answers `Full`; a time window past its capacity does what its
///   [`Overflow`] says.
///
/// `insert` of an item already live refreshes its age and adds no copy; `insert_unique` says
/// whether it was live (of racing unique inserts of one item in a window, exactly one gets
/// `true`). Lookups take no lock and read two buckets. `len` counts the slots not yet freed:
/// live items, and expired ones neither the sweep nor an insert has cleared yet.
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::{ExpiringCuckooFilter, Window};
///
/// let filter = ExpiringCuckooFilter::builder(Window::Items(1000)).build()?;
/// assert!(filter.insert_unique(&"event-1")?);
/// assert!(!filter.insert_unique(&"event-1")?); // seen in the window
/// for i in 0..2000u32 {
///     filter.insert(&i)?;
/// }
/// assert!(!filter.contains(&"event-1")); // forgotten (but for the false positive rate)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type ExpiringCuckooFilter<S = DefaultHashBuilder> = CuckooFilter<Expiring, S>;

/// The expiring kind (see [`ExpiringCuckooFilter`]).
pub struct Expiring {
    table: Table,
}

/// Why [`advance_to`](ExpiringCuckooFilter::advance_to) could not move the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AdvanceError {
    /// The filter's clock is not [`Clock::Manual`] (or its window is a count of inserts).
    NotManual,
}

impl fmt::Display for AdvanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("advance_to needs a time window with Clock::Manual")
    }
}

impl std::error::Error for AdvanceError {}

/// What an expiring filter is and holds, from [`ExpiringCuckooFilter::stats`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ExpiringStats {
    /// Slots not yet freed, as [`len`](CuckooFilter::len).
    pub len: usize,
    /// The window.
    pub window: Window,
    /// `G`.
    pub generations: u32,
    /// The generation writers store in now.
    pub generation: u64,
    /// A count window's inserts counted, its clock (every `insert` and `insert_unique` call);
    /// 0 for a time window, whose inserts share no counter.
    pub inserts: u64,
    /// The most items one window holds.
    pub capacity: u64,
    /// Buckets of 4 slots.
    pub bucket_count: usize,
    /// Bits of each fingerprint.
    pub fingerprint_bits: u32,
    /// Bits of each age tag.
    pub tag_bits: u32,
    /// Bytes of the table and its locks.
    pub memory_usage: usize,
    /// Table bits per item of a full window: `memory_usage · 8 / capacity`.
    pub bits_per_window_item: f64,
    /// Generations moved on early because an insert found no room.
    pub early_expiries: u64,
}

impl<S> ExpiringCuckooFilter<S> {
    /// The window.
    #[must_use]
    pub fn window(&self) -> Window {
        self.core().table.settings.window
    }

    /// Generations the window is split into.
    #[must_use]
    pub fn generations(&self) -> u32 {
        self.core().table.settings.generations
    }

    /// Moves a manual clock to `t` since the filter's start (never back: an earlier `t` changes
    /// nothing), expiring what its window no longer holds. Its work is a share of the sweep and,
    /// per generation published, what inserts left of the sweep's pass (docs/expiry.md: up to a
    /// whole pass every `15 − G` generations); a jump past a whole window empties the table under
    /// all its locks, as [`clear`](CuckooFilter::clear) does.
    ///
    /// # Errors
    ///
    /// [`AdvanceError::NotManual`] for a count window or the monotonic clock.
    pub fn advance_to(&self, t: Duration) -> Result<(), AdvanceError> {
        let table = &self.core().table;
        if !table.clock.set_now(window::nanos(t)) {
            return Err(AdvanceError::NotManual);
        }
        table.advance(table.clock.clock_generation());
        table.sweep(table.sweep_per_insert);
        Ok(())
    }

    /// What the filter is and holds.
    #[must_use]
    pub fn stats(&self) -> ExpiringStats {
        let table = &self.core().table;
        let memory_usage = self.memory_usage();
        ExpiringStats {
            len: table.stripes.len(),
            window: table.settings.window,
            generations: table.settings.generations,
            generation: table.clock.current(),
            inserts: table.clock.positions(),
            capacity: table.settings.capacity,
            bucket_count: table.settings.bucket_count,
            fingerprint_bits: table.settings.fingerprint_bits,
            tag_bits: window::TAG_BITS,
            memory_usage,
            bits_per_window_item: memory_usage as f64 * 8.0 / table.settings.capacity as f64,
            early_expiries: table.early_expiries.load(Ordering::Relaxed),
        }
    }
}

impl<S: BuildHasher> ExpiringCuckooFilter<S> {
    test_hook! {
        /// The fingerprint and the two buckets `item` maps to, to build collisions on purpose.
        fn debug_candidates<T: Hash + ?Sized>(&self, item: &T) -> crate::DebugCandidates {
            self.core().table.placement.candidates(self.hasher().hash_one(item)).into()
        }
    }
}

impl fmt::Debug for Expiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Expiring");
        self.debug_fields(&mut f);
        f.finish()
    }
}

impl Sealed for Expiring {}

impl Kind for Expiring {
    const NAME: &'static str = "ExpiringCuckooFilter";
    const GROWS: bool = false;

    fn with_capacity<S>(capacity: usize, hasher: S) -> (Self, S) {
        ExpiringCuckooFilter::builder(Window::Items(capacity as u64))
            .hasher(hasher)
            .build()
            .unwrap_or_else(|err| panic!("an ExpiringCuckooFilter for {capacity} items: {err}"))
            .into_parts()
    }

    fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        let stored = self.table.insert(hash)?;
        Ok(!unique || stored == Stored::Inserted)
    }

    fn insert_block(&self, hashes: &[u64]) -> Result<(), usize> {
        for (i, &hash) in hashes.iter().enumerate() {
            self.table.insert(hash).map_err(|_| i)?;
        }
        Ok(())
    }

    fn block_error(&self) -> InsertError {
        match self.table.clock.exhausted() {
            true => InsertError::CountExhausted,
            false => InsertError::Full,
        }
    }

    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        self.table.contains(hash)
    }

    fn contains_hashes(&self, hashes: &[u64], answers: &mut [bool]) {
        self.table.contains_hashes(hashes, answers);
    }

    fn count(&self, hash: u64) -> usize {
        self.table.count(hash)
    }

    fn remove(&self, hash: u64) -> bool {
        self.table.remove(hash)
    }

    fn len(&self) -> usize {
        self.table.stripes.len()
    }

    fn capacity(&self) -> usize {
        usize::try_from(self.table.settings.capacity).unwrap_or(usize::MAX)
    }

    fn memory_usage(&self) -> usize {
        self.table.slots.memory_usage()
            + self.table.stripes.memory_usage()
            + ::core::mem::size_of::<Self>()
    }

    fn bucket_count(&self) -> usize {
        self.table.settings.bucket_count
    }

    fn bucket_size(&self) -> usize {
        slots::BUCKET_SIZE
    }

    fn is_semi_sorted(&self) -> bool {
        false
    }

    fn expected_false_positive_rate(&self) -> f64 {
        let settings = &self.table.settings;
        let live = builder::per_generation(settings.capacity, settings.generations)
            * (u64::from(settings.generations) + 1);
        let load = live as f64 / (settings.bucket_count * slots::BUCKET_SIZE) as f64;
        builder::rate_of(settings.fingerprint_bits, load.min(1.0))
    }

    fn clear(&self) {
        self.table.clear(None);
    }

    fn duplicate(&self) -> Option<Self> {
        self.table.duplicate().map(|table| Self { table })
    }

    fn check_compatible(&self, _other: &Self) -> Result<(), MergeError> {
        Err(MergeError::Unsupported { kind: Self::NAME })
    }

    fn merge_from(&self, _other: &Self, _unique: bool) -> Result<usize, MergeError> {
        Err(MergeError::Unsupported { kind: Self::NAME })
    }

    fn serialized_len(&self) -> u64 {
        self.table.serialized_len()
    }

    fn write_to<S: StableHashBuilder, W: Write>(&self, hasher: &S, writer: W) -> io::Result<()> {
        self.table.write_to(hasher, writer)
    }

    fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Self, S), DecodeError> {
        Table::decode(bytes).map(|(table, hasher)| (Self { table }, hasher))
    }

    fn decode_from<S: StableHashBuilder, R: Read>(reader: R) -> Result<(Self, S), DecodeError> {
        Table::decode_from(reader).map(|(table, hasher)| (Self { table }, hasher))
    }

    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        let settings = &self.table.settings;
        f.field("window", &settings.window)
            .field("generations", &settings.generations)
            .field("generation", &self.table.clock.current())
            .field("capacity", &settings.capacity)
            .field("bucket_count", &settings.bucket_count)
            .field("fingerprint_bits", &settings.fingerprint_bits);
    }
}
