//! `fpdb expire`: delete the documents ingested before a date or longer ago than a duration.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use clap::Args;

use fpdb::Fpdb;

use super::output::EXIT_OK;

#[derive(Args, Debug)]
pub(super) struct ExpireArgs {
    /// Delete documents ingested before DATE (`2026-11-01`, or `2026-11-01T12:00:00Z`; UTC)
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    before: Option<SystemTime>,
    /// Delete documents ingested longer ago than DURATION (`30d`, `12h`, `90min`, `1w`)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "before")]
    older_than: Option<Duration>,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    json: bool,
}

/// `2026-11-01` (midnight UTC) or an RFC 3339 time.
pub(super) fn parse_date(s: &str) -> Result<SystemTime, String> {
    let full = if s.len() == 10 {
        format!("{s}T00:00:00Z")
    } else {
        s.to_string()
    };
    humantime::parse_rfc3339_weak(&full)
        .map_err(|e| format!("`{s}`: {e} (expected e.g. 2026-11-01 or 2026-11-01T12:00:00Z)"))
}

/// `30d`, `12h`, `1w`, ... (humantime).
pub(super) fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("`{s}`: {e} (expected e.g. 30d, 12h, 1w)"))
}

/// Seconds since the Unix epoch of a time (0 before it).
fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

pub(super) fn expire(path: &PathBuf, a: &ExpireArgs, quiet: bool) -> anyhow::Result<u8> {
    let cutoff = match (a.before, a.older_than) {
        (Some(t), _) => unix(t),
        (None, Some(d)) => fpdb::now().saturating_sub(d.as_secs()),
        (None, None) => bail!("give --before DATE or --older-than DURATION"),
    };
    let mut db = Fpdb::builder().open(path)?;
    let before = db.searcher().stats().documents;
    let removed = db.maintenance().expire(cutoff)?;
    db.flush()?;
    let left = db.searcher().stats().documents;
    if a.json {
        outln!(
            "{}",
            serde_json::json!({"removed": removed, "documents_before": before, "documents": left, "cutoff": cutoff})
        );
    } else if !quiet {
        eprintln!(
            "fpdb: expired {removed} of {before} documents ingested before {} -> {}",
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(cutoff)),
            path.display()
        );
    }
    Ok(EXIT_OK)
}
