//! The one ingest path: records read, fingerprinted and ingested in chunks, three stages at
//! once (reading and parsing on one thread, decoding and fingerprinting on all cores, the
//! store's lookups, decisions and writes in input order on the caller's thread), each chunk
//! made durable on a thread of its own while the next is decided, and told to the caller
//! ([`Acknowledge::durable`]) only once its sync returns. `fpdb ingest`, `fpdb dedup` and the
//! Python package's `ingest_many` all run it.

use std::ops::DerefMut;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::engine::{BatchFingerprints, Document, Fpdb, IngestResult, OnExisting, StoredTexts};
use crate::fingerprint::{Fingerprinter, Fingerprints};
use crate::reader::Record;

mod durable;
mod queue;

pub use durable::SYNC_DOCS;
use durable::{Durable, Waiting, Written};
use queue::Queue;

/// What a chunk's records became, one per record: its result, or why it was not read.
pub type Results = Vec<Result<IngestResult, String>>;

/// The caller's side of a run: what it does with each chunk's results.
pub trait Acknowledge {
    /// The error a run stops with: a store error, or one of the caller's own.
    type Error: From<crate::Error>;

    /// A chunk's records as they are decided, in input order, with their results (a prefix
    /// of the chunk when a store error stopped it): not yet durable, not to be told yet.
    fn decided(&mut self, records: &[Record], results: &[Result<IngestResult, String>]);

    /// The same records once they are durable: their results may be told.
    ///
    /// # Errors
    /// The caller's own (an output it could not write); the run stops with it.
    fn durable(
        &mut self,
        records: &[Record],
        results: &[Result<IngestResult, String>],
    ) -> Result<(), Self::Error>;

    /// The run's writer has stopped: its last chunk told, or stopped by an error or a panic.
    /// An input that waits for records to come (a server's queue of requests) ends now, so
    /// that the run can return; by default nothing.
    fn ended(&mut self) {}

    /// A store error met at `record`, as the run returns it (by default without its place).
    fn at(&self, error: crate::Error, record: &Record) -> Self::Error {
        let _ = record;
        error.into()
    }
}

/// Where a run's time went: each stage's busy time, in seconds (not its waits).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stages {
    /// Reading, decompressing and parsing the input (one thread).
    pub read: f64,
    /// Extracting pages and fingerprinting, on all cores (the wall time of each chunk's
    /// parallel work, summed).
    pub fingerprint: f64,
    /// Looking the documents up in the store and verifying candidates.
    pub look_up: f64,
    /// Deciding each document in input order and staging its writes (one thread).
    pub decide: f64,
    /// Applying the batches to the store on a thread of its own (0 where the store has none).
    pub apply: f64,
    /// Preparing each batch's commit and handing it to the store, waiting for its sync, and
    /// the caller's [`Acknowledge::durable`].
    pub commit: f64,
    /// Batches whose lookups ran while the batch before them was decided.
    pub batches_looked_up_ahead: u64,
    /// Pages joined to a cluster after their own batch ([`crate::Meters::late_joins`]).
    pub late_joins: u64,
    /// Clusters split after a batch ([`crate::Meters::late_splits`]).
    pub late_splits: u64,
    /// Seconds a shared store's write lease was held (0 for a store of one process).
    pub lease_seconds: f64,
}

/// A run of records into a store: its chunk size and what it does with an id stored already.
#[derive(Debug, Clone, Copy)]
pub struct Pipeline {
    /// Records per chunk (at most; a chunk also ends at [`CHUNK_BYTES`]).
    pub batch: usize,
    /// An id stored already: skipped or replaced.
    pub on_existing: OnExisting,
}

impl Pipeline {
    /// Chunks of `batch` records (at least one), ids stored already skipped.
    pub fn new(batch: usize) -> Self {
        Pipeline {
            batch: batch.max(1),
            on_existing: OnExisting::Skip,
        }
    }

    /// With ids stored already skipped or replaced.
    #[must_use]
    pub fn on_existing(mut self, on_existing: OnExisting) -> Self {
        self.on_existing = on_existing;
        self
    }

    /// Read `inputs`, fingerprint and ingest them into `db` chunk by chunk, each chunk told to
    /// `ack` as it is decided and again once it is durable. Stops at the first store error
    /// (the chunks before it durable and told, the records of its chunk before it told) or
    /// the first error of `ack`.
    ///
    /// # Errors
    /// A store error (placed by [`Acknowledge::at`]) or `ack`'s own.
    pub fn run<A: Acknowledge>(
        self,
        db: &mut Fpdb,
        mut inputs: impl Iterator<Item = Record> + Send,
        ack: &mut A,
    ) -> Result<Stages, A::Error> {
        let chunks = std::iter::from_fn(move || {
            let records = take_chunk(&mut inputs, self.batch);
            (!records.is_empty()).then_some(Chunk {
                records,
                on_existing: self.on_existing,
            })
        });
        run_chunks(db, chunks, None, ack)
    }
}

