//! The live file shared by processes: round trips, bad files, processes inserting at once, and
//! writers killed at random points. Child processes are this test binary run again, with
//! `CCF_SHARED_CHILD` saying what to do (see `child.rs`).
#![cfg(target_os = "linux")]

mod bad_files;
mod child;
mod creation;
mod kills;
mod processes;
mod round_trip;
mod survivors;

use std::path::PathBuf;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};

/// A fresh path in the temporary directory, removed when dropped.
pub struct TempPath(pub PathBuf);

impl TempPath {
    pub fn new(name: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ccf-shared-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Self(path)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The two layouts: bucket words (the default filter's) and packed semi-sorted buckets (a
/// filter sized by a false positive rate, whose 4 × 12-bit... buckets straddle words).
pub fn create(path: &std::path::Path, packed: bool, capacity: usize) -> ConcurrentCuckooFilter {
    let builder = ConcurrentCuckooFilter::builder().capacity(capacity);
    let builder = if packed {
        builder
            .layout(TableLayout::Packed)
            .fingerprint_bits(13)
            .semi_sorted(true)
    } else {
        builder
    };
    builder.create_shared(path).unwrap()
}
