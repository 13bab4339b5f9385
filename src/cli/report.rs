//! `fpdb report`: the store as one self-contained HTML page (figures, cluster sizes,
//! duplicates per day, hosts copying hosts, the largest clusters), or its data as JSON.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use fpdb::report::ReportOptions;

use super::output::{check_outside_store, open_read_only, write_whole, EXIT_OK};
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
    let report = db.searcher().report(ReportOptions {
        largest: a.largest,
        members: a.members,
        hosts: a.hosts,
    })?;
    if a.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &report).map_err(super::to_stdout)?;
        writeln!(out).map_err(super::to_stdout)?;
        out.flush().map_err(super::to_stdout)?;
        return Ok(EXIT_OK);
    }
    let page = web::report_page(&store_name(path), &report);
    if a.output.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(page.as_bytes()).map_err(super::to_stdout)?;
        out.flush().map_err(super::to_stdout)?;
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

/// The store as the page names it: a directory by its last component, a Redis store by its
/// namespace (a page is shared; the path of a home directory or a URL's nodes are not its
/// business).
fn store_name(path: &std::path::Path) -> String {
    if let fpdb::store::Location::Redis(url) = fpdb::store::Location::parse(path) {
        return fpdb::store::redis::RedisUrl::parse(&url).map_or_else(
            |_| "a Redis store".into(),
            |u| format!("redis:/{}", u.namespace),
        );
    }
    let shown = path.to_string_lossy();
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| shown.into_owned())
}
