//! `fpdb` command line: parses flags into validated library settings and calls the library.
//! Data goes to stdout (or `--output`), messages and progress to stderr.
//!
//! Exit codes: 0 success (for `query`: a duplicate was found); 1 `query` found no duplicate;
//! 2 error (nothing more was done); 3 `ingest` finished but skipped some inputs.

use std::io::{BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use rayon::prelude::*;
use serde::Serialize;

use fpdb::reader::{Fields, Format, Inputs, ReadOptions, Record};
use fpdb::{Fpdb, IngestResult, OnExisting, Outcome, SentenceHash, Settings};

/// `println!` that returns an error instead of panicking: a closed pipe then ends the command
/// quietly (exit 0, see `main`) and a full disk is reported (exit 2).
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*).context("cannot write to stdout")?
    };
}

const ABOUT: &str = "fpdb: a persistent near-duplicate text database (nshash + simhash on RocksDB)";
const LONG_ABOUT: &str = "\
fpdb stores fingerprints of documents on disk and tells, for each new document, which stored
documents it nearly duplicates. Every document gets a similar_id: documents sharing one are
near-duplicates (copied, reposted, lightly edited). The store is created on the first ingest
and can be fed and queried across many runs.

Examples:
  fpdb ingest crawl.jsonl --output results.jsonl     # ingest, one result line per document
  fpdb query --file page.txt                         # would this page be a duplicate?
  fpdb --db /data/news.db stats
  fpdb export > clusters.jsonl                       # every document with its similar_id

Exit codes: 0 ok (query: duplicate found; explain: linked), 1 query: no duplicate
(explain: not linked), 2 error, 3 ingest finished but skipped some inputs (bad lines,
existing ids).";

#[derive(Parser, Debug)]
#[command(name = "fpdb", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    /// Store directory [env: FPDB_DB] [default: ./fpdb.db]
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,

    /// No progress and no summary on stderr (errors are still printed).
    #[arg(long, short, global = true)]
    quiet: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Add documents to the store (created on first use) and report their similar_id.
    Ingest(IngestArgs),
    /// Ask whether a text is a near-duplicate of stored documents (never writes).
    Query(QueryArgs),
    /// Print store statistics and settings.
    Stats(JsonFlag),
    /// Print every stored document with its current similar_id, as JSONL.
    Export(ExportArgs),
    /// List near-duplicate clusters (similar_id and member ids).
    Clusters(ClustersArgs),
    /// Check that every index agrees with the stored documents (exit 2 when not).
    Verify(JsonFlag),
    /// Show why two texts match or not: kept sentences, shared ones, verification similarity,
    /// simhash distance, terms found in one text only. A and B are files, ids in --corpus, or
    /// ids of stored documents (compared on their stored fingerprints; exit 0 when in one
    /// cluster). Exit 0 when linked, 1 when not.
    Explain(ExplainArgs),
    /// Measure detection quality on a labeled set (in memory; the store is not touched).
    Eval(EvalArgs),
    /// Learn a simhash IDF table from documents (for `--idf FILE` when creating a store).
    Idf(IdfArgs),
}

#[derive(Args, Debug)]
struct IdfArgs {
    /// Input files or directories; `-` or nothing reads stdin
    files: Vec<PathBuf>,
    /// Write the table here [default: stdout]
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Learn from at most this many documents
    #[arg(long)]
    limit: Option<usize>,
    /// Prepare text as a store with this `--t2s` setting does [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    t2s: Option<bool>,
    /// Prepare text as a store with this `--reflow` setting does [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    reflow: Option<bool>,
    #[command(flatten)]
    input: InputArgs,
}

