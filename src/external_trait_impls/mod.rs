//! Implementations of optional dependencies' traits for the filters, each behind its feature, as
//! hashbrown keeps them: one module per dependency, on top of the filters' public operations.

#[cfg(feature = "serde")]
mod serde;

#[cfg(feature = "rayon")]
mod rayon;
