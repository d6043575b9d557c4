//! The three uses `concurrent-cuckoo-filter` is built for, on real components:
//!
//! - [`negative_cache`]: a redb key-value store whose filter answers `get` of an absent key
//!   without reading the database;
//! - [`service`]: an axum HTTP service on a multi-threaded tokio runtime sharing one filter;
//! - [`ingest`]: exactly-once ingestion of a stream with duplicates on all cores, with
//!   `insert_unique` as the gate.
//!
//! Each has a binary that measures it (`src/bin/`) and tests on a small size (`tests/`).

pub mod ingest;
pub mod measure;
pub mod negative_cache;
pub mod service;
