//! `fpdb clusters`: current clusters with their members.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args;

use super::output::{open_read_only, shown, EXIT_OK};

#[derive(Args, Debug)]
pub(super) struct ClustersArgs {
    /// Only clusters with at least this many documents
    #[arg(long, default_value_t = 2)]
    pub(super) min_size: usize,
    /// One JSON object per cluster on stdout: {"similar_id","size","original","members"} (as
    /// HTTP's /v1/clusters/{similar_id} answers for one)
    #[arg(long)]
    pub(super) json: bool,
}

pub(super) fn clusters(path: &PathBuf, a: &ClustersArgs) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let groups = db.clusters(a.min_size)?;
    let mut w = BufWriter::new(std::io::stdout().lock());
    for (id, members) in &groups {
        let original = db.original_of(*id)?;
        if a.json {
            let v = serde_json::json!({
                "similar_id": id,
                "size": members.len(),
                "original": original,
                "members": members,
            });
            writeln!(w, "{v}")?;
        } else {
            writeln!(w, "similar_id {id} ({} documents)", members.len())?;
            for m in members {
                let mark = if original.as_deref() == Some(m.as_str()) {
                    "  (original)"
                } else {
                    ""
                };
                writeln!(w, "  {}{mark}", shown(m))?;
            }
        }
    }
    if !a.json {
        // The same counts as `stats`: every document is in one cluster, singletons too.
        let (documents, clusters) = db.totals();
        writeln!(
            w,
            "{} of the store's {clusters} clusters have at least {} documents ({documents} documents, {} of them duplicates: members that are not their cluster's original)",
            groups.len(),
            a.min_size,
            documents.saturating_sub(clusters)
        )?;
    }
    w.flush()?;
    Ok(EXIT_OK)
}
