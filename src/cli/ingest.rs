//! `fpdb ingest`: read, fingerprint on all cores, ingest in input order, sync, then report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use fpdb::reader::{Inputs, ReadOptions, Record};
use fpdb::{Fpdb, IngestResult, OnExisting};

use super::args::{InputArgs, SettingsArgs};
use super::output::{
    check_output_not_input, check_output_writable, check_outside_store, output_writer, shown,
    OutputLine, EXIT_OK, EXIT_SKIPPED,
};

#[derive(Args, Debug)]
pub(super) struct IngestArgs {
    /// Input files or directories (walked recursively); `-` or nothing reads stdin (JSONL unless
    /// it starts like WARC or HTML). Files ending in .gz or .zst are decompressed.
    pub(super) files: Vec<PathBuf>,
    /// Also read the input paths listed in FILE, one per line
    #[arg(long, value_name = "FILE")]
    pub(super) files_from: Option<PathBuf>,
    #[command(flatten)]
    pub(super) input: InputArgs,
    /// Write one JSONL result per input document, in input order, to FILE (`-` = stdout):
    /// {"id","similar_id","duplicate_of","matches":[{"id","algo","score"}],"status"}
    #[arg(long, short, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
    /// Replace stored documents with the same id (default: skip and report them)
    #[arg(long)]
    pub(super) replace: bool,
    /// Keep documents for DURATION (`30d`, `12h`, ...; `off` keeps everything): stored with the
    /// store, and every ingest first deletes the documents ingested longer ago
    #[arg(long, value_name = "DURATION|off", value_parser = parse_retention)]
    pub(super) retention: Option<Retention>,
    /// Print the final summary as JSON on stdout
    #[arg(long)]
    pub(super) json: bool,
    /// Skip the first N input records
    #[arg(long, default_value_t = 0)]
    pub(super) skip: usize,
    /// Stop after N input records
    #[arg(long)]
    pub(super) limit: Option<usize>,
    /// Documents fingerprinted in parallel and then written and synced together
    #[arg(long, default_value_t = 1024)]
    pub(super) batch_size: usize,
    /// Worker threads for fingerprinting (default: all cores)
    #[arg(long)]
    pub(super) threads: Option<usize>,
    /// Block cache in MiB (index, filter and data blocks; memtables take up to 128 MiB more):
    /// more keeps more of a large store's lookups in memory
    #[arg(long, value_name = "MIB", default_value_t = super::INGEST_CACHE_MIB, value_parser = clap::value_parser!(u64).range(8..))]
    pub(super) cache_mib: u64,
    /// The in-memory filter of the store's hash prefixes (~10 bits per stored key, at most
    /// 157 MB): `auto` uses the one saved with the store (bringing it up to date with the
    /// documents written since, after a run that did not end cleanly) and starts one for a new
    /// store; `build` also builds it by a scan when none fits (a store without a saved filter:
    /// ~1 s per 10^5 stored documents); `off` keeps none (memory bounded by the cache and
    /// memtables). `--memory-filters` alone means `build`; a value needs `=`
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", num_args = 0..=1, require_equals = true, default_missing_value = "build")]
    pub(super) memory_filters: MemoryFilters,
    #[command(flatten)]
    pub(super) settings: SettingsArgs,
}

/// `fpdb dedup`: the flags of `ingest`; `-o` is where the unique records go.
#[derive(clap::Args, Debug)]
pub(super) struct DedupArgs {
    #[command(flatten)]
    pub(super) ingest: IngestArgs,
    /// Also write the near-duplicate records (and those whose id is already stored) to FILE, as
    /// the unique ones are written
    #[arg(long, value_name = "FILE")]
    pub(super) duplicates_out: Option<std::path::PathBuf>,
}

/// `ingest --memory-filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum MemoryFilters {
    Auto,
    Build,
    Off,
}

