//! Merging: every fingerprint of one table inserted into another of the same geometry.
//!
//! With equal geometries, a fingerprint in the source's bucket `i` belongs to the pair
//! `(i, alt(i, fp))` in the target too, so it goes through the target's ordinary insert, no key
//! or hash needed, with its locks, path search and guarantee that a failed insert changes nothing.

use super::bucket::Fingerprints;
use super::index::{BucketIndex, Candidates, Fingerprint, Place};
use super::path::SearchQueue;
use super::stripe::Guard;
use super::{Insertion, RawFilter};

impl RawFilter {
    /// Whether `other`'s fingerprints mean the same buckets here: the table's shape, field by
    /// field. The first that differs, with this filter's value and `other`'s.
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

    /// Inserts every fingerprint of `source` (of the same geometry) into this filter, bucket by
    /// bucket; with `unique`, only those the pair does not hold yet. `Ok(n)`: `n` went in.
    /// `Err(n)`: one found no room after `n` went in; those stay, the failed one changed nothing,
    /// the rest were not tried. Each source bucket is read validated by its stamp (as
    /// `CuckooFilter::merge` documents); a filter merged into itself reads a snapshot, so it
    /// never meets its own new fingerprints.
    pub(crate) fn merge_from(&self, source: &RawFilter, unique: bool) -> Result<usize, usize> {
        debug_assert!(self.geometry_mismatch(source).is_none());
        if core::ptr::eq(self, source) {
            let words = self.snapshot().words;
            let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).collect();
            let copy = RawFilter::from_le_bytes(&self.geometry, &bytes).ok_or(0usize)?;
            return self.merge_from(&copy, unique);
        }
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

// Whole buckets, for merges and for a growable filter's splits.
impl<P: Place> RawFilter<P> {
    /// The fingerprints of one bucket, read as a state the bucket really had.
    pub(crate) fn bucket_fingerprints(&self, bucket: BucketIndex) -> Fingerprints {
        let look = || self.codec.fingerprints(&self.table.load(bucket));
        self.stripes.read_pair(bucket, bucket, look)
    }

    /// Fills an empty bucket of a table no other thread can see yet with `fps`.
    pub(crate) fn fill_bucket(&mut self, bucket: BucketIndex, fps: &[Fingerprint]) {
        debug_assert_eq!(self.table.load(bucket), [0, 0], "a new bucket is empty");
        self.table.store(bucket, &self.codec.encode(fps));
        self.stripes.add_count(bucket, fps.len() as u64);
    }

    /// Stores `kept` as the bucket's slots, `removed` fingerprints fewer than it held, under its
    /// stripe's lock, so that readers see the bucket change whole.
    pub(crate) fn empty_slots_of(&self, bucket: BucketIndex, kept: &[Fingerprint], removed: usize) {
        let mut guard = self.stripes.lock_one::<true>(bucket);
        self.table.store(bucket, &self.codec.encode(kept));
        guard.add(bucket, -(removed as i32));
    }
}
