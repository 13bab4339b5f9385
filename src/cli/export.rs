//! `fpdb export`: every stored document with its current similar_id (and with `--times` its
//! times), as JSON lines.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args;

use super::output::{check_outside_store, open_read_only, output_writer, EXIT_OK};

#[derive(Args, Debug)]
pub(super) struct ExportArgs {
    /// Write to FILE instead of stdout
    #[arg(long, short, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
    /// Accepted for one vocabulary with the other commands: the export is always JSON lines
    #[arg(long)]
    pub(super) json: bool,
    /// Add each document's times: "published" (as its input said: a time field, the page's
    /// own time, else its archive record's date; null when it said none) and "ingested", RFC
    /// 3339 in UTC. Off by default: the export stays the same bytes for the same input
    #[arg(long)]
    pub(super) times: bool,
}

/// One exported document with `--times`: its outcome, when it was published (as its input said: a time
/// field, the page's own time, else its archive record's date; null when it said nothing) and
/// when it was ingested, both RFC 3339 in UTC.
#[derive(serde::Serialize)]
struct Line {
    #[serde(flatten)]
    outcome: fpdb::Outcome,
    published: Option<String>,
    ingested: String,
}

pub(super) fn export(path: &PathBuf, a: &ExportArgs) -> anyhow::Result<u8> {
    check_outside_store("--output", a.output.as_deref(), path)?;
    let db = open_read_only(path)?;
    let mut w: Box<dyn Write> = output_writer(&a.output)?
        .unwrap_or_else(|| Box::new(BufWriter::new(std::io::stdout().lock())));
    let stdout = || a.output.clone().unwrap_or_else(|| "<stdout>".into());
    db.searcher().export_dated(&mut |o, dates| {
        let written = if a.times {
            serde_json::to_writer(
                &mut w,
                &Line {
                    outcome: o,
                    published: dates.published.map(super::output::rfc3339),
                    ingested: super::output::rfc3339_secs(dates.ingested),
                },
            )
        } else {
            serde_json::to_writer(&mut w, &o)
        };
        written.map_err(|e| fpdb::Error::Io {
            path: stdout(),
            source: e.into(),
        })?;
        w.write_all(b"\n").map_err(|e| fpdb::Error::Io {
            path: stdout(),
            source: e,
        })
    })?;
    w.flush().map_err(|e| fpdb::Error::Io {
        path: stdout(),
        source: e,
    })?;
    Ok(EXIT_OK)
}