#[derive(Args, Debug)]
struct ExplainArgs {
    /// First text: a file, an id in --corpus, or a stored document's id
    a: String,
    /// Second text: a file, an id in --corpus, or a stored document's id
    b: String,
    /// Look A and B up by id in this JSONL corpus
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Args, Debug)]
struct ClustersArgs {
    /// Only clusters with at least this many documents
    #[arg(long, default_value_t = 2)]
    min_size: usize,
    /// One JSON object per cluster on stdout: {"similar_id","size","ids"}
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// Corpus to ingest in order (JSONL {"id","text",...})
    #[arg(long)]
    corpus: PathBuf,
    /// Labeled pairs: TSV with header id_a, id_b, label (0/1), kind
    #[arg(long)]
    pairs: PathBuf,
    /// Configurations to score: nshash, simhash, default (both) [default: all three]
    #[arg(long, value_delimiter = ',')]
    algo: Vec<EvalAlgo>,
    /// Learn simhash's IDF table from the corpus itself (first pass) instead of using jieba's
    #[arg(long)]
    learn_idf: bool,
    /// List up to N wrongly judged pairs per configuration (missed duplicates, false merges);
    /// `fpdb explain --corpus … A B` tells why [JSON output always lists them all]
    #[arg(long, value_name = "N", default_value_t = 0)]
    errors: usize,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
enum EvalAlgo {
    Nshash,
    Simhash,
    Default,
}

#[derive(Args, Debug)]
struct JsonFlag {
    /// Machine-readable JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Auto,
    Jsonl,
    Csv,
    Tsv,
    Warc,
    Html,
    Text,
    List,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
enum Algo {
    Nshash,
    Simhash,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FeaturesArg {
    Words,
    Chars,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StopwordsArg {
    Jieba,
    Iso,
    None,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum HashArg {
    Md5,
    Farmhash,
}

/// Fingerprint settings: used when the store is created; on an existing store they must equal
/// the store's (an error names both values otherwise).
#[derive(Args, Debug, Default)]
struct SettingsArgs {
    /// Algorithms to use, comma-separated [default: nshash,simhash]
    #[arg(
        long,
        value_delimiter = ',',
        help_heading = "Store settings (fixed at creation)"
    )]
    algos: Option<Vec<Algo>>,
    /// Convert traditional Chinese to simplified before fingerprinting (OpenCC t2s; only texts
    /// holding a traditional character are converted) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = "Store settings (fixed at creation)")]
    t2s: Option<bool>,
    /// nshash: number of longest sentences hashed per document [default: 5]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    nshash_n: Option<usize>,
    /// nshash: sentence hash [default: farmhash]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    nshash_hash: Option<HashArg>,
    /// nshash: minimum letters/digits for a sentence to count [default: 10]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    min_sentence_chars: Option<usize>,
    /// nshash: shared sentences needed for a candidate (capped by the document's count) [default: 1]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    nshash_min_shared: Option<usize>,
    /// Accept a candidate only when its similarity reaches this %: shared sentences over the
    /// larger document's, or character-shingle resemblance for short documents and (from 90%)
    /// re-wrapped ones (0 = off) [default: 60]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    verify_overlap: Option<u32>,
    /// simhash: features: jieba words with TF-IDF weights, or character 3-grams [default: words]
    #[arg(long, value_enum, help_heading = "Store settings (fixed at creation)")]
    simhash_features: Option<FeaturesArg>,
    /// Robust to re-wrapped lines: line breaks inside Chinese text are ignored, and every
    /// document gets a character-shingle sketch that can verify a candidate (>= 90%
    /// resemblance) whose sentences moved [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = "Store settings (fixed at creation)")]
    reflow: Option<bool>,
    /// simhash: stop words dropped from the terms: jieba's list (31 English words), Stopwords
    /// ISO Chinese + English, or none [default: jieba]
    #[arg(long, value_enum, help_heading = "Store settings (fixed at creation)")]
    simhash_stopwords: Option<StopwordsArg>,
    /// simhash: IDF table (`word idf` lines, e.g. from `fpdb idf`), copied into the store
    /// [default: jieba's built-in table]
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Store settings (fixed at creation)"
    )]
    idf: Option<PathBuf>,
    /// simhash: maximum Hamming distance, inclusive [default: 3]
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    simhash_k: Option<u32>,
    /// simhash: blocks of the permuted index (default: chosen from --expected-docs)
    #[arg(long, help_heading = "Store settings (fixed at creation)")]
    simhash_blocks: Option<u32>,
    /// Number of documents the store is sized for [default: 10000000]
    #[arg(long, help_heading = "Store settings (fixed at creation)", value_parser = clap::value_parser!(u64).range(1..))]
    expected_docs: Option<u64>,
}

impl SettingsArgs {
    fn to_settings(&self) -> anyhow::Result<Settings> {
        let simhash_idf = match &self.idf {
            None => None,
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read IDF table {}", p.display()))?;
                Some(std::sync::Arc::new(fpdb::text::IdfTable::parse(
                    &text,
                    &p.display().to_string(),
                )?))
            }
        };
        Ok(Settings {
            nshash: self.algos.as_ref().map(|a| a.contains(&Algo::Nshash)),
            simhash: self.algos.as_ref().map(|a| a.contains(&Algo::Simhash)),
            t2s: self.t2s,
            nshash_n: self.nshash_n,
            nshash_hash: self.nshash_hash.map(|h| match h {
                HashArg::Md5 => SentenceHash::Md5,
                HashArg::Farmhash => SentenceHash::Farmhash,
            }),
            min_sentence_chars: self.min_sentence_chars,
            nshash_min_shared: self.nshash_min_shared,
            verify_overlap_pct: self.verify_overlap,
            simhash_features: self.simhash_features.map(|f| match f {
                FeaturesArg::Words => fpdb::SimhashFeatures::Words,
                FeaturesArg::Chars => fpdb::SimhashFeatures::Chars,
            }),
            simhash_stopwords: self.simhash_stopwords.map(|s| match s {
                StopwordsArg::Jieba => fpdb::Stopwords::Jieba,
                StopwordsArg::Iso => fpdb::Stopwords::Iso,
                StopwordsArg::None => fpdb::Stopwords::None,
            }),
            simhash_idf,
            reflow: self.reflow,
            simhash_k: self.simhash_k,
            simhash_blocks: self.simhash_blocks,
            expected_docs: self.expected_docs,
        })
    }
}

#[derive(Args, Debug)]
struct InputArgs {
    /// Input format. auto: by extension (.jsonl .ndjson .json .csv .tsv .warc .wet .html .htm,
    /// after .gz/.zst), else by the first bytes (WARC/, {, <html); anything else is one text
    /// document whose id is its path. list: a file of input paths, one per line
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// JSONL field holding the document id (empty: `file:line`)
    #[arg(long, default_value = "id")]
    id_field: String,
    /// JSONL field holding the text
    #[arg(long, default_value = "text")]
    text_field: String,
    /// JSONL field holding the title (stored, not fingerprinted)
    #[arg(long, default_value = "title")]
    title_field: String,
    /// JSONL/CSV field holding the URL (stored)
    #[arg(long, default_value = "url")]
    url_field: String,
    /// JSONL/CSV field holding HTML, used when the text field is absent (title, description
    /// and main text are extracted)
    #[arg(long, default_value = "html")]
    html_field: String,
    /// Skip documents (or JSONL lines) larger than this many bytes
    #[arg(long, default_value_t = 32 << 20)]
    max_doc_bytes: usize,
}

impl InputArgs {
    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            format: match self.format {
                FormatArg::Auto => Format::Auto,
                FormatArg::Jsonl => Format::Jsonl,
                FormatArg::Csv => Format::Csv,
                FormatArg::Tsv => Format::Tsv,
                FormatArg::Warc => Format::Warc,
                FormatArg::Html => Format::Html,
                FormatArg::Text => Format::Text,
                FormatArg::List => Format::List,
            },
            fields: Fields {
                id: self.id_field.clone(),
                text: self.text_field.clone(),
                title: self.title_field.clone(),
                url: self.url_field.clone(),
                html: self.html_field.clone(),
            },
            max_doc_bytes: self.max_doc_bytes,
            defer_pages: false,
        }
    }
}

