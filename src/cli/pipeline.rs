//! The run of `ingest` and `dedup`: three stages at once (reading and parsing on one thread,
//! decoding and fingerprinting on all cores, store writes in input order on the caller's
//! thread), each chunk acknowledged (its result lines and records written) once its sync
//! returns; and how the run shows its progress.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use fpdb::reader::Record;
use fpdb::{Fpdb, IngestResult, OnExisting};

use super::dedup::Sink;
use super::output::OutputLine;
use super::summary::{Stages, Summary, LIST_BAD};

/// What one run writes to: result lines (`ingest --output`) and the records (`dedup`).
pub(super) struct Outputs {
    pub(super) results: Option<Box<dyn Write>>,
    pub(super) sink: Option<Sink>,
}

/// Read `inputs`, fingerprint and ingest them in chunks of `batch`, counting into `sum`;
/// each chunk's results written to `outs` once it is durable. Stops at the first store error.
pub(super) fn run(
    db: &mut Fpdb,
    mut inputs: impl Iterator<Item = Record> + Send,
    batch: usize,
    on_existing: OnExisting,
    sum: &mut Summary,
    outs: &mut Outputs,
    progress: &Progress,
) -> anyhow::Result<()> {
    // Three stages run at once: reading and parsing (one thread), decoding and fingerprinting
    // (all cores), and the store writes (this thread, in input order); each runs ahead of the
    // next by a few chunks, so no core waits for the reader while the writer works.
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<Vec<Record>>(4);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<Record>, Vec<Prepared>)>(3);
    let fingerprinter = db.fingerprinter().clone();
    // A re-run: the documents already stored with the same text are known by their digest,
    // before they are fingerprinted (not when replacing: they are ingested again).
    let stored = db
        .stored_texts()
        .filter(|_| on_existing == OnExisting::Skip);
    // Where the time goes: each stage's busy time (not its waits for the next or the last).
    let (read_ns, fp_ns) = (AtomicU64::new(0), AtomicU64::new(0));
    let (read_busy, fp_busy) = (&read_ns, &fp_ns);
    let mut commit = std::time::Duration::ZERO;
    let batch_before = db.batch_seconds();
    let ahead_before = db.batches_looked_up_ahead();
    let lease_before = db.lease_seconds();
    let ran = std::thread::scope(|scope| -> anyhow::Result<()> {
        let reader = std::thread::Builder::new().name("fpdb-read".into());
        reader.spawn_scoped(scope, move || loop {
            let t = Instant::now();
            let chunk = take_chunk(&mut inputs, batch);
            add_since(read_busy, t);
            if chunk.is_empty() || raw_tx.send(chunk).is_err() {
                break;
            }
        })?;
        let fp = std::thread::Builder::new().name("fpdb-fp".into());
        fp.spawn_scoped(scope, move || {
            for mut chunk in raw_rx {
                let t = Instant::now();
                let fps = fingerprint_chunk(&mut chunk, &fingerprinter, stored.as_ref());
                add_since(fp_busy, t);
                if tx.send((chunk, fps)).is_err() {
                    break;
                }
            }
        })?;
        // Batch i is made durable (its log synced) on a thread of its own while batch i + 1
        // is decided and written; its results are written once that sync returns.
        // The chunk after the one being ingested, when it is fingerprinted already: its
        // lookups run while this one is decided (`Fpdb::ingest_batch_ahead`).
        let mut waiting: Option<Written<'_>> = None;
        let mut following = rx.recv().ok();
        let mut ahead: Option<fpdb::BatchFingerprints> = None;
        while let Some((chunk, fps)) = following.take().or_else(|| rx.recv().ok()) {
            following = rx.try_recv().ok();
            let now = Chunk {
                chunk: &chunk,
                fps,
                ahead: ahead.take(),
            };
            let (results, fatal, next) =
                ingest_chunk(db, now, following.as_mut(), on_existing, sum, &progress.bar);
            ahead = next;
            let t = Instant::now();
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
                w.acknowledge(db, outs, sum, progress)?;
            }
            commit += t.elapsed();
            if stop {
                break;
            }
        }
        // The stages before stop on a closed channel (they would wait on a full one).
        drop((following, rx));
        if let Some(w) = waiting {
            let t = Instant::now();
            w.acknowledge(db, outs, sum, progress)?;
            commit += t.elapsed();
        }
        Ok(())
    });
    let batch_after = db.batch_seconds();
    sum.batches_looked_up_ahead = db.batches_looked_up_ahead() - ahead_before;
    sum.lease_seconds = db.lease_seconds() - lease_before;
    let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
    sum.stages = Stages {
        read: secs(&read_ns),
        fingerprint: secs(&fp_ns),
        look_up: batch_after.look_up - batch_before.look_up,
        decide: batch_after.decide - batch_before.decide,
        apply: batch_after.apply - batch_before.apply,
        commit: commit.as_secs_f64() + batch_after.commit - batch_before.commit,
    };
    ran
}

