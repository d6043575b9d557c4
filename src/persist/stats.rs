//! A filter's vital statistics in one value, and the length of its encoding.

use core::fmt;

use super::encoding::{encoded_len, VERSION};
use super::{RecordedHasher, StableHashBuilder};
use crate::filter::ConcurrentCuckooFilter;

/// What [`stats`](ConcurrentCuckooFilter::stats) reports: a filter's shape, fill and accuracy,
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
    /// Items stored, as [`len`](ConcurrentCuckooFilter::len).
    pub len: usize,
    /// Items the filter was sized for.
    pub capacity: usize,
    /// The share of slots in use, from 0 to 1.
    pub load_factor: f64,
    /// Bytes in memory, as [`memory_usage`](ConcurrentCuckooFilter::memory_usage).
    pub memory_bytes: usize,
    /// Bits of memory per stored item; `None` for an empty filter.
    pub bits_per_item: Option<f64>,
    /// The false positive rate at the load the filter was sized for, as
    /// [`expected_false_positive_rate`](ConcurrentCuckooFilter::expected_false_positive_rate).
    pub expected_false_positive_rate: f64,
    /// The false positive rate at the current load: `1 − (1 − 1/(2^f − 1))^(2·b·load)`.
    pub false_positive_rate_at_load: f64,
    /// The id of the hasher's function ([`hasher_id`](StableHashBuilder::hasher_id)).
    pub hasher_id: u64,
    /// The hasher's [seed](StableHashBuilder::seed).
    pub hasher_seed: u64,
    /// The format version [`to_bytes`](ConcurrentCuckooFilter::to_bytes) writes.
    pub format_version: u16,
    /// Bytes `to_bytes` writes, as [`serialized_len`](ConcurrentCuckooFilter::serialized_len).
    pub serialized_len: u64,
}

impl<S: StableHashBuilder> ConcurrentCuckooFilter<S> {
    /// Bytes [`to_bytes`](Self::to_bytes) and [`write_to`](Self::write_to) produce, computed
    /// from the shape alone: nothing is written or locked. It does not change as items come and
    /// go, so a buffer of this length takes the bytes at any later moment.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(10_000);
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len() as u64);
    /// ```
    #[must_use]
    pub fn serialized_len(&self) -> u64 {
        encoded_len(self.raw().geometry())
    }

    /// The filter's shape, fill, accuracy and encoding in one value, as RedisBloom's `CF.INFO`
    /// gives them. The counts are read without locks: exact when no write is in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
    ///
    /// let filter = ConcurrentCuckooFilter::with_capacity(1000);
    /// for key in 0..500u32 {
    ///     filter.insert(&key)?;
    /// }
    /// let stats = filter.stats();
    /// assert_eq!((stats.len, stats.bucket_size, stats.fingerprint_bits), (500, 4, 12));
    /// assert!(stats.false_positive_rate_at_load < stats.expected_false_positive_rate);
    /// assert!(stats.to_string().contains("items: 500\n"));
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        self.stats_hashed_by(RecordedHasher::of(self.hasher()))
    }
}

impl<S> ConcurrentCuckooFilter<S> {
    /// [`Self::stats`] with the hasher named by the caller: a growable filter's level hashes
    /// nothing itself, its items come hashed by the growable filter.
    pub(crate) fn stats_hashed_by(&self, hasher: RecordedHasher) -> FilterStats {
        let len = self.len();
        let slots = self.bucket_count() * self.bucket_size();
        let load_factor = len as f64 / slots as f64;
        let memory_bytes = self.memory_usage();
        let serialized_len = encoded_len(self.raw().geometry());
        let fingerprints = ((1u64 << self.fingerprint_bits()) - 1) as f64;
        let compared = 2.0 * self.bucket_size() as f64 * load_factor;
        FilterStats {
            buckets: self.bucket_count(),
            bucket_size: self.bucket_size(),
            fingerprint_bits: self.fingerprint_bits(),
            semi_sorted: self.is_semi_sorted(),
            stripes: self.raw().stripe_count(),
            len,
            capacity: self.capacity(),
            load_factor,
            memory_bytes,
            bits_per_item: (len > 0).then(|| memory_bytes as f64 * 8.0 / len as f64),
            expected_false_positive_rate: self.expected_false_positive_rate(),
            false_positive_rate_at_load: 1.0 - (1.0 - 1.0 / fingerprints).powf(compared),
            hasher_id: hasher.id,
            hasher_seed: hasher.seed,
            format_version: VERSION,
            serialized_len,
        }
    }
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
