//! `fpdb report`: the store as one self-contained HTML page (figures, cluster sizes,
//! duplicates per day, hosts copying hosts, the largest clusters), or its data as JSON.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use fpdb::report::ReportOptions;

use super::output::{check_outside_store, open_read_only, EXIT_OK};
use super::web;

#[derive(Args, Debug)]
pub(super) struct ReportArgs {
    /// Write the page here (replaced whole when done; never inside the store; `-`: stdout)
    #[arg(short, long, default_value = "report.html")]
    pub(super) output: PathBuf,
    /// Print the report's data as JSON on stdout instead of writing a page
    #[arg(long)]
    pub(super) json: bool,
    /// Largest clusters listed
    #[arg(long, default_value_t = 20)]
    pub(super) largest: usize,
    /// Members listed per cluster
    #[arg(long, default_value_t = 10)]
    pub(super) members: usize,
    /// Hosts and host pairs listed
    #[arg(long, default_value_t = 20)]
    pub(super) hosts: usize,
}

pub(super) fn report(path: &PathBuf, a: &ReportArgs, quiet: bool) -> anyhow::Result<u8> {
    if !a.json {
        check_outside_store("--output", Some(&a.output), path)?;
    }
    let start = Instant::now();
    let db = open_read_only(path)?;
    let report = db.report(ReportOptions {
        largest: a.largest,
        members: a.members,
        hosts: a.hosts,
    })?;
    if a.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let page = web::report_page(&path.display().to_string(), &report);
    if a.output.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(page.as_bytes())?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    write_whole(&a.output, page.as_bytes())?;
    if !quiet {
        eprintln!(
            "fpdb: report of {} documents in {} clusters -> {} ({:.2}s)",
            report.documents,
            report.clusters,
            a.output.display(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(EXIT_OK)
}

/// Write `bytes` to `path` through a file beside it renamed over it: a reader never sees half a
/// page, and a failed write leaves the old one.
fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("--output {} names no file", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}
