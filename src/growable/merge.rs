//! The union of two growable filters of one plan: a fingerprint is known without its key by its
//! core, whole route and bucket, which place it in the same level of the other filter however
//! differently the two have split.

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

    /// The plan's and its first level's fields, as [`MergeError::Geometry`] names them.
    fn plan_fields(&self) -> [(&'static str, u64); 8] {
        let plan = self.levels.plan();
        let chunks = self.levels.level(0).shape();
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

    /// Inserts every fingerprint of `other` into its level here, adding the levels missing first.
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
