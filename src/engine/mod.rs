//! The engine: opens a store, checks its format and options, and turns fingerprints into
//! decisions (which stored documents match, which `similar_id` a document gets) and into one
//! atomic write batch per document.
//!
//! Invariants kept by every write:
//! - a document's record, its `doc_ids` entry, its index entries, the cluster changes and the
//!   counters land in one batch;
//! - cluster ids and doc seqs only grow and are never reused; a merge points every joined root
//!   at the oldest (smallest) id, so following `parent` from any id reaches the current one.

//!
//! | file | owns |
//! |---|---|
//! | `types.rs` | documents in; outcomes, stored documents, stats out |
//! | `settings.rs` | settings at creation, the builder |
//! | `open.rs` | opening: format, options, counters; format 2 upgrade |
//! | `postings.rs` | reading the postings and simhash tables, for one document or a batch |
//! | `lookup.rs` | candidates (nshash postings, simhash tables), verification |
//! | `query.rs` | queries: one document, many on all cores |
//! | `writer/` | the write path: a batch's lookups, decisions in order, placement, one commit |
//! | `near.rs` | the batch's simhashes, found within k bits by blocks |
//! | `furniture.rs` | a site's furniture: each host's lines counted, left out of its pages |
//! | `maintenance.rs`, `clusters.rs`, `forget.rs` | removals, retention, splits, sweeps, backup |
//! | `read.rs` | stored documents, stats, export, clusters |
//! | `counters.rs` | what a handle counts: lookup reads, stage times, the write lease |
//! | `verify.rs` | the consistency check |
//! | `report.rs`, `heavy.rs` | the report: one pass over the store, bounded host tables |

mod checked;
mod clusters;
mod compared;
mod counters;
mod explained;
mod finder;
mod forget;
mod furniture;
mod heavy;
mod holder;
mod jobs;
mod joins;
mod learn;
mod lookup;
mod maintenance;
mod near;
mod open;
mod postings;
mod publishers;
mod query;
mod read;
mod rechecked;
mod records;
mod report;
mod searcher;
mod settings;
mod sites;
mod stored_texts;
#[cfg(test)]
mod test_lines;
mod tight;
mod types;
mod verify;
mod writer;

use std::path::{Path, PathBuf};

pub use crate::store::Syncer;
pub use counters::{BatchSeconds, LookupStats, Meters};
use counters::{Lease, LookupCounters};
pub use heavy::Heavy;
pub use jobs::Job;
pub use maintenance::Maintainer;
pub use postings::SIMHASH_MOST;
pub use read::{Dates, Standing};
pub use report::cut;
pub use report::{
    ClusterDetail, Day, HostCount, HostPair, Hosts, Member, Report, ReportOptions, ReportScan,
    SizeClass, MAX_LINK_ID_CHARS,
};
pub use searcher::Searcher;
pub use settings::{Builder, Settings, ALGO_NAMES};
pub use stored_texts::StoredTexts;
pub use types::{
    Cluster, Document, IngestResult, Match, OnExisting, Outcome, QueryAnswer, ResultLine,
    SavedFilter, Stats, StoredDocument, Verified,
};
pub use writer::{BatchFingerprints, BatchOutcome, NextBatch};

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;
use crate::fingerprint::{Fingerprinter, Fingerprints};
use crate::index::Permutations;
use crate::options::Options;
use crate::store::schema::{self, meta};
use crate::store::{Batch, Cf, Staged, Store};

/// Staged keys above which [`Fpdb::ingest`] commits to the store without waiting for a sync.
pub const AUTO_COMMIT_KEYS: usize = 1 << 20;

/// Documents per batch of `fpdb ingest` (its `--batch-size`) and of `fpdb eval`. A batch's
/// pages learn their site's furniture from each other ([`crate::Options::batch_furniture`]);
/// every other rule decides a batch as one document at a time.
pub const BATCH_DOCS: usize = 1024;

