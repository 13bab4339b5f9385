//! The one writer: write jobs (the documents of one request, already fingerprinted) queue on a
//! channel; the writer takes every job waiting (up to a group size), ingests them in arrival
//! order as one [`Fpdb::ingest_batch`] per run of jobs with the same `replace` flag, syncs once,
//! and only then answers each job. A job is answered `Ok` only when all of its documents are
//! durable.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;

use fpdb::{Document, Fingerprints, IngestResult, OnExisting};

use super::Shared;

/// The documents of one write request.
pub(super) struct Work {
    pub(super) docs: Vec<Document>,
    pub(super) fps: Vec<Fingerprints>,
    pub(super) on_existing: OnExisting,
}

/// A write request: its documents and where its answer goes.
pub(super) struct Job {
    pub(super) work: Work,
    pub(super) reply: tokio::sync::oneshot::Sender<Result<Vec<IngestResult>, String>>,
}

/// The answer to write requests once the writer has failed.
pub(super) const WRITER_FAILED: &str =
    "the store writer failed; restart the server (acknowledged documents are stored)";

/// Run until every sender is gone and the queue is empty.
pub(super) fn run(shared: &Shared, rx: Receiver<Job>, max_group: usize) {
    while let Ok(first) = rx.recv() {
        let mut n = first.work.docs.len();
        let mut jobs = vec![first];
        while n < max_group {
            match rx.try_recv() {
                Ok(j) => {
                    n += j.work.docs.len();
                    jobs.push(j);
                }
                Err(_) => break,
            }
        }
        let (mut work, replies): (Vec<Work>, Vec<_>) =
            jobs.into_iter().map(|j| (j.work, j.reply)).unzip();
        let results = if shared.writer_failed.load(Ordering::Relaxed) {
            replies
                .iter()
                .map(|_| Err(WRITER_FAILED.to_string()))
                .collect()
        } else {
            let started = std::time::Instant::now();
            let results = catch_unwind(AssertUnwindSafe(|| commit_group(shared, &mut work)))
                .unwrap_or_else(|_| {
                    // The store's in-memory state may not match what was written: refuse
                    // further writes (reads go on); a restart reopens the store as last synced.
                    shared.writer_failed.store(true, Ordering::Relaxed);
                    replies
                        .iter()
                        .map(|_| Err(WRITER_FAILED.to_string()))
                        .collect()
                });
            let acknowledged: usize = results.iter().flatten().map(Vec::len).sum();
            shared
                .metrics
                .group_committed(acknowledged as u64, started.elapsed().as_secs_f64());
            results
        };
        for (reply, r) in replies.into_iter().zip(results) {
            let _ = reply.send(r);
        }
    }
}

/// Most documents decided under one hold of the store's write lock: a group is decided in
/// slices of this size, and queries waiting for the lock run between them. Smaller slices
/// keep a query's wait short under many writers and cost write throughput (the previous
/// slice's commit is waited for before the lock, not under it); figures: docs/performance.md,
/// "Other figures behind the code".
const HOLD_DOCS: usize = 256;

/// Fewest documents decided per hold of the store.
const MIN_HOLD_DOCS: usize = 8;

/// The time one hold of the store aims at: a slice that held it over twice as long halves
/// the next slices, one under half as long doubles them (up to [`HOLD_DOCS`]): as a store
/// grows under a heavy write load, the same number of documents comes to hold it longer.
const HOLD_TIME: std::time::Duration = std::time::Duration::from_millis(8);

/// The current slice size (see [`HOLD_TIME`]).
static HOLD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(HOLD_DOCS);

/// Ingest `jobs` in order, then sync; one result per job.
fn commit_group(shared: &Shared, jobs: &mut [Work]) -> Vec<Result<Vec<IngestResult>, String>> {
    let mut results: Vec<Result<Vec<IngestResult>, String>> = Vec::with_capacity(jobs.len());
    let mut error: Option<String> = None;
    let mut i = 0;
    while i < jobs.len() {
        if let Some(e) = &error {
            results.push(Err(format!("not written: an earlier write failed: {e}")));
            i += 1;
            continue;
        }
        let mode = jobs[i].on_existing;
        let end = i + jobs[i..]
            .iter()
            .take_while(|j| j.on_existing == mode)
            .count();
        let run = &mut jobs[i..end];
        let mut docs: Vec<(&Document, Fingerprints)> = run
            .iter_mut()
            .flat_map(|j| j.docs.iter().zip(std::mem::take(&mut j.fps)))
            .collect();
        // Decided in input order, a slice per hold of the write lock; the store sees the
        // same sequence of documents as one batch would give it.
        let mut done: Vec<IngestResult> = Vec::with_capacity(docs.len());
        while !docs.is_empty() && error.is_none() {
            let size = HOLD.load(Ordering::Relaxed).clamp(MIN_HOLD_DOCS, HOLD_DOCS);
            let rest = docs.split_off(docs.len().min(size));
            let slice = std::mem::replace(&mut docs, rest);
            let n = slice.len();
            // The previous slice's commit is waited for outside the lock: readers wait only
            // while this slice is decided.
            let _ = shared
                .db
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .settle();
            let mut db = shared
                .db
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let held = std::time::Instant::now();
            let out = db.ingest_batch(slice, mode);
            drop(db);
            // The next slice's size follows the time this one held the store.
            let held = held.elapsed();
            if held > HOLD_TIME * 2 && n >= size {
                HOLD.store((size / 2).max(MIN_HOLD_DOCS), Ordering::Relaxed);
            } else if held < HOLD_TIME / 2 && n >= size {
                HOLD.store((size * 2).min(HOLD_DOCS), Ordering::Relaxed);
            }
            done.extend(out.results);
            if let Some(e) = out.error {
                error = Some(e.to_string());
            }
        }
        let mut done = done.into_iter();
        for j in run.iter() {
            let mine: Vec<IngestResult> = done.by_ref().take(j.docs.len()).collect();
            if mine.len() == j.docs.len() {
                results.push(Ok(mine));
            } else {
                let e = error
                    .clone()
                    .unwrap_or_else(|| "document was not ingested".to_string());
                results.push(Err(if mine.is_empty() {
                    e
                } else {
                    format!(
                        "{e} (the first {} documents of this request were written)",
                        mine.len()
                    )
                }));
            }
        }
        i = end;
    }
    // Durable before anyone hears of it. Readers may see the group before the sync ends.
    let synced = shared
        .db
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .sync();
    if let Err(e) = synced {
        let e = format!("the store could not sync: {e}");
        return results.into_iter().map(|_| Err(e.clone())).collect();
    }
    results
}
