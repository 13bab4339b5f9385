//! `fpdb ingest`: read, fingerprint on all cores, ingest in input order, sync, then report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use fpdb::reader::{Inputs, ReadOptions};
use fpdb::{Fpdb, OnExisting};

use super::args::{InputArgs, SettingsArgs};
use super::output::{
    check_distinct_outputs, check_output_not_input, check_output_writable, check_outside_store,
    output_writer,
};
use super::pipeline::{self, Outputs, Progress};
use super::summary::Summary;

#[derive(Args, Debug)]
pub(super) struct IngestArgs {
    /// Input files or directories (walked recursively); `-` or nothing reads stdin, sniffed as a
    /// file without a telling name is: WARC, ARC, HTML, a CSV/TSV header naming the text
    /// field, else JSONL (`--format` overrides). Gzip and zstd are decompressed by their first
    /// bytes.
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
    /// Documents fingerprinted in parallel and then written and synced together; the pages of
    /// one batch learn their sites' furniture together (--batch-furniture)
    #[arg(long, default_value_t = fpdb::BATCH_DOCS)]
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
    /// Also write the records that were not read or not stored (bad input: malformed lines,
    /// missing fields, ids too long, documents over --max-doc-bytes) to FILE, as they were read:
    /// a line or row byte for byte
    #[arg(long, value_name = "FILE")]
    pub(super) rejects_out: Option<std::path::PathBuf>,
    /// Write each record as it is decided, in one pass over the input (the default reads files
    /// twice and writes exactly one record per cluster, its original): a record that a later
    /// one merged or predated stays written. Stdin and FIFOs are always streamed
    #[arg(long)]
    pub(super) stream: bool,
}

/// `ingest --memory-filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum MemoryFilters {
    Auto,
    Build,
    Off,
}

impl MemoryFilters {
    /// The presence filter a writer starts from: the saved one when it fits (`auto`, `build`),
    /// else an empty one on a store this run creates (`auto`) or a scan (`build`); none with
    /// `off`.
    fn filters(self, fresh: bool) -> fpdb::store::Filters {
        use fpdb::store::{Filters, PresenceStart};
        match self {
            MemoryFilters::Off => Filters {
                saved: Some(false),
                otherwise: None,
            },
            MemoryFilters::Auto => Filters {
                saved: Some(true),
                otherwise: fresh.then_some(PresenceStart::Empty),
            },
            MemoryFilters::Build => Filters {
                saved: Some(true),
                otherwise: Some(PresenceStart::Scan),
            },
        }
    }
}

/// Refuse, before any store is created or opened, the settings a store at `path` would refuse:
/// all of them when this run creates a directory store there (true is returned), else those
/// refused whatever the store (an existing store checks the rest against its own).
pub(super) fn check_settings(path: &Path, settings: &fpdb::Settings) -> anyhow::Result<bool> {
    let fresh = !fpdb::store::Location::parse(path).is_redis()
        && std::fs::read_dir(path).map_or(true, |mut d| d.next().is_none());
    if fresh {
        settings.resolve_new()?;
    } else {
        settings.resolve()?;
    }
    Ok(fresh)
}

/// Where a run's output goes: result lines (`ingest --output`), or the unique and duplicate
/// records (`dedup`: `-o`, stdout by default, and `--duplicates-out`); `-` is stdout.
struct OutputPaths {
    results: Option<PathBuf>,
    unique: Option<PathBuf>,
    duplicates: Option<PathBuf>,
    rejects: Option<PathBuf>,
}

