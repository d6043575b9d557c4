//! The union of two growable filters of the same plan and hasher.
//!
//! Two filters built by the same plan shape every level alike: the same chunk bucket count,
//! core bits and route bits. A fingerprint of the source's level `i` is known without its key by
//! its core, its whole route (the chunk id's bits, then the route bits the fingerprint still
//! carries) and its bucket, which place it in the target's level `i`, however differently the
//! two levels have split.

use super::split::Placed;
use super::Growable;
use crate::error::MergeError;
use crate::raw::Insertion;

impl Growable {
    /// Why `other`'s plan differs from this one's, if it does.
    pub(super) fn plan_mismatch(&self, other: &Self) -> Result<(), MergeError> {
        let mut pairs = self.plan_fields().into_iter().zip(other.plan_fields());
        match pairs.find(|((_, ours), (_, theirs))| ours != theirs) {
            Some(((field, target), (_, source))) => Err(MergeError::Geometry {
                field,
                target,
                source,
            }),
            None => Ok(()),
        }
    }

    /// The plan's fields, and its first-level chunk's, as [`MergeError::Geometry`] names them.
    fn plan_fields(&self) -> [(&'static str, u64); 8] {
        let plan = self.levels.plan();
        let chunks = self.levels.first().shape();
        let shape = chunks.template.shape;
        [
            ("initial_capacity", plan.initial_capacity as u64),
            ("false_positive_rate", plan.false_positive_rate.to_bits()),
            ("split_depth", plan.split_depth.into()),
            ("buckets", shape.bucket_count as u64),
            ("bucket_size", shape.bucket_size as u64),
            ("fingerprint_bits", shape.fingerprint_bits.into()),
            ("semi_sorted", shape.semi_sorted.into()),
            ("route_bits", chunks.route_bits.into()),
        ]
    }

    /// Inserts every fingerprint of `other` into the level it has there, adding levels `other`
    /// has first; with `unique`, only where its level does not show it yet. A filter merged
    /// into itself merges a copy of what it held when the merge started.
    pub(super) fn merge_levels(&self, other: &Self, unique: bool) -> Result<usize, MergeError> {
        while self.levels.count() < other.levels.count() {
            if !self.levels.grow(self.levels.count() - 1) {
                return Err(MergeError::Full { merged: 0 });
            }
        }
        let mut merged = 0;
        let mut put = |(level, placed): (usize, Placed)| {
            match self.levels.level(level).insert_placed(placed, unique) {
                Insertion::Inserted => merged += 1,
                Insertion::Present => {}
                Insertion::Full => return Err(MergeError::Full { merged }),
            }
            Ok(())
        };
        let placed = |level| {
            let chunks = other.levels.level(level).placed_fingerprints();
            chunks.map(move |placed| (level, placed))
        };
        let levels = 0..other.levels.count();
        if core::ptr::eq(self, other) {
            // Its own new fingerprints must not be met again: a copy of them first.
            let copy: Vec<(usize, Placed)> = levels.flat_map(placed).collect();
            copy.into_iter().try_for_each(&mut put)?;
        } else {
            levels.flat_map(placed).try_for_each(&mut put)?;
        }
        Ok(merged)
    }
}
