//! Index layouts over the store: the simhash permuted-prefix tables.

mod permuted;

pub use permuted::{choose_blocks, Permutations, MAX_TABLES};
