//! The union of two growable filters of the same plan and hasher.
//!
//! Two filters built by the same plan shape every level alike: the same chunk bucket count,
//! core bits and route bits. A fingerprint of the source's level `i` is known without its key by
//! its core, its whole route (the chunk id's bits, then the route bits the fingerprint still
//! carries) and its bucket, which place it in the target's level `i`, however differently the
//! two levels have split.

use super::Growable;
use crate::error::MergeError;
use crate::raw::{Insertion, Placed};

impl Growable {
    /// Why `other`'s plan differs from this one's, if it does.
    pub(super) fn plan_mismatch(&self, other: &Self) -> Result<(), MergeError> {
        let (ours, theirs) = (self.levels.plan(), other.levels.plan());
        let (our_chunks, their_chunks) =
            (self.levels.first().shape(), other.levels.first().shape());
        let (our_shape, our_routes) = (our_chunks.template, our_chunks.route_bits);
        let (their_shape, their_routes) = (their_chunks.template, their_chunks.route_bits);
        let fields = [
            (
                "initial_capacity",
                ours.initial_capacity as u64,
                theirs.initial_capacity as u64,
            ),
            (
                "false_positive_rate",
                ours.false_positive_rate.to_bits(),
                theirs.false_positive_rate.to_bits(),
            ),
            (
                "split_depth",
                ours.split_depth.into(),
                theirs.split_depth.into(),
            ),
            (
                "buckets",
                our_shape.shape.bucket_count as u64,
                their_shape.shape.bucket_count as u64,
            ),
            (
                "bucket_size",
                our_shape.shape.bucket_size as u64,
                their_shape.shape.bucket_size as u64,
            ),
            (
                "fingerprint_bits",
                our_shape.shape.fingerprint_bits.into(),
                their_shape.shape.fingerprint_bits.into(),
            ),
            (
                "semi_sorted",
                our_shape.shape.semi_sorted.into(),
                their_shape.shape.semi_sorted.into(),
            ),
            ("route_bits", our_routes.into(), their_routes.into()),
        ];
        if let Some((field, target, source)) = fields.into_iter().find(|(_, a, b)| a != b) {
            return Err(MergeError::Geometry {
                field,
                target,
                source,
            });
        }
        Ok(())
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
        let mut put = |level: usize, placed: Placed| {
            let inserted = self.levels.level(level).insert_placed(placed, unique);
            match inserted.unwrap_or(Insertion::Full) {
                Insertion::Inserted => merged += 1,
                Insertion::Present => {}
                Insertion::Full => return Err(MergeError::Full { merged }),
            }
            Ok(())
        };
        let levels = 0..other.levels.count();
        if core::ptr::eq(self, other) {
            // Its own new fingerprints must not be met again: a copy of them first.
            let copy: Vec<(usize, Placed)> = levels
                .flat_map(|level| {
                    let chunks = other.levels.level(level).placed_fingerprints();
                    chunks.map(move |placed| (level, placed))
                })
                .collect();
            for (level, placed) in copy {
                put(level, placed)?;
            }
        } else {
            for level in levels {
                for placed in other.levels.level(level).placed_fingerprints() {
                    put(level, placed)?;
                }
            }
        }
        Ok(merged)
    }
}
