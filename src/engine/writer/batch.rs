//! Ingest of a batch of documents: every lookup against the store as it was before the batch
//! runs on all cores (`batch_lookup.rs`; for the next batch, while this one is decided); then
//! the decisions run in input order, each against those findings plus an in-memory index of
//! the documents of the batch decided before it (and of the batch before, when this one was
//! looked up before that one was committed); the batch is committed as one write, keys sorted.
//!
//! Each document is decided by [`Writer::decide`](super::Writer::decide) (`decide.rs`), as [`Fpdb::ingest`](crate::Fpdb::ingest) decides one:
//! the result is the one of [`Fpdb::ingest`](crate::Fpdb::ingest) called on each document in turn
//! (`tests/oracles/batch.rs` compares both).

use foldhash::HashMap;

use rayon::prelude::*;

use super::batch_lookup::{on_pool, BatchFingerprints, BeforeLease, Looked};
use super::Writer;
use crate::engine::furniture::SeenInBatch;
use crate::engine::near::NearIndex;
use crate::engine::{Document, IngestResult, OnExisting};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprints;
use crate::store::schema::DocRecord;
use crate::store::{Batch, Store};

/// What [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch) did: one result per document from the first on, and the error
/// that stopped it (the documents before it are ingested; it and the rest are not).
#[derive(Debug)]
pub struct BatchOutcome {
    /// Results, in input order.
    pub results: Vec<IngestResult>,
    /// The error at document `results.len()`, if one stopped the batch.
    pub error: Option<Error>,
}

/// The documents of a batch decided so far, indexed as the store indexes them.
pub(in crate::engine) struct InBatch {
    /// Sentence hash -> its oldest holder in the batch.
    pub(in crate::engine) holders: crate::engine::postings::Holders,
    /// Their simhashes.
    pub(in crate::engine) simhashes: NearIndex,
    /// Seq -> index of its record in the batch's records (id, cluster and sketches of the
    /// documents decided so far are read there, not copied). Empty once the batch is
    /// committed (its records are then read from the store).
    pub(in crate::engine) docs: HashMap<u64, usize>,
    pub(in crate::engine) ids: HashMap<String, u64>,
}

/// What a batch decided, kept for the batch after it when that one was looked up before
/// this one was committed: its postings, simhashes and ids (its records are read from the
/// store), the standing it gave its pages' lines, and the store's write count after its
/// commit ([`crate::store::Staged::writes`]).
pub(in crate::engine) struct LastBatch {
    pub(in crate::engine) index: InBatch,
    pub(in crate::engine) seen: SeenInBatch,
    pub(in crate::engine) after: u64,
}

/// What a batch has decided so far, and what its commit writes.
pub(in crate::engine) struct Decisions {
    /// The documents decided so far, as the store would index them.
    pub(in crate::engine) index: InBatch,
    /// The batch before, committed after this batch was looked up ([`LastBatch`]).
    pub(in crate::engine) last: Option<InBatch>,
    /// Writes to other documents' records and the lines of the batch's pages (sorted and
    /// written at commit with the records).
    pub(in crate::engine) bulk: Batch,
    /// The records of the batch's documents, in order (encoded, with their ids and index
    /// entries, at commit).
    pub(in crate::engine) records: Vec<(u64, DocRecord)>,
    /// The batch's ingest time.
    pub(in crate::engine) time: u64,
    /// The lines of the batch's pages whose standing they changed (and those the batch
    /// before changed, when this one was looked up before it was committed).
    pub(in crate::engine) seen: SeenInBatch,
    /// The clusters and pages that made lines furniture in this batch (stores with
    /// `late_links`: looked up again after its commit, `late.rs`).
    pub(in crate::engine) made: Vec<u64>,
}

impl Decisions {
    /// Nothing decided yet, sized for `n` documents holding `postings` postings; `last` and
    /// `seen` as the batch before left them.
    pub(in crate::engine) fn new(
        (n, postings, k): (usize, usize, u32),
        last: Option<InBatch>,
        seen: SeenInBatch,
    ) -> Self {
        Decisions {
            index: InBatch {
                holders: HashMap::with_capacity_and_hasher(postings, Default::default()),
                simhashes: NearIndex::with_capacity(k, n),
                docs: HashMap::with_capacity_and_hasher(n, Default::default()),
                ids: HashMap::with_capacity_and_hasher(n, Default::default()),
            },
            last,
            bulk: Batch::new(),
            records: Vec::with_capacity(n),
            time: crate::engine::now(),
            seen,
            made: Vec::new(),
        }
    }
}