#[derive(Args, Debug)]
struct IngestArgs {
    /// Input files or directories (walked recursively); `-` or nothing reads stdin (JSONL unless
    /// it starts like WARC or HTML). Files ending in .gz or .zst are decompressed.
    files: Vec<PathBuf>,
    /// Also read the input paths listed in FILE, one per line
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
    /// Write one JSONL result per input document, in input order, to FILE (`-` = stdout):
    /// {"id","similar_id","duplicate_of","matches":[{"id","algo","score"}],"status"}
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Replace stored documents with the same id (default: skip and report them)
    #[arg(long)]
    replace: bool,
    /// Print the final summary as JSON on stdout
    #[arg(long)]
    json: bool,
    /// Skip the first N input records
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// Stop after N input records
    #[arg(long)]
    limit: Option<usize>,
    /// Documents fingerprinted in parallel and then written and synced together
    #[arg(long, default_value_t = 1024)]
    batch_size: usize,
    /// Worker threads for fingerprinting (default: all cores)
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Args, Debug)]
struct QueryArgs {
    /// The text to look up (or use --file, or `-` for stdin)
    text: Option<String>,
    /// Read the text from FILE
    #[arg(long, short, value_name = "FILE", conflicts_with = "text")]
    file: Option<PathBuf>,
    /// Look up every document of these inputs (files, directories, `-`; any ingest format)
    /// and print one JSON line each: {"id","duplicate","similar_id","duplicate_of","matches"}.
    /// Read-only: documents of the batch are compared with the store, not with each other
    #[arg(long, value_name = "PATH", num_args = 1.., conflicts_with_all = ["text", "file"])]
    batch: Vec<PathBuf>,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: InputArgs,
}

#[derive(Args, Debug)]
struct ExportArgs {
    /// Write to FILE instead of stdout
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed pipe (`fpdb export | head`) is the reader's choice, not an error.
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("fpdb: error: {e:#}");
            ExitCode::from(2)
        }
    }
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
    let path = db_path(&cli);
    match &cli.command {
        Command::Ingest(a) => ingest(&path, a, cli.quiet),
        Command::Query(a) if !a.batch.is_empty() => query_batch(&path, a, cli.quiet),
        Command::Query(a) => query(&path, a),
        Command::Stats(a) => stats(&path, a.json),
        Command::Export(a) => export(&path, a),
        Command::Verify(a) => verify(&path, a.json),
        Command::Clusters(a) => clusters(&path, a),
        Command::Eval(a) => eval(a),
        Command::Explain(a) => explain(&path, a),
        Command::Idf(a) => idf(a, cli.quiet),
    }
}

fn open_read_only(path: &PathBuf) -> anyhow::Result<Fpdb> {
    Ok(Fpdb::builder().read_only(true).open(path)?)
}

fn output_writer(path: &Option<PathBuf>) -> anyhow::Result<Option<Box<dyn Write>>> {
    Ok(match path {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(BufWriter::new(std::io::stdout().lock()))),
        Some(p) => Some(Box::new(BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ))),
    })
}

/// Refuse an `--output` file that is also an input: creating it would empty the input before
/// it is read.
fn check_output_not_input(output: &Option<PathBuf>, inputs: &[PathBuf]) -> anyhow::Result<()> {
    let Some(o) = output.as_ref().filter(|o| o.as_os_str() != "-") else {
        return Ok(());
    };
    let Some(out_id) = fpdb::reader::file_id(o) else {
        return Ok(());
    };
    for i in inputs.iter().filter(|i| i.as_os_str() != "-") {
        if fpdb::reader::file_id(i) == Some(out_id) {
            bail!(
                "--output {} is also an input ({}): it would be emptied before it is read; write the results elsewhere",
                o.display(),
                i.display()
            );
        }
    }
    Ok(())
}

/// One line of `ingest --output`.
#[derive(Serialize)]
struct OutputLine<'a> {
    id: Option<&'a str>,
    similar_id: Option<u64>,
    duplicate_of: Option<&'a str>,
    matches: &'a [fpdb::Match],
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

#[derive(Serialize, Default)]
struct Summary {
    store: String,
    records: u64,
    added: u64,
    new_clusters: u64,
    duplicates: u64,
    merges: u64,
    replaced: u64,
    skipped: u64,
    skipped_bad_input: u64,
    skipped_existing_id: u64,
    input_bytes: u64,
    seconds: f64,
    docs_per_second: f64,
}

