//! `fpdb delete`: remove documents by id; their clusters are re-derived (first document
//! handed on, split where the removed document held members together).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;

use fpdb::Fpdb;

use super::output::{shown, EXIT_OK, EXIT_SKIPPED};

#[derive(Args, Debug)]
pub(super) struct DeleteArgs {
    /// Ids of the documents to delete
    ids: Vec<String>,
    /// Also delete the ids listed in FILE, one per line (`-`: stdin)
    #[arg(long, value_name = "FILE")]
    ids_from: Option<PathBuf>,
    /// One JSON line per id on stdout: {"id","status":"deleted"|"not_found"}
    #[arg(long)]
    json: bool,
}

/// Ids deleted between two syncs (each sync makes the deletions so far durable).
const SYNC_EVERY: usize = 4096;

pub(super) fn delete(path: &PathBuf, a: &DeleteArgs, quiet: bool) -> anyhow::Result<u8> {
    let mut ids = a.ids.clone();
    if let Some(f) = &a.ids_from {
        // An id is at most 8,192 bytes.
        let lines = super::output::read_lines_capped(f, 8192, "--ids-from")?;
        ids.extend(lines.into_iter().filter(|l| !l.is_empty()));
    }
    if ids.is_empty() {
        bail!("no ids: give ids, or --ids-from FILE");
    }
    let mut db = Fpdb::builder().open(path)?;
    let (mut deleted, mut missing) = (0u64, 0u64);
    let mut lines = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let found = db.maintenance().remove(id)?;
        if found {
            deleted += 1;
        } else {
            missing += 1;
            if !quiet && !a.json {
                eprintln!("fpdb: not stored: {}", shown(id));
            }
        }
        lines.push((id, found));
        if (i + 1) % SYNC_EVERY == 0 {
            db.sync()?;
            report(&mut lines, a.json)?;
        }
    }
    db.flush()?;
    report(&mut lines, a.json)?;
    if !quiet {
        eprintln!(
            "fpdb: {deleted} deleted, {missing} not stored -> {}",
            path.display()
        );
    }
    Ok(if missing > 0 { EXIT_SKIPPED } else { EXIT_OK })
}

/// Print the results of durable deletions (JSON lines with `--json`).
fn report(lines: &mut Vec<(&String, bool)>, json: bool) -> anyhow::Result<()> {
    if json {
        for (id, found) in lines.iter() {
            let status = if *found { "deleted" } else { "not_found" };
            outln!("{}", serde_json::json!({"id": id, "status": status}));
        }
    }
    lines.clear();
    Ok(())
}