#[derive(Serialize, Default)]
pub(super) struct Summary {
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
    /// Records lost to damaged input (corrupt archive records, damaged gzip members and Parquet
    /// row groups), counted apart from bad input.
    lost_to_damage: u64,
    /// Documents deleted by the store's retention before this run's input.
    expired: u64,
    /// WARC/ARC records that are not documents (requests, metadata, DNS, non-text payloads).
    not_documents: u64,
    input_bytes: u64,
    seconds: f64,
    docs_per_second: f64,
    /// What the lookups read (totals; see [`super::output::lookup_line`]).
    lookups: fpdb::LookupStats,
    /// `fpdb dedup`: the records written.
    #[serde(skip_serializing_if = "Option::is_none")]
    dedup: Option<super::dedup::Counts>,
    /// The store after the run: documents, clusters, and duplicates (documents that are not
    /// the first of their cluster: this run's duplicates and merges add to it), as `fpdb stats`
    /// counts them.
    store_documents: u64,
    store_clusters: u64,
    store_duplicates: u64,
    /// The distinct (input, reason) of skipped records printed on stderr (at most
    /// [`LIST_BAD`]).
    #[serde(skip)]
    bad_listed: Vec<(String, String)>,
    /// Skipped records not printed: a reason printed already for their input, or past
    /// [`LIST_BAD`] reasons.
    #[serde(skip)]
    bad_unlisted: u64,
}

/// Refuse, before any store is created or opened, the settings a store at `path` would refuse:
/// all of them when this run creates a directory store there (true is returned), else those
/// refused whatever the store (an existing store checks the rest against its own).
pub(super) fn check_settings(path: &Path, settings: &fpdb::Settings) -> anyhow::Result<bool> {
    let fresh = !fpdb::store::redis::RedisUrl::is_redis(&path.to_string_lossy())
        && std::fs::read_dir(path).map_or(true, |mut d| d.next().is_none());
    if fresh {
        settings.resolve_new()?;
    } else {
        settings.resolve()?;
    }
    Ok(fresh)
}

