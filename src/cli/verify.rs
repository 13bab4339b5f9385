//! `fpdb verify`: the store's consistency check.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use super::output::{open_read_only, EXIT_OK};

pub(super) fn verify(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let v = db.verify()?;
    if json {
        outln!(
            "{}",
            serde_json::json!({"ok": true, "documents": v.documents, "clusters": v.roots.len()})
        );
    } else {
        outln!(
            "ok: {} documents, {} clusters, every index agrees",
            v.documents,
            v.roots.len()
        );
    }
    Ok(EXIT_OK)
}