fn ingest(path: &PathBuf, a: &IngestArgs, quiet: bool) -> anyhow::Result<u8> {
    if a.json && a.output.as_ref().is_some_and(|p| p.as_os_str() == "-") {
        bail!("--json and --output - both write to stdout; send --output to a file");
    }
    let mut files = a.files.clone();
    // Pages are decoded and extracted on the fingerprinting threads, not the reader thread.
    let read_opts = ReadOptions {
        defer_pages: true,
        ..a.input.read_options()
    };
    if let Some(list) = &a.files_from {
        let text = std::fs::read_to_string(list)
            .with_context(|| format!("cannot read {}", list.display()))?;
        files.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(PathBuf::from),
        );
    }
    if files.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no input: give files or directories, or pipe JSONL into `fpdb ingest -`");
        }
        files.push(PathBuf::from("-"));
    }
    let mut pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("fpdb-fp-{i}"));
    if let Some(t) = a.threads {
        pool = pool.num_threads(t.max(1));
    }
    pool.build_global().ok();
    // Everything that can be refused is checked before the store is created or opened.
    check_output_not_input(&a.output, &files)?;
    let settings = a.settings.to_settings()?;
    settings.resolve()?;
    let mut out = output_writer(&a.output)?;
    let mut inputs = Inputs::new(&files, read_opts);
    if let Some(o) = a.output.as_ref().filter(|o| o.as_os_str() != "-") {
        inputs = inputs.exclude(o);
    }
    let mut db = Fpdb::builder().settings(settings).create(true).open(path)?;
    let on_existing = if a.replace {
        OnExisting::Replace
    } else {
        OnExisting::Skip
    };
    let inputs = inputs.skip(a.skip).take(a.limit.unwrap_or(usize::MAX));
    let show = !quiet && std::io::stderr().is_terminal();
    // A bar with ETA when the total is known (plain files only: compressed sizes and stdin do
    // not tell how many bytes will be read); otherwise a spinner with counts and rate.
    let total_bytes: Option<u64> = files
        .iter()
        .map(|f| {
            let name = f.to_string_lossy().to_ascii_lowercase();
            let compressed = [".gz", ".zst", ".zstd"].iter().any(|e| name.ends_with(e));
            match std::fs::metadata(f) {
                Ok(m) if m.is_file() && !compressed => Some(m.len()),
                _ => None,
            }
        })
        .sum();
    let bar = match (show, total_bytes) {
        (false, _) => indicatif::ProgressBar::hidden(),
        (true, Some(total)) => {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta}) {msg}",
                )
                .expect("template"),
            );
            b
        }
        (true, None) => {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .expect("template"),
            );
            b
        }
    };
    let start = Instant::now();
    let mut sum = Summary {
        store: path.display().to_string(),
        ..Default::default()
    };
    let batch = a.batch_size.max(1);
    // Reading, decoding and fingerprinting (all cores) run ahead of the store writes (one
    // thread, in input order) by up to two batches.
    let (tx, rx) =
        std::sync::mpsc::sync_channel::<(Vec<Record>, Vec<Option<fpdb::Fingerprints>>)>(2);
    let mut inputs = inputs;
    let fingerprinter = db.fingerprinter().clone();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let reader = std::thread::Builder::new().name("fpdb-read".into());
        reader.spawn_scoped(scope, move || {
            while let Some(chunk) = next_chunk(&mut inputs, batch, &fingerprinter) {
                if tx.send(chunk).is_err() {
                    break;
                }
            }
        })?;
        for (chunk, fps) in rx {
            let mut results: Vec<Result<IngestResult, String>> = Vec::with_capacity(chunk.len());
            let mut fatal = None;
            for (rec, fp) in chunk.iter().zip(fps) {
                sum.records += 1;
                sum.input_bytes += rec.bytes as u64;
                match (&rec.doc, fp) {
                    (Err(reason), _) => {
                        sum.skipped += 1;
                        sum.skipped_bad_input += 1;
                        bar.suspend(|| eprintln!("fpdb: skipped {}: {reason}", rec.location()));
                        results.push(Err(reason.clone()));
                    }
                    (Ok(doc), Some(fp)) => match db.ingest(doc, fp, on_existing) {
                        Ok(r) => {
                            match &r {
                                IngestResult::Added { outcome, replaced } => {
                                    sum.added += 1;
                                    sum.replaced += u64::from(*replaced);
                                    sum.merges += outcome.merged.len() as u64;
                                    if outcome.duplicate_of.is_some() {
                                        sum.duplicates += 1;
                                    } else {
                                        sum.new_clusters += 1;
                                    }
                                }
                                IngestResult::SkippedExisting { id, .. } => {
                                    sum.skipped += 1;
                                    sum.skipped_existing_id += 1;
                                    // A re-run of a whole file would print one line per
                                    // document: list the first few, count the rest.
                                    if sum.skipped_existing_id <= LIST_EXISTING {
                                        bar.suspend(|| {
                                            eprintln!(
                                                "fpdb: skipped {}: id `{}` is already stored (use --replace to replace it)",
                                                rec.location(),
                                                shown(id)
                                            )
                                        });
                                    }
                                }
                            }
                            results.push(Ok(r));
                        }
                        Err(e) => {
                            fatal = Some(anyhow::Error::new(e).context(rec.location()));
                            break;
                        }
                    },
                    (Ok(_), None) => unreachable!("every readable document is fingerprinted"),
                }
            }
            // Acknowledge only what is durable: sync, then report.
            db.sync()?;
            if let Some(w) = out.as_mut() {
                for (rec, r) in chunk.iter().zip(&results) {
                    write_result(w, rec, r)?;
                }
                w.flush()?;
            }
            if total_bytes.is_some() {
                bar.set_position(sum.input_bytes);
            }
            let secs = start.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{} docs ({:.0}/s), {} duplicates, {} skipped",
                sum.records,
                sum.records as f64 / secs,
                sum.duplicates,
                sum.skipped
            ));
            bar.tick();
            if let Some(e) = fatal {
                return Err(e);
            }
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    if sum.skipped_existing_id > LIST_EXISTING {
        eprintln!(
            "fpdb: skipped {} more documents whose ids are already stored (not listed; --output has one line per document)",
            sum.skipped_existing_id - LIST_EXISTING
        );
    }
    sum.seconds = start.elapsed().as_secs_f64();
    sum.docs_per_second = if sum.seconds > 0.0 {
        sum.added as f64 / sum.seconds
    } else {
        0.0
    };
    if a.json {
        outln!("{}", serde_json::to_string(&sum)?);
    } else if !quiet {
        eprintln!(
            "fpdb: {} records: {} added ({} new clusters, {} duplicates, {} merges, {} replaced), \
             {} skipped ({} bad input, {} existing id) in {:.2}s ({:.0} docs/s) -> {}",
            sum.records,
            sum.added,
            sum.new_clusters,
            sum.duplicates,
            sum.merges,
            sum.replaced,
            sum.skipped,
            sum.skipped_bad_input,
            sum.skipped_existing_id,
            sum.seconds,
            sum.docs_per_second,
            sum.store
        );
    }
    Ok(if sum.skipped > 0 { 3 } else { 0 })
}

