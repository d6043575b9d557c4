//! This crate's `ExpiringCuckooFilter` as a [`WindowFilter`]:
//! a count window of `W` inserts in `G` generations at the spec's false positive rate. It ages
//! by itself (no tick) and every call takes `&self`.

use super::{WindowFilter, WindowSpec};
use concurrent_cuckoo_filter::{ExpiringCuckooFilter, Window};

/// `ExpiringCuckooFilter::builder(Window::Items(W)).generations(G).false_positive_rate(ε)`.
pub struct Ours(ExpiringCuckooFilter);

impl WindowFilter for Ours {
    const NAME: &'static str = "ours";
    const TICKS: bool = false;

    fn build(spec: &WindowSpec) -> Result<Self, String> {
        let filter = ExpiringCuckooFilter::builder(Window::Items(spec.items as _))
            .generations(spec.generations as _)
            .false_positive_rate(spec.false_positive_rate)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self(filter))
    }

    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}
