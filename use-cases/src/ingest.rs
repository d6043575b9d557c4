//! Exactly-once ingestion: a stream of records with duplicates, deduplicated on all cores with
//! [`ConcurrentCuckooFilter::insert_unique`] as the gate, and counted against an exact `HashSet`.
//!
//! `insert_unique` has no false negatives and lets exactly one of several racing threads insert a
//! record, so every repeat of a record that was let through is dropped and nothing passes twice.
//! What it gets wrong is the other way: a first occurrence whose fingerprint and bucket match a
//! record already let through is dropped as a duplicate. That is counted exactly as the distinct
//! records (a `HashSet`'s count) minus the records let through.

use std::collections::HashSet;

use concurrent_cuckoo_filter::{BuildError, ConcurrentCuckooFilter};
use rayon::prelude::*;

use crate::measure::mix;

/// A generated stream: record `i` is drawn at random from `distinct_ids` ids, so ids repeat.
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    /// Records in the stream.
    pub records: u64,
    /// Ids records are drawn from; the stream holds somewhat fewer distinct ones.
    pub ids: u64,
    /// Seeds the draw.
    pub seed: u64,
}

impl Stream {
    /// Record `i`: a 64-bit key for one of the ids.
    #[inline]
    pub fn record(&self, i: u64) -> u64 {
        let id = mix(i ^ self.seed) % self.ids;
        mix(id.wrapping_add(self.seed.rotate_left(32)))
    }
}

/// What a deduplicating pass let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passed {
    /// Records let through (first occurrences, less the wrongly dropped).
    pub unique: u64,
    /// Records the filter had no room for; a correctly sized gate has none.
    pub full: u64,
}

/// Deduplicates `stream` on all of rayon's threads through a filter sized for `capacity`.
///
/// # Errors
///
/// If no filter can be built for `capacity`.
pub fn dedup_with_filter(
    stream: Stream,
    capacity: usize,
) -> Result<(Passed, ConcurrentCuckooFilter), BuildError> {
    let gate = ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .build()?;
    let (unique, full) = (0..stream.records)
        .into_par_iter()
        .fold(
            || (0u64, 0u64),
            |(unique, full), i| match gate.insert_unique(&stream.record(i)) {
                Ok(true) => (unique + 1, full),
                Ok(false) => (unique, full),
                Err(_) => (unique, full + 1),
            },
        )
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    Ok((Passed { unique, full }, gate))
}

/// The exact count of distinct records, on one thread with a `HashSet`.
pub fn dedup_exact(stream: Stream) -> u64 {
    let mut seen = HashSet::with_capacity(stream.ids.min(stream.records) as usize);
    (0..stream.records)
        .filter(|&i| seen.insert(stream.record(i)))
        .count() as u64
}
