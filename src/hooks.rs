//! Test hooks: what the crate's tests, loom models, examples and benches need to build
//! collisions and tiny tables on purpose. Public and `#[doc(hidden)]` in every build, so that
//! they share one build of the library; a hook's call gets every check a user's call gets.

/// Defines a method of an `impl` block as a test hook: public, hidden, outside semver.
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
