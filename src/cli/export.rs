//! `fpdb export`: every stored document with its current similar_id, as JSON lines.

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
}

pub(super) fn export(path: &PathBuf, a: &ExportArgs) -> anyhow::Result<u8> {
    check_outside_store("--output", a.output.as_deref(), path)?;
    let db = open_read_only(path)?;
    let mut w: Box<dyn Write> = output_writer(&a.output)?
        .unwrap_or_else(|| Box::new(BufWriter::new(std::io::stdout().lock())));
    let stdout = || a.output.clone().unwrap_or_else(|| "<stdout>".into());
    db.export(&mut |o| {
        serde_json::to_writer(&mut w, &o).map_err(|e| fpdb::Error::Io {
            path: stdout(),
            source: e.into(),
        })?;
        w.write_all(b"\n").map_err(|e| fpdb::Error::Io {
            path: stdout(),
            source: e,
        })
    })?;
    w.flush()?;
    Ok(EXIT_OK)
}
