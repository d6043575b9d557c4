//! What the criterion benches (`benches/`), the paper reproduction (`src/bin/paper/`) and the
//! side-by-side run with the paper authors' C++ benchmark (`src/bin/reference.rs`) share.
//!
//! - [`args`]: the command lines and the `CCF_BENCH_*` environment variables.
//! - [`keys`]: the key stream and a small random number generator.
//! - [`peers`]: one interface, [`peers::Peer`], over this crate's filter and every peer.
//! - [`dlcbf`]: the d-left counting Bloom filter of the paper's Table 3 (no crate has one).
//! - [`measure`]: timing loops, from one thread and from a pool of threads.
//! - [`huge_pages`]: huge pages for the examples' own buffers.
//! - [`plot`] and [`report`]: PNG plots, Markdown tables and CSV files.
//! - [`window`]: sliding-window filters (the peers', this crate's) and the checker and timing
//!   loops that measure them the same way.

pub mod args;
pub mod dlcbf;
pub mod huge_pages;
pub mod keys;
pub mod measure;
pub mod peers;
pub mod plot;
pub mod report;
pub mod window;
