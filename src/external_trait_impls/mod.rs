//! Optional dependencies' traits for the filters, one module per dependency behind its feature.

#[cfg(feature = "serde")]
mod serde;

#[cfg(feature = "rayon")]
mod rayon;
