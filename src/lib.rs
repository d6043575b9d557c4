//! A concurrent cuckoo filter: an approximate set that many threads share through an `Arc`.
//!
//! [`ConcurrentCuckooFilter`] is the cuckoo filter of Fan, Andersen, Kaminsky and Mitzenmacher
//! ("Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014), made concurrent the way
//! libcuckoo and MemC3 made cuckoo hash tables concurrent: lookups are optimistic, reading two
//! buckets between two reads of their striped seqlocks' versions; writers lock only the stripes
//! of an item's buckets; and room is made by finding, without locks, a short path of
//! fingerprints and moving them one at a time, each under its two buckets' locks, so an item is
//! never missing from both (see [Consistency](ConcurrentCuckooFilter#consistency)).
//!
//! ```
//! use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
//!
//! let filter = ConcurrentCuckooFilter::with_capacity(1_000_000);
//! for key in 0..1_000_000u64 {
//!     filter.insert(&key).unwrap();
//! }
//! assert!((0..1_000_000u64).all(|key| filter.contains(&key)));
//!
//! // Four 12-bit fingerprints per 64-bit bucket word at 95% load: 16/0.95 = 16.8 bits per item
//! // plus the stripes' share, and a false positive rate just under 2·4/2^12 ≈ 0.2%.
//! let bits_per_item = filter.memory_usage() as f64 * 8.0 / filter.len() as f64;
//! let false_positives = (1_000_000..2_000_000u64).filter(|key| filter.contains(key)).count();
//! let rate = false_positives as f64 / 1_000_000.0;
//! assert!(bits_per_item < 17.3, "{bits_per_item}");
//! assert!(rate < 0.002, "{rate}");
//!
//! // The packed layout holds the same fingerprints end to end: 12.8 bits per item.
//! let packed = ConcurrentCuckooFilter::builder()
//!     .capacity(1_000_000)
//!     .layout(TableLayout::Packed)
//!     .build()?;
//! packed.try_extend(0..1_000_000u64)?;
//! assert!(packed.memory_usage() as f64 * 8.0 / (packed.len() as f64) < 12.9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Guarantees
//!
//! - No false negatives: an item whose insert returned `Ok` and that was not removed is found (by
//!   an expiring filter, for its window after its last insert), also while other threads insert,
//!   remove and move fingerprints.
//! - A failed insert changes nothing, and nothing is evicted to make room but an expiring
//!   filter's oldest generation. `Err(Full)` only when the item had no room, also while other
//!   threads write.
//! - An impossible configuration is a [`BuildError`] naming the parameter, not a panic.
//! - No user code (a `Hash` impl, the writer given to `write_to`) runs while one of the
//!   filter's locks is held.
//! - Every shared access is atomic. `unsafe` code is confined to a few sites (allocation and
//!   file mappings, prefetch hints, unchecked reads of indices proven in bounds), each with its
//!   safety proof and a test, listed in the repository's `docs/architecture.md`.
//!
//! # Names
//!
//! Every filter is one type, [`CuckooFilter`], over a kind ([`Fixed`], [`Growable`],
//! [`Expiring`]), so they have the same operations under the same names; each kind adds a few of
//! its own. A `_hash` suffix takes a key's 64-bit hash, computed with [`CuckooFilter::hasher`],
//! instead of the key (`contains_hash`, `insert_hash`); `_batch` takes a slice of keys and answers
//! each (`contains_batch`, or `contains_hash_batch_into` for hashes); `_into` writes the answers
//! into the caller's slice; `extend` calls take any number of keys, and their `try_` form says how
//! many went in before the filter filled (`try_extend`, `try_extend_hashes`, `try_par_extend`).
//! Each type is built by its own builder: [`ConcurrentCuckooFilterBuilder`],
//! [`GrowableCuckooFilterBuilder`], [`ExpiringBuilder`].
//!
//! # Keys from untrusted clients
//!
//! The default hasher's seed is fixed, and public: a client who chooses the keys can pick ones
//! whose hashes share a bucket and fill a filter long before its capacity. Where keys come from
//! outside, build the filter with [`DefaultHashBuilder::random`].

#![deny(unsafe_code, unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]

#[macro_use]
mod hooks;

mod error;
mod expiring;
mod external_trait_impls;
mod filter;
mod growable;
mod hash;
mod layout;
mod persist;
mod raw;
mod settings;
#[cfg(all(target_os = "linux", not(loom)))]
mod shared;
mod sizing;
mod sync;

pub use crate::error::{BuildError, ExtendError, InsertError, MergeError};
pub use crate::expiring::{
    AdvanceError, Clock, Expiring, ExpiringBuilder, ExpiringCuckooFilter, ExpiringStats, Overflow,
    Window, DEFAULT_FALSE_POSITIVE_RATE, DEFAULT_GENERATIONS,
};
pub use crate::filter::builder::ConcurrentCuckooFilterBuilder;
pub use crate::filter::fixed::{ConcurrentCuckooFilter, Fixed};
pub use crate::filter::kind::Kind;
pub use crate::filter::CuckooFilter;
pub use crate::growable::{Growable, GrowableCuckooFilter, GrowableCuckooFilterBuilder};
pub use crate::hash::{DefaultHashBuilder, FilterHasher};
#[doc(hidden)]
pub use crate::hooks::DebugCandidates;
pub use crate::layout::TableLayout;
pub use crate::persist::{DecodeError, FilterStats, StableHashBuilder};
#[cfg(all(target_os = "linux", not(loom)))]
pub use crate::shared::{Access, LiveFileInfo, SharedError};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
