//! The `fpdb` command line: one file per subcommand (its flags and its run function), shared
//! flags in `args.rs`, output plumbing and exit codes in `output.rs`. Parses flags into
//! validated library settings and calls the library; data goes to stdout (or `--output`),
//! messages and progress to stderr.
//!
//! Exit codes: 0 success (for `query`: a duplicate was found); 1 `query` found no duplicate;
//! 2 error (nothing more was done); 3 the run finished but skipped some inputs; 130 / 143
//! ingest stopped by SIGINT / SIGTERM after committing what it had read.

/// `println!` that returns an error instead of panicking: a closed pipe then ends the command
/// quietly (exit 0, see `main`) and a full disk is reported (exit 2).
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*).context("cannot write to stdout")?
    };
}

/// An error writing to stdout, named so (a full disk: `fpdb clusters > out`).
fn to_stdout<E: std::error::Error + Send + Sync + 'static>(e: E) -> anyhow::Error {
    anyhow::Error::new(e).context("cannot write to stdout")
}

mod args;
mod backup;
mod clusters;
mod compact;
mod dedup;
mod delete;
mod eval;
mod expire;
mod explain;
mod export;
mod idf;
mod ingest;
mod nice;
mod output;
mod pipeline;
mod query;
mod report;
mod results;
mod serve;
mod stats;
mod stop;
mod summary;
mod verify;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::JsonFlag;

/// `--cache-mib` of `serve`: the default block cache.
const SERVE_CACHE_MIB: u64 = (fpdb::store::BLOCK_CACHE_BYTES >> 20) as u64;

/// `--cache-mib` of `ingest`. Under half of `serve`'s: an ingest reads mostly hashes no
/// document has (answered by filters) and the records of a few candidates, so a smaller cache
/// costs it nothing and saves memory (figures: docs/performance.md, "Store settings").
const INGEST_CACHE_MIB: u64 = 48;

const ABOUT: &str =
    "fpdb: a persistent near-duplicate text database (nshash, MinHash and simhash on RocksDB)";

const LONG_ABOUT: &str = "\
fpdb stores fingerprints of documents on disk and tells, for each new document, which stored
documents it nearly duplicates. Every document gets a similar_id: documents sharing one are
near-duplicates (copied, reposted, lightly edited). The store is created on the first ingest
and can be fed and queried across many runs.

Examples:
  fpdb ingest crawl.jsonl --output results.jsonl     # ingest, one result line per document
  fpdb dedup crawl.jsonl -o unique.jsonl             # write the records that are not near-duplicates
  fpdb query --file page.txt                         # would this page be a duplicate?
  fpdb --db /data/news.db stats
  fpdb export > clusters.jsonl                       # every document with its similar_id
  fpdb report -o report.html                         # the store as one page: sizes, days, hosts
  fpdb serve --listen 127.0.0.1:8080                 # HTTP: a page at /, POST /v1/query, ...

Exit codes: 0 ok (query: duplicate found; explain: linked), 1 query: no duplicate
(explain: not linked), 2 error (also: nothing could be read), 3 ingest finished but skipped
some inputs (bad lines, existing ids), 130/143 ingest stopped by SIGINT/SIGTERM after
committing what it had read.";

