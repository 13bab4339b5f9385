//! The one writer: write jobs (the documents of one request) queue on a channel, and the
//! writer thread runs the library's ingest path ([`fpdb::pipeline::run_chunks`]) over them as
//! they come: the jobs waiting are cut into chunks in arrival order (one `replace` flag per
//! chunk), fingerprinted on the writes' pool while the chunk before is decided, each chunk
//! decided under one hold of the store's lock and synced behind the next. A job is answered
//! once all of its documents are durable.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, RwLock, RwLockWriteGuard};
use std::time::{Duration, Instant};

use fpdb::pipeline::{Acknowledge, Chunk, Hold};
use fpdb::reader::Record;
use fpdb::{Document, Fpdb, IngestResult, OnExisting};

use super::Shared;

/// The documents of one write request.
pub(super) struct Work {
    pub(super) docs: Vec<Document>,
    pub(super) on_existing: OnExisting,
}

/// A write request: its documents and where its answer goes.
pub(super) struct Job {
    pub(super) work: Work,
    pub(super) reply: Reply,
}

/// Where a job's answer goes: its results, or why it was not (all) written.
type Reply = tokio::sync::oneshot::Sender<Result<Vec<IngestResult>, String>>;

/// The answer to write requests once the writer has failed.
pub(super) const WRITER_FAILED: &str =
    "the store writer failed; restart the server (acknowledged documents are stored)";

/// Run until every sender is gone and the queue is empty.
pub(super) fn run(shared: &Shared, rx: Receiver<Job>, max_group: usize) {
    let pending = Mutex::new(VecDeque::new());
    let holds = Holds::default();
    let mut queue = Queue {
        rx,
        left: None,
        pending: &pending,
        holds: &holds,
        max_group: max_group.max(1),
    };
    loop {
        if shared.writer_failed.load(Ordering::Relaxed) {
            // Reads go on; writes are refused until a restart.
            while let Ok(job) = queue.rx.recv() {
                let _ = job.reply.send(Err(WRITER_FAILED.to_string()));
            }
            return;
        }
        holds.stop.store(false, Ordering::Relaxed);
        let mut told = Told {
            shared,
            pending: &pending,
            holds: &holds,
            decided: VecDeque::new(),
        };
        let store = Held {
            db: &shared.db,
            holds: &holds,
        };
        let pool = super::pools::write_pool();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            fpdb::pipeline::run_chunks(store, &mut queue, Some(pool), &mut told)
        }));
        // What the run left untold did not become durable as a whole: its jobs are answered
        // with why, and the rest of a job cut short is not written.
        queue.left = None;
        let why = match ran {
            Ok(Ok(_)) => return,
            Ok(Err(e)) => format!("{e}"),
            Err(_) => {
                // The store's in-memory state may not match what was written: refuse further
                // writes (reads go on); a restart reopens the store as last synced.
                shared.writer_failed.store(true, Ordering::Relaxed);
                WRITER_FAILED.to_string()
            }
        };
        let mut pending = pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for job in pending.drain(..) {
            let written = job.results.len();
            let e = if written == 0 || why == WRITER_FAILED {
                why.clone()
            } else {
                format!("{why} (the first {written} documents of this request were written)")
            };
            let _ = job.reply.send(Err(e));
        }
    }
}

/// A job taken into a chunk, waiting for the results of its documents.
struct Pending {
    reply: Reply,
    /// Its documents.
    docs: usize,
    results: Vec<IngestResult>,
    /// A document that was not read (none is, from a request; kept as the job's error).
    unread: Option<String>,
}

/// Most documents decided under one hold of the store's write lock: a chunk holds at most
/// this many, and queries waiting for the lock run between chunks. Smaller chunks keep a
/// query's wait short under many writers and cost write throughput; figures:
/// docs/performance.md, "Other figures behind the code".
const HOLD_DOCS: usize = 256;

/// Fewest documents decided per hold of the store.
const MIN_HOLD_DOCS: usize = 8;

/// The time one hold of the store aims at: a chunk that held it over twice as long halves the
/// next chunks, one under half as long doubles them (up to [`HOLD_DOCS`]): as a store grows
/// under a heavy write load, the same number of documents comes to hold it longer.
const HOLD_TIME: Duration = Duration::from_millis(8);

/// How often a queue with no job waiting looks whether its run has ended.
const POLL: Duration = Duration::from_millis(50);

/// What the queue, the holds of the store and the acknowledgements share.
struct Holds {
    /// Documents per chunk (see [`HOLD_TIME`]).
    size: AtomicUsize,
    /// Documents decided under the current hold.
    decided: AtomicUsize,
    /// When the current hold began.
    since: Mutex<Option<Instant>>,
    /// Set when the run's writer ended: the queue stops waiting for jobs.
    stop: AtomicBool,
}

impl Default for Holds {
    fn default() -> Self {
        Holds {
            size: AtomicUsize::new(HOLD_DOCS),
            decided: AtomicUsize::new(0),
            since: Mutex::new(None),
            stop: AtomicBool::new(false),
        }
    }
}

/// The jobs as chunks for the run, taken in arrival order: a chunk is what is waiting, up to
/// the current hold size (and `--max-group`), of one `replace` flag.
struct Queue<'a> {
    rx: Receiver<Job>,
    /// The documents of the job taken last that no chunk holds yet.
    left: Option<(std::vec::IntoIter<Document>, OnExisting)>,
    pending: &'a Mutex<VecDeque<Pending>>,
    holds: &'a Holds,
    max_group: usize,
}