/// `fpdb ingest`, or with `dedup` given `fpdb dedup` (`a.output` is then where the unique
/// records go, stdout by default, and no result lines are written).
pub(super) fn ingest(
    path: &PathBuf,
    a: &IngestArgs,
    quiet: bool,
    verbose: bool,
    dedup: Option<&DedupArgs>,
) -> anyhow::Result<u8> {
    // The outputs: result lines (ingest), or unique and duplicate records (dedup).
    let (results, unique, duplicates) = match dedup {
        None => (a.output.clone(), None, None),
        Some(d) => (
            None,
            Some(a.output.clone().unwrap_or_else(|| PathBuf::from("-"))),
            d.duplicates_out.clone(),
        ),
    };
    let to_stdout = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if a.json && (to_stdout(&results) || to_stdout(&unique) || to_stdout(&duplicates)) {
        bail!(
            "--json and an output to stdout (`-`) both write to stdout; send the output to a file"
        );
    }
    if to_stdout(&unique) && to_stdout(&duplicates) {
        bail!("the unique and the duplicate records cannot both go to stdout");
    }
    if unique.is_some() && unique == duplicates {
        bail!("-o and --duplicates-out name the same file");
    }
    let files = input_files(a)?;
    // Pages are decoded and extracted on the fingerprinting threads, not the reader thread.
    let read_opts = ReadOptions {
        defer_pages: true,
        keep_raw: dedup.is_some(),
        ..a.input.read_options()
    };
    let mut pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("fpdb-fp-{i}"));
    if let Some(t) = a.threads {
        pool = pool.num_threads(t.max(1));
    }
    pool.build_global().ok();
    // Everything that can be refused is checked before the store is created or opened.
    for (flag, o) in [
        ("--output", &results),
        ("-o", &unique),
        ("--duplicates-out", &duplicates),
    ] {
        check_output_not_input(o, &files)?;
        check_outside_store(flag, o.as_deref(), path)?;
        check_output_writable(o)?;
    }
    let settings = a.settings.to_settings()?;
    let fresh = check_settings(path, &settings)?;
    let had_filter = path.join(fpdb::store::PRESENCE_FILE).exists();
    let mut inputs = Inputs::new(&files, read_opts);
    for o in [&results, &unique, &duplicates] {
        if let Some(o) = o.as_ref().filter(|o| o.as_os_str() != "-") {
            inputs = inputs.exclude(o);
        }
    }
    // In-memory filters of the hash prefixes (store::Presence): the one saved with the store
    // at the end of the last run (with the documents written since read into it, when a run
    // did not end cleanly or kept no filter), or, for a store created by this run, empty ones
    // (nothing to scan). Lookups of hashes no document has skip RocksDB; same results (the
    // filters are exact). Saved again when the run ends.
    let mut db = Fpdb::builder()
        .settings(settings)
        .create(true)
        .empty_filters(fresh && a.memory_filters != MemoryFilters::Off)
        .presence_filters(a.memory_filters == MemoryFilters::Build)
        .saved_filters(a.memory_filters != MemoryFilters::Off)
        .cache_bytes((a.cache_mib as usize) << 20)
        .open(path)?;
    // Created (emptied) only now that the store's lock is held: a run refused because another
    // process holds the store leaves an earlier run's results as they were.
    let mut out = output_writer(&results)?;
    let mut sink = match unique {
        None => None,
        Some(_) => {
            use super::dedup::{Out, Sink};
            let u = output_writer(&unique)?.expect("a path");
            let d = output_writer(&duplicates)?.map(|w| Out::new(w, "--duplicates-out"));
            Some(Sink::new(Out::new(u, "-o"), d))
        }
    };
    if had_filter
        && db.memory_filter_bytes().is_none()
        && a.memory_filters != MemoryFilters::Off
        && !quiet
    {
        eprintln!(
            "fpdb: the presence filter saved in {} cannot serve the store (damaged, or saved for \
             another copy or state of it): lookups read the store for every hash; \
             `--memory-filters` or `fpdb compact` rebuilds it",
            path.display()
        );
    }
    if let (Some(n @ 1..), false) = (db.memory_filter_caught_up(), quiet) {
        eprintln!(
            "fpdb: presence filter brought up to date: {n} document(s) written since it was saved read into it"
        );
    }
    if let Some(r) = &a.retention {
        db.set_retention(r.0)?;
    }
    let expired = db.apply_retention()?;
    let on_existing = if a.replace {
        OnExisting::Replace
    } else {
        OnExisting::Skip
    };
    let not_documents = inputs.not_documents();
    let mut inputs = inputs.skip(a.skip).take(a.limit.unwrap_or(usize::MAX));
    let terminal = std::io::stderr().is_terminal();
    let (bar, sized) = progress_bar(&files, !quiet && terminal);
    let start = Instant::now();
    let progress = Progress {
        bar: &bar,
        sized,
        start,
        // Logs (nohup, cron, CI) get a line every 10 s (`FPDB_PROGRESS_SECS`) instead of a bar.
        log_every: (!quiet && !terminal).then(|| {
            let secs = std::env::var("FPDB_PROGRESS_SECS")
                .ok()
                .and_then(|v| v.parse().ok());
            std::time::Duration::from_secs(secs.unwrap_or(10))
        }),
        logged: std::cell::Cell::new(start),
    };
    let mut sum = Summary {
        store: path.display().to_string(),
        expired,
        ..Default::default()
    };
    let batch = a.batch_size.max(1);
    // Three stages run at once: reading and parsing (one thread), decoding and fingerprinting
    // (all cores), and the store writes (this thread, in input order); each runs ahead of the
    // next by a few chunks, so no core waits for the reader while the writer works.
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<Vec<Record>>(4);
    let (tx, rx) =
        std::sync::mpsc::sync_channel::<(Vec<Record>, Vec<Option<fpdb::Fingerprints>>)>(3);
    let fingerprinter = db.fingerprinter().clone();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let reader = std::thread::Builder::new().name("fpdb-read".into());
        reader.spawn_scoped(scope, move || loop {
            let chunk: Vec<Record> = inputs.by_ref().take(batch).collect();
            if chunk.is_empty() || raw_tx.send(chunk).is_err() {
                break;
            }
        })?;
        let fp = std::thread::Builder::new().name("fpdb-fp".into());
        fp.spawn_scoped(scope, move || {
            for mut chunk in raw_rx {
                let fps = fingerprint_chunk(&mut chunk, &fingerprinter);
                if tx.send((chunk, fps)).is_err() {
                    break;
                }
            }
        })?;
        // Batch i is made durable (its log synced) on a thread of its own while batch i + 1
        // is decided and written; its results are written once that sync returns.
        let mut waiting: Option<Written<'_>> = None;
        for (chunk, fps) in rx {
            let (results, fatal) = ingest_chunk(&mut db, &chunk, fps, on_existing, &mut sum, &bar);
            let durable = match db.commit_unsynced() {
                Ok(Some(syncer)) => Durable::Syncing(
                    std::thread::Builder::new()
                        .name("fpdb-sync".into())
                        .spawn_scoped(scope, move || syncer())?,
                ),
                Ok(None) => Durable::Inline,
                Err(e) => Durable::Failed(e),
            };
            let stop = fatal.is_some();
            let written = Written {
                chunk,
                results,
                fatal,
                durable,
            };
            if let Some(w) = waiting.replace(written) {
                w.acknowledge(&db, &mut out, &mut sink, &sum, &progress)?;
            }
            if stop {
                break;
            }
        }
        if let Some(w) = waiting {
            w.acknowledge(&db, &mut out, &mut sink, &sum, &progress)?;
        }
        Ok(())
    })?;
    // Opening the store later (query, stats, ...) then replays no write-ahead log.
    db.flush()?;
    if let Err(e) = db.save_memory_filter() {
        // Everything is stored; only the next run's head start is lost.
        eprintln!(
            "fpdb: warning: the presence filter was not saved ({e}); the next run goes without it"
        );
    }
    bar.finish_and_clear();
    sum.not_documents = not_documents.load(std::sync::atomic::Ordering::Relaxed);
    sum.dedup = sink.as_ref().map(|s| s.counts);
    (sum.store_documents, sum.store_clusters) = db.totals();
    sum.store_duplicates = sum.store_documents.saturating_sub(sum.store_clusters);
    sum.lookups = db.lookup_stats();
    sum.seconds = start.elapsed().as_secs_f64();
    sum.docs_per_second = if sum.seconds > 0.0 {
        sum.added as f64 / sum.seconds
    } else {
        0.0
    };
    sum.report(a.json, quiet, verbose)?;
    if sum.records > 0 && sum.skipped_bad_input + sum.lost_to_damage == sum.records {
        // Not a partial success: nothing could be read (a wrong field name, a CSV without
        // its header line, a file of another format).
        eprintln!(
            "fpdb: error: nothing was ingested: all {} records were skipped as unreadable (the \
             first reasons are above)",
            sum.records
        );
        return Ok(super::output::EXIT_ERROR);
    }
    Ok(if sum.skipped > 0 {
        EXIT_SKIPPED
    } else {
        EXIT_OK
    })
}

