//! `ccf`: build, query, deduplicate and merge with concurrent cuckoo filters from the command
//! line. The binary is a thin `main` over [`run`]; the library exists so that the benchmark
//! example can drive the same code.

pub mod cli;
mod commands;
pub mod error;
pub mod filter_file;
pub mod growing;
pub mod input;
pub mod lines;
#[cfg(target_os = "linux")]
pub mod live;
mod memory;
pub mod mixing;
pub mod output;
mod window;

pub use crate::commands::run;