/// Most matches reported (and stored) per document.
pub const MAX_MATCHES: usize = 20;

pub(crate) const DOC_COUNT: &[u8] = b"doc_count";

pub(crate) const CLUSTER_COUNT: &[u8] = b"cluster_count";

/// A fingerprint database.
pub struct Fpdb {
    /// Writes are staged in memory and committed as one batch by [`Fpdb::sync`].
    store: Staged,
    opts: Options,
    fingerprinter: Fingerprinter,
    perms: Permutations,
    /// The seq and cluster id handed out next, the documents and clusters stored.
    counts: Counters,
    /// A format 2 store opened read-only: bare-hash `nshash` entries, no `members`.
    legacy: bool,
    path: Option<PathBuf>,
    /// A shared store's write lease is held (taken by the first write, given back by the
    /// next sync).
    writing: std::sync::atomic::AtomicBool,
    /// How long this handle has held a shared store's write lease ([`Meters::lease_seconds`]).
    lease: Lease,
    /// Threads of the lookups of [`Fpdb::ingest_batch`]: a pool of their own, so they never
    /// queue behind fingerprinting on rayon's global pool (None: it could not be built).
    lookup_pool: std::sync::OnceLock<Option<std::sync::Arc<rayon::ThreadPool>>>,
    /// What the lookups of this handle (and of its view) read ([`Fpdb::meters`]).
    reads: std::sync::Arc<LookupCounters>,
    /// A handle on what was committed, for the lookups of a batch while the batch before it
    /// is decided ([`Fpdb::ingest_batch_ahead`]).
    view: Option<Box<writer::Committed>>,
    /// What the last batch decided, when the next was looked up before it was committed.
    last_batch: Option<writer::LastBatch>,
    /// Whether a batch's pages learn their sites' furniture together, where the store has
    /// `batch_furniture` ([`Fpdb::set_batch_furniture`]).
    batch_pages: bool,
    /// Hosts of removed documents, whose lines the next sync sweeps (`forget.rs`).
    forget: std::sync::Mutex<Vec<u64>>,
    /// The lines each site's pages wrote since it was last bounded (`forget.rs`).
    grown: std::sync::Mutex<forget::Grown>,
    /// Documents read into the presence filter at open: it was saved before they were
    /// written ([`Meters::memory_filter_caught_up`]).
    filter_caught_up: Option<u64>,
    /// Nanoseconds the store's own thread has spent applying batches, where it has one
    /// ([`crate::store::WriteBehind`]).
    applying: Option<std::sync::Arc<AtomicU64>>,
}

pub use crate::clock::now;
pub(crate) use checked::is_strong;

impl Drop for Fpdb {
    fn drop(&mut self) {
        // Best effort: an explicit sync() reports errors; a drop cannot.
        let _ = self.sync();
    }
}

impl std::fmt::Debug for Fpdb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fpdb")
            .field("path", &self.path)
            .field("options", &self.opts)
            .finish()
    }
}

impl Fpdb {
    /// A builder with default settings.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Open (creating if needed) the store at `path` with default settings.
    pub fn open(path: impl AsRef<Path>) -> Result<Fpdb> {
        Self::builder().create(true).open(path)
    }

    /// The store's settings.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The simhash permutations of this store.
    pub fn permutations(&self) -> &Permutations {
        &self.perms
    }

    /// Fingerprints of `text` with this store's settings (pure; safe to call from many threads).
    pub fn fingerprint(&self, text: &str) -> Fingerprints {
        self.fingerprinter.fingerprint(text)
    }

    /// The fingerprints of a document: its text, and its title, description and keywords for
    /// the algorithms that read them (what [`Fpdb::ingest_document`] computes).
    pub fn fingerprint_document(&self, doc: &Document) -> Fingerprints {
        self.fingerprinter.fingerprint_with(&doc.text, doc.meta())
    }

