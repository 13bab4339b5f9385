//! `fpdb dedup`: `ingest` that writes the input records themselves, the unique ones to one
//! output and, when asked, the near-duplicates to another.
//!
//! A record is unique when its document is its cluster's original once the whole input is
//! ingested: the output holds one record per cluster of this run's documents, whatever order
//! they arrived in and whatever merged later. Files are read twice: the first pass ingests, the
//! second writes each record where its document stands at the end (in input order). A record
//! whose id an earlier run stored is not unique (that run kept it, or its copy); `--replace`
//! ingests it again.
//!
//! A run over files is a job the store remembers ([`job_key`], [`fpdb::Job`]): run again
//! after a signal or a failed write, the same command reads on after the records the stopped
//! run committed and counts the documents that run stored as its own, so its `-o` and
//! `--duplicates-out` are those of one uninterrupted run, record for record; run again after
//! it finished, it reads nothing new and writes the same records again. A `--stream` run
//! over files is a job too, and a later run of it writes in a second pass: the records the
//! earlier runs wrote are in the store, not in the outputs this run creates anew.
//!
//! A record that cannot be read or stored goes to neither output (it is reported, as by
//! `ingest`), and to `--rejects-out` when given, as it was read (a record lost to damaged input
//! has no bytes to write). Across runs, a cluster's record is written by the run that held its
//! original: a later run whose record is published before an earlier run's original writes it
//! too.
//!
//! Records are written as they were read: a JSONL line byte for byte (the first with the file's
//! byte order mark, when it has one), a CSV/TSV row byte for byte after the file's header line
//! (written once per output; CSV files with different
//! headers cannot share one). Records of the other formats (WARC, ARC, HTML, text, Parquet) are
//! written as JSONL lines of the fields read: `id`, `text`, and `url` and `title` when present.
//!
//! Streaming (`--stream`, and always for stdin, which cannot be read twice): each record is
//! written as it is decided, against the store and the records before it. Two things can then
//! keep more than one record of a cluster, and the summary counts both: a later record that
//! merges two clusters, each with a record written (`kept_later_merged`), and a later record
//! published before its cluster's original, which becomes the original and is written too
//! (`kept_later_predated`).

use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;

use anyhow::bail;
use serde::Serialize;

use fpdb::reader::Record;
use fpdb::IngestResult;

/// What an output has been given so far.
enum Kind {
    Nothing,
    Jsonl,
    /// CSV/TSV rows after this header (and the file it came from).
    Csv(Arc<Vec<u8>>, String),
}

/// One output of records.
pub(super) struct Out {
    w: Box<dyn Write>,
    kind: Kind,
    /// Its flag (`-o`, `--duplicates-out`, `--rejects-out`).
    name: &'static str,
    /// Its path as given (`-`: stdout), named by an error writing to it.
    path: std::path::PathBuf,
}

impl Out {
    pub(super) fn new(w: Box<dyn Write>, name: &'static str, path: &std::path::Path) -> Out {
        Out {
            w,
            kind: Kind::Nothing,
            name,
            path: path.to_path_buf(),
        }
    }

    /// Write `rec`; an error writing (a full disk) names the output.
    fn write(&mut self, rec: &Record) -> anyhow::Result<()> {
        self.write_record(rec).map_err(|e| self.failed(e))
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.w.flush().map_err(|e| self.failed(e.into()))
    }

    /// `e`, named by the output when it is an error writing to it.
    fn failed(&self, e: anyhow::Error) -> anyhow::Error {
        if super::io_kind(&e).is_none() {
            return e;
        }
        let to = super::output::output_name(&self.path);
        e.context(format!("cannot write the {} output {to}", self.name))
    }