#[derive(Parser, Debug)]
#[command(name = "fpdb", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    /// Store directory [env: FPDB_DB] [default: ./fpdb.db]
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,

    /// No progress and no summary on stderr (errors are still printed).
    #[arg(long, short, global = true)]
    quiet: bool,

    /// Also print what the lookups read per document (ingest, dedup, query --batch).
    #[arg(long, short, global = true)]
    verbose: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Add documents to the store (created on first use); report their similar_id.
    Ingest(ingest::IngestArgs),
    /// Ingest, and write the records that are not near-duplicates of an earlier one.
    ///
    /// Each record whose document is not a near-duplicate of a stored document or of a record
    /// before it is written to -o (stdout by default), as read: JSONL lines and CSV/TSV rows
    /// byte for byte (the CSV header first), other formats as JSONL lines of the fields read
    /// (id, text, url, title). The store is updated as `ingest` updates it, so a later run is
    /// deduplicated against this one. A record whose id is already stored is not unique
    /// (`--replace` ingests it again). When a later record merges two clusters, both earlier
    /// records stay written; the summary counts them (kept_later_merged).
    #[command(mut_arg("output", |a| a.help("Write the unique records to FILE (`-` = stdout, the default)").long_help(None::<&str>)))]
    Dedup(ingest::DedupArgs),
    /// Ask whether a text is a near-duplicate of stored documents (never writes).
    Query(query::QueryArgs),
    /// Print store statistics and settings.
    Stats(JsonFlag),
    /// Print every stored document with its current similar_id, as JSONL.
    Export(export::ExportArgs),
    /// List near-duplicate clusters (similar_id and member ids).
    Clusters(clusters::ClustersArgs),
    /// Write a self-contained HTML report of the store (never writes to the store).
    ///
    /// Figures, cluster sizes on a log scale, duplicates per day (published, else ingested), the hosts whose pages
    /// copy another host's, the largest clusters with their members. Streams the store: memory
    /// stays bounded whatever its size. `--json` prints the data instead.
    Report(report::ReportArgs),
    /// Check that every index agrees with the stored documents (exit 2 when not).
    Verify(verify::VerifyArgs),
    /// Show why two texts or stored documents match or not.
    ///
    /// Kept sentences, shared ones, verification similarity, figures, simhash distance, terms
    /// found in one text only. A and B are files, ids in --corpus, or ids of stored documents
    /// (compared on their stored fingerprints; exit 0 when in one cluster). Exit 0 when
    /// linked, 1 when not.
    Explain(explain::ExplainArgs),
    /// Measure detection quality on a labeled set (in memory; no store is touched).
    Eval(eval::EvalArgs),
    /// Learn a simhash IDF table from documents (`--idf FILE` at store creation).
    Idf(idf::IdfArgs),
    /// Delete documents by id; their clusters are re-derived.
    ///
    /// The first document is handed on, and a cluster is split where the deleted document held
    /// members together. Exit 3 when an id was not stored.
    Delete(delete::DeleteArgs),
    /// Copy the store into a new directory, also while an ingest runs.
    ///
    /// Consistent; hard links when the store is idle. Restore: open the copy with --db, or
    /// move it into place.
    Backup(backup::BackupArgs),
    /// Rewrite the store's files for fast lookups; reclaim deleted documents' space.
    Compact(JsonFlag),
    /// Serve the store over HTTP: one writer, many clients querying and ingesting.
    ///
    /// JSON API /v1/..., /healthz, /metrics. Stops on ctrl-c or SIGTERM after finishing the
    /// requests in flight (exit 0).
    Serve(serve::ServeArgs),
    /// Delete the documents ingested before a date or longer ago than a duration.
    ///
    /// In synced chunks: a killed run keeps what it removed; run it again to go on.
    Expire(expire::ExpireArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed pipe (`fpdb export | head`) is the reader's choice, not an error.
            if io_kind(&e) == Some(std::io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            eprintln!("fpdb: error: {}", message(&e));
            ExitCode::from(2)
        }
    }
}

/// The kind of the I/O error that caused `e`, if one did. serde_json's writer errors hide the
/// io::Error from the chain (their `source` is the io error's own source), so they are asked
/// for its kind.
fn io_kind(e: &anyhow::Error) -> Option<std::io::ErrorKind> {
    e.chain().find_map(|c| {
        c.downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                c.downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            })
    })
}

/// An error with its causes, as `{:#}` prints it, but a cause the message before it already
/// ends with (a library error that shows its `io::Error`) is not repeated.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if out.ends_with(&c) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&c);
    }
    out
}

fn db_path(cli: &Cli) -> PathBuf {
    cli.db
        .clone()
        .or_else(|| {
            std::env::var_os("FPDB_DB")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from("./fpdb.db"))
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    // A clock override that cannot be read is an error, not the system clock in disguise.
    fpdb::clock::check_env().map_err(anyhow::Error::msg)?;
    let path = db_path(&cli);
    match &cli.command {
        Command::Ingest(a) => ingest::ingest(&path, a, cli.quiet, cli.verbose, None),
        Command::Dedup(a) => ingest::ingest(&path, &a.ingest, cli.quiet, cli.verbose, Some(a)),
        Command::Query(a) if !a.batch.is_empty() => {
            query::query_batch(&path, a, cli.quiet, cli.verbose)
        }
        Command::Query(a) => query::query(&path, a),
        Command::Stats(a) => stats::stats(&path, a.json),
        Command::Export(a) => export::export(&path, a),
        Command::Verify(a) => verify::verify(&path, a),
        Command::Clusters(a) => clusters::clusters(&path, a),
        Command::Report(a) => report::report(&path, a, cli.quiet),
        Command::Eval(a) => eval::eval(a),
        Command::Explain(a) => explain::explain(&path, a),
        Command::Idf(a) => idf::idf(&path, a, cli.quiet),
        Command::Delete(a) => delete::delete(&path, a, cli.quiet),
        Command::Backup(a) => backup::backup(&path, a),
        Command::Compact(a) => compact::compact(&path, a.json),
        Command::Expire(a) => expire::expire(&path, a, cli.quiet),
        Command::Serve(a) => serve::serve(&path, a, cli.quiet),
    }
}
