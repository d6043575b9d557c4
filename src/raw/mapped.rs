//! A raw filter whose table, stamps and lock records are words of a file mapping that other
//! processes share (docs/shared.md).

use super::owners::{Registry, SharedLocks};
use super::stripe::Stripes;
use super::table::Table;
use super::{Geometry, RawFilter};
use crate::sync::TableWords;

/// The mapped words a shared raw filter is made of, and its registration.
#[derive(Debug)]
pub(crate) struct MappedParts {
    pub(crate) table: TableWords,
    pub(crate) stamps: TableWords,
    /// [`super::owners::STRIDE`] words per stripe.
    pub(crate) records: TableWords,
    pub(crate) registry: Registry,
}

/// What [`RawFilter::check_whole`] found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Damage {
    /// A bucket not in the form the encoder writes.
    Bucket(usize),
    /// The stripes' counts sum to `counted`, the buckets hold `held` fingerprints.
    Count { counted: u64, held: u64 },
}

impl RawFilter {
    /// A filter over mapped words as they are; `None` unless each part is the length it needs.
    pub(crate) fn in_mapping(geometry: &Geometry, parts: MappedParts) -> Option<Self> {
        let codec = geometry.shape.codec();
        let stripe_count = geometry.stripe_count();
        if parts.stamps.len() != stripe_count
            || parts.records.len() != stripe_count * super::owners::STRIDE
        {
            return None;
        }
        let table = Table::mapped(geometry.shape.bucket_count, &codec, parts.table)?;
        let locks = SharedLocks {
            records: parts.records,
            registry: parts.registry,
            table: table.share(&codec)?,
            codec: codec.clone(),
        };
        let mut stripes = Stripes::with_stamps(
            parts.stamps,
            Table::lock_group_shift(&codec),
            geometry.shape.bucket_count,
            geometry.shape.bucket_size,
        )?;
        stripes.shared = Some(Box::new(locks));
        Some(Self {
            geometry: *geometry,
            placement: Self::placement_for(geometry),
            codec,
            table,
            stripes,
            gate: (),
        })
    }

    /// Checks every bucket and the stripes' counts under every stripe lock.
    pub(crate) fn check_whole(&self) -> Result<(), Damage> {
        let locked = self.lock_table();
        // Only a live bucket word's fingerprints: its version bits are its own.
        let bad = (0..self.bucket_count())
            .find(|&bucket| !self.codec.is_canonical(&self.table.load(bucket)));
        if let Some(bucket) = bad {
            return Err(Damage::Bucket(bucket));
        }
        let size = self.bucket_size();
        let held: u64 = (0..self.bucket_count())
            .map(|bucket| (size - self.codec.count(&self.table.load(bucket), 0)) as u64)
            .sum();
        let counted = locked.items() as u64;
        if held != counted {
            return Err(Damage::Count { counted, held });
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "../../tests/unit/raw/mapped.rs"]
mod tests;
