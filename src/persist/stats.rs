//! A filter's vital statistics in one value.

use core::fmt;

/// What [`stats`](crate::ConcurrentCuckooFilter::stats) reports: a filter's shape, fill and accuracy,
/// and how it would be written. `Display` prints one `name: value` line per field.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FilterStats {
    /// Buckets in the table.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Bits per fingerprint.
    pub fingerprint_bits: u32,
    /// Whether buckets are semi-sorted.
    pub semi_sorted: bool,
    /// Stripe locks.
    pub stripes: usize,
    /// Items stored, as [`len`](crate::ConcurrentCuckooFilter::len).
    pub len: usize,
    /// Items the filter was sized for.
    pub capacity: usize,
    /// The share of slots in use, from 0 to 1.
    pub load_factor: f64,
    /// Bytes in memory, as [`memory_usage`](crate::ConcurrentCuckooFilter::memory_usage).
    pub memory_bytes: usize,
    /// Bits of memory per stored item; `None` for an empty filter.
    pub bits_per_item: Option<f64>,
    /// The false positive rate at the load the filter was sized for, as
    /// [`expected_false_positive_rate`](crate::ConcurrentCuckooFilter::expected_false_positive_rate).
    pub expected_false_positive_rate: f64,
    /// The false positive rate at the current load: `1 − (1 − 1/(2^f − 1))^(2·b·load)`.
    pub false_positive_rate_at_load: f64,
    /// The id of the hasher's function ([`HASHER_ID`](crate::StableHashBuilder::HASHER_ID)).
    pub hasher_id: u64,
    /// The hasher's [seed](crate::StableHashBuilder::seed).
    pub hasher_seed: u64,
    /// The format version [`to_bytes`](crate::ConcurrentCuckooFilter::to_bytes) writes.
    pub format_version: u16,
    /// Bytes `to_bytes` writes, as [`serialized_len`](crate::ConcurrentCuckooFilter::serialized_len).
    pub serialized_len: u64,
}

impl fmt::Display for FilterStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        writeln!(f, "buckets: {}", self.buckets)?;
        writeln!(f, "bucket size: {}", self.bucket_size)?;
        writeln!(f, "fingerprint bits: {}", self.fingerprint_bits)?;
        writeln!(f, "semi-sorted: {}", yes_no(self.semi_sorted))?;
        writeln!(f, "stripes: {}", self.stripes)?;
        writeln!(f, "items: {}", self.len)?;
        writeln!(f, "capacity: {}", self.capacity)?;
        writeln!(f, "load: {:.2}%", self.load_factor * 100.0)?;
        writeln!(f, "memory: {} bytes", self.memory_bytes)?;
        match self.bits_per_item {
            Some(bits) => writeln!(f, "bits per item: {bits:.2}")?,
            None => writeln!(f, "bits per item: -")?,
        }
        writeln!(
            f,
            "expected false positive rate: {:.4}% at capacity, {:.4}% at this load",
            self.expected_false_positive_rate * 100.0,
            self.false_positive_rate_at_load * 100.0
        )?;
        let id = self.hasher_id.to_le_bytes();
        if id.iter().all(|b| b.is_ascii_graphic()) {
            let name: String = id.iter().map(|&b| char::from(b)).collect();
            write!(f, "hasher: {name}")?;
        } else {
            write!(f, "hasher: {:#018x}", self.hasher_id)?;
        }
        writeln!(f, " (seed {:#018x})", self.hasher_seed)?;
        writeln!(f, "format version: {}", self.format_version)?;
        writeln!(f, "serialized bytes: {}", self.serialized_len)
    }
}
