//! `fpdb verify`: the store's consistency check.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use super::output::{open_read_only, EXIT_OK};

#[derive(clap::Args, Debug)]
pub(super) struct VerifyArgs {
    /// Also read every block of every table file (index, filter and meta blocks too) and
    /// check its checksum; slower: reads the whole store from disk
    #[arg(long)]
    pub(super) deep: bool,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    pub(super) json: bool,
}

pub(super) fn verify(path: &PathBuf, a: &VerifyArgs) -> anyhow::Result<u8> {
    let json = a.json;
    let db = open_read_only(path)?;
    if a.deep {
        db.searcher().verify_checksums()?;
    }
    let v = db.searcher().verify()?;
    if json {
        outln!(
            "{}",
            serde_json::json!({"ok": true, "documents": v.documents, "clusters": v.roots.len(), "deep": a.deep})
        );
    } else {
        outln!(
            "ok: {} documents, {} clusters, every index agrees{}",
            v.documents,
            v.roots.len(),
            if a.deep {
                "; every table block's checksum matches"
            } else {
                ""
            }
        );
    }
    Ok(EXIT_OK)
}
