//! `fpdb compact`: rewrite the store's files for lookups and reclaim the space of deleted
//! documents.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use fpdb::Fpdb;

use super::output::EXIT_OK;

pub(super) fn compact(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    // With the presence filter of the compacted store saved (built by one scan when none
    // matches the store), so the next writers skip the seeks of absent hashes.
    let mut db = Fpdb::builder().presence_filters(true).open(path)?;
    let before = db.searcher().stats().disk_bytes;
    db.maintenance().compact()?;
    db.flush()?;
    if let Err(e) = db.save_memory_filter() {
        // Everything is stored; only the next run's head start is lost.
        eprintln!(
            "fpdb: warning: the presence filter was not saved ({e}); the next run goes without it"
        );
    }
    let after = db.searcher().stats().disk_bytes;
    if json {
        outln!(
            "{}",
            serde_json::json!({"bytes_before": before, "bytes_after": after})
        );
    } else {
        outln!(
            "compacted {}: {:.1} MiB -> {:.1} MiB",
            path.display(),
            before as f64 / f64::from(1 << 20),
            after as f64 / f64::from(1 << 20)
        );
    }
    Ok(EXIT_OK)
}
