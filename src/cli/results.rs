//! `ingest -o FILE`'s result lines, settled at the end of the run.
//!
//! Each chunk's lines are written once the chunk is durable, with its documents' clusters and
//! originals as they were decided. Later documents of the run can change both: one published
//! before a cluster's original becomes the original, one that links two clusters merges them.
//! So at the end the file is rewritten, each line of a stored document with its cluster and
//! original as they stand (what `export` says), everything else byte for byte, and renamed over
//! the first one (`output::write_whole_with`): a run that dies before leaves the lines as
//! decided, never half a file. Stdout, a FIFO or a device cannot be read back: their lines stay
//! as decided.

use std::collections::HashMap;
use std::io::BufRead;
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
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    excerpt_of: Option<&'a RawValue>,
    #[serde(borrow)]
    matches: &'a RawValue,
    status: &'a str,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reason: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    source: Option<&'a RawValue>,
}

/// Rewrite the result lines at `path` (a regular file, or a link to one; anything else is left
/// as it is) with each stored document's cluster and original as they stand in `db` now,
/// through [`super::output::write_whole_with`] (a file beside it renamed over it).
pub(super) fn settle(db: &fpdb::Fpdb, path: &Path) -> anyhow::Result<()> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let input =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = std::io::BufReader::new(input).lines();
    // Cluster -> its original's id.
    let mut originals: HashMap<u64, Option<String>> = HashMap::new();
    // A store error met while writing (the write is then abandoned, the file left as it was).
    let mut failed: Option<anyhow::Error> = None;
    let written = super::output::write_whole_with(path, &mut |w| {
        for line in lines.by_ref() {
            let line = line?;
            let settled = settled_line(db, &line, &mut originals).map_err(|e| {
                failed = Some(e);
                std::io::Error::other("the store could not be read")
            })?;
            w.write_all(settled.as_deref().unwrap_or(&line).as_bytes())?;
            w.write_all(b"\n")?;
        }
        Ok(())
    });
    match failed {
        Some(e) => Err(e),
        None => written,
    }
}

/// `line` with its document's cluster and original as they stand now; None when it is left as
/// written (a skipped record, a document no longer stored, a line that is not a result).
fn settled_line(
    db: &fpdb::Fpdb,
    line: &str,
    originals: &mut HashMap<u64, Option<String>>,
) -> anyhow::Result<Option<String>> {
    let Ok(mut l) = serde_json::from_str::<Line<'_>>(line) else {
        return Ok(None);
    };
    if !matches!(l.status, "added" | "replaced" | "already_stored") {
        return Ok(None);
    }
    let Some(st) =
        l.id.as_deref()
            .map(|id| db.searcher().standing(id))
            .transpose()?
            .flatten()
    else {
        return Ok(None);
    };
    let original = match originals.get(&st.similar_id) {
        Some(o) => o.clone(),
        None => {
            let o = db.searcher().original_of(st.similar_id)?;
            originals.insert(st.similar_id, o.clone());
            o
        }
    };
    l.similar_id = Some(st.similar_id);
    l.duplicate_of = original.filter(|_| !st.original);
    Ok(Some(serde_json::to_string(&l)?))
}