impl OutputPaths {
    /// The outputs of `a` (with `dedup`: of `fpdb dedup`), refused when two of them, or one of
    /// them and `--json`, would share stdout or a file.
    fn of(a: &IngestArgs, dedup: Option<&DedupArgs>) -> anyhow::Result<OutputPaths> {
        let o = match dedup {
            None => OutputPaths {
                results: a.output.clone(),
                unique: None,
                duplicates: None,
                rejects: None,
            },
            Some(d) => OutputPaths {
                results: None,
                unique: Some(a.output.clone().unwrap_or_else(|| PathBuf::from("-"))),
                duplicates: d.duplicates_out.clone(),
                rejects: d.rejects_out.clone(),
            },
        };
        let to_stdout = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| p.as_os_str() == "-");
        if a.json && o.all().iter().any(|(_, p)| to_stdout(p)) {
            bail!(
                "--json and an output to stdout (`-`) both write to stdout; send the output to a file"
            );
        }
        if [&o.unique, &o.duplicates, &o.rejects]
            .into_iter()
            .filter(|p| to_stdout(p))
            .count()
            > 1
        {
            bail!(
                "only one of the unique, the duplicate and the rejected records can go to stdout"
            );
        }
        let named: Vec<(&str, &Path)> = o
            .all()
            .into_iter()
            .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
            .collect();
        check_distinct_outputs(&named)?;
        Ok(o)
    }

    /// Each output with its flag.
    fn all(&self) -> [(&'static str, &Option<PathBuf>); 4] {
        [
            ("--output", &self.results),
            ("-o", &self.unique),
            ("--duplicates-out", &self.duplicates),
            ("--rejects-out", &self.rejects),
        ]
    }

    /// Refused before the store is opened: an output that is an input, inside the store, or
    /// cannot be written.
    fn check(&self, files: &[PathBuf], store: &Path) -> anyhow::Result<()> {
        for (flag, o) in self.all() {
            check_output_not_input(o, files)?;
            check_outside_store(flag, o.as_deref(), store)?;
            check_output_writable(o)?;
        }
        Ok(())
    }

    /// The named outputs that do not exist yet (those this run creates).
    fn new_files(&self) -> Vec<PathBuf> {
        self.all()
            .into_iter()
            .filter_map(|(_, p)| p.clone())
            .filter(|p| p.as_os_str() != "-" && std::fs::symlink_metadata(p).is_err())
            .collect()
    }

    /// Created (emptied) only once the store's lock is held: a run refused because another
    /// process holds the store leaves an earlier run's results as they were.
    fn create(&self) -> anyhow::Result<Outputs> {
        let sink = match &self.unique {
            None => None,
            Some(_) => {
                use super::dedup::{Out, Sink};
                let out = |flag, path: &Option<PathBuf>| -> anyhow::Result<Option<Out>> {
                    Ok(output_writer(path)?
                        .zip(path.as_deref())
                        .map(|(w, p)| Out::new(w, flag, p)))
                };
                let u = out("-o", &self.unique)?.expect("a path");
                Some(Sink::new(
                    u,
                    out("--duplicates-out", &self.duplicates)?,
                    out("--rejects-out", &self.rejects)?,
                ))
            }
        };
        Ok(Outputs {
            results: output_writer(&self.results)?,
            results_path: self.results.clone(),
            sink,
        })
    }
}

