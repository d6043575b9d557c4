//! Configuring a growable filter.

use super::chunks::Chunks;
use super::levels::{Levels, Plan};
use super::{item_locks, Growable, GrowableCuckooFilter};
use crate::error::BuildError;
use crate::hash::DefaultHashBuilder;
use crate::layout::TableLayout;
use crate::raw::{accepted_item_locks, DEFAULT_ITEM_LOCKS};
use crate::settings::{check_stripes, TableSettings};
use crate::sizing::target_load_permille;

const DEFAULT_FALSE_POSITIVE_RATE: f64 = 0.001;
const DEFAULT_SPLIT_DEPTH: u32 = 6;
/// A level's directory is allocated whole, 24 bytes per route: at depth 10, 24 KB per chunk.
pub(crate) const MAX_SPLIT_DEPTH: u32 = 10;

/// Builds a [`GrowableCuckooFilter`].
///
/// # Examples
///
/// ```
/// use concurrent_cuckoo_filter::{BuildError, GrowableCuckooFilter};
///
/// let filter = GrowableCuckooFilter::builder()
///     .capacity(1000)
///     .false_positive_rate(0.01)
///     .split_depth(4)
///     .max_capacity(1_000_000)
///     .build()?;
/// assert_eq!(filter.level_count(), 1);
///
/// let err = GrowableCuckooFilter::builder().split_depth(11).build().unwrap_err();
/// assert_eq!(err, BuildError::SplitDepth { depth: 11 });
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GrowableCuckooFilterBuilder<S = DefaultHashBuilder> {
    plan: Plan,
    hasher: S,
    item_locks: usize,
}

impl Default for GrowableCuckooFilterBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GrowableCuckooFilterBuilder {
    /// A builder with the defaults: a 0.1% target rate, split depth 6, no limit,
    /// [`DefaultHashBuilder`], and the smallest first level.
    pub fn new() -> Self {
        Self {
            plan: Plan {
                table: TableSettings {
                    layout: Some(TableLayout::Packed),
                    ..TableSettings::default()
                },
                initial_capacity: 0,
                initial_buckets: 0,
                false_positive_rate: DEFAULT_FALSE_POSITIVE_RATE,
                max_capacity: usize::MAX,
                split_depth: DEFAULT_SPLIT_DEPTH,
            },
            hasher: DefaultHashBuilder::new(),
            item_locks: DEFAULT_ITEM_LOCKS,
        }
    }
}

