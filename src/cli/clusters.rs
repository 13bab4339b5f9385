//! `fpdb clusters`: current clusters with their members, each cluster's original first.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args;

use super::output::{open_read_only, shown, EXIT_OK};

#[derive(Args, Debug)]
pub(super) struct ClustersArgs {
    /// Only clusters with at least this many documents
    #[arg(long, default_value_t = 2)]
    pub(super) min_size: usize,
    /// One JSON object per cluster on stdout: {"similar_id","size","original","members"}
    /// (members: the original first, then in ingest order)
    #[arg(long)]
    pub(super) json: bool,
    /// With --json: add "dates", each member's "published" (as its input said; null when it
    /// said none) and "ingested" times, RFC 3339 in UTC
    #[arg(long, requires = "json")]
    pub(super) times: bool,
}

pub(super) fn clusters(path: &PathBuf, a: &ClustersArgs) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let groups = db.searcher().clusters(a.min_size)?;
    let mut w = BufWriter::new(std::io::stdout().lock());
    for (id, members) in &groups {
        let original = db.searcher().original_of(*id)?;
        // The original first, the others in ingest order.
        let mut members: Vec<&String> = members.iter().collect();
        if let Some(at) = members
            .iter()
            .position(|m| original.as_deref() == Some(m.as_str()))
        {
            let o = members.remove(at);
            members.insert(0, o);
        }
        if a.json {
            // Each member's times: published (as its input said), ingested.
            let mut dates = serde_json::Map::new();
            for m in members.iter().filter(|_| a.times) {
                if let Some(d) = db.searcher().dates(m)? {
                    dates.insert(
                        (*m).clone(),
                        serde_json::json!({
                            "published": d.published.map(super::output::rfc3339),
                            "ingested": super::output::rfc3339_secs(d.ingested),
                        }),
                    );
                }
            }
            let mut v = serde_json::json!({
                "similar_id": id,
                "size": members.len(),
                "original": original,
                "members": members,
            });
            if a.times {
                v["dates"] = dates.into();
            }
            writeln!(w, "{v}").map_err(super::to_stdout)?;
        } else {
            writeln!(w, "similar_id {id} ({} documents)", members.len())
                .map_err(super::to_stdout)?;
            for m in members {
                let mark = if original.as_deref() == Some(m.as_str()) {
                    "  (original)"
                } else {
                    ""
                };
                writeln!(w, "  {}{mark}", shown(m)).map_err(super::to_stdout)?;
            }
        }
    }
    if !a.json {
        // The same counts as `stats`: every document is in one cluster, singletons too.
        let (documents, clusters) = db.searcher().totals();
        writeln!(
            w,
            "{} of the store's {clusters} clusters have at least {} documents ({documents} documents, {} of them duplicates: members that are not their cluster's original)",
            groups.len(),
            a.min_size,
            documents.saturating_sub(clusters)
        )
        .map_err(super::to_stdout)?;
    }
    w.flush().map_err(super::to_stdout)?;
    Ok(EXIT_OK)
}
