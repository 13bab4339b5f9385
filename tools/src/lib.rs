//! Helpers shared by fpdb's tools (the generators, measurements and the fuzzer in `src/bin`).

pub mod files;
pub mod layouts;
pub mod pages;
/// The seeded generator the tests use too (one definition for both).
#[path = "../../tests/common/rng.rs"]
pub mod rng;

/// crc32 (IEEE), as Python's `zlib.crc32`: the parity that splits labeled pairs in halves
/// (`scripts/accuracy.sh`, the margin tools).
pub fn crc32(s: &str) -> u32 {
    let mut c = !0u32;
    for &b in s.as_bytes() {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}
