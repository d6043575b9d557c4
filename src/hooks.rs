//! Test hooks: the API the crate's own tests, loom models, examples and benches need to build
//! collisions and tiny tables on purpose, which users should never depend on.
//!
//! A hook is public and `#[doc(hidden)]` in every build, so that tests, examples and the
//! workspace's other crates share one build of the library. Every check a user's call gets, a
//! hook's call gets too.

/// Defines a method of an `impl` block as a test hook: public, hidden from the docs, and not
/// part of the API that semantic versioning covers.
macro_rules! test_hook {
    ($(#[$attr:meta])* fn $($item:tt)*) => {
        $(#[$attr])*
        #[doc(hidden)]
        pub fn $($item)*
    };
}

/// An item's fingerprint and its two buckets, as the `debug_candidates` hooks give them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DebugCandidates {
    pub fingerprint: u32,
    pub first: usize,
    pub second: usize,
}

impl From<crate::raw::Candidates> for DebugCandidates {
    fn from(c: crate::raw::Candidates) -> Self {
        Self {
            fingerprint: c.fp,
            first: c.first,
            second: c.second,
        }
    }
}