/// Documents skipped for an already stored id that are listed one by one on stderr.
const LIST_EXISTING: u64 = 10;

fn write_result(
    w: &mut dyn Write,
    rec: &Record,
    r: &Result<IngestResult, String>,
) -> anyhow::Result<()> {
    let source = || Some(rec.location());
    let line = match r {
        Err(reason) => OutputLine {
            id: rec.doc.as_ref().ok().map(|d| d.id.as_str()),
            similar_id: None,
            duplicate_of: None,
            matches: &[],
            status: "skipped",
            reason: Some(reason),
            source: source(),
        },
        Ok(IngestResult::Added { outcome, replaced }) => OutputLine {
            id: Some(&outcome.id),
            similar_id: outcome.similar_id,
            duplicate_of: outcome.duplicate_of.as_deref(),
            matches: &outcome.matches,
            status: if *replaced { "replaced" } else { "added" },
            reason: None,
            source: None,
        },
        Ok(IngestResult::SkippedExisting { id, similar_id }) => OutputLine {
            id: Some(id),
            similar_id: Some(*similar_id),
            duplicate_of: None,
            matches: &[],
            status: "skipped",
            reason: Some("id already stored"),
            source: source(),
        },
    };
    serde_json::to_writer(&mut *w, &line)?;
    w.write_all(b"\n")?;
    Ok(())
}

/// The next `n` records of `inputs` (None at the end), pages decoded and extracted and every
/// readable document fingerprinted, on all cores.
fn next_chunk(
    inputs: &mut impl Iterator<Item = Record>,
    n: usize,
    fp: &fpdb::fingerprint::Fingerprinter,
) -> Option<(Vec<Record>, Vec<Option<fpdb::Fingerprints>>)> {
    let mut chunk: Vec<Record> = inputs.by_ref().take(n).collect();
    if chunk.is_empty() {
        return None;
    }
    let fps = chunk
        .par_iter_mut()
        .map(|r| {
            r.finish();
            r.doc.as_ref().ok().map(|d| fp.fingerprint(&d.text))
        })
        .collect();
    Some((chunk, fps))
}

/// `fpdb query --batch`: every document of the inputs looked up, one JSON line each, in input
/// order; fingerprints computed on all cores, a batch at a time.
fn query_batch(path: &PathBuf, a: &QueryArgs, quiet: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let fp = db.fingerprinter().clone();
    let read_opts = ReadOptions {
        defer_pages: true,
        ..a.input.read_options()
    };
    let mut inputs = Inputs::new(&a.batch, read_opts);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut records, mut duplicates, mut skipped) = (0u64, 0u64, 0u64);
    #[derive(Serialize)]
    struct Line<'a> {
        id: &'a str,
        duplicate: bool,
        similar_id: Option<u64>,
        duplicate_of: Option<&'a str>,
        matches: &'a [fpdb::Match],
    }
    while let Some((chunk, fps)) = next_chunk(&mut inputs, 1024, &fp) {
        for (rec, f) in chunk.iter().zip(fps) {
            records += 1;
            match (&rec.doc, f) {
                (Ok(doc), Some(f)) => {
                    let o = db.query(&doc.id, &f)?;
                    duplicates += u64::from(o.is_duplicate());
                    let line = Line {
                        id: &doc.id,
                        duplicate: o.is_duplicate(),
                        similar_id: o.similar_id,
                        duplicate_of: o.duplicate_of.as_deref(),
                        matches: &o.matches,
                    };
                    serde_json::to_writer(&mut out, &line)?;
                    out.write_all(b"\n")?;
                }
                (Err(reason), _) => {
                    skipped += 1;
                    eprintln!("fpdb: skipped {}: {reason}", rec.location());
                    let line = OutputLine {
                        id: None,
                        similar_id: None,
                        duplicate_of: None,
                        matches: &[],
                        status: "skipped",
                        reason: Some(reason),
                        source: Some(rec.location()),
                    };
                    serde_json::to_writer(&mut out, &line)?;
                    out.write_all(b"\n")?;
                }
                (Ok(_), None) => unreachable!("every readable document is fingerprinted"),
            }
        }
        out.flush()?;
    }
    if !quiet {
        eprintln!(
            "fpdb: {records} records looked up: {duplicates} duplicates of stored documents, {} new, {skipped} skipped",
            records - duplicates - skipped
        );
    }
    Ok(if skipped > 0 { 3 } else { 0 })
}

fn query(path: &PathBuf, a: &QueryArgs) -> anyhow::Result<u8> {
    let text = match (&a.text, &a.file) {
        (Some(t), None) if t == "-" => read_stdin()?,
        (Some(t), None) => t.clone(),
        (None, Some(f)) => read_one_document(f, a.input.read_options())?,
        (None, None) if !std::io::stdin().is_terminal() => read_stdin()?,
        _ => bail!("no text: give TEXT, --file FILE, or pipe text into `fpdb query -`"),
    };
    if text.trim().is_empty() {
        bail!("the text to query is empty");
    }
    let db = open_read_only(path)?;
    let o: Outcome = db.query_text(&text)?;
    if a.json {
        #[derive(Serialize)]
        struct Q<'a> {
            duplicate: bool,
            similar_id: Option<u64>,
            duplicate_of: Option<&'a str>,
            matches: &'a [fpdb::Match],
        }
        let q = Q {
            duplicate: o.is_duplicate(),
            similar_id: o.similar_id,
            duplicate_of: o.duplicate_of.as_deref(),
            matches: &o.matches,
        };
        outln!("{}", serde_json::to_string(&q)?);
    } else if let Some(id) = o.similar_id {
        outln!(
            "duplicate: similar_id {id} (first document: {})",
            o.duplicate_of.as_deref().unwrap_or("?")
        );
        for m in &o.matches {
            match m.distance {
                Some(d) => outln!("  {}\t{}\tscore {:.3}\tdistance {d}", m.id, m.algo, m.score),
                None => outln!("  {}\t{}\tscore {:.3}", m.id, m.algo, m.score),
            }
        }
    } else {
        outln!("new: no stored document matches (it would get a fresh similar_id)");
    }
    Ok(if o.is_duplicate() { 0 } else { 1 })
}

