//! The engine against oracles: batches against one document at a time, the index against a
//! brute-force scan, the pipelines against each other, operations against a model.

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod index;
mod operations;
mod pipelines;
