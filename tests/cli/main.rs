//! The command line run as a user runs it, in a temporary directory: each command, the
//! paths and replace, dedup's outputs, the report, resumed jobs, input formats (zstd, Parquet).

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod dedup_outputs;
mod formats;
mod late_joins;
mod operator_files;
mod parquet;
mod paths_and_replace;
mod report;
mod resume;
mod user_path;
mod zstd_inputs;