/// The text of the one document in `file`, read as `ingest` reads it (format, charset, HTML
/// extraction).
fn read_one_document(file: &Path, opts: ReadOptions) -> anyhow::Result<String> {
    let mut records = Inputs::new(&[file.to_path_buf()], opts);
    let first = records
        .next()
        .with_context(|| format!("{}: no document in it", file.display()))?;
    if records.next().is_some() {
        bail!(
            "{} holds several documents: look them up with `fpdb query --batch {}`",
            file.display(),
            file.display()
        );
    }
    let location = first.location();
    match first.doc {
        Ok(doc) => Ok(doc.text),
        Err(reason) => bail!("{location}: {reason}"),
    }
}

/// An id for a line of text output: control characters (a newline would forge a line; such
/// ids are refused at input, but older stores may hold them) escaped.
fn shown(id: &str) -> std::borrow::Cow<'_, str> {
    if id.chars().any(char::is_control) {
        id.escape_debug().to_string().into()
    } else {
        id.into()
    }
}

fn read_stdin() -> anyhow::Result<String> {
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .context("reading stdin")?;
    Ok(s)
}

fn stats(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let s = db.stats();
    if json {
        outln!("{}", serde_json::to_string(&s)?);
    } else {
        let o = &s.options;
        outln!("store        {}", path.display());
        outln!("documents    {}", s.documents);
        outln!("clusters     {}", s.clusters);
        outln!("duplicates   {}", s.duplicates);
        outln!(
            "disk         {:.1} MiB",
            s.disk_bytes as f64 / (1 << 20) as f64
        );
        let cfs: Vec<String> = s
            .column_family_bytes
            .iter()
            .map(|(cf, n)| format!("{cf} {:.1}", *n as f64 / (1 << 20) as f64))
            .collect();
        outln!("tables MiB   {}", cfs.join(", "));
        outln!(
            "algorithms   {}{}",
            if o.nshash { "nshash " } else { "" },
            if o.simhash { "simhash" } else { "" }
        );
        outln!(
            "nshash       n={} hash={} min_sentence_chars={} min_shared={}",
            o.nshash_n,
            o.nshash_hash,
            o.min_sentence_chars,
            o.nshash_min_shared
        );
        outln!(
            "simhash      k={} blocks={} tables={} expected_docs={}",
            o.simhash_k,
            o.simhash_blocks,
            s.simhash_tables,
            o.expected_docs
        );
        outln!(
            "terms        features={} stopwords={} idf={}",
            o.simhash_features,
            o.simhash_stopwords,
            o.simhash_idf
        );
        outln!(
            "text         t2s={} reflow={} verify_overlap={}%",
            o.t2s,
            o.reflow,
            o.verify_overlap_pct
        );
    }
    Ok(0)
}

fn export(path: &PathBuf, a: &ExportArgs) -> anyhow::Result<u8> {
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
    Ok(0)
}

fn clusters(path: &PathBuf, a: &ClustersArgs) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let groups = db.clusters(a.min_size)?;
    let mut w = BufWriter::new(std::io::stdout().lock());
    for (id, members) in &groups {
        if a.json {
            let v = serde_json::json!({"similar_id": id, "size": members.len(), "ids": members});
            writeln!(w, "{v}")?;
        } else {
            writeln!(w, "similar_id {id} ({} documents)", members.len())?;
            for m in members {
                writeln!(w, "  {}", shown(m))?;
            }
        }
    }
    if !a.json {
        writeln!(
            w,
            "{} clusters with at least {} documents",
            groups.len(),
            a.min_size
        )?;
    }
    w.flush()?;
    Ok(0)
}

fn verify(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let v = db.verify()?;
    if json {
        outln!(
            "{}",
            serde_json::json!({"ok": true, "documents": v.documents, "clusters": v.roots.len()})
        );
    } else {
        outln!(
            "ok: {} documents, {} clusters, every index agrees",
            v.documents,
            v.roots.len()
        );
    }
    Ok(0)
}

