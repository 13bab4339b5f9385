//! The build's own settings.

/// On x86-64 the build targets x86-64-v2 (`.cargo/config.toml`). librocksdb-sys compiles
/// RocksDB with SSE4.2 only when the Rust target has it, and RocksDB chooses its CRC32C (the
/// write-ahead log's checksum of every record) when it is compiled: without SSE4.2, a table
/// lookup per byte. RUSTFLAGS set in the environment replace the config's flags, and lose it.
#[test]
#[cfg(target_arch = "x86_64")]
#[expect(
    clippy::assertions_on_constants,
    reason = "the constant is the build's target features: what this test is about"
)]
fn the_x86_64_build_compiles_rocksdb_with_sse42() {
    assert!(
        cfg!(target_feature = "sse4.2"),
        "built without SSE4.2: RocksDB's checksums fall back to a lookup table; keep \
         .cargo/config.toml's target-cpu=x86-64-v2 (RUSTFLAGS in the environment replace it)"
    );
}