/// How a run shows its progress: a bar on a terminal, a line every `log_every` in a log.
struct Progress<'a> {
    bar: &'a indicatif::ProgressBar,
    /// Whether the bar's total (input bytes) is known.
    sized: bool,
    start: Instant,
    log_every: Option<std::time::Duration>,
    logged: std::cell::Cell<Instant>,
}

/// A chunk written to the store, not yet acknowledged: its results wait for its sync.
struct Written<'scope> {
    chunk: Vec<Record>,
    results: Vec<Result<IngestResult, String>>,
    /// The store error that stopped the chunk (after the results before it).
    fatal: Option<anyhow::Error>,
    durable: Durable<'scope>,
}

/// How a written chunk becomes durable.
enum Durable<'scope> {
    /// The sync of the store's log, running on a thread of its own.
    Syncing(std::thread::ScopedJoinHandle<'scope, fpdb::Result<()>>),
    /// By `Fpdb::sync` when acknowledged (a store other processes write).
    Inline,
    /// Handing it to the store failed.
    Failed(fpdb::Error),
}

impl Written<'_> {
    /// Wait until the chunk is durable, then write its results and show the progress; the
    /// chunk's store error, if it had one, after that.
    fn acknowledge(
        self,
        db: &Fpdb,
        out: &mut Option<Box<dyn Write>>,
        sink: &mut Option<super::dedup::Sink>,
        sum: &Summary,
        p: &Progress<'_>,
    ) -> anyhow::Result<()> {
        let synced = match self.durable {
            Durable::Syncing(h) => h
                .join()
                .unwrap_or_else(|_| Err(fpdb::Error::Storage("the sync thread panicked".into()))),
            Durable::Inline => db.sync(),
            Durable::Failed(e) => Err(e),
        };
        // After a store error the sync of what came before it may fail too (RocksDB then
        // only says "Writer has previous error"): the first error is the one to report.
        if let Err(e) = synced {
            return Err(match self.fatal {
                Some(first) => first,
                None => e.into(),
            });
        }
        if let Some(w) = out.as_mut() {
            for (rec, r) in self.chunk.iter().zip(&self.results) {
                write_result(w, rec, r)?;
            }
            w.flush()?;
        }
        if let Some(s) = sink.as_mut() {
            for (rec, r) in self.chunk.iter().zip(&self.results) {
                s.put(rec, r)?;
            }
            s.flush()?;
        }
        if p.sized {
            p.bar.set_position(sum.input_bytes);
        }
        let secs = p.start.elapsed().as_secs_f64().max(1e-9);
        let line = format!(
            "{} docs ({:.0}/s), {} duplicates, {} skipped",
            sum.records,
            sum.records as f64 / secs,
            sum.duplicates,
            sum.skipped
        );
        if p.log_every
            .is_some_and(|every| p.logged.get().elapsed() >= every)
        {
            p.logged.set(Instant::now());
            eprintln!("fpdb: {line} after {secs:.0}s");
        }
        p.bar.set_message(line);
        p.bar.tick();
        // The texts are freed off the writer's thread.
        rayon::spawn(move || drop(self.chunk));
        match self.fatal {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A retention asked for: seconds, or None for `off`.
#[derive(Debug, Clone)]
pub(super) struct Retention(Option<u64>);

fn parse_retention(s: &str) -> Result<Retention, String> {
    if s == "off" {
        return Ok(Retention(None));
    }
    super::expire::parse_duration(s).map(|d| Retention(Some(d.as_secs())))
}

/// The inputs named on the command line and in `--files-from`; stdin when none.
fn input_files(a: &IngestArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = a.files.clone();
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
    check_inputs_readable(&files)?;
    Ok(files)
}

/// Every named input exists and can be opened (a directory listed), so that a mistyped name is
/// an error (exit 2) before any store is created, not a skipped record of a partial success.
pub(super) fn check_inputs_readable(files: &[PathBuf]) -> anyhow::Result<()> {
    for f in files.iter().filter(|f| f.as_os_str() != "-") {
        let opened = match std::fs::metadata(f) {
            Ok(m) if m.is_dir() => std::fs::read_dir(f).map(drop),
            // A FIFO would block this open until a writer comes: the reader opens it.
            Ok(m) if m.is_file() => std::fs::File::open(f).map(drop),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        opened.with_context(|| format!("cannot read input {}", f.display()))?;
    }
    Ok(())
}

/// A bar with ETA when the total is known (plain files only: compressed sizes and stdin do
/// not tell how many bytes will be read; the bool says so), otherwise a spinner with counts
/// and rate; hidden when not `show`n.
fn progress_bar(files: &[PathBuf], show: bool) -> (indicatif::ProgressBar, bool) {
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
    (bar, total_bytes.is_some())
}

/// Ingest one chunk in input order (one [`Fpdb::ingest_batch`]), counting into `sum`; stops at
/// the first store error, returned with the results before it.
fn ingest_chunk(
    db: &mut Fpdb,
    chunk: &[Record],
    fps: Vec<Option<fpdb::Fingerprints>>,
    on_existing: OnExisting,
    sum: &mut Summary,
    bar: &indicatif::ProgressBar,
) -> (Vec<Result<IngestResult, String>>, Option<anyhow::Error>) {
    let docs: Vec<(&fpdb::Document, fpdb::Fingerprints)> = chunk
        .iter()
        .zip(fps)
        .filter_map(|(rec, fp)| match (&rec.doc, fp) {
            (Ok(doc), Some(fp)) => Some((doc, fp)),
            (Ok(_), None) => unreachable!("every readable document is fingerprinted"),
            (Err(_), _) => None,
        })
        .collect();
    let batch = db.ingest_batch(docs, on_existing);
    let mut done = batch.results.into_iter();
    let mut results = Vec::with_capacity(chunk.len());
    for rec in chunk {
        match &rec.doc {
            Err(reason) => {
                sum.records += 1;
                sum.input_bytes += rec.bytes as u64;
                sum.skipped += 1;
                if rec.lost > 0 {
                    sum.lost_to_damage += rec.lost;
                } else {
                    sum.skipped_bad_input += 1;
                }
                let listed = sum
                    .bad_listed
                    .iter()
                    .any(|(s, r)| *s == rec.source && r == reason);
                if sum.bad_listed.len() < LIST_BAD && !listed {
                    bar.suspend(|| eprintln!("fpdb: skipped {}: {reason}", rec.location()));
                    sum.bad_listed.push((rec.source.clone(), reason.clone()));
                } else {
                    sum.bad_unlisted += 1;
                }
                results.push(Err(reason.clone()));
            }
            Ok(_) => match done.next() {
                Some(r) => {
                    sum.records += 1;
                    sum.input_bytes += rec.bytes as u64;
                    sum.count(&r, rec, bar);
                    results.push(Ok(r));
                }
                None => {
                    let e = batch
                        .error
                        .map(anyhow::Error::new)
                        .unwrap_or_else(|| anyhow::anyhow!("document was not ingested"));
                    return (results, Some(e.context(rec.location())));
                }
            },
        }
    }
    (results, None)
}

impl Summary {
    /// Count one ingested document; list the first few already stored ids on stderr.
    fn count(&mut self, r: &IngestResult, rec: &Record, bar: &indicatif::ProgressBar) {
        match r {
            IngestResult::Added { outcome, replaced } => {
                self.added += 1;
                self.replaced += u64::from(*replaced);
                self.merges += outcome.merged.len() as u64;
                if outcome.duplicate_of.is_some() {
                    self.duplicates += 1;
                } else {
                    self.new_clusters += 1;
                }
            }
            IngestResult::SkippedExisting { id, .. } => {
                self.skipped += 1;
                self.skipped_existing_id += 1;
                // A re-run of a whole file would print one line per document: list the
                // first few, count the rest.
                if self.skipped_existing_id <= LIST_EXISTING {
                    bar.suspend(|| {
                        eprintln!(
                            "fpdb: skipped {}: id `{}` is already stored (use --replace to replace it)",
                            rec.location(),
                            shown(id)
                        );
                    });
                }
            }
        }
    }

    /// The summary: JSON on stdout with `--json`, else one line on stderr unless quiet.
    fn report(&self, json: bool, quiet: bool, verbose: bool) -> anyhow::Result<()> {
        if self.bad_unlisted > 0 {
            eprintln!(
                "fpdb: skipped {} more records not listed (each for a reason printed above for its \
                 input, or past {LIST_BAD} reasons; --output has one line per record)",
                self.bad_unlisted
            );
        }
        if self.skipped_existing_id > LIST_EXISTING {
            eprintln!(
                "fpdb: skipped {} more documents whose ids are already stored (not listed; --output has one line per document)",
                self.skipped_existing_id - LIST_EXISTING
            );
        }
        if json {
            outln!("{}", serde_json::to_string(self)?);
        } else if !quiet {
            if self.expired > 0 {
                eprintln!(
                    "fpdb: retention: {} documents older than the store's retention deleted",
                    self.expired
                );
            }
            if self.not_documents > 0 {
                eprintln!(
                    "fpdb: {} WARC/ARC records are not documents (requests, metadata, DNS, images and other non-text payloads) and were passed over",
                    self.not_documents
                );
            }
            eprintln!(
                "fpdb: {} records: {} added ({} new clusters, {} duplicates, {} merges, {} replaced), \
                 {} skipped ({} bad input, {} existing id{}) in {:.2}s ({:.0} docs/s) -> {}: \
                 {} documents in {} clusters, {} duplicates",
                self.records,
                self.added,
                self.new_clusters,
                self.duplicates,
                self.merges,
                self.replaced,
                self.skipped,
                self.skipped_bad_input,
                self.skipped_existing_id,
                if self.lost_to_damage > 0 {
                    format!(", {} lost to damaged input", self.lost_to_damage)
                } else {
                    String::new()
                },
                self.seconds,
                self.docs_per_second,
                self.store,
                self.store_documents,
                self.store_clusters,
                self.store_duplicates
            );
            if let Some(d) = &self.dedup {
                eprintln!(
                    "fpdb: dedup: {} unique records written, {} near-duplicates or already stored{}",
                    d.unique,
                    d.duplicates,
                    if d.kept_later_merged > 0 {
                        format!(
                            "; {} unique records were later linked to another one by a record \
                             that merged their clusters (both stay written; `fpdb clusters` lists them)",
                            d.kept_later_merged
                        )
                    } else {
                        String::new()
                    }
                );
            }
            if let Some(line) = super::output::lookup_line(&self.lookups).filter(|_| verbose) {
                eprintln!("{line}");
            }
        }
        Ok(())
    }
}

/// Documents skipped for an already stored id that are listed one by one on stderr.
pub(super) const LIST_EXISTING: u64 = 10;

/// Distinct reasons for skipped records printed on stderr (a record of an input with the same
/// reason as one printed is counted, not printed: a file without the text field gives one line,
/// not one per record).
pub(super) const LIST_BAD: usize = 10;

pub(super) fn write_result(
    w: &mut dyn Write,
    rec: &Record,
    r: &Result<IngestResult, String>,
) -> anyhow::Result<()> {
    let line = match r {
        Err(reason) => OutputLine {
            id: rec.doc.as_ref().ok().map(|d| d.id.as_str()),
            similar_id: None,
            duplicate_of: None,
            matches: &[],
            status: "skipped",
            reason: Some(reason),
            source: Some(rec.location()),
        },
        Ok(r) => OutputLine::of(r, || Some(rec.location())),
    };
    serde_json::to_writer(&mut *w, &line)?;
    w.write_all(b"\n")?;
    Ok(())
}

/// The next `n` records of `inputs` (None at the end), pages decoded and extracted and every
/// readable document fingerprinted, on all cores.
pub(super) fn next_chunk(
    inputs: &mut impl Iterator<Item = Record>,
    n: usize,
    fp: &fpdb::fingerprint::Fingerprinter,
) -> Option<(Vec<Record>, Vec<Option<fpdb::Fingerprints>>)> {
    let mut chunk: Vec<Record> = inputs.by_ref().take(n).collect();
    if chunk.is_empty() {
        return None;
    }
    let fps = fingerprint_chunk(&mut chunk, fp);
    Some((chunk, fps))
}

/// Decode and extract the pages of `chunk` and fingerprint every readable document, on all
/// cores.
fn fingerprint_chunk(
    chunk: &mut [Record],
    fp: &fpdb::fingerprint::Fingerprinter,
) -> Vec<Option<fpdb::Fingerprints>> {
    chunk
        .par_iter_mut()
        .map(|r| {
            r.finish();
            r.doc
                .as_ref()
                .ok()
                .map(|d| fp.fingerprint_with(&d.text, d.meta()))
        })
        .collect()
}