/// Add the time since `start` to `c`, in nanoseconds.
fn add_since(c: &AtomicU64, start: Instant) {
    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    c.fetch_add(ns, Ordering::Relaxed);
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
        outs: &mut Outputs,
        sum: &Summary,
        p: &Progress,
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
        if let Some(w) = outs.results.as_mut() {
            for (rec, r) in self.chunk.iter().zip(&self.results) {
                write_result(w, rec, r)?;
            }
            w.flush()?;
        }
        if let Some(s) = outs.sink.as_mut() {
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

/// A chunk to ingest: its records, what fingerprinting made of them, and what the call
/// before returned for them when their lookups ran ahead.
struct Chunk<'c> {
    chunk: &'c [Record],
    fps: Vec<Prepared>,
    ahead: Option<fpdb::BatchFingerprints>,
}

/// The documents of a fingerprinted chunk to ingest, with their fingerprints (taken out of
/// `fps`, for lookups ahead).
fn take_fingerprints<'c>(
    chunk: &'c [Record],
    fps: &mut [Prepared],
) -> (Vec<&'c fpdb::Document>, Vec<fpdb::Fingerprints>) {
    let mut out = (
        Vec::with_capacity(chunk.len()),
        Vec::with_capacity(chunk.len()),
    );
    for (rec, fp) in chunk.iter().zip(fps) {
        if let (Ok(doc), Prepared::Fingerprinted(_)) = (&rec.doc, &fp) {
            let Prepared::Fingerprinted(f) = std::mem::replace(fp, Prepared::Ahead) else {
                unreachable!("matched above");
            };
            out.0.push(doc);
            out.1.push(f);
        }
    }
    out
}

/// Ingest one chunk in input order (one [`Fpdb::ingest_batch_ahead`], with the lookups of
/// the `following` chunk when it is at hand), counting into `sum`; stops at the first store
/// error, returned with the results before it. Returns what the following chunk's lookups
/// found.
fn ingest_chunk(
    db: &mut Fpdb,
    now: Chunk<'_>,
    following: Option<&mut (Vec<Record>, Vec<Prepared>)>,
    on_existing: OnExisting,
    sum: &mut Summary,
    bar: &indicatif::ProgressBar,
) -> (
    Vec<Result<IngestResult, String>>,
    Option<anyhow::Error>,
    Option<fpdb::BatchFingerprints>,
) {
    let Chunk { chunk, fps, ahead } = now;
    // The documents to ingest, and the cluster at ingest of each record already stored
    // with its text (by its place in the chunk).
    let mut docs: Vec<&fpdb::Document> = Vec::with_capacity(chunk.len());
    let mut own: Vec<fpdb::Fingerprints> = Vec::with_capacity(chunk.len());
    let mut stored: Vec<Option<u64>> = vec![None; chunk.len()];
    for (i, (rec, fp)) in chunk.iter().zip(fps).enumerate() {
        match (&rec.doc, fp) {
            (Ok(doc), Prepared::Fingerprinted(fp)) => {
                docs.push(doc);
                own.push(fp);
            }
            (Ok(doc), Prepared::Ahead) => docs.push(doc),
            (Ok(_), Prepared::Stored(similar_id)) => stored[i] = Some(similar_id),
            (Ok(_), Prepared::Unread) => unreachable!("every readable document is prepared"),
            (Err(_), _) => {}
        }
    }
    let fps = ahead.unwrap_or_else(|| own.into());
    for rec in chunk {
        let Ok(doc) = &rec.doc else { continue };
        sum.dated += u64::from(doc.published.is_some());
        if let Some(w) = &doc.time_unread {
            sum.time_unread += 1;
            if sum.time_unread <= LIST_BAD as u64 {
                bar.suspend(|| eprintln!("fpdb: warning: {}: {w}", rec.location()));
            }
        }
    }
    let next = following.map(|(chunk, fps)| take_fingerprints(chunk, fps));
    let (batch, next) = db.ingest_batch_ahead(docs, fps, on_existing, next);
    let mut done = batch.results.into_iter();
    let mut results = Vec::with_capacity(chunk.len());
    // Clusters of the chunk's stored documents, resolved once each (after the chunk's own
    // merges, which the batch above made).
    let mut roots: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for (i, rec) in chunk.iter().enumerate() {
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
            Ok(doc) if stored[i].is_some() => {
                let at_ingest = stored[i].unwrap_or_default();
                let root = match roots.get(&at_ingest) {
                    Some(&root) => Ok(root),
                    None => db.resolve(at_ingest),
                };
                let r = match root {
                    Ok(similar_id) => {
                        roots.insert(at_ingest, similar_id);
                        IngestResult::SkippedExisting {
                            id: doc.id.clone(),
                            similar_id,
                            same_text: true,
                        }
                    }
                    Err(e) => {
                        let e = anyhow::Error::new(e).context(rec.location());
                        return (results, Some(e), next);
                    }
                };
                sum.records += 1;
                sum.input_bytes += rec.bytes as u64;
                sum.count(&r, rec, bar);
                results.push(Ok(r));
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
                    return (results, Some(e.context(rec.location())), next);
                }
            },
        }
    }
    (results, None, next)
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

