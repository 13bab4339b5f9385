//! Ingest of a batch of documents: every lookup against the store as it was before the batch
//! runs on all cores (nothing writes while they run); then the decisions run in input order,
//! each against those findings plus an in-memory index of the documents of the batch decided
//! before it; the batch is committed as one write, its keys sorted.
//!
//! The result is the one of [`Fpdb::ingest`] called on each document in turn (the same rules
//! in [`Fpdb::lookup_with`] and [`Fpdb::place`]; `tests/batch_oracle.rs` compares both).

use std::collections::BTreeMap;

use foldhash::HashMap;

use rayon::prelude::*;

use super::furniture::{put_seen, PageLines, SeenInBatch};
use super::ingest::Writes;
use super::lookup::Checked;
use super::near::NearIndex;
use super::postings::{bound_simhash, candidate_seqs, ReadMany};
use super::{Document, Fpdb, IngestResult, OnExisting};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprints;
use crate::store::schema::DocRecord;
use crate::store::{Batch, Cf, Store};

/// What [`Fpdb::ingest_batch`] did: one result per document from the first on, and the error
/// that stopped it (the documents before it are ingested; it and the rest are not).
#[derive(Debug)]
pub struct BatchOutcome {
    /// Results, in input order.
    pub results: Vec<IngestResult>,
    /// The error at document `results.len()`, if one stopped the batch.
    pub error: Option<Error>,
}

/// What one document found in the store as it was before the batch.
#[derive(Default)]
struct Found {
    /// (seq, similar_id at ingest, whether it holds the same text) of the stored document
    /// with the same id.
    existing: Option<(u64, u64, bool)>,
    holders: HashMap<u64, (u64, u64)>,
    simhash: BTreeMap<u64, u32>,
    verified: HashMap<u64, Checked>,
}

impl Found {
    /// The stored documents to verify: the holders of its postings, its simhash neighbours
    /// (a seq may come twice).
    fn candidates(&self) -> impl Iterator<Item = u64> + '_ {
        candidate_seqs(&self.holders, &self.simhash)
    }
}

/// The documents of the batch decided so far, indexed as the store indexes them.
struct InBatch {
    /// Sentence hash -> (oldest holder in the batch, its cluster at ingest).
    holders: HashMap<u64, (u64, u64)>,
    /// Their simhashes.
    simhashes: NearIndex,
    /// Seq -> index of its record in the batch's records (id, cluster and sketches of the
    /// documents decided so far are read there, not copied).
    docs: HashMap<u64, usize>,
    ids: HashMap<String, u64>,
}

/// What a batch has decided so far, and what its commit writes.
struct Decisions {
    /// The documents decided so far, as the store would index them.
    index: InBatch,
    /// Writes to other documents' records and the lines of the batch's pages (sorted and
    /// written at commit with the records).
    bulk: Batch,
    /// The records of the batch's documents, in order (encoded, with their ids and index
    /// entries, at commit).
    records: Vec<(u64, DocRecord)>,
    /// The batch's ingest time.
    time: u64,
    /// The lines of the batch's pages whose standing they changed.
    seen: SeenInBatch,
}

/// A page's lines and what the store said of them, or the error reading them.
type Lines = Result<Option<PageLines>>;

/// A batch's documents with their fingerprints without their site's furniture, and their
/// pages' lines ([`Fpdb::furnish_batch`]).
type Furnished<'d> = (Vec<(&'d Document, Fingerprints)>, Vec<Lines>);