/// The next batch once this one is decided: looked up meanwhile, or not (its fingerprints).
enum NextLooked {
    Found(Result<Looked>),
    Not(Vec<Fingerprints>),
}

/// The next batch, for its lookups to run while this one is decided.
pub type NextBatch<'n> = Option<(Vec<&'n Document>, Vec<Fingerprints>)>;

impl Writer<'_> {
    /// The work of [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch).
    pub(in crate::engine) fn ingest_batch(
        &mut self,
        docs: Vec<(&Document, Fingerprints)>,
        on_existing: OnExisting,
    ) -> BatchOutcome {
        let (docs, fps): (Vec<&Document>, Vec<Fingerprints>) = docs.into_iter().unzip();
        self.ingest_batch_ahead(docs, fps.into(), on_existing, None)
            .0
    }

    /// Drop what a store that reads ahead ([`crate::store::ReadAhead`]) read for a batch: it
    /// is not kept past the batch (a failed batch wrote nothing, which would have dropped it).
    fn end_read_ahead(&self) {
        if let Some(ahead) = self.store.read_ahead() {
            ahead.end_prefetch();
        }
    }

    /// The work of [`Fpdb::ingest_batch_ahead`](crate::Fpdb::ingest_batch_ahead).
    pub(in crate::engine) fn ingest_batch_ahead(
        &mut self,
        docs: Vec<&Document>,
        fps: BatchFingerprints,
        on_existing: OnExisting,
        next: NextBatch<'_>,
    ) -> (BatchOutcome, Option<BatchFingerprints>) {
        if !self.is_shared() {
            let done = self.ingest_batch_leased(docs, fps, on_existing, next);
            self.end_read_ahead();
            return done;
        }
        let next = next.map(|(_, fps)| BatchFingerprints::from(fps));
        let before = self
            .look_up_before_lease(&docs, fps, on_existing)
            .and_then(|before| self.begin_write().map(|()| before));
        let before = match before {
            Ok(before) => before,
            Err(e) => {
                self.end_read_ahead();
                let out = BatchOutcome {
                    results: Vec::new(),
                    error: Some(e),
                };
                return (out, next);
            }
        };
        let unchanged = self
            .store
            .read_ahead()
            .is_some_and(crate::store::ReadAhead::unchanged);
        let (mut out, _) = match before {
            BeforeLease::Looked(looked, reads) if unchanged => {
                self.reads.add_lookups(&reads);
                let out = BatchOutcome {
                    results: Vec::with_capacity(docs.len()),
                    error: None,
                };
                self.decide_batch((docs, looked, None), on_existing, out, None)
            }
            BeforeLease::Looked(looked, _) => {
                self.ingest_batch_leased(docs, looked.fps.into(), on_existing, None)
            }
            BeforeLease::Not(fps) => self.ingest_batch_leased(docs, fps, on_existing, None),
        };
        self.end_read_ahead();
        if let Err(e) = self.sync() {
            if out.error.is_none() {
                // Committed but not acknowledged as durable: report none of it as written.
                out.results.clear();
                out.error = Some(e);
            }
        }
        (out, next)
    }

    fn ingest_batch_leased(
        &mut self,
        docs: Vec<&Document>,
        fps: BatchFingerprints,
        on_existing: OnExisting,
        next: NextBatch<'_>,
    ) -> (BatchOutcome, Option<BatchFingerprints>) {
        let mut out = BatchOutcome {
            results: Vec::with_capacity(docs.len()),
            error: None,
        };
        if self.store.read_only() {
            out.error = Some(Error::ReadOnly);
            return (out, next.map(|(_, fps)| fps.into()));
        }
        // Looked up while the batch before was decided, and nothing written since it was
        // committed: decided against what that batch decided too.
        let writes = self.store.writes();
        let last = self.last_batch.take().filter(|l| l.after == writes);
        let fps = match (fps.looked(docs.len(), writes), last) {
            (Ok(looked), Some(last)) => {
                crate::engine::LookupCounters::add(&self.reads.ahead, 1);
                Ok((looked, Some(last)))
            }
            (Ok(looked), None) => Err(looked.fps),
            (Err(Ok(fps)), _) => Err(fps),
            (Err(Err(e)), _) => {
                out.error = Some(e);
                return (out, next.map(|(_, fps)| fps.into()));
            }
        };
        let (looked, last) = match fps {
            Ok(ahead) => ahead,
            Err(fps) => {
                let looking = std::time::Instant::now();
                let pool = self.lookup_pool();
                let docs = docs.iter().copied().zip(fps).collect();
                let looked = self.finder().look_up(docs, on_existing, pool.as_deref());
                crate::engine::LookupCounters::add_time(&self.reads.lookup_ns, looking);
                match looked {
                    Ok(looked) => (looked, None),
                    Err(e) => {
                        out.error = Some(e);
                        return (out, next.map(|(_, fps)| fps.into()));
                    }
                }
            }
        };
        self.decide_batch((docs, looked, last), on_existing, out, next)
    }

    /// The sequential stage of [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch): each document decided in input order
    /// from what it found and its page's lines (and what `last`, the batch before, decided
    /// when this one was looked up before it was committed), and the batch committed; the
    /// lookups of the `next` batch on other threads meanwhile.
    fn decide_batch(
        &mut self,
        (docs, looked, last): (Vec<&Document>, Looked, Option<LastBatch>),
        on_existing: OnExisting,
        mut out: BatchOutcome,
        next: NextBatch<'_>,
    ) -> (BatchOutcome, Option<BatchFingerprints>) {
        let skip = on_existing == OnExisting::Skip;
        let Looked { fps, found, lines } = looked;
        let (last, mut seen) = match last {
            Some(l) => (Some(l.index), l.seen),
            None => (None, SeenInBatch::default()),
        };
        // Decided one at a time: a batch replacing, or dating a stored document earlier
        // (`again_in_batch`, `Fpdb::predate`).
        let in_last = |id: &str| last.as_ref().is_some_and(|l| l.ids.contains_key(id));
        let replaces = if skip {
            self.opts.originals
                && (found.iter().any(|f| f.as_ref().is_ok_and(|f| f.predates))
                    || super::ingest::again_in_batch(&docs, in_last, true))
        } else {
            found
                .iter()
                .any(|f| f.as_ref().map_or(true, |f| f.existing.is_some()))
                || super::ingest::again_in_batch(&docs, in_last, false)
        };
        if replaces {
            let deciding = std::time::Instant::now();
            for (doc, fps) in docs.into_iter().zip(fps) {
                match self.ingest(doc, fps, on_existing) {
                    Ok(r) => out.results.push(r),
                    Err(e) => {
                        out.error = Some(e);
                        break;
                    }
                }
            }
            crate::engine::LookupCounters::add_time(&self.reads.decide_ns, deciding);
            return (out, next.map(|(_, fps)| fps.into()));
        }
        if last.is_none() {
            seen.clear();
        }
        let start = self.counts;
        // Sized for the whole batch: grown one document at a time, they were rehashed here.
        let (n, postings) = (docs.len(), fps.iter().map(|f| f.postings().count()).sum());
        let mut d = Decisions::new((n, postings, self.opts.simhash_k), last, seen);
        let looked = Looked { fps, found, lines };
        let looked_ahead = self.decide_all(docs, looked, &mut d, &mut out, (next, on_existing));
        let Decisions {
            mut index,
            bulk,
            records,
            seen,
            last,
            made,
            ..
        } = d;
        // Freeing what the writer no longer reads is work it need not wait for.
        let docs_index = std::mem::take(&mut index.docs);
        rayon::spawn(move || drop((last, docs_index)));
        let committing = std::time::Instant::now();
        let committed = self.commit_batch(bulk, records);
        crate::engine::LookupCounters::add_time(&self.reads.commit_ns, committing);
        if let Err(e) = committed {
            // Nothing of the batch (nor anything staged before it) reached the store.
            self.store.discard();
            self.counts = start;
            out.results.clear();
            out.error = Some(e);
        }
        let next = looked_ahead.map(|next| match next {
            NextLooked::Found(Ok(looked)) if out.error.is_none() => {
                let after = self.store.writes();
                self.last_batch = Some(LastBatch { index, seen, after });
                BatchFingerprints::ahead(looked, after)
            }
            NextLooked::Found(Ok(looked)) => looked.fps.into(),
            NextLooked::Found(Err(e)) => BatchFingerprints::failed(e),
            NextLooked::Not(fps) => fps.into(),
        });
        if out.error.is_none() && !made.is_empty() && self.opts.late_links {
            // After `last_batch.after`: the next batch, looked up before these writes, is
            // looked up again.
            let saved = self.counts;
            let joined = self.late_links(&made).and_then(|_| {
                if self.store.staged() == 0 {
                    return Ok(());
                }
                self.stage_counters()?;
                self.store.commit()
            });
            if let Err(e) = joined {
                // The batch is committed; what the late joins staged is not.
                self.store.discard();
                self.counts = saved;
                out.error = Some(e);
            }
        }
        (out, next)
    }

    /// Each document decided in input order into `d` (results into `out`, up to the first
    /// error), while the `next` batch is looked up on the lookup threads (returned: what it
    /// found, or its fingerprints when it was not looked up).
    fn decide_all(
        &mut self,
        docs: Vec<&Document>,
        looked: Looked,
        d: &mut Decisions,
        out: &mut BatchOutcome,
        (next, on_existing): (NextBatch<'_>, OnExisting),
    ) -> Option<NextLooked> {
        let Looked { fps, found, lines } = looked;
        let decided = |this: &mut Self, d: &mut Decisions, out: &mut BatchOutcome| {
            let deciding = std::time::Instant::now();
            let items = docs.into_iter().zip(fps).zip(found.into_iter().zip(lines));
            for ((doc, fps), (f, lines)) in items {
                match f.and_then(|f| this.decide(doc, (fps, f), (lines?, None), d)) {
                    Ok(r) => out.results.push(r),
                    Err(e) => {
                        out.error = Some(e);
                        break;
                    }
                }
            }
            crate::engine::LookupCounters::add_time(&this.reads.decide_ns, deciding);
        };
        // The next batch's lookups read what was committed: nothing of this batch, which
        // is committed after they end. Not when something staged before this batch is not
        // committed yet (they would miss it), nor on one thread: there they would only take
        // turns with the decisions on one core, each evicting the other's data from its caches.
        let pool = self.lookup_pool().filter(|p| p.current_num_threads() > 1);
        let ((docs, fps), pool) = match (next, pool) {
            (Some(next), Some(pool)) if !self.store.any_staged() => (next, pool),
            (next, _) => {
                decided(self, d, out);
                return next.map(|(_, fps)| NextLooked::Not(fps));
            }
        };
        let view = self.committed_view();
        let mut looked_ahead = None;
        let slot = &mut looked_ahead;
        let reader = &view;
        pool.in_place_scope(|scope| {
            scope.spawn(move |_| {
                let t = std::time::Instant::now();
                let docs = docs.into_iter().zip(fps).collect();
                *slot = Some(reader.finder().look_up(docs, on_existing, None));
                crate::engine::LookupCounters::add_time(&reader.finder().reads.lookup_ns, t);
            });
            decided(self, d, out);
        });
        self.keep_view(view);
        looked_ahead.map(NextLooked::Found)
    }

    /// Commit the staged changes, the counters, `records` and `bulk` as one write.
    ///
    /// On the lookup threads, which are idle until the next batch's lookups: the records are
    /// encoded there with their ids and index entries, and the store spreads its own work for the write over them (sorting
    /// the changes, the presence filter's inserts). The writer's thread waits; done by it
    /// alone, this was over half of the sequential stage (docs/performance.md, "Many cores").
    fn commit_batch(&mut self, bulk: Batch, records: Vec<(u64, DocRecord)>) -> Result<()> {
        let pool = self.lookup_pool();
        on_pool(pool.as_deref(), || self.commit_prepared(bulk, records))
    }

    fn commit_prepared(&self, mut bulk: Batch, records: Vec<(u64, DocRecord)>) -> Result<()> {
        let encoded: Vec<Batch> = records
            .par_chunks(64)
            .map(|chunk| {
                let mut b = Batch::new();
                for (seq, r) in chunk {
                    self.put_record(*seq, r, &mut b);
                }
                b
            })
            .collect();
        rayon::spawn(move || drop(records));
        for b in encoded {
            bulk.append(b);
        }
        self.stage_counters()?;
        self.store.commit_with(bulk)
    }
}
