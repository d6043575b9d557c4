//! Merging: every fingerprint of one table inserted into another of the same geometry, where
//! it belongs to the same pair `(i, alt(i, fp))`, by the target's ordinary insert (no hash needed).

use super::bucket::Fingerprints;
use super::index::{BucketIndex, Candidates, Fingerprint, Place};
use super::path::SearchQueue;
use super::stripe::Guard;
use super::{Insertion, RawFilter};

impl RawFilter {
    /// The first field of the shape that differs from `other`'s, with both values.
    pub(crate) fn geometry_mismatch(&self, other: &RawFilter) -> Option<(&'static str, u64, u64)> {
        let shape = |f: &RawFilter| {
            let (buckets, size) = (f.bucket_count() as u64, f.bucket_size() as u64);
            let (bits, semi) = (f.fingerprint_bits().into(), f.is_semi_sorted().into());
            [buckets, size, bits, semi]
        };
        let names = ["buckets", "bucket_size", "fingerprint_bits", "semi_sorted"];
        let fields = names.into_iter().zip(shape(self)).zip(shape(other));
        fields
            .map(|((name, ours), theirs)| (name, ours, theirs))
            .find(|&(_, ours, theirs)| ours != theirs)
    }

    /// Inserts every fingerprint of `source` (with `unique`, those the pair lacks): `Ok(n)` if
    /// all `n` went in, `Err(n)` if one found no room after `n`. The caller reads a source
    /// that may be this table (itself, or a live file it may map too) as a copy.
    pub(crate) fn merge_from(&self, source: &RawFilter, unique: bool) -> Result<usize, usize> {
        debug_assert!(self.geometry_mismatch(source).is_none());
        let mut queue = SearchQueue::default();
        let mut merged = 0;
        for bucket in 0..source.bucket_count() {
            for &fp in source.bucket_fingerprints(bucket).as_slice() {
                if fp == 0 {
                    continue;
                }
                let c = Candidates {
                    fp,
                    first: bucket,
                    second: self.placement.alternate(bucket, fp),
                };
                match self.insert_candidates::<true>(c, unique, &mut queue) {
                    Insertion::Inserted => merged += 1,
                    Insertion::Present => {}
                    Insertion::Full => return Err(merged),
                }
            }
        }
        Ok(merged)
    }
}

// Whole buckets, for merges and splits.
impl<P: Place> RawFilter<P> {
    /// The fingerprints of one bucket, in a state it really had.
    pub(crate) fn bucket_fingerprints(&self, bucket: BucketIndex) -> Fingerprints {
        self.read_buckets(bucket, bucket, |raw, _| self.codec.fingerprints(raw))
    }

    /// Fills an empty bucket of a table no other thread sees.
    pub(crate) fn fill_bucket(&mut self, bucket: BucketIndex, fps: &[Fingerprint]) {
        debug_assert_eq!(self.table.load(bucket), [0, 0], "a new bucket is empty");
        self.table.store(bucket, &self.codec.encode(fps));
        self.stripes.add_count(bucket, fps.len() as u64);
    }

    /// Stores `kept` as the bucket's slots, `removed` fewer than it held, under its stripe's lock.
    pub(crate) fn empty_slots_of(&self, bucket: BucketIndex, kept: &[Fingerprint], removed: usize) {
        let mut guard = self.stripes.lock_one::<true>(bucket);
        self.table.store(bucket, &self.codec.encode(kept));
        guard.add(bucket, -(removed as i32));
    }
}
