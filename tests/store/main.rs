//! The stores: frozen stores of every format opened, reopening, the conformance of every
//! store kind (RocksDB, in memory, Redis Cluster), replace's invariants, lookup counters.

#[path = "../common/mod.rs"]
mod common;

mod compat;
mod conformance;
mod lookup_stats;
mod redis;
mod reopen;
mod replace_invariants;