/// Records ingested together: decided under one hold of the store, committed and made durable
/// as one.
pub struct Chunk {
    /// The records, in input order.
    pub records: Vec<Record>,
    /// An id stored already: skipped or replaced.
    pub on_existing: OnExisting,
}

/// Where a run finds its store: held while a chunk is decided and handed to the store, let go
/// between chunks, so that a store shared behind a lock (`fpdb serve`'s) answers its readers
/// while a run goes on.
pub trait Hold {
    /// The store, held until what this returns is dropped.
    fn hold(&mut self) -> impl DerefMut<Target = Fpdb> + '_;
}

impl Hold for &mut Fpdb {
    fn hold(&mut self) -> impl DerefMut<Target = Fpdb> + '_ {
        &mut **self
    }
}

/// How long the writer waits for the next chunk before it tells the chunk written last (its
/// sync joined): a run fed as requests come (`fpdb serve`) answers a request without waiting
/// for the next one, and a run whose fingerprinting keeps up does not wait for a sync early.
const IDLE: std::time::Duration = std::time::Duration::from_millis(2);

/// [`Pipeline::run`] of `chunks` as they come, the store held through `store` for each chunk
/// only: reading (the iterator) on one thread, fingerprinting on all cores, lookups,
/// decisions and writes in input order on the caller's thread, each chunk made durable on a
/// thread of its own while the next is decided, and told to `ack` once its sync returns. A
/// run whose iterator waits for its input (`fpdb serve`'s requests) tells each chunk once it
/// is durable, not when the next comes. Fingerprints are made on `pool` (rayon's global pool
/// when None).
///
/// # Errors
/// A store error (placed by [`Acknowledge::at`]) or `ack`'s own.
pub fn run_chunks<A: Acknowledge>(
    mut store: impl Hold,
    mut chunks: impl Iterator<Item = Chunk> + Send,
    pool: Option<&rayon::ThreadPool>,
    ack: &mut A,
) -> Result<Stages, A::Error> {
    // Chunks read and waiting for the fingerprinting threads: four, or one chunk's worth of
    // bytes (a chunk of pages holds its HTML until it is extracted).
    let raw = Queue::<Chunk>::new(4, CHUNK_BYTES);
    let (raw_tx, raw_rx) = raw.split();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Chunk, Vec<Prepared>)>(3);
    let (fingerprinter, stored, before) = {
        let db = store.hold();
        (
            db.fingerprinter().clone(),
            // A re-run: the documents already stored with the same text are known by their
            // digest, before they are fingerprinted (not when replacing: they are ingested
            // again).
            db.searcher().stored_texts(),
            db.meters(),
        )
    };
    let (read_ns, fp_ns) = (AtomicU64::new(0), AtomicU64::new(0));
    let (read_busy, fp_busy) = (&read_ns, &fp_ns);
    let mut commit = std::time::Duration::ZERO;
    let ran = std::thread::scope(|scope| -> Result<(), A::Error> {
        let reader = std::thread::Builder::new().name("fpdb-read".into());
        reader
            .spawn_scoped(scope, move || loop {
                // The next chunk is read once the queue has room for it, not held meanwhile.
                if !raw_tx.wait_room() {
                    break;
                }
                let t = Instant::now();
                let chunk = chunks.next();
                add_since(read_busy, t);
                let Some(chunk) = chunk else { break };
                let bytes = chunk.records.iter().map(|r| r.bytes).sum();
                if raw_tx.send(chunk, bytes).is_err() {
                    break;
                }
            })
            .map_err(|e| thread_error(&e))?;
        let fp = std::thread::Builder::new().name("fpdb-fp".into());
        fp.spawn_scoped(scope, move || {
            for mut chunk in raw_rx {
                let t = Instant::now();
                let known = stored
                    .as_ref()
                    .filter(|_| chunk.on_existing == OnExisting::Skip);
                let fps = match pool {
                    Some(pool) => {
                        pool.install(|| prepare_chunk(&mut chunk.records, &fingerprinter, known))
                    }
                    None => prepare_chunk(&mut chunk.records, &fingerprinter, known),
                };
                add_since(fp_busy, t);
                if tx.send((chunk, fps)).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| thread_error(&e))?;
        let decided = catch_unwind(AssertUnwindSafe(|| {
            write_chunks(scope, &mut store, rx, ack, &mut commit)
        }));
        // The input may be waiting for records (a server's queue): it is told to stop before
        // its thread is joined, whatever ended the writer's loop.
        ack.ended();
        decided.unwrap_or_else(|panic| resume_unwind(panic))
    });
    let after = store.hold().meters();
    let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
    ran.map(|()| Stages {
        read: secs(&read_ns),
        fingerprint: secs(&fp_ns),
        look_up: after.batch.look_up - before.batch.look_up,
        decide: after.batch.decide - before.batch.decide,
        apply: after.batch.apply - before.batch.apply,
        commit: commit.as_secs_f64() + after.batch.commit - before.batch.commit,
        batches_looked_up_ahead: after.batches_looked_up_ahead - before.batches_looked_up_ahead,
        late_joins: after.late_joins - before.late_joins,
        late_splits: after.late_splits - before.late_splits,
        lease_seconds: after.lease_seconds - before.lease_seconds,
    })
}

/// The writer's loop of a run: each chunk decided in input order under one hold of the store
/// (with the following chunk's lookups when it is at hand), handed to the store, made durable
/// on a thread of its own while the next is decided (chunk i is synced while chunk i + 1 is
/// decided and written), and told once its sync returns.
fn write_chunks<'scope, A: Acknowledge>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    store: &mut impl Hold,
    rx: std::sync::mpsc::Receiver<(Chunk, Vec<Prepared>)>,
    ack: &mut A,
    commit: &mut std::time::Duration,
) -> Result<(), A::Error> {
    let mut waiting: Waiting<'_, A::Error> = Waiting::new();
    let mut following = rx.recv().ok();
    let mut ahead: Option<BatchFingerprints> = None;
    loop {
        let next = match following.take() {
            Some(next) => Some(next),
            None => match rx.recv_timeout(IDLE) {
                Ok(next) => Some(next),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    // Nothing to decide: tell the chunks written while waiting.
                    let t = Instant::now();
                    waiting.tell_all(store, ack)?;
                    *commit += t.elapsed();
                    rx.recv().ok()
                }
            },
        };
        let Some((chunk, fps)) = next else { break };
        following = rx.try_recv().ok();
        let now = Deciding {
            chunk: &chunk,
            fps,
            ahead: ahead.take(),
        };
        let mut db = store.hold();
        let (results, fatal, next) = ingest_chunk(&mut db, now, following.as_mut(), &*ack);
        ack.decided(&chunk.records, &results);
        ahead = next;
        let t = Instant::now();
        // With the next chunk at hand, a small chunk's sync is left to a later one's.
        let defer = following.is_some() && fatal.is_none() && waiting.defers(results.len());
        let durable = match db.commit_unsynced() {
            Ok(Some(syncer)) if defer => Durable::Deferred(syncer),
            Ok(Some(syncer)) => Durable::Syncing(
                std::thread::Builder::new()
                    .name("fpdb-sync".into())
                    .spawn_scoped(scope, move || syncer())
                    .map_err(|e| thread_error(&e))?,
            ),
            Ok(None) => Durable::Inline,
            Err(e) => Durable::Failed(e),
        };
        drop(db);
        let stop = fatal.is_some();
        // The chunks whose sync started before this one's are told (their syncs ran while
        // this chunk was decided).
        waiting.tell_synced(store, ack)?;
        waiting.push(Written {
            chunk: chunk.records,
            results,
            fatal,
            durable,
        });
        *commit += t.elapsed();
        if stop {
            break;
        }
    }
    // The stages before stop on a closed channel (they would wait on a full one).
    drop((following, rx));
    let t = Instant::now();
    waiting.tell_all(store, ack)?;
    *commit += t.elapsed();
    Ok(())
}