impl<S> GrowableCuckooFilterBuilder<S> {
    /// Items the first level holds. It grows `2^split_depth` times, then the next level starts
    /// that large.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.plan.initial_capacity = capacity;
        self
    }

    /// The false positive rate ε the filter stays under however far it grows (default 0.1%).
    /// Level `i` gets the rate `ε/2^(i+1)`: one fingerprint bit more than a fixed filter's at ε
    /// for the first level, one more for each level after, and one fewer for a level whose rate
    /// picks 2-slot buckets (the first level's from ε = 6.25%).
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.plan.false_positive_rate = rate;
        self
    }

    /// How many times each level's chunks may split (1 to 10, default 6): a level grows
    /// `2^depth` times, one probe per lookup, before the next level is added.
    pub fn split_depth(mut self, depth: u32) -> Self {
        self.plan.split_depth = depth;
        self
    }

    /// The most items all levels together may be sized for (default: no limit). An insert that
    /// would need a level past it returns [`InsertError::Full`](crate::InsertError::Full), and
    /// so may one whose chunk can split no more while others have room: a chunk split fewer
    /// times takes twice its share of keys, so the first refusal may come near half the limit.
    pub fn max_capacity(mut self, items: usize) -> Self {
        self.plan.max_capacity = items;
        self
    }

    /// The hasher to hash items with.
    pub fn hasher<T>(self, hasher: T) -> GrowableCuckooFilterBuilder<T> {
        GrowableCuckooFilterBuilder {
            plan: self.plan,
            hasher,
            item_locks: self.item_locks,
        }
    }

    test_hook! {
        /// Every level's shape fixed, and the first level's bucket count (later levels grow it).
        fn level_shape(
            mut self,
            buckets: usize,
            bucket_size: usize,
            fingerprint_bits: u32,
            stripes: usize,
        ) -> Self {
            self.plan.initial_buckets = buckets;
            let table = &mut self.plan.table;
            table.request.bucket_size = Some(bucket_size);
            table.request.fingerprint_bits = Some(fingerprint_bits);
            table.stripes = stripes;
            self
        }
    }

    test_hook! {
        /// Bounds of each level's cuckoo path search.
        fn search_limits(mut self, max_hops: usize, max_buckets: usize) -> Self {
            self.plan.table.max_hops = max_hops;
            self.plan.table.max_search_buckets = max_buckets;
            self
        }
    }

    test_hook! {
        /// Locks that serialize unique inserts of one item (a power of two).
        fn item_locks(mut self, count: usize) -> Self {
            self.item_locks = count;
            self
        }
    }

    /// The settings checked, the first level raised to a chunk.
    fn checked_plan(&self) -> Result<Plan, BuildError> {
        if !(1..=MAX_SPLIT_DEPTH).contains(&self.plan.split_depth) {
            return Err(BuildError::SplitDepth {
                depth: self.plan.split_depth,
            });
        }
        // Only the test hook `item_locks` changes the count.
        check_stripes(self.item_locks, &accepted_item_locks())?;
        let rate = self.plan.false_positive_rate;
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::FalsePositiveRate { rate });
        }
        let mut plan = self.plan.clone();
        // A capacity of 0 gets the smallest first level, as `with_capacity(0)` does.
        plan.initial_capacity = plan.initial_capacity.max(1);
        if plan.max_capacity < plan.initial_capacity {
            return Err(BuildError::MaxCapacity {
                capacity: plan.initial_capacity,
                max_capacity: plan.max_capacity,
            });
        }
        // Plain fingerprints: compared in place, not decoded first (docs/growth.md).
        plan.table.request.semi_sorted = Some(false);
        if refuses_rate(&plan) {
            // Said of the user's target, not of the first level's share of it.
            return Err(BuildError::FalsePositiveRateTooSmall {
                rate,
                smallest: smallest_target(&plan),
            });
        }
        // Too many items for the first level's table may be too many for its route bits too,
        // which bound deep splits lower: the smaller bound is the one that builds.
        if let Err(BuildError::CapacityTooLarge { capacity, max }) = plan.level_shape(0) {
            let at_bound = Plan {
                initial_capacity: max,
                ..plan.clone()
            };
            if let (true, Err(BuildError::CapacityTooLarge { max: lower, .. })) =
                (max < capacity, at_bound.level_shape(0))
            {
                return Err(BuildError::CapacityTooLarge {
                    capacity,
                    max: lower.min(max),
                });
            }
        }
        // A limit below what one bucket of the first level holds leaves it no table.
        if let Ok(geometry) = plan.geometry(0) {
            let size = geometry.shape.bucket_size;
            let smallest = (size as u64 * target_load_permille(size) / 1000).max(1) as usize;
            if plan.max_capacity < smallest {
                return Err(BuildError::MaxCapacity {
                    capacity: smallest,
                    max_capacity: plan.max_capacity,
                });
            }
        }
        // Chunks rounded up from the buckets the limit leaves could pass it: whole ones within it.
        if let Some(buckets) = plan.first_buckets_in_whole_chunks() {
            plan.initial_buckets = buckets;
        }
        // Recorded, so that each level starts the size the one before grows to.
        if plan.initial_buckets == 0 {
            if let Ok(shape) = plan.level_shape(0) {
                let first = (shape.chunk_capacity() << shape.first_depth).min(plan.max_capacity);
                plan.initial_capacity = plan.initial_capacity.max(first);
            }
        }
        Ok(plan)
    }

    /// Bytes [`build`](Self::build) would allocate for the first level and the item locks,
    /// checked as `build` checks and allocating nothing; the filter's growth comes on top.
    ///
    /// # Errors
    ///
    /// Those of [`build`](Self::build) but [`BuildError::OutOfMemory`].
    pub fn memory_bytes(&self) -> Result<u64, BuildError> {
        let first = self.checked_plan()?.level_shape(0)?;
        Ok(Chunks::planned_memory(&first).saturating_add(self.item_locks as u64 * 8))
    }

    /// Builds the filter with its first level, or says which parameter is impossible.
    ///
    /// # Errors
    ///
    /// [`BuildError::SplitDepth`], [`BuildError::MaxCapacity`] for a limit below the capacity,
    /// and what [`ConcurrentCuckooFilterBuilder::build`](crate::ConcurrentCuckooFilterBuilder::build)
    /// says of the first level.
    pub fn build(self) -> Result<GrowableCuckooFilter<S>, BuildError> {
        let plan = self.checked_plan()?;
        let levels = Levels::new(plan)?;
        let item_locks = item_locks(self.item_locks).ok_or(BuildError::OutOfMemory {
            bytes: self.item_locks * 8,
        })?;
        let core = Growable { levels, item_locks };
        Ok(GrowableCuckooFilter::from_parts(core, self.hasher))
    }
}

/// Whether `plan`'s first level cannot be built for its rate (it may fail for other reasons).
fn refuses_rate(plan: &Plan) -> bool {
    matches!(
        plan.level_shape(0),
        Err(BuildError::FalsePositiveRateTooSmall { .. }
            | BuildError::FingerprintBits { .. }
            | BuildError::FalsePositiveRate { .. })
    )
}

/// The smallest target rate `plan`'s first level is not refused for, found by bisection: it
/// may still be refused for its capacity or limit, which the rate does not change.
fn smallest_target(plan: &Plan) -> f64 {
    let builds = |rate: f64| {
        let mut plan = plan.clone();
        plan.false_positive_rate = rate;
        !refuses_rate(&plan)
    };
    let (mut fails, mut reached): (f64, f64) = (plan.false_positive_rate, 0.5);
    for _ in 0..60 {
        // Roots first: the product may underflow to 0.
        let middle = fails.sqrt() * reached.sqrt();
        if builds(middle) {
            reached = middle;
        } else {
            fails = middle;
        }
    }
    reached
}
