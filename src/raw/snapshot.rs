//! Snapshots of several tables at once: a filter of many levels holds every level's stripes
//! together, so that its copy is one state all levels were in at the same moment.

use super::index::{Place, Placement};
use super::stripe::AllStripesGuard;
use super::RawFilter;

/// A table with every stripe locked: no writer is anywhere in it until this drops.
#[derive(Debug)]
pub(crate) struct LockedTable<'a, P: Place = Placement> {
    filter: &'a RawFilter<P>,
    _all: AllStripesGuard<'a>,
}

impl<P: Place> RawFilter<P> {
    /// Locks every stripe, in index order (the order writers take them in).
    pub(crate) fn lock_table(&self) -> LockedTable<'_, P> {
        LockedTable {
            filter: self,
            _all: self.stripes.lock_all(),
        }
    }
}

impl<P: Place> LockedTable<'_, P> {
    /// The table's words and its fingerprint count, which no writer can change meanwhile.
    pub(crate) fn copy(&self) -> (Vec<u64>, usize) {
        (self.filter.table.copy_words(), self.filter.stripes.len())
    }
}
