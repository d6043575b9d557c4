//! Sliding-window filters, the peers' and this crate's, behind one interface, and what measures
//! them the same way: [`checker`] (which keys of which ages each still finds) and [`speed`]
//! (operations per second with the window held full).
//!
//! A window is a count of inserts, `W`: a key is *inside* the window while fewer than `W` keys
//! were inserted after it. Every filter is configured for the same [`WindowSpec`]: the window,
//! the generations it is split into where its design has any, and the false positive rate that a
//! lookup of a never-inserted key may have at any point of the stream.
//!
//! - [`peers`]: the crates.io peers (`expiring-atomic-filter`, `cuckoo-clock`,
//!   `rotating-bloom-filter`, `probabilistic-rs`), each with its documented settings for the spec.
//! - `ours`: this crate's `ExpiringCuckooFilter`.

pub mod checker;
pub mod ours;
pub mod peers;
pub mod speed;

use std::time::Duration;

/// The window every filter of a run is configured for.
#[derive(Clone, Copy, Debug)]
pub struct WindowSpec {
    /// `W`: inserts a key stays inside the window for.
    pub items: u64,
    /// `G`: generations the window is split into, by the designs that rotate or age in steps.
    pub generations: u32,
    /// The false positive rate each filter is sized for, for the whole filter (all of its
    /// generations probed together).
    pub false_positive_rate: f64,
}

impl WindowSpec {
    /// Inserts per generation, `⌈W/G⌉`: a filter that keeps a key for `G` whole generations after
    /// the one it went in keeps it for at least `W` inserts.
    pub fn generation_len(&self) -> u64 {
        self.items
            .div_ceil(u64::from(self.generations.max(1)))
            .max(1)
    }
}

/// A sliding-window filter as the harness drives it: `u64` keys, `&self` operations that
/// threads share, and for the designs that need a caller to age them, [`Self::tick`] after
/// every [`WindowSpec::generation_len`] inserts (never while another thread inserts).
pub trait WindowFilter: Sync + Sized {
    /// Name in the table, the CSV and the plot legend.
    const NAME: &'static str;
    /// Whether the harness calls [`Self::tick`] once per generation of inserts.
    const TICKS: bool;

    /// The filter configured for `spec` as its crate's documentation says to; an error names
    /// what the crate refused.
    fn build(spec: &WindowSpec) -> Result<Self, String>;
    /// `false` when the filter reports that the insert failed or pushed another key out.
    fn insert(&self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    /// Ends a generation of inserts and starts the next (rotates, expires, ages). Returns the
    /// time it spent waiting for a clock rather than working, which the speed figures leave out.
    fn tick(&mut self) -> Duration {
        Duration::ZERO
    }
    /// The harness stops inserting for a while (it probes or times lookups).
    fn pause(&mut self) {}
    /// The harness inserts again after a [`Self::pause`]. Returns the time it waited, as
    /// [`Self::tick`] does.
    fn resume(&mut self) -> Duration {
        Duration::ZERO
    }
    /// Bytes of the filter's tables (and per-bucket locks, where it has them).
    fn bytes(&self) -> usize;
    /// How the run went for the filter beyond the checker's counts (empty when nothing to say).
    fn remarks(&self) -> String {
        String::new()
    }
}
