//! The one deterministic pseudo-random generator (xorshift64) of the tests, benchmarks and
//! tools, so runs need no seed plumbing and corpora are reproducible. Benchmarks include this
//! file with `#[path]`; the tools through `fpdb_tools::rng`.
#![allow(dead_code)]

/// xorshift64 (13, 7, 17); the state must not be 0.
pub struct Rng(pub u64);

impl Rng {
    /// The next value (also the new state).
    #[allow(
        clippy::should_implement_trait,
        reason = "a generator called by hand; an endless Iterator would add nothing"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An index below `len`.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}