/// `f` run on `pool`, or on the calling thread without one.
fn on_pool<R: Send>(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

impl Fpdb {
    /// Ingest `docs` (each with its fingerprints from [`Fpdb::fingerprint`]) in order, with the
    /// result of calling [`Fpdb::ingest`] on each in turn, and commit them (not synced: call
    /// [`Fpdb::sync`] to make them durable).
    ///
    /// Lookups run on as many threads as rayon's current pool has. A batch that replaces stored
    /// documents (or holds one id twice) with [`OnExisting::Replace`] is ingested one
    /// document at a time.
    ///
    /// On a store other processes write too ([`crate::store::Store::shared`]) the batch is
    /// looked up, decided and committed under the store's write lease and synced before it is
    /// given back, so the batches of all writers are decided one after another.
    pub fn ingest_batch(
        &mut self,
        docs: Vec<(&Document, Fingerprints)>,
        on_existing: OnExisting,
    ) -> BatchOutcome {
        if !self.store.shared() {
            return self.ingest_batch_leased(docs, on_existing);
        }
        if let Err(e) = self.begin_write() {
            return BatchOutcome {
                results: Vec::new(),
                error: Some(e),
            };
        }
        let mut out = self.ingest_batch_leased(docs, on_existing);
        // What the lookups read ahead is not kept past the batch (a failed batch wrote
        // nothing, which would have dropped it).
        self.store.end_prefetch();
        if let Err(e) = self.sync() {
            if out.error.is_none() {
                // Committed but not acknowledged as durable: report none of it as written.
                out.results.clear();
                out.error = Some(e);
            }
        }
        out
    }

    fn ingest_batch_leased(
        &mut self,
        docs: Vec<(&Document, Fingerprints)>,
        on_existing: OnExisting,
    ) -> BatchOutcome {
        let mut out = BatchOutcome {
            results: Vec::with_capacity(docs.len()),
            error: None,
        };
        if self.store.read_only() {
            out.error = Some(Error::ReadOnly);
            return out;
        }
        let pool = self.lookup_pool.get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(|i| format!("fpdb-lookup-{i}"))
                .build()
                .ok()
        });
        let looking = std::time::Instant::now();
        let (docs, lines) = match self.furnish_batch(docs, pool.as_ref()) {
            Ok(furnished) => furnished,
            Err(e) => {
                out.error = Some(e);
                return out;
            }
        };
        if self.store.shared() {
            // A remote store: what the lookups read first, in one round trip per node.
            if let Err(e) = self.prefetch(&docs) {
                out.error = Some(e);
                return out;
            }
        }
        let skip = on_existing == OnExisting::Skip;
        let lookups = || -> Vec<Result<Found>> {
            let existing: Vec<Result<Option<(u64, u64, bool)>>> = docs
                .par_iter()
                .map(|(doc, fps)| self.existing(doc, fps))
                .collect();
            // The postings and simhash tables of every document to look up, read in key
            // order; when that fails, each document reads its own (and meets the error as a
            // lookup of its own would, in input order).
            let looked: Vec<&Fingerprints> = docs
                .iter()
                .zip(&existing)
                .filter(|(_, e)| matches!(e, Ok(None)) || (!skip && matches!(e, Ok(Some(_)))))
                .map(|((_, fps), _)| fps)
                .collect();
            let read = self.read_many(&looked).ok();
            let found: Vec<Result<Found>> = docs
                .par_iter()
                .zip(existing)
                .map(|((_, fps), existing)| self.found(fps, existing?, skip, read.as_ref()))
                .collect();
            // The records of candidates of several documents, each read once for the batch
            // (a third of a batch's reads were of records another document of it read too,
            // on the short corpus at 10^6 documents); the others, and all of them when one
            // of these fails, each document reads itself (only the shared ones are held).
            let records =
                self.shared_records(found.iter().flatten().map(|f| f.candidates().collect()));
            docs.par_iter()
                .zip(found)
                .map(|((_, fps), f)| self.verify_found(fps, f?, records.as_ref()))
                .collect()
        };
        let found = on_pool(pool.as_ref(), lookups);
        super::LookupCounters::add_time(&self.reads.lookup_ns, looking);
        let deciding = std::time::Instant::now();
        let out = self.decide_batch(docs, (found, lines), on_existing, out);
        super::LookupCounters::add_time(&self.reads.decide_ns, deciding);
        out
    }

    /// A site's furniture, before the lookups (stores with `furniture`): each page's lines as
    /// the store stood before the batch, read on all cores, and its fingerprints without
    /// those that were furniture then. The decisions see what the batch's earlier documents
    /// changed ([`Fpdb::decide`]).
    fn furnish_batch<'d>(
        &self,
        docs: Vec<(&'d Document, Fingerprints)>,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<Furnished<'d>> {
        if !self.opts.furniture {
            let none = docs.iter().map(|_| Ok(None)).collect();
            return Ok((docs, none));
        }
        if self.store.shared() {
            let keys: Vec<[u8; 16]> = docs
                .iter()
                .flat_map(|(d, _)| self.page_line_keys(d))
                .collect();
            let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            self.store.prefetch_keys(Cf::Furniture, &keys)?;
        }
        Ok(on_pool(pool, || {
            docs.into_par_iter()
                .map(|(doc, fps)| match self.page_lines(doc) {
                    Ok(Some(l)) => {
                        let fps = self.furnished(doc, fps, &l);
                        ((doc, fps), Ok(Some(l)))
                    }
                    other => ((doc, fps), other),
                })
                .unzip()
        }))
    }

    /// The sequential stage of [`Fpdb::ingest_batch`]: each document decided in input order
    /// from what it `found` and its page's `lines`, and the batch staged.
    fn decide_batch(
        &mut self,
        docs: Vec<(&Document, Fingerprints)>,
        (found, lines): (Vec<Result<Found>>, Vec<Lines>),
        on_existing: OnExisting,
        mut out: BatchOutcome,
    ) -> BatchOutcome {
        let skip = on_existing == OnExisting::Skip;
        let replaces = !skip
            && (found
                .iter()
                .any(|f| f.as_ref().map_or(true, |f| f.existing.is_some()))
                || {
                    let mut ids: Vec<&str> = docs.iter().map(|(d, _)| d.id.as_str()).collect();
                    ids.sort_unstable();
                    ids.windows(2).any(|w| w[0] == w[1])
                });
        if replaces {
            for (doc, fps) in docs {
                match self.ingest(doc, fps, on_existing) {
                    Ok(r) => out.results.push(r),
                    Err(e) => {
                        out.error = Some(e);
                        break;
                    }
                }
            }
            return out;
        }
        let start = self.counters();
        let mut d = Decisions {
            index: InBatch {
                holders: HashMap::default(),
                simhashes: NearIndex::new(self.opts.simhash_k),
                docs: HashMap::default(),
                ids: HashMap::default(),
            },
            bulk: Batch::new(),
            records: Vec::with_capacity(docs.len()),
            time: super::now(),
            seen: SeenInBatch::default(),
        };
        for (((doc, fps), f), lines) in docs.into_iter().zip(found).zip(lines) {
            let r = f.and_then(|f| self.decide(doc, fps, f, lines?, &mut d));
            match r {
                Ok(r) => out.results.push(r),
                Err(e) => {
                    out.error = Some(e);
                    break;
                }
            }
        }
        // Freeing the index of the batch is work the writer need not wait for.
        let index = d.index;
        rayon::spawn(move || drop(index));
        if let Err(e) = self.commit_batch(d.bulk, d.records) {
            // Nothing of the batch (nor anything staged before it) reached the store.
            self.store.discard();
            self.set_counters(start);
            out.results.clear();
            out.error = Some(e);
        }
        out
    }

    /// (seq, similar_id at ingest, whether it holds the same text) of the stored document
    /// with `doc`'s id.
    fn existing(&self, doc: &Document, fps: &Fingerprints) -> Result<Option<(u64, u64, bool)>> {
        match self.seq_of(&doc.id)? {
            Some(seq) => {
                let rec = self.doc(seq)?;
                let same = super::ingest::same_text(&rec, doc, fps);
                Ok(Some((seq, rec.similar_id, same)))
            }
            None => Ok(None),
        }
    }

    /// What a document (`fps`, its stored namesake `existing`) finds in the store, from what
    /// [`Fpdb::read_many`] read for the batch when given (read-only; runs on many threads at
    /// once): its candidates, not yet verified.
    fn found(
        &self,
        fps: &Fingerprints,
        existing: Option<(u64, u64, bool)>,
        skip: bool,
        read: Option<&ReadMany>,
    ) -> Result<Found> {
        let mut f = Found {
            existing,
            ..Found::default()
        };
        if skip && existing.is_some() {
            return Ok(f);
        }
        super::LookupCounters::add(&self.reads.lookups, 1);
        (f.holders, f.simhash) = self.holders_and_neighbours(fps, read)?;
        Ok(f)
    }

    /// `f` with each of its candidates checked against `fps` (records read for the whole
    /// batch taken from `records`).
    fn verify_found(
        &self,
        fps: &Fingerprints,
        mut f: Found,
        records: Option<&HashMap<u64, DocRecord>>,
    ) -> Result<Found> {
        for seq in f.candidates().collect::<Vec<_>>() {
            if let std::collections::hash_map::Entry::Vacant(e) = f.verified.entry(seq) {
                e.insert(self.check_stored_in(fps, seq, records)?);
            }
        }
        Ok(f)
    }

    /// The decision for one document of a batch, in input order.
    #[expect(
        clippy::too_many_lines,
        reason = "lookup against the store and the batch, then place and index: one decision, read in order"
    )]
    fn decide(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        f: Found,
        mut lines: Option<PageLines>,
        d: &mut Decisions,
    ) -> Result<IngestResult> {
        // The page's furniture as the batch's earlier documents left it: when that is not
        // what its lookups were done with, fingerprinted and looked up again.
        let (fps, f) = match &mut lines {
            Some(l) if !d.seen.is_empty() => {
                let was = fps.left_out.clone();
                l.update(&d.seen);
                let fps = self.furnished(doc, fps, l);
                if fps.left_out == was {
                    (fps, f)
                } else {
                    let f = self.found(&fps, f.existing, true, None)?;
                    let f = self.verify_found(&fps, f, None)?;
                    (fps, f)
                }
            }
            _ => (fps, f),
        };
        // Only OnExisting::Skip reaches here with an id already stored.
        let existing = f.existing.map(|(_, c, same)| (c, same)).or_else(|| {
            d.index.ids.get(&doc.id).map(|s| {
                let rec = &d.records[d.index.docs[s]].1;
                (rec.similar_id, super::ingest::same_text(rec, doc, &fps))
            })
        });
        if let Some((similar_id, same_text)) = existing {
            return Ok(IngestResult::SkippedExisting {
                id: doc.id.clone(),
                similar_id: self.find(similar_id)?.0,
                same_text,
            });
        }
        let mut holders = f.holders;
        for h in fps.lookup_postings() {
            if let std::collections::hash_map::Entry::Vacant(e) = holders.entry(h) {
                if let Some(&v) = d.index.holders.get(&h) {
                    e.insert(v);
                }
            }
        }
        let mut simhash = f.simhash;
        for q in fps.lookup_simhashes() {
            d.index.simhashes.near(q, &mut |seq, d| {
                let e = simhash.entry(seq).or_insert(d);
                *e = (*e).min(d);
            });
            // The store's candidates were bounded alone; bounded with the batch's, they are
            // what a sequential ingest finds.
            bound_simhash(&mut simhash);
        }
        let verified = f.verified;
        let lk = self.lookup_with(&fps, &holders, simhash, &mut |seq| {
            if let Some(&i) = d.index.docs.get(&seq) {
                return Ok(Checked::of(&self.opts, &fps, &d.records[i].1));
            }
            if let Some(v) = verified.get(&seq) {
                return Ok(v.clone());
            }
            self.check_stored(&fps, seq)
        })?;
        let saved = self.counters();
        let (mark, marked) = (d.bulk.len(), d.records.len());
        let postings: Vec<u64> = fps.postings().collect();
        let simhash = fps.simhash;
        let mut staged = Batch::new();
        let placed = self
            .place(
                doc,
                fps,
                &lk,
                None,
                Writes {
                    staged: &mut staged,
                    time: d.time,
                },
            )
            .and_then(|(mut outcome, named, record)| {
                let seq = self.next_seq - 1;
                d.records.push((seq, record));
                // The id of `seq`: a document of this batch is read in place.
                let id_of = |this: &Self, d: &Decisions, seq: u64| -> Result<String> {
                    match d.index.docs.get(&seq) {
                        Some(&i) => Ok(d.records[i].1.id.clone()),
                        None => Ok(this.doc(seq)?.id),
                    }
                };
                if named.seq != seq {
                    outcome.duplicate_of = Some(id_of(self, d, named.seq)?);
                }
                if let Some(p) = named.previous {
                    outcome.previous_original = Some(id_of(self, d, p)?);
                }
                let sketch = &d.records.last().expect("just pushed").1.sketch;
                outcome.composite_of = lk.composite_of(sketch, &mut |seq| {
                    Ok(match d.index.docs.get(&seq) {
                        Some(&i) => (d.records[i].1.id.clone(), d.records[i].1.sketch.clone()),
                        None => {
                            let r = self.doc(seq)?;
                            (r.id, r.sketch)
                        }
                    })
                })?;
                // The members it cites that no document had cited: marked in their records
                // (those of this batch in place, written at its commit).
                for &c in &named.newly_cited {
                    match d.index.docs.get(&c) {
                        Some(&i) => d.records[i].1.cited = true,
                        None => self.put_cited(c, &mut d.bulk)?,
                    }
                }
                let seen = match &lines {
                    Some(l) => {
                        let target = outcome.similar_id.expect("a placed document has a cluster");
                        self.seen_lines(l, target, &outcome.merged)?
                    }
                    None => Vec::new(),
                };
                put_seen(&seen, &mut d.bulk);
                self.store.write(staged)?;
                d.seen.extend(seen);
                Ok(outcome)
            });
        let outcome = match placed {
            Ok(o) => o,
            Err(e) => {
                self.set_counters(saved);
                d.bulk.truncate(mark);
                d.records.truncate(marked);
                return Err(e);
            }
        };
        let seq = self.next_seq - 1;
        let target = outcome.similar_id.expect("a placed document has a cluster");
        for h in postings {
            d.index.holders.entry(h).or_insert((seq, target));
        }
        if let Some(q) = simhash {
            d.index.simhashes.insert(seq, q);
        }
        d.index.ids.insert(doc.id.clone(), seq);
        // The record just pushed (the last), read in place by later documents of the batch.
        d.index.docs.insert(seq, d.records.len() - 1);
        Ok(IngestResult::Added {
            outcome,
            replaced: false,
        })
    }

    /// Commit the staged changes, the counters, `records` and `bulk` as one write.
    ///
    /// On the lookup threads, which are idle until the next batch's lookups: the records are
    /// encoded there with their ids and index entries, and the store spreads its own work for the write over them (sorting
    /// the changes, the presence filter's inserts). The writer's thread waits; done by it
    /// alone, this was over half of the sequential stage (docs/performance.md, "Many cores").
    fn commit_batch(&mut self, bulk: Batch, records: Vec<(u64, DocRecord)>) -> Result<()> {
        let pool = self.lookup_pool.get().and_then(Option::as_ref);
        on_pool(pool, || self.commit_prepared(bulk, records))
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
