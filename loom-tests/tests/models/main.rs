//! The loom models, one guarantee per module; see the crate docs for how to run them.
#![cfg(loom)]

mod bucket_words;
mod bulk;
mod expiring;
mod failed_insert;
mod growth;
mod honest_full;
mod insert_unique;
mod len;
mod lookup_during_move;
mod narrow_semi_sorted;
mod racing_inserts;
mod reader_progress;
mod remove_races;
mod snapshot;
mod splits;
mod stale_path;