    /// This store's fingerprinter (clone it to fingerprint on other threads).
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Save the in-memory presence filters of the store's hash prefixes next to it, so the next
    /// writer (or `query --batch`) loads them instead of reading the store for absent hashes.
    /// Also done, best effort, when the store is closed. An error loses nothing stored.
    pub fn save_memory_filter(&self) -> Result<()> {
        self.store
            .presence_filter()
            .map_or(Ok(()), crate::store::PresenceFilter::save)
    }

    /// [`Fpdb::sync`], then move everything out of the write-ahead log into table files, so
    /// the next open (a `query`, `stats`, ...) replays nothing. Worth it at the end of an
    /// ingest.
    pub fn flush(&self) -> Result<()> {
        let r = self.stage_counters().and_then(|()| self.store.flush());
        self.end_write(r)
    }

    /// Commit every ingested document as one atomic batch and make it durable.
    pub fn sync(&self) -> Result<()> {
        let r = self
            .forget_removed()
            .and_then(|_| self.stage_counters())
            .and_then(|()| self.store.sync());
        self.end_write(r)
    }

    /// Wait until the store holds every write handed over so far (the batch RocksDB applies on
    /// its commit thread), without syncing. A writer that shares this `Fpdb` behind a lock
    /// calls it before taking the lock, so that the next batch's commit does not wait for the
    /// previous one while readers wait for the lock.
    pub fn settle(&self) -> Result<()> {
        self.store.settle()
    }

    /// Hand everything written so far to the store (its memtables and log) without waiting
    /// for it to be durable, and return what makes it durable ([`Store::syncer`]), to call
    /// on another thread while the next writes go on: what it covers is acknowledged only
    /// once it returns `Ok`. `None` when only [`Fpdb::sync`] can (a store other processes
    /// write too: there the sync also ends the write lease); call that instead.
    pub fn commit_unsynced(&self) -> Result<Option<crate::store::Syncer>> {
        if self.is_shared() {
            return Ok(None);
        }
        self.stage_counters()?;
        self.store.commit()?;
        Ok(self.store.syncer())
    }

    /// Before a write: on a store other processes write too ([`Store::lease`]), wait for
    /// its write lease and reload the counters they may have moved. Held until the next
    /// [`Fpdb::sync`], so that everything between is decided against one view.
    pub(super) fn begin_write(&mut self) -> Result<()> {
        let Some(lease) = self.store.lease() else {
            return Ok(());
        };
        if self.store.read_only() || *self.writing.get_mut() {
            return Ok(());
        }
        lease.acquire_writer()?;
        *self.writing.get_mut() = true;
        // Since the lease was got: a store may bring itself up to date before it returns.
        let got = lease.acquired_at().unwrap_or_else(std::time::Instant::now);
        *self
            .lease
            .since
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(got);
        match read_counters(&self.store) {
            Ok(c) => {
                self.counts = c;
                Ok(())
            }
            Err(e) => self.end_write(Err(e)),
        }
    }

    /// Give a shared store's write lease back (nothing for a store without one).
    fn release_lease(&self) -> Result<()> {
        self.store
            .lease()
            .map_or(Ok(()), crate::store::Lease::release_writer)
    }