/// Raw bytes a chunk of records holds at most (with its first record, whatever its size):
/// pages wait in their chunk until the fingerprinting threads extract them, and a few chunks
/// are in flight at once, so 1,024 pages of 500 KB would otherwise hold 4 GB.
const CHUNK_BYTES: usize = 32 << 20;

/// The next records of `inputs`: `n` of them, or fewer that hold [`CHUNK_BYTES`].
fn take_chunk(inputs: &mut impl Iterator<Item = Record>, n: usize) -> Vec<Record> {
    let mut chunk = Vec::new();
    let mut bytes = 0;
    while chunk.len() < n && bytes < CHUNK_BYTES {
        let Some(r) = inputs.next() else { break };
        bytes += r.bytes;
        chunk.push(r);
    }
    chunk
}

/// The next `n` records of `inputs` (None at the end), pages decoded and extracted and every
/// readable document fingerprinted, on all cores.
pub(super) fn next_chunk(
    inputs: &mut impl Iterator<Item = Record>,
    n: usize,
    fp: &fpdb::fingerprint::Fingerprinter,
) -> Option<(Vec<Record>, Vec<Option<fpdb::Fingerprints>>)> {
    let mut chunk = take_chunk(inputs, n);
    if chunk.is_empty() {
        return None;
    }
    let fps = fingerprint_chunk(&mut chunk, fp, None)
        .into_iter()
        .map(|p| match p {
            Prepared::Fingerprinted(f) => Some(f),
            Prepared::Stored(_) | Prepared::Unread | Prepared::Ahead => None,
        })
        .collect();
    Some((chunk, fps))
}

/// What the fingerprinting stage made of one record.
#[expect(
    clippy::large_enum_variant,
    reason = "fingerprints are what nearly every record becomes: boxing them would add an allocation to each"
)]
enum Prepared {
    /// Its fingerprints.
    Fingerprinted(fpdb::Fingerprints),
    /// Its id is stored with this text (its cluster at ingest): not fingerprinted again.
    Stored(u64),
    /// Its fingerprints went to the lookups ahead of its chunk ([`take_fingerprints`]).
    Ahead,
    /// Not readable.
    Unread,
}

/// Decode and extract the pages of `chunk` and fingerprint every readable document that
/// `stored` does not know as already stored with its text, on all cores.
fn fingerprint_chunk(
    chunk: &mut [Record],
    fp: &fpdb::fingerprint::Fingerprinter,
    stored: Option<&fpdb::StoredTexts>,
) -> Vec<Prepared> {
    chunk
        .par_iter_mut()
        .map(|r| {
            // A page read again as it was stored is known before it is extracted.
            if let Some(s) = stored {
                let known = r.raw_digest().and_then(|digest| {
                    let id = r.id()?;
                    s.stored_page(id, digest).ok().flatten()
                });
                if let Some(similar_id) = known {
                    r.known_stored();
                    return Prepared::Stored(similar_id);
                }
            }
            r.finish();
            let Ok(d) = r.doc.as_ref() else {
                return Prepared::Unread;
            };
            // A read error here is met again, and reported, by the ingest's own reads.
            match stored.and_then(|s| s.already_stored(d).ok().flatten()) {
                Some(similar_id) => Prepared::Stored(similar_id),
                None => Prepared::Fingerprinted(fp.fingerprint_with(&d.text, d.meta())),
            }
        })
        .collect()
}
