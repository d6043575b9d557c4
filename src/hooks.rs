//! Test hooks: the API the crate's own tests, loom models, examples and benches need to build
//! collisions and tiny tables on purpose, which users should never depend on.
//!
//! With the hidden cargo feature `__test-hooks` (enabled by the crate's dev-dependency on itself
//! and by `loom-tests`) a hook is public and `#[doc(hidden)]`; without it, crate-private, so that
//! the crate's own code can still use it.

/// Defines a method of an `impl` block as a test hook: public with the `__test-hooks` feature or
/// in the crate's unit tests, crate-private otherwise.
macro_rules! test_hook {
    ($(#[$attr:meta])* fn $($item:tt)*) => {
        #[cfg(any(test, feature = "__test-hooks"))]
        $(#[$attr])*
        #[doc(hidden)]
        pub fn $($item)*

        // Kept (and what it calls kept) even where nothing in the crate calls it.
        #[cfg(not(any(test, feature = "__test-hooks")))]
        $(#[$attr])*
        #[allow(dead_code)]
        pub(crate) fn $($item)*
    };
}