fn explain(path: &PathBuf, a: &ExplainArgs) -> anyhow::Result<u8> {
    // Two ids of the store: neither names a file and no --corpus was given.
    if a.corpus.is_none() && !Path::new(&a.a).exists() && !Path::new(&a.b).exists() {
        if let Ok(db) = open_read_only(path) {
            return explain_stored(&db, path, a);
        }
    }
    let (ta, tb) = match &a.corpus {
        Some(c) => {
            let (mut ta, mut tb) = (None, None);
            for rec in Inputs::new(std::slice::from_ref(c), a.input.read_options()) {
                if let Ok(d) = rec.doc {
                    if d.id == a.a {
                        ta = Some(d.text.clone());
                    }
                    if d.id == a.b {
                        tb = Some(d.text);
                    }
                }
            }
            let missing = |id: &str| anyhow::anyhow!("id `{id}` is not in {}", c.display());
            (
                ta.ok_or_else(|| missing(&a.a))?,
                tb.ok_or_else(|| missing(&a.b))?,
            )
        }
        None => {
            let read =
                |f: &str| std::fs::read_to_string(f).with_context(|| format!("cannot read {f}"));
            (read(&a.a)?, read(&a.b)?)
        }
    };
    // The settings of the store when there is one, else defaults with the flags applied.
    let settings = a.settings.to_settings()?;
    let fp = match Fpdb::builder()
        .read_only(true)
        .settings(settings.clone())
        .open(path)
    {
        Ok(db) => db.fingerprinter().clone(),
        Err(fpdb::Error::NotFound { .. }) => {
            fpdb::fingerprint::Fingerprinter::new(settings.resolve()?, settings.simhash_idf)?
        }
        Err(e) => return Err(e.into()),
    };
    let opts = fp.options().clone();
    let e = fpdb::explain::explain(&ta, &tb, &fp);
    if a.json {
        outln!("{}", serde_json::to_string(&e)?);
        return Ok(0);
    }
    outln!(
        "nshash: {} shared of {} / {} kept sentences -> {}",
        e.shared_sentences.len(),
        e.sentences_a.len(),
        e.sentences_b.len(),
        if e.comparison.nshash_match {
            "match"
        } else {
            "no match"
        }
    );
    for (name, s) in [("A", &e.sentences_a), ("B", &e.sentences_b)] {
        for x in s.iter() {
            let mark = if e.shared_sentences.contains(x) {
                "="
            } else {
                " "
            };
            let short: String = x.chars().take(60).collect();
            outln!("  {name}{mark} {short}");
        }
    }
    print_comparison(&e.comparison, &opts)?;
    let terms = |v: &[(String, f64)]| {
        v.iter()
            .map(|(t, w)| format!("{t}({w:.3})"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    outln!("terms only in A: {}", terms(&e.terms_only_a));
    outln!("terms only in B: {}", terms(&e.terms_only_b));
    outln!(
        "decision: {}",
        if e.comparison.linked() {
            "linked (a candidate, verified)"
        } else {
            "not linked"
        }
    );
    Ok(if e.comparison.linked() { 0 } else { 1 })
}

/// The signals shared by text and stored explanations.
fn print_comparison(c: &fpdb::explain::Comparison, opts: &fpdb::Options) -> anyhow::Result<()> {
    outln!(
        "overlap: {:.1}% of the larger document's sentences are shared",
        100.0 * c.overlap
    );
    if let Some(r) = c.resemblance {
        outln!(
            "shingles: {:.1}% resemblance of character 4-grams (counts for documents of <= {} sentences, or from {:.0}%)",
            100.0 * r,
            fpdb::fingerprint::nshash::SHORT_SENTENCES,
            100.0 * fpdb::fingerprint::nshash::LONG_RESEMBLANCE
        );
    }
    outln!(
        "similarity: {:.1}% (threshold {}%) -> {}",
        100.0 * c.similarity,
        opts.verify_overlap_pct,
        if c.verified {
            "verified"
        } else {
            "not verified"
        }
    );
    match c.distance {
        Some(d) => outln!(
            "simhash: {} vs {}, distance {d} (k = {}) -> {}",
            c.simhash_a.as_deref().unwrap_or(""),
            c.simhash_b.as_deref().unwrap_or(""),
            opts.simhash_k,
            if c.simhash_match { "match" } else { "no match" }
        ),
        None => outln!("simhash: not computed (off, or no terms)"),
    }
    Ok(())
}

/// `fpdb explain ID_A ID_B` on stored documents: their clusters and stored fingerprints.
fn explain_stored(db: &Fpdb, path: &Path, a: &ExplainArgs) -> anyhow::Result<u8> {
    let get = |id: &str| -> anyhow::Result<fpdb::StoredDocument> {
        db.stored_document(id)?.ok_or_else(|| {
            anyhow::anyhow!(
                "`{id}` is neither a file nor an id in the store {} (to explain texts, give two files, or ids with --corpus)",
                path.display()
            )
        })
    };
    let (da, db_) = (get(&a.a)?, get(&a.b)?);
    let c = fpdb::explain::compare(&da.fingerprints, &db_.fingerprints, db.options());
    let same = da.similar_id == db_.similar_id;
    if a.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            id: &'a str,
            similar_id: u64,
            chars: u64,
            matched_at_ingest: &'a [String],
        }
        #[derive(serde::Serialize)]
        struct Out<'a> {
            a: Doc<'a>,
            b: Doc<'a>,
            same_cluster: bool,
            #[serde(flatten)]
            comparison: &'a fpdb::explain::Comparison,
        }
        fn doc(d: &fpdb::StoredDocument) -> Doc<'_> {
            Doc {
                id: &d.id,
                similar_id: d.similar_id,
                chars: d.fingerprints.chars,
                matched_at_ingest: &d.matched_at_ingest,
            }
        }
        let out = Out {
            a: doc(&da),
            b: doc(&db_),
            same_cluster: same,
            comparison: &c,
        };
        outln!("{}", serde_json::to_string(&out)?);
    } else {
        for (name, d) in [("A", &da), ("B", &db_)] {
            outln!(
                "{name}: {} (similar_id {}, {} characters{})",
                d.id,
                d.similar_id,
                d.fingerprints.chars,
                if d.matched_at_ingest.is_empty() {
                    String::new()
                } else {
                    format!("; matched at ingest: {}", d.matched_at_ingest.join(", "))
                }
            );
        }
        outln!("same cluster: {}", if same { "yes" } else { "no" });
        outln!(
            "nshash: {} of {} / {} kept sentence hashes shared -> {}",
            c.shared_nshash,
            da.fingerprints.nshash.len(),
            db_.fingerprints.nshash.len(),
            if c.nshash_match { "match" } else { "no match" }
        );
        print_comparison(&c, db.options())?;
        outln!(
            "pair: {} (texts are not stored: give two files, or ids with --corpus, to see sentences and terms)",
            if c.linked() {
                "linked directly (a candidate, verified)"
            } else if same {
                "not linked directly; in one cluster through other documents"
            } else {
                "not linked"
            }
        );
    }
    Ok(if same { 0 } else { 1 })
}

