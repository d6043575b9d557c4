//! The expiring filter: its window guarantees single-threaded and under racing threads, its
//! builder's errors, its bytes, and a property test against an exact model.

mod advance_races;
mod builder;
mod model;
mod races;
mod time;
mod window;