impl Queue<'_> {
    /// The next job: the one waiting, or (`wait`) the next to come; None when none is waiting
    /// (`wait` false), or when the run ended or every sender is gone.
    fn job(&mut self, wait: bool) -> Option<Job> {
        if !wait {
            return self.rx.try_recv().ok();
        }
        loop {
            match self.rx.recv_timeout(POLL) {
                Ok(job) => return Some(job),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) if self.holds.stop.load(Ordering::Relaxed) => {
                    return None
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl Iterator for Queue<'_> {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        let size = self
            .holds
            .size
            .load(Ordering::Relaxed)
            .clamp(MIN_HOLD_DOCS, HOLD_DOCS)
            .min(self.max_group);
        let mut records: Vec<Record> = Vec::new();
        let mut mode = None;
        loop {
            if let Some((docs, m)) = &mut self.left {
                if mode.is_some_and(|mode| mode != *m) {
                    break;
                }
                mode = Some(*m);
                records.extend(
                    docs.take(size - records.len())
                        .map(|d| Record::of_document("request", 0, d)),
                );
                if docs.len() == 0 {
                    self.left = None;
                }
                if records.len() >= size {
                    break;
                }
            }
            if self.holds.stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(job) = self.job(records.is_empty()) else {
                break;
            };
            if job.work.docs.is_empty() {
                let _ = job.reply.send(Ok(Vec::new()));
                continue;
            }
            self.pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push_back(Pending {
                    reply: job.reply,
                    docs: job.work.docs.len(),
                    results: Vec::with_capacity(job.work.docs.len()),
                    unread: None,
                });
            self.left = Some((job.work.docs.into_iter(), job.work.on_existing));
        }
        let on_existing = mode?;
        Some(Chunk {
            records,
            on_existing,
        })
    }
}

/// The store behind the server's lock, held for one chunk at a time.
struct Held<'a> {
    db: &'a RwLock<Fpdb>,
    holds: &'a Holds,
}

impl Hold for Held<'_> {
    fn hold(&mut self) -> impl std::ops::DerefMut<Target = Fpdb> + '_ {
        // The previous chunk's commit is waited for outside the lock: readers wait only while
        // this chunk is decided.
        let _ = self
            .db
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .settle();
        let guard = self
            .db
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let since = Instant::now();
        *self
            .holds
            .since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(since);
        Timed {
            guard,
            since,
            holds: self.holds,
        }
    }
}

/// A hold of the store that sizes the next chunks by how long it lasted.
struct Timed<'a> {
    guard: RwLockWriteGuard<'a, Fpdb>,
    since: Instant,
    holds: &'a Holds,
}

impl std::ops::Deref for Timed<'_> {
    type Target = Fpdb;
    fn deref(&self) -> &Fpdb {
        &self.guard
    }
}

impl std::ops::DerefMut for Timed<'_> {
    fn deref_mut(&mut self) -> &mut Fpdb {
        &mut self.guard
    }
}

impl Drop for Timed<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic while the store is held ends the run: its queue must not wait on.
            self.holds.stop.store(true, Ordering::Relaxed);
        }
        let n = self.holds.decided.swap(0, Ordering::Relaxed);
        let size = self.holds.size.load(Ordering::Relaxed);
        let held = self.since.elapsed();
        if n == 0 {
            return;
        }
        if held > HOLD_TIME * 2 {
            self.holds
                .size
                .store((size / 2).max(MIN_HOLD_DOCS), Ordering::Relaxed);
        } else if held < HOLD_TIME / 2 && n >= size {
            self.holds
                .size
                .store((size * 2).min(HOLD_DOCS), Ordering::Relaxed);
        }
    }
}

/// The server's side of the run: each chunk's results given to its jobs once durable, a job
/// answered when its last document is.
struct Told<'a> {
    shared: &'a Shared,
    pending: &'a Mutex<VecDeque<Pending>>,
    holds: &'a Holds,
    /// When each chunk decided and not yet durable began its hold.
    decided: VecDeque<Instant>,
}

impl Acknowledge for Told<'_> {
    type Error = fpdb::Error;

    fn decided(&mut self, records: &[Record], _: &[Result<IngestResult, String>]) {
        self.holds.decided.store(records.len(), Ordering::Relaxed);
        let since = self
            .holds
            .since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .unwrap_or_else(Instant::now);
        self.decided.push_back(since);
    }

    fn durable(
        &mut self,
        records: &[Record],
        results: &[Result<IngestResult, String>],
    ) -> Result<(), fpdb::Error> {
        let since = self.decided.pop_front().unwrap_or_else(Instant::now);
        self.shared
            .metrics
            .group_committed(records.len() as u64, since.elapsed().as_secs_f64());
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for r in results {
            let Some(job) = pending.front_mut() else {
                break;
            };
            match r {
                Ok(r) => job.results.push(r.clone()),
                Err(reason) => {
                    job.unread.get_or_insert_with(|| reason.clone());
                    job.docs -= 1;
                }
            }
            if job.results.len() == job.docs {
                let Some(job) = pending.pop_front() else {
                    break;
                };
                let _ = job.reply.send(match job.unread {
                    Some(reason) => Err(reason),
                    None => Ok(job.results),
                });
            }
        }
        Ok(())
    }

    fn ended(&mut self) {
        self.holds.stop.store(true, Ordering::Relaxed);
    }
}