    /// After a sync (or a failed write): give a shared store's lease back; returns `r` (or
    /// the release's error).
    pub(super) fn end_write(&self, r: Result<()>) -> Result<()> {
        if !self
            .writing
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return r;
        }
        let released = self.release_lease();
        let since = self
            .lease
            .since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(t) = since {
            // Until the lease was given back: a store may finish its writes after that.
            let end = self
                .store
                .lease()
                .and_then(crate::store::Lease::released_at)
                .filter(|end| *end >= t)
                .unwrap_or_else(std::time::Instant::now);
            let ns = u64::try_from((end - t).as_nanos()).unwrap_or(u64::MAX);
            self.lease.held_ns.fetch_add(ns, Ordering::Relaxed);
        }
        r.and(released)
    }

    /// Whether other processes write the store too (a Redis Cluster namespace): documents
    /// stored since a seq are then not only this handle's.
    pub fn is_shared(&self) -> bool {
        self.store.lease().is_some()
    }

    /// Where the store lives (None for memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// What this handle has measured since it was opened: its lookups' reads, its batches'
    /// time by stage, its writes and its lease, and its presence filter.
    pub fn meters(&self) -> Meters {
        let r = &self.reads;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let secs = |c: &AtomicU64| get(c) as f64 / 1e9;
        Meters {
            lookups: LookupStats {
                lookups: get(&r.lookups),
                postings_found: get(&r.postings_found),
                simhash_scanned: get(&r.simhash_scanned),
                simhash_candidates: get(&r.simhash_candidates),
                records_read: get(&r.records_read),
                verified: get(&r.verified),
            },
            batch: BatchSeconds {
                look_up: secs(&r.lookup_ns),
                decide: secs(&r.decide_ns),
                commit: secs(&r.commit_ns),
                apply: self.applying.as_deref().map_or(0.0, secs),
            },
            batches_looked_up_ahead: get(&r.ahead),
            late_joins: get(&r.late_joins),
            late_splits: get(&r.late_splits),
            writes: self.store.writes(),
            lease_seconds: secs(&self.lease.held_ns),
            memory_filter_bytes: self
                .store
                .presence_filter()
                .map(crate::store::PresenceFilter::bytes),
            memory_filter_caught_up: self.filter_caught_up,
        }
    }

    /// Stage the counters with the documents written since the last commit, so they reach
    /// the store in the same batch (once per batch, not per document).
    pub(super) fn stage_counters(&self) -> Result<()> {
        if self.store.read_only() || self.store.staged() == 0 {
            return Ok(());
        }
        let mut b = Batch::new();
        self.counts.put(&mut b);
        self.store.write(b)
    }
}

/// The store's counters, kept in its `meta` column family with every batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counters {
    /// The seq the next document gets.
    pub(super) next_seq: u64,
    /// The id the next new cluster gets.
    pub(super) next_cluster: u64,
    /// Documents stored.
    pub(super) docs: u64,
    /// Clusters (roots) stored.
    pub(super) clusters: u64,
}

impl Counters {
    /// The counters, as `meta` puts.
    pub(super) fn put(&self, b: &mut Batch) {
        b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(self.next_seq));
        b.put(
            Cf::Meta,
            meta::NEXT_CLUSTER,
            schema::u64_key(self.next_cluster),
        );
        b.put(Cf::Meta, DOC_COUNT, schema::u64_key(self.docs));
        b.put(Cf::Meta, CLUSTER_COUNT, schema::u64_key(self.clusters));
    }
}

/// The counters as stored.
pub(super) fn read_counters(store: &dyn Store) -> Result<Counters> {
    let counter = |k: &[u8]| -> Result<u64> {
        match store.get(Cf::Meta, k)? {
            Some(v) => schema::decode_u64(Cf::Meta, k, &v),
            None => Err(schema::corrupt(Cf::Meta, k, "missing counter".into())),
        }
    };
    Ok(Counters {
        next_seq: counter(meta::NEXT_SEQ)?,
        next_cluster: counter(meta::NEXT_CLUSTER)?,
        docs: counter(DOC_COUNT)?,
        clusters: counter(CLUSTER_COUNT)?,
    })
}

/// What verification compares of a stored document.
pub(super) fn record_sketches(
    rec: &crate::store::schema::DocRecord,
) -> crate::fingerprint::Sketches<'_> {
    crate::fingerprint::Sketches {
        sketch: &rec.sketch,
        order: &rec.order,
        shingles: &rec.shingles,
        figures: &rec.figures,
        chars: rec.chars,
    }
}
