//! rayon: `try_par_extend`, `ParallelExtend` and `FromParallelIterator` for both filters.

mod filter;
mod growable;
