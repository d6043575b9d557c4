//! A table's settings as the builders collect them, checked into the [`Geometry`] that `raw/`
//! allocates: below both filters' builders, so growable levels are sized by the fixed rules.

use core::ops::RangeInclusive;

use crate::error::BuildError;
use crate::layout::TableLayout;
use crate::raw::{
    accepted_stripes, default_max_hops, fits_bucket_word, is_accepted, Geometry, SearchLimits,
    Shape, MAX_HOPS,
};
use crate::sizing::{bucket_count_for, capacity_of, Request};

/// Buckets a cuckoo path search reads at most before it declares the filter full.
const DEFAULT_SEARCH_BUCKETS: usize = 2000;

/// What a builder was told of a table, `None` or 0 where the default applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TableSettings {
    pub(crate) capacity: usize,
    pub(crate) request: Request,
    pub(crate) stripes: usize,
    /// An exact bucket count instead of one derived from the capacity.
    pub(crate) bucket_count: usize,
    pub(crate) max_hops: usize,
    pub(crate) max_search_buckets: usize,
    /// `None`: [`TableLayout::chosen_for`] decides from the rest of the settings.
    pub(crate) layout: Option<TableLayout>,
}

impl Default for TableSettings {
    fn default() -> Self {
        Self {
            capacity: 0,
            request: Request::default(),
            stripes: 0,
            bucket_count: 0,
            max_hops: 0,
            max_search_buckets: DEFAULT_SEARCH_BUCKETS,
            layout: None,
        }
    }
}

impl TableSettings {
    /// The geometry the settings ask for on this target, checked, with nothing allocated.
    pub(crate) fn geometry(&self) -> Result<Geometry, BuildError> {
        self.geometry_within(&Limits::TARGET)
    }

    /// [`Self::geometry`] against `limits`, in 64 or 128 bits so that nothing wraps on any target.
    pub(crate) fn geometry_within(&self, limits: &Limits) -> Result<Geometry, BuildError> {
        let resolved = self.resolve_shape()?;
        let max_hops = match self.max_hops {
            0 => default_max_hops(resolved.bucket_size),
            hops => hops,
        };
        // Set only by the test hooks and a decoded growable filter's plan: checked alike.
        if max_hops > MAX_HOPS || self.max_search_buckets < 2 {
            return Err(BuildError::SearchLimits {
                max_hops: self.max_hops,
                max_buckets: self.max_search_buckets,
            });
        }
        // A capacity of 0 gets the smallest table, as `with_capacity(0)` does.
        let bucket_count = if self.bucket_count != 0 {
            self.bucket_count as u64
        } else {
            bucket_count_for(self.capacity.max(1) as u64, resolved.bucket_size)
        };
        let most = resolved
            .max_bucket_count(limits.bytes)
            .min(limits.usize_max);
        if bucket_count > most {
            let max = capacity_of(most, resolved.bucket_size).min(limits.usize_max);
            return Err(BuildError::CapacityTooLarge {
                capacity: self.capacity,
                max: max as usize,
            });
        }
        let accepted = accepted_stripes(
            bucket_count,
            resolved.bucket_size,
            limits.bytes,
            limits.usize_max,
        );
        if self.stripes != 0 {
            check_stripes(self.stripes, &accepted)?;
        }
        let geometry = Geometry {
            shape: Shape {
                bucket_count: bucket_count as usize,
                ..resolved
            },
            stripes: self.stripes,
            limits: SearchLimits {
                max_hops,
                max_search_buckets: self.max_search_buckets,
            },
        };
        // The default count is in range for any table that fits: 4096 stripes of a table of 2^32
        // buckets of 8 slots hold 2^23 slots each.
        debug_assert!(is_accepted(geometry.stripe_count() as u64, &accepted));
        Ok(geometry)
    }

    /// The shape the request and the layout ask for, checked, with no bucket count yet.
    fn resolve_shape(&self) -> Result<Shape, BuildError> {
        let mut request = self.request;
        let layout = match self.layout {
            Some(layout) => layout,
            None => TableLayout::chosen_for(
                &Shape::resolve(&request)?,
                request.false_positive_rate.is_some(),
            ),
        };
        let bucket_words = match layout {
            TableLayout::Packed => false,
            TableLayout::BucketWord => {
                // Semi-sorted buckets, which this layout has not: refused before a rate is sized,
                // which alone would pick them.
                if *request.semi_sorted.get_or_insert(false) {
                    return Err(BuildError::LayoutSemiSorted { layout });
                }
                request.bucket_words = true;
                true
            }
        };
        let shape = Shape::resolve(&request)?;
        if bucket_words && !fits_bucket_word(shape.bucket_size, shape.fingerprint_bits) {
            return Err(BuildError::LayoutBucketBits {
                layout,
                bucket_size: shape.bucket_size,
                fingerprint_bits: shape.fingerprint_bits,
            });
        }
        Ok(Shape {
            bucket_words,
            ..shape
        })
    }
}

/// [`BuildError::Stripes`] unless `stripes` is a power of two in `accepted`.
pub(crate) fn check_stripes(
    stripes: usize,
    accepted: &RangeInclusive<u64>,
) -> Result<(), BuildError> {
    if is_accepted(stripes as u64, accepted) {
        return Ok(());
    }
    let (min, max) = (*accepted.start() as usize, *accepted.end() as usize);
    Err(BuildError::Stripes { stripes, min, max })
}

/// What the target can hold (the tests also check a 32-bit target's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// The largest allocation, `isize::MAX` bytes.
    pub(crate) bytes: u64,
    /// `usize::MAX`.
    pub(crate) usize_max: u64,
}

impl Limits {
    pub(crate) const TARGET: Self = Self {
        bytes: isize::MAX as u64,
        usize_max: usize::MAX as u64,
    };
}
