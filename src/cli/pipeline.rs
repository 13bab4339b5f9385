//! The run of `ingest` and `dedup`: the library's [`Pipeline`], its chunks counted as they
//! are decided and their result lines and records written once durable; and how the run
//! shows its progress.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use fpdb::pipeline::{Acknowledge, Pipeline};
use fpdb::reader::Record;
use fpdb::{Fpdb, IngestResult, OnExisting};

use super::dedup::Sink;
use super::output::OutputLine;
use super::summary::{Stages, Summary, LIST_BAD};

/// What one run writes to: result lines (`ingest --output`) and the records (`dedup`).
pub(super) struct Outputs {
    pub(super) results: Option<Box<dyn Write>>,
    /// Where the results go (`-`: stdout), named by an error writing them.
    pub(super) results_path: Option<std::path::PathBuf>,
    pub(super) sink: Option<Sink>,
}

/// Read `inputs`, fingerprint and ingest them in chunks of `batch` (the library's
/// [`Pipeline`]), counting into `sum`; each chunk's results written to `outs` once it is
/// durable. Stops at the first store error.
pub(super) fn run(
    db: &mut Fpdb,
    inputs: impl Iterator<Item = Record> + Send,
    batch: usize,
    on_existing: OnExisting,
    sum: &mut Summary,
    outs: &mut Outputs,
    progress: &Progress,
) -> anyhow::Result<()> {
    let mut told = Told {
        sum,
        outs,
        progress,
    };
    let s = Pipeline::new(batch)
        .on_existing(on_existing)
        .run(db, inputs, &mut told)?;
    sum.batches_looked_up_ahead = s.batches_looked_up_ahead;
    sum.late_joins = s.late_joins;
    sum.late_splits = s.late_splits;
    sum.lease_seconds = s.lease_seconds;
    sum.stages = Stages {
        read: s.read,
        fingerprint: s.fingerprint,
        look_up: s.look_up,
        decide: s.decide,
        apply: s.apply,
        commit: s.commit,
    };
    Ok(())
}

/// The command line's side of a run: each chunk counted into the summary as it is decided,
/// its result lines and records written and the progress shown once it is durable.
struct Told<'a> {
    sum: &'a mut Summary,
    outs: &'a mut Outputs,
    progress: &'a Progress,
}

impl Acknowledge for Told<'_> {
    type Error = anyhow::Error;

    fn decided(&mut self, records: &[Record], results: &[Result<IngestResult, String>]) {
        let (sum, bar) = (&mut *self.sum, &self.progress.bar);
        for rec in records {
            let Ok(doc) = &rec.doc else { continue };
            sum.dated += u64::from(doc.published.is_some());
            if let Some(w) = &doc.time_unread {
                sum.time_unread += 1;
                if sum.time_unread <= LIST_BAD as u64 {
                    bar.suspend(|| eprintln!("fpdb: warning: {}: {w}", rec.location()));
                }
            }
        }
        for (rec, r) in records.iter().zip(results) {
            sum.records += 1;
            sum.input_bytes += rec.bytes as u64;
            match r {
                Ok(r) => sum.count(r, rec, bar),
                Err(reason) => sum.bad(rec, reason, bar),
            }
        }
    }

    fn durable(
        &mut self,
        records: &[Record],
        results: &[Result<IngestResult, String>],
    ) -> anyhow::Result<()> {
        if let Some(w) = self.outs.results.as_mut() {
            let written = records
                .iter()
                .zip(results)
                .try_for_each(|(rec, r)| write_result(w, rec, r))
                .and_then(|()| Ok(w.flush()?));
            if let Err(e) = written {
                let to = self
                    .outs
                    .results_path
                    .as_deref()
                    .map(super::output::output_name);
                let to = to.unwrap_or_else(|| "stdout".into());
                return Err(e.context(format!("cannot write the results to {to}")));
            }
        }
        if let Some(s) = self.outs.sink.as_mut() {
            for (rec, r) in records.iter().zip(results) {
                s.put(rec, r)?;
            }
            s.flush()?;
        }
        let (p, sum) = (self.progress, &*self.sum);
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
        Ok(())
    }

    fn at(&self, error: fpdb::Error, record: &Record) -> anyhow::Error {
        anyhow::Error::new(error).context(record.location())
    }
}

impl Progress {
    /// A bar on a terminal (see [`progress_bar`]); in a log (nohup, cron, CI) a line every
    /// 10 s (`FPDB_PROGRESS_SECS`) instead; nothing when `quiet`.
    pub(super) fn new(files: &[PathBuf], quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let (bar, sized) = progress_bar(files, !quiet && terminal);
        let start = Instant::now();
        Progress {
            bar,
            sized,
            start,
            log_every: (!quiet && !terminal).then(|| {
                let secs = std::env::var("FPDB_PROGRESS_SECS")
                    .ok()
                    .and_then(|v| v.parse().ok());
                std::time::Duration::from_secs(secs.unwrap_or(10))
            }),
            logged: std::cell::Cell::new(start),
        }
    }
}

/// How a run shows its progress: a bar on a terminal, a line every `log_every` in a log.
pub(super) struct Progress {
    pub(super) bar: indicatif::ProgressBar,
    /// Whether the bar's total (input bytes) is known.
    pub(super) sized: bool,
    pub(super) start: Instant,
    pub(super) log_every: Option<std::time::Duration>,
    pub(super) logged: std::cell::Cell<Instant>,
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
            previous_original: None,
            composite_of: &[],
            excerpt_of: None,
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
