//! Loom model checks of the filter's concurrency protocol live in `tests/`; run them with
//! `RUSTFLAGS="--cfg loom" cargo test --release -p loom-tests`.
