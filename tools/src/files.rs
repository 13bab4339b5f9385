//! Bytes of a RocksDB directory's table files (the measurement tools share it).

use std::path::Path;

/// Bytes of the table files (`*.sst`) in a RocksDB directory.
pub fn sst_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}
