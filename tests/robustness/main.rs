//! Bad input and bad luck: garbage and hostile inputs, outputs that fail, damaged streams, a
//! full disk, a killed process, signals, and the memory one document may cost.

#[path = "../common/mod.rs"]
mod common;

mod bad_inputs;
mod bad_outputs;
mod crash;
mod damaged_streams;
mod full_disk;
mod memory_bounds;
mod signals;