/// Ingest one chunk in input order (one [`Fpdb::ingest_batch_ahead`], with the lookups of the
/// `following` chunk when it is at hand); stops at the first store error, returned with the
/// results before it. Returns what the following chunk's lookups found.
fn ingest_chunk<A: Acknowledge>(
    db: &mut Fpdb,
    now: Deciding<'_>,
    following: Option<&mut (Chunk, Vec<Prepared>)>,
    ack: &A,
) -> (Results, Option<A::Error>, Option<BatchFingerprints>) {
    let Deciding { chunk, fps, ahead } = now;
    let on_existing = chunk.on_existing;
    let chunk = &chunk.records;
    // The documents to ingest, and the cluster at ingest of each record already stored with
    // its text (by its place in the chunk).
    let mut docs: Vec<&Document> = Vec::with_capacity(chunk.len());
    let mut own: Vec<Fingerprints> = Vec::with_capacity(chunk.len());
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
    // The following chunk's lookups run ahead only when it is decided the same way.
    let next = following
        .filter(|(c, _)| c.on_existing == on_existing)
        .map(|(c, fps)| take_fingerprints(&c.records, fps));
    let (batch, next) = db.ingest_batch_ahead(docs, fps, on_existing, next);
    let mut done = batch.results.into_iter();
    let mut results = Vec::with_capacity(chunk.len());
    // Clusters of the chunk's stored documents, resolved once each (after the chunk's own
    // merges, which the batch above made).
    let mut roots: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for (i, rec) in chunk.iter().enumerate() {
        match &rec.doc {
            Err(reason) => results.push(Err(reason.clone())),
            Ok(doc) if stored[i].is_some() => {
                let at_ingest = stored[i].unwrap_or_default();
                let root = match roots.get(&at_ingest) {
                    Some(&root) => Ok(root),
                    None => db.searcher().resolve(at_ingest),
                };
                match root {
                    Ok(similar_id) => {
                        roots.insert(at_ingest, similar_id);
                        results.push(Ok(IngestResult::SkippedExisting {
                            id: doc.id.clone(),
                            similar_id,
                            same_text: true,
                        }));
                    }
                    Err(e) => return (results, Some(ack.at(e, rec)), next),
                }
            }
            Ok(_) => match done.next() {
                Some(r) => results.push(Ok(r)),
                None => {
                    let e = batch.error.unwrap_or_else(|| {
                        crate::Error::Storage("the document was not ingested".into())
                    });
                    return (results, Some(ack.at(e, rec)), next);
                }
            },
        }
    }
    (results, None, next)
}