/// `fpdb ingest`, or with `dedup` given `fpdb dedup` (`a.output` is then where the unique
/// records go, stdout by default, and no result lines are written).
pub(super) fn ingest(
    path: &Path,
    a: &IngestArgs,
    quiet: bool,
    verbose: bool,
    dedup: Option<&DedupArgs>,
) -> anyhow::Result<u8> {
    let paths = OutputPaths::of(a, dedup)?;
    let files = input_files(a)?;
    // Pages are decoded and extracted on the fingerprinting threads, not the reader thread.
    let read_opts = ReadOptions {
        defer_pages: true,
        ..a.input.read_options()
    };
    build_pool(a.threads);
    // Everything that can be refused is checked before the store is created or opened.
    paths.check(&files, path)?;
    let settings = a.settings.to_settings()?;
    let fresh = check_settings(path, &settings)?;
    let existed = path.exists();
    // The inputs (read twice by `dedup` over files), never the outputs.
    // A record keeps its bytes as read (`keep_raw`) only in the pass that writes them out.
    let open_inputs = |keep_raw: bool| {
        let opts = ReadOptions {
            keep_raw,
            ..read_opts.clone()
        };
        // The store's own files are never documents (`fpdb ingest .` walks into it).
        let mut inputs = Inputs::new(&files, opts).exclude(path);
        for (_, o) in paths.all() {
            if let Some(o) = o.as_ref().filter(|o| o.as_os_str() != "-") {
                inputs = inputs.exclude(o);
            }
        }
        inputs
    };
    let mut db = open_for_ingest(path, a, settings, fresh, quiet)?;
    let (mut job, two_pass) = a.dedup_job(&mut db, &files, dedup)?;
    let inputs = open_inputs(dedup.is_some() && !two_pass);
    let resumed = job.as_ref().map_or(0, |j| j.job.read);
    // A run that fails leaves none of the output files it created empty.
    let created = RemovedUnlessKept(paths.new_files());
    let mut outs = paths.create()?;
    if let Some(r) = &a.retention {
        db.maintenance().set_retention(r.0)?;
    }
    let expired = db.maintenance().apply_retention()?;
    let on_existing = a.on_existing();
    let counts = inputs.counts();
    // SIGINT or SIGTERM: stop reading, ingest and commit what was read, say so (a second one
    // ends the process at once).
    let signal = super::stop::stop_on_signals()?;
    let seen = std::sync::Arc::clone(&signal);
    let done = usize::try_from(resumed).unwrap_or(usize::MAX);
    let inputs = inputs
        .skip(a.skip.saturating_add(done))
        .take(a.limit.unwrap_or(usize::MAX).saturating_sub(done))
        .take_while(move |_| seen.load(std::sync::atomic::Ordering::Relaxed) == 0);
    let progress = Progress::new(&files, quiet);
    let mut sum = Summary {
        store: path.display().to_string(),
        expired,
        resumed,
        resumed_job: job.is_some(),
        streamed: job.is_some() && !two_pass,
        ..Default::default()
    };
    let batch = a.batch_size.max(1);
    let since = db.searcher().next_seq();
    let stopped = || signal.load(std::sync::atomic::Ordering::Relaxed) != 0;
    let mut later = if two_pass { outs.sink.take() } else { None };
    pipeline::run(
        &mut db,
        inputs,
        batch,
        on_existing,
        &mut sum,
        &mut outs,
        &progress,
    )
    .map_err(|e| super::stop::failed(e, job.is_some()))?;
    // Opening the store later (query, stats, ...) then replays no write-ahead log.
    db.flush()?;
    if let Some(j) = job.as_mut() {
        j.end(&mut db, resumed + sum.records, !stopped())?;
    }
    sum.settle(&db, since)?;
    // The result lines with every document's cluster and original as the run left them.
    if let Some(w) = outs.results.take() {
        drop(w);
        if let Some(p) = paths.results.as_ref().filter(|p| p.as_os_str() != "-") {
            super::results::settle(&db, p)?;
        }
    }
    if let (Some(mut sink), Some(j)) = (later.take(), job.as_ref()) {
        let read = usize::try_from(j.job.read).unwrap_or(usize::MAX);
        sink.write_standing(&db, open_inputs(true).skip(a.skip).take(read), &j.job)
            .map_err(|e| super::stop::failed(e, true))?;
        outs.sink = Some(sink);
    }
    save_memory_filter(&db);
    progress.bar.finish_and_clear();
    sum.read_counts(&counts);
    sum.dedup = outs.sink.as_ref().map(|s| s.counts);
    sum.finish(&db, progress.start.elapsed().as_secs_f64());
    sum.report(a.json, quiet, verbose)?;
    if fresh && sum.added == 0 {
        leave_no_store(db, path, existed, quiet)?;
    }
    let status = super::stop::exit_status(
        signal.load(std::sync::atomic::Ordering::Relaxed),
        &sum,
        &files,
    );
    drop(outs);
    Ok(created.kept_unless(status))
}

/// Save the presence filter for the next run; a failure is a warning: everything is stored,
/// only the next run's head start is lost.
fn save_memory_filter(db: &Fpdb) {
    if let Err(e) = db.save_memory_filter() {
        eprintln!(
            "fpdb: warning: the presence filter was not saved ({e}); the next run goes without it"
        );
    }
}

/// Whether every input can be read a second time: regular files and directories of them, not
/// stdin, a FIFO or a process substitution (`<(zcat …)`), which stream.
fn rereadable(files: &[PathBuf]) -> bool {
    files.iter().all(|f| {
        f.as_os_str() != "-" && std::fs::metadata(f).is_ok_and(|m| m.is_file() || m.is_dir())
    })
}

impl IngestArgs {
    /// This run's `dedup` job, its run opened, and whether it writes its records in a second
    /// pass. A `dedup` over files is a job the store remembers (`dedup.rs`): a run reads on
    /// after the records its earlier runs committed, and stores from the next seq on. It writes
    /// its records in a second pass, which reads the files again, unless `--stream`; and so
    /// does a `--stream` run of a job that an earlier run began (stopped, failed or finished):
    /// the earlier runs' records are in the store, not in the outputs this run creates anew.
    fn dedup_job(
        &self,
        db: &mut Fpdb,
        files: &[PathBuf],
        dedup: Option<&DedupArgs>,
    ) -> anyhow::Result<(Option<super::dedup::Job>, bool)> {
        let Some(dedup) = dedup.filter(|_| rereadable(files)) else {
            return Ok((None, false));
        };
        let picked = (self.skip, self.limit, self.replace);
        let job = super::dedup::Job::start(db, files, picked, &self.input)?;
        let two_pass = !dedup.stream || job.began_before();
        Ok((Some(job), two_pass))
    }