fn idf(a: &IdfArgs, quiet: bool) -> anyhow::Result<u8> {
    let mut files = a.files.clone();
    if files.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no input: give files or directories, or pipe JSONL into `fpdb idf -`");
        }
        files.push(PathBuf::from("-"));
    }
    let defaults = fpdb::Options::default();
    let opts = fpdb::Options {
        t2s: a.t2s.unwrap_or(defaults.t2s),
        reflow: a.reflow.unwrap_or(defaults.reflow),
        ..defaults
    };
    // Words are counted in the text exactly as the store will cut it.
    let fp = fpdb::fingerprint::Fingerprinter::new(opts, None)?;
    let mut bad = 0u64;
    let texts = Inputs::new(&files, a.input.read_options())
        .filter_map(|rec| match rec.doc {
            Ok(d) => Some(fp.prepare(&d.text)),
            Err(ref reason) => {
                bad += 1;
                eprintln!("fpdb: skipped {}: {reason}", rec.location());
                None
            }
        })
        .take(a.limit.unwrap_or(usize::MAX));
    let table = fpdb::text::IdfTable::learn(texts);
    if table.is_empty() {
        bail!("no words learned: the input has no documents with text");
    }
    let text = table.to_text();
    match &a.output {
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
        Some(p) => {
            std::fs::write(p, &text).with_context(|| format!("cannot write {}", p.display()))?
        }
    }
    if !quiet {
        eprintln!(
            "fpdb: learned IDF of {} words from {} documents{}",
            table.len(),
            table.docs(),
            a.output
                .as_ref()
                .map_or(String::new(), |p| format!(" -> {}", p.display()))
        );
    }
    Ok(if bad > 0 { 3 } else { 0 })
}

fn eval(a: &EvalArgs) -> anyhow::Result<u8> {
    let mut docs = Vec::new();
    for rec in Inputs::new(std::slice::from_ref(&a.corpus), a.input.read_options()) {
        match rec.doc {
            Ok(d) => docs.push(d),
            Err(ref reason) => eprintln!("fpdb: skipped {}: {reason}", rec.location()),
        }
    }
    let pairs = fpdb::eval::read_pairs(&a.pairs)?;
    if pairs.is_empty() {
        bail!("{}: no labeled pairs in it", a.pairs.display());
    }
    let mut base = a.settings.to_settings()?;
    if a.learn_idf {
        if base.simhash_idf.is_some() {
            anyhow::bail!("--learn-idf and --idf exclude each other");
        }
        let mut opts = base.resolve()?;
        opts.simhash_idf = fpdb::IdfSource::Jieba; // the table is what is being learned
        let fp = fpdb::fingerprint::Fingerprinter::new(opts, None)?;
        let prepared: Vec<String> = docs.par_iter().map(|d| fp.prepare(&d.text)).collect();
        let t = fpdb::text::IdfTable::learn(prepared.iter().map(String::as_str));
        if !a.json {
            eprintln!(
                "learned IDF table: {} words from {} documents",
                t.len(),
                t.docs()
            );
        }
        base.simhash_idf = Some(std::sync::Arc::new(t));
    }
    let fps = fpdb::eval::fingerprint_all(&docs, &base)?;
    let algos = if a.algo.is_empty() {
        vec![EvalAlgo::Nshash, EvalAlgo::Simhash, EvalAlgo::Default]
    } else {
        a.algo.clone()
    };
    let mut reports = Vec::new();
    for algo in algos {
        let (name, ns, sim) = match algo {
            EvalAlgo::Nshash => ("nshash", true, false),
            EvalAlgo::Simhash => ("simhash", false, true),
            EvalAlgo::Default => ("default", true, true),
        };
        let s = Settings {
            nshash: Some(ns),
            simhash: Some(sim),
            ..base.clone()
        };
        reports.push(fpdb::eval::evaluate(name, &docs, &fps, &pairs, &s)?);
    }
    if a.json {
        outln!("{}", serde_json::to_string(&reports)?);
        return Ok(0);
    }
    outln!("{} documents, {} pairs", docs.len(), pairs.len());
    for r in &reports {
        outln!(
            "\n{:<8} precision {:.4}  recall {:.4}  F1 {:.4}  (tp {}, fp {}, fn {}{})",
            r.algo,
            r.precision,
            r.recall,
            r.f1,
            r.tp,
            r.fp,
            r.fn_,
            if r.missing > 0 {
                format!(", {} pairs with unknown ids", r.missing)
            } else {
                String::new()
            }
        );
        outln!(
            "  {:<22} {:>5} {:>6} {:>10} {:>9}",
            "kind",
            "label",
            "pairs",
            "predicted",
            "accuracy"
        );
        for (k, s) in &r.kinds {
            outln!(
                "  {:<22} {:>5} {:>6} {:>10} {:>8.1}%",
                k,
                s.label,
                s.pairs,
                s.predicted_duplicate,
                100.0 * s.accuracy
            );
        }
        if a.errors > 0 && !r.errors.is_empty() {
            outln!(
                "  wrongly judged ({} of {}):",
                r.errors.len().min(a.errors),
                r.errors.len()
            );
            for e in r.errors.iter().take(a.errors) {
                outln!(
                    "    {} {}\t{}\t{}",
                    if e.label == 1 { "missed" } else { "merged" },
                    e.kind,
                    e.a,
                    e.b
                );
            }
        }
    }
    Ok(0)
}