    fn write_record(&mut self, rec: &Record) -> anyhow::Result<()> {
        if rec.raw.is_none() && rec.doc.is_err() {
            // Nothing was read of it (a record lost to damage, an archive record cut short).
            return Ok(());
        }
        match (&rec.raw, &rec.header) {
            (Some(raw), Some(header)) => {
                match &self.kind {
                    Kind::Nothing => {
                        self.w.write_all(header)?;
                        ends_line(&mut self.w, header)?;
                        self.kind = Kind::Csv(header.clone(), rec.source.clone());
                    }
                    Kind::Csv(h, _) if h == header => {}
                    Kind::Csv(_, first) => bail!(
                        "{}: its header line differs from {first}'s, already written to the {} \
                         output: give CSV files of one header to one dedup run",
                        rec.source,
                        self.name
                    ),
                    Kind::Jsonl => bail!(
                        "{}: a CSV row cannot follow JSONL lines in the {} output: give CSV and \
                         JSONL inputs to separate dedup runs",
                        rec.location(),
                        self.name
                    ),
                }
                self.w.write_all(raw)?;
                ends_line(&mut self.w, raw)?;
            }
            (raw, _) => {
                if let Kind::Csv(_, first) = &self.kind {
                    bail!(
                        "{}: a JSONL line cannot follow the CSV rows of {first} in the {} output: \
                         give CSV and other inputs to separate dedup runs",
                        rec.location(),
                        self.name
                    );
                }
                self.kind = Kind::Jsonl;
                match raw {
                    Some(line) => {
                        self.w.write_all(line)?;
                        ends_line(&mut self.w, line)?;
                    }
                    None => {
                        serde_json::to_writer(&mut self.w, &Fields::of(rec))?;
                        self.w.write_all(b"\n")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A line break after `bytes` unless it ends with one (the last line of a file may not).
fn ends_line(w: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.last() != Some(&b'\n') {
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// The JSONL line of a record read from a format without lines of its own.
#[derive(Serialize)]
struct Fields<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    text: &'a str,
}

impl<'a> Fields<'a> {
    fn of(rec: &'a Record) -> Fields<'a> {
        let doc = rec.doc.as_ref().expect("only read records are written");
        Fields {
            id: &doc.id,
            url: doc.url.as_deref(),
            title: doc.title.as_deref(),
            text: &doc.text,
        }
    }
}

/// Where `dedup` writes, and what it counted.
pub(super) struct Sink {
    pub(super) unique: Out,
    pub(super) duplicates: Option<Out>,
    /// `--rejects-out`: the records not read or not stored.
    pub(super) rejects: Option<Out>,
    /// Clusters of records written as unique in this run.
    kept_clusters: HashSet<u64>,
    pub(super) counts: Counts,
}

/// The dedup part of the summary.
#[derive(Serialize, Default, Debug, Clone, Copy)]
pub(super) struct Counts {
    /// Records written to the unique output.
    pub(super) unique: u64,
    /// Records that were near-duplicates of an earlier one (or of a stored document), or whose
    /// id was already stored.
    pub(super) duplicates: u64,
    /// Unique records whose cluster a later record of this run merged into another unique
    /// record's (both were written).
    pub(super) kept_later_merged: u64,
    /// Unique records whose cluster a later record of this run, published before them, took
    /// as its original (both were written: the output keeps every original).
    pub(super) kept_later_predated: u64,
    /// Records written to `--rejects-out`.
    pub(super) rejected: u64,
}

impl Sink {
    pub(super) fn new(unique: Out, duplicates: Option<Out>, rejects: Option<Out>) -> Sink {
        Sink {
            unique,
            duplicates,
            rejects,
            kept_clusters: HashSet::new(),
            counts: Counts::default(),
        }
    }

    /// Write `rec` where its result puts it.
    pub(super) fn put(
        &mut self,
        rec: &Record,
        r: &Result<IngestResult, String>,
    ) -> anyhow::Result<()> {
        let unique = match r {
            Err(_) => return self.reject(rec),
            Ok(IngestResult::Added { outcome, .. }) => {
                for m in &outcome.merged {
                    if self.kept_clusters.remove(m) {
                        self.counts.kept_later_merged += 1;
                    }
                }
                if outcome.duplicate_of.is_none() {
                    if outcome.previous_original.is_some()
                        && outcome
                            .similar_id
                            .is_some_and(|c| self.kept_clusters.contains(&c))
                    {
                        self.counts.kept_later_predated += 1;
                    }
                    self.kept_clusters.extend(outcome.similar_id);
                }
                outcome.duplicate_of.is_none()
            }
            Ok(IngestResult::SkippedExisting { .. }) => false,
        };
        if unique {
            self.counts.unique += 1;
            self.unique.write(rec)
        } else {
            self.counts.duplicates += 1;
            match self.duplicates.as_mut() {
                Some(d) => d.write(rec),
                None => Ok(()),
            }
        }
    }

    /// The second pass of `dedup` over files: `inputs` read again, each record written where
    /// its document stands after the whole run. Unique: stored by a run of this `job` (this
    /// one, or an earlier one that a signal stopped), its cluster's original, and the first
    /// record of its id; a near-duplicate otherwise (also a record whose id another job
    /// stored). A record that was not stored (unreadable) goes to neither output. Pages are
    /// extracted again only when written.
    pub(super) fn write_standing(
        &mut self,
        db: &fpdb::Fpdb,
        mut inputs: impl Iterator<Item = Record>,
        job: &fpdb::Job,
    ) -> anyhow::Result<()> {
        use rayon::prelude::*;
        let mut written: HashSet<String> = HashSet::new();
        let dups = self.duplicates.is_some();
        loop {
            // Chunks bounded by bytes as the first pass's are: a record keeps its line as read.
            let mut chunk = fpdb::pipeline::take_chunk(&mut inputs, 1024);
            if chunk.is_empty() {
                break;
            }
            let standings = chunk
                .par_iter()
                .map(|r| r.id().map_or(Ok(None), |id| db.searcher().standing(id)))
                .collect::<fpdb::Result<Vec<_>>>()?;
            // Some(unique) for a stored record, in input order.
            let decided: Vec<Option<bool>> = chunk
                .iter()
                .zip(&standings)
                .map(|(r, st)| {
                    st.map(|st| {
                        job.stored(st.seq)
                            && st.original
                            && r.id().is_some_and(|id| written.insert(id.to_string()))
                    })
                })
                .collect();
            chunk
                .par_iter_mut()
                .zip(&decided)
                .filter(|(r, d)| r.raw.is_none() && d.is_some_and(|unique| unique || dups))
                .for_each(|(r, _)| r.finish());
            for (r, d) in chunk.iter().zip(decided) {
                match d {
                    Some(true) => {
                        self.counts.unique += 1;
                        self.unique.write(r)?;
                    }
                    Some(false) => {
                        self.counts.duplicates += 1;
                        if let Some(o) = self.duplicates.as_mut() {
                            if r.raw.is_some() || r.doc.is_ok() {
                                o.write(r)?;
                            }
                        }
                    }
                    None => self.reject(r)?,
                }
            }
            self.flush()?;
        }
        Ok(())
    }

    /// Write `rec`, which was not read or not stored, to `--rejects-out` (when given and
    /// there is something read of it).
    fn reject(&mut self, rec: &Record) -> anyhow::Result<()> {
        let Some(o) = self.rejects.as_mut() else {
            return Ok(());
        };
        if rec.raw.is_some() || rec.doc.is_ok() {
            self.counts.rejected += 1;
            o.write(rec)?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> anyhow::Result<()> {
        self.unique.flush()?;
        for o in [&mut self.duplicates, &mut self.rejects]
            .into_iter()
            .flatten()
        {
            o.flush()?;
        }
        Ok(())
    }
}

/// A `dedup` job over files as this run goes: its key and record ([`fpdb::Job`]).
pub(super) struct Job {
    key: [u8; 16],
    pub(super) job: fpdb::Job,
}

impl Job {
    /// The job over `files` with `--skip`, `--limit`, `--replace` and the input flags `input`,
    /// its run opened (from the store's next seq on) and saved.
    pub(super) fn start(
        db: &mut fpdb::Fpdb,
        files: &[std::path::PathBuf],
        (skip, limit, replace): (usize, Option<usize>, bool),
        input: &impl std::fmt::Debug,
    ) -> anyhow::Result<Job> {
        let key = job_key(files, skip, limit, replace, input);
        let mut job = db.job(&key)?.unwrap_or_default();
        job.open_run(db.searcher().next_seq());
        db.save_job(&key, &job)?;
        Ok(Job { key, job })
    }

    /// Whether an earlier run of the job read or stored records (its records are in the
    /// store, not in this run's outputs).
    pub(super) fn began_before(&self) -> bool {
        self.job.read > 0 || self.job.runs.len() > 1
    }

    /// The run ended having committed every record it read: `read` in all, to the end of
    /// the input when `finished`.
    pub(super) fn end(
        &mut self,
        db: &mut fpdb::Fpdb,
        read: u64,
        finished: bool,
    ) -> anyhow::Result<()> {
        self.job.close_run(db.searcher().next_seq(), read, finished);
        db.save_job(&self.key, &self.job)?;
        Ok(())
    }
}

/// The key a `dedup` job over regular files is remembered by in the store
/// ([`fpdb::Job`]): a digest of what names its input (each file's absolute path, size and
/// modification time, directories walked in the order the reader walks them) and of the flags
/// that change which records are read and how (`--skip`, `--limit`, `--replace`, the input
/// flags in `input`). The same command over unchanged files is the same job: a re-run after a
/// signal goes on where it stopped, and a re-run of a finished job writes the same records.
fn job_key(
    files: &[std::path::PathBuf],
    skip: usize,
    limit: Option<usize>,
    replace: bool,
    input: &impl std::fmt::Debug,
) -> [u8; 16] {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    h.update(format!(
        "dedup job 1\nskip {skip} limit {limit:?} replace {replace}\n{input:?}\n"
    ));
    let mut stack: Vec<std::path::PathBuf> = files.iter().rev().cloned().collect();
    while let Some(p) = stack.pop() {
        let abs = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
        match std::fs::metadata(&abs) {
            Ok(m) if m.is_dir() => {
                let entries = fpdb::reader::dir_entries(&abs).unwrap_or_default();
                h.update(format!("dir {}\n", abs.display()));
                stack.extend(entries.into_iter().rev());
            }
            Ok(m) => {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                h.update(format!("file {} {} {mtime}\n", abs.display(), m.len()));
            }
            Err(_) => h.update(format!("missing {}\n", abs.display())),
        }
    }
    h.finalize().into()
}
