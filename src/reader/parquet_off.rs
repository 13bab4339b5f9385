//! Parquet without the `parquet` cargo feature: a Parquet input is an error record naming the
//! feature (this build does not carry the Apache Arrow crates).

use super::{error, Inputs, Record, Unit};

/// Parquet's magic number, at the start and the end of every file.
pub(super) const MAGIC: &[u8] = b"PAR1";

impl Inputs {
    /// A Parquet file cannot be read by this build.
    pub(super) fn start_parquet(
        &mut self,
        source: String,
        _path: &std::path::Path,
    ) -> Option<Record> {
        Some(error(
            source,
            0,
            Unit::Record,
            "a Parquet file: this build of fpdb cannot read Parquet (cargo feature `parquet`)"
                .into(),
        ))
    }
}