/// A thread the run needs could not be started.
fn thread_error(e: &std::io::Error) -> crate::Error {
    crate::Error::Storage(format!("could not start a thread of the ingest: {e}"))
}

/// Add the time since `start` to `c`, in nanoseconds.
fn add_since(c: &AtomicU64, start: Instant) {
    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    c.fetch_add(ns, Ordering::Relaxed);
}

/// A chunk to ingest: its records, what fingerprinting made of them, and what the call
/// before returned for them when their lookups ran ahead.
struct Deciding<'c> {
    chunk: &'c Chunk,
    fps: Vec<Prepared>,
    ahead: Option<BatchFingerprints>,
}

/// The documents of a fingerprinted chunk to ingest, with their fingerprints (taken out of
/// `fps`, for lookups ahead).
fn take_fingerprints<'c>(
    chunk: &'c [Record],
    fps: &mut [Prepared],
) -> (Vec<&'c Document>, Vec<Fingerprints>) {
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

/// Raw bytes a chunk of records holds at most (with its first record, whatever its size):
/// pages wait in their chunk until the fingerprinting threads extract them, and a few chunks
/// are in flight at once, so 1,024 pages of 500 KB would otherwise hold 4 GB.
pub const CHUNK_BYTES: usize = 32 << 20;

/// The next records of `inputs`: `n` of them, or fewer that hold [`CHUNK_BYTES`].
pub fn take_chunk(inputs: &mut impl Iterator<Item = Record>, n: usize) -> Vec<Record> {
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
/// readable document fingerprinted, on all cores: what `fpdb query` of a file reads.
pub fn next_chunk(
    inputs: &mut impl Iterator<Item = Record>,
    n: usize,
    fp: &Fingerprinter,
) -> Option<(Vec<Record>, Vec<Option<Fingerprints>>)> {
    let mut chunk = take_chunk(inputs, n);
    if chunk.is_empty() {
        return None;
    }
    let fps = prepare_chunk(&mut chunk, fp, None)
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
    Fingerprinted(Fingerprints),
    /// Its id is stored with this text (its cluster at ingest): not fingerprinted again.
    Stored(u64),
    /// Its fingerprints went to the lookups ahead of its chunk ([`take_fingerprints`]).
    Ahead,
    /// Not readable.
    Unread,
}

/// Decode and extract the pages of `chunk` and fingerprint every readable document that
/// `stored` does not know as already stored with its text, on all cores.
fn prepare_chunk(
    chunk: &mut [Record],
    fp: &Fingerprinter,
    stored: Option<&StoredTexts>,
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

#[cfg(test)]
mod tests;
