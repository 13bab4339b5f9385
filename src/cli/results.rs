//! `ingest -o FILE`'s result lines, settled at the end of the run.
//!
//! Each chunk's lines are written once the chunk is durable, with its documents' clusters and
//! originals as they were decided. Later documents of the run can change both: one published
//! before a cluster's original becomes the original, one that links two clusters merges them.
//! So at the end the file is rewritten, each line of a stored document with its cluster and
//! original as they stand (what `export` says), everything else byte for byte, and renamed over
//! the first one: a run that dies before leaves the lines as decided, never half a file. Stdout,
//! a FIFO or a device cannot be read back: their lines stay as decided.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A result line, with what settling may change parsed and the rest kept as written.
#[derive(Deserialize, Serialize)]
struct Line<'a> {
    id: Option<String>,
    similar_id: Option<u64>,
    duplicate_of: Option<String>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    previous_original: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    composite_of: Option<&'a RawValue>,
    #[serde(borrow)]
    matches: &'a RawValue,
    status: &'a str,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reason: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    source: Option<&'a RawValue>,
}

/// Rewrite the result lines at `path` (a regular file; anything else is left as it is) with
/// each stored document's cluster and original as they stand in `db` now.
pub(super) fn settle(db: &fpdb::Fpdb, path: &Path) -> anyhow::Result<()> {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if !regular {
        return Ok(());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut tmp = tempfile_in(dir.unwrap_or(Path::new(".")), path)?;
    let input =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    // Cluster -> its original's id.
    let mut originals: HashMap<u64, Option<String>> = HashMap::new();
    for line in std::io::BufReader::new(input).lines() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        let settled = match serde_json::from_str::<Line<'_>>(&line) {
            Ok(mut l) if matches!(l.status, "added" | "replaced" | "already_stored") => match l
                .id
                .as_deref()
                .map(|id| db.standing(id))
                .transpose()?
                .flatten()
            {
                Some(st) => {
                    let original = match originals.get(&st.similar_id) {
                        Some(o) => o.clone(),
                        None => {
                            let o = db.original_of(st.similar_id)?;
                            originals.insert(st.similar_id, o.clone());
                            o
                        }
                    };
                    l.similar_id = Some(st.similar_id);
                    l.duplicate_of = original.filter(|_| !st.original);
                    Some(serde_json::to_string(&l)?)
                }
                None => None,
            },
            _ => None,
        };
        tmp.1
            .write_all(settled.as_deref().unwrap_or(&line).as_bytes())?;
        tmp.1.write_all(b"\n")?;
    }
    tmp.1.flush()?;
    tmp.1.get_ref().sync_all()?;
    std::fs::rename(&tmp.0, path)
        .with_context(|| format!("cannot replace {} with its settled lines", path.display()))?;
    Ok(())
}

/// A new file beside `path` in `dir` (removed if the rename does not happen).
fn tempfile_in(
    dir: &Path,
    path: &Path,
) -> anyhow::Result<(TempPath, std::io::BufWriter<std::fs::File>)> {
    let name = format!(
        ".{}.settling-{}",
        path.file_name()
            .map_or("results".into(), |n| n.to_string_lossy()),
        std::process::id()
    );
    let p = dir.join(name);
    let f = std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?;
    Ok((TempPath(p), std::io::BufWriter::new(f)))
}

/// A path removed when dropped, unless renamed away before.
struct TempPath(std::path::PathBuf);

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