    /// What a record whose id is stored does: `--replace` replaces, else it is skipped.
    fn on_existing(&self) -> OnExisting {
        if self.replace {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        }
    }
}

/// Output files a run created, removed when it ends without keeping them (an error) and
/// nothing was written to them: a downstream step would read an empty one as "no records",
/// and what was written (the acknowledged results of an ingest stopped by a full disk) stays.
struct RemovedUnlessKept(Vec<PathBuf>);

impl RemovedUnlessKept {
    /// The files kept unless the run's exit `status` is an error; `status`.
    fn kept_unless(mut self, status: u8) -> u8 {
        if status != super::output::EXIT_ERROR {
            self.0.clear();
        }
        status
    }
}

impl Drop for RemovedUnlessKept {
    fn drop(&mut self) {
        for p in &self.0 {
            if std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// The global pool of fingerprinting threads (`threads`, default all cores); they yield a
/// core to the writer's loop (`nice.rs`).
fn build_pool(threads: Option<usize>) {
    let mut pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("fpdb-fp-{i}"))
        .start_handler(|_| super::nice::lower_this_thread(super::nice::FEEDER_NICE));
    if let Some(t) = threads {
        pool = pool.num_threads(t.max(1));
    }
    pool.build_global().ok();
}

/// A first run that stored nothing leaves no store behind: its settings would otherwise be
/// fixed by a run that failed (the next one, with the right flags, would be refused for a
/// mismatch). `db` is closed, and the store it created at `path` removed (the directory too,
/// unless it `existed` empty before the run).
fn leave_no_store(db: Fpdb, path: &Path, existed: bool, quiet: bool) -> anyhow::Result<()> {
    drop(db);
    remove_new_store(path, existed)?;
    if !quiet {
        eprintln!(
            "fpdb: no store was created at {}: nothing was stored",
            path.display()
        );
    }
    Ok(())
}

/// Remove the store a run created at `path` (the directory too, unless it `existed` empty
/// before the run).
fn remove_new_store(path: &Path, existed: bool) -> anyhow::Result<()> {
    let removed = if existed {
        std::fs::read_dir(path).and_then(|entries| {
            for e in entries {
                let p = e?.path();
                if p.is_dir() {
                    std::fs::remove_dir_all(&p)?;
                } else {
                    std::fs::remove_file(&p)?;
                }
            }
            Ok(())
        })
    } else {
        std::fs::remove_dir_all(path)
    };
    removed.with_context(|| format!("cannot remove the empty store {}", path.display()))
}

/// Open (or create) the store for a run, with its in-memory filters of the hash prefixes
/// (store::Presence): the one saved with the store at the end of the last run (with the
/// documents written since read into it, when a run did not end cleanly or kept no filter),
/// or, for a store created by this run, empty ones (nothing to scan). Lookups of hashes no
/// document has skip RocksDB; same results (the filters are exact). Saved again when the run
/// ends. Says on stderr when the saved filter could not serve, or was caught up.
fn open_for_ingest(
    path: &Path,
    a: &IngestArgs,
    settings: fpdb::Settings,
    fresh: bool,
    quiet: bool,
) -> anyhow::Result<Fpdb> {
    let had_filter = path.join(fpdb::store::PRESENCE_FILE).exists();
    let db = Fpdb::builder()
        .settings(settings)
        .create(true)
        .filters(a.memory_filters.filters(fresh))
        .cache_bytes((a.cache_mib as usize) << 20)
        .open(path)?;
    if had_filter
        && db.meters().memory_filter_bytes.is_none()
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
    if let (Some(n @ 1..), false) = (db.meters().memory_filter_caught_up, quiet) {
        eprintln!(
            "fpdb: presence filter brought up to date: {n} document(s) written since it was saved read into it"
        );
    }
    Ok(db)
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

/// The longest line of a `--files-from` list (a path).
const MAX_PATH_LINE: usize = 64 * 1024;

/// The inputs named on the command line and in `--files-from`; stdin when none.
fn input_files(a: &IngestArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = a.files.clone();
    if let Some(list) = &a.files_from {
        let lines = super::output::read_lines_capped(list, MAX_PATH_LINE, "--files-from")?;
        files.extend(
            lines
                .iter()
                .map(|l| l.trim())
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
