//! Helpers shared by fpdb's tools (the generators, measurements and the fuzzer in `src/bin`).

pub mod files;
/// The seeded generator the tests use too (one definition for both).
#[path = "../../tests/common/rng.rs"]
pub mod rng;
