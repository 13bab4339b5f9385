//! A batch's lookups, on all cores: each page's lines and its fingerprints without its
//! site's furniture, the stored document with each id, the postings and simhash tables of
//! the whole batch read in key order, and every candidate verified. They read the store as
//! the batch found it and never write (they are the [`Finder`]'s), so they run for batch
//! N + 1 on a handle of their own ([`Committed`], [`Writer::committed_view`](super::Writer::committed_view)) while batch N is
//! decided ([`Fpdb::ingest_batch_ahead`](crate::Fpdb::ingest_batch_ahead)); batch N + 1's decisions then also see what batch N
//! decided (`batch::LastBatch`), as they see their own batch's earlier documents.

use std::collections::BTreeMap;
use std::sync::Arc;

use foldhash::HashMap;

use rayon::prelude::*;

use super::Writer;
use crate::engine::finder::Finder;
use crate::engine::furniture::{PageLines, SeenInBatch};
use crate::engine::lookup::Checked;
use crate::engine::postings::{band_keys, candidate_seqs, ReadMany};
use crate::engine::{Document, OnExisting};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprinter;
use crate::fingerprint::Fingerprints;
use crate::index::Permutations;
use crate::options::Options;
use crate::store::schema::DocRecord;
use crate::store::{Cf, Staged, Store};

/// (seq, similar_id at ingest, whether it holds the same text) of the stored document with a
/// document's id.
type Existing = (u64, u64, bool);

/// What one document found in the store as it was before the batch.
#[derive(Default)]
pub(in crate::engine) struct Found {
    /// (seq, similar_id at ingest, whether it holds the same text) of the stored document
    /// with the same id.
    pub(in crate::engine) existing: Option<(u64, u64, bool)>,
    pub(in crate::engine) holders: crate::engine::postings::Holders,
    pub(in crate::engine) simhash: BTreeMap<u64, u32>,
    pub(in crate::engine) verified: HashMap<u64, Checked>,
    /// The digest of the document's text (stores with `digests`), computed with its lookups
    /// on the lookup threads, not by its decision on the writer's.
    pub(in crate::engine) digest: Option<u64>,
    /// It is dated before the stored document of its id ([`predates`](super::ingest::predates)): decided by
    /// [`Fpdb::ingest`](crate::Fpdb::ingest), which dates that document earlier.
    pub(in crate::engine) predates: bool,
}

impl Found {
    /// The stored documents to verify: the holders of its postings (`bands`: the band keys
    /// whose later holders are proposed too), its simhash neighbours (a seq may come twice).
    fn candidates<'a>(&'a self, bands: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
        candidate_seqs(&self.holders, &self.simhash, bands)
    }
}

/// A page's lines and what the store said of them, or the error reading them.
pub(in crate::engine) type Lines = Result<Option<PageLines>>;

/// A batch's documents with their fingerprints without their site's furniture, and their
/// pages' lines ([`Finder::furnish_batch`]).
type Furnished<'d> = (Vec<(&'d Document, Fingerprints)>, Vec<Lines>);

/// A batch looked up: its fingerprints (without its site's furniture), what each document
/// found, its pages' lines.
pub(in crate::engine) struct Looked {
    pub(in crate::engine) fps: Vec<Fingerprints>,
    pub(in crate::engine) found: Vec<Result<Found>>,
    pub(in crate::engine) lines: Vec<Lines>,
}

/// A batch's fingerprints for [`Fpdb::ingest_batch_ahead`](crate::Fpdb::ingest_batch_ahead): as fingerprinted, or looked up
/// while the batch before it was decided (what that call returned).
pub struct BatchFingerprints {
    fps: Vec<Fingerprints>,
    ahead: Option<Ahead>,
}

/// What a batch's lookups ahead found, with the store's write count they are valid at; or
/// the error that stopped them.
enum Ahead {
    Found {
        found: Vec<Result<Found>>,
        lines: Vec<Lines>,
        after: u64,
    },
    Failed(Error),
}

impl From<Vec<Fingerprints>> for BatchFingerprints {
    fn from(fps: Vec<Fingerprints>) -> Self {
        BatchFingerprints { fps, ahead: None }
    }
}

impl BatchFingerprints {
    pub(in crate::engine) fn ahead(looked: Looked, after: u64) -> Self {
        BatchFingerprints {
            fps: looked.fps,
            ahead: Some(Ahead::Found {
                found: looked.found,
                lines: looked.lines,
                after,
            }),
        }
    }

    /// Its fingerprints, when nothing was looked up for them yet (else itself).
    fn into_plain(self) -> std::result::Result<Vec<Fingerprints>, Self> {
        match self.ahead {
            None => Ok(self.fps),
            Some(_) => Err(self),
        }
    }

    pub(in crate::engine) fn failed(e: Error) -> Self {
        BatchFingerprints {
            fps: Vec::new(),
            ahead: Some(Ahead::Failed(e)),
        }
    }

    /// What its lookups ahead found, when they were made for `n` documents and nothing was
    /// written since (the store's write count is still `writes`); else its fingerprints, to
    /// be looked up now (or the error that stopped the lookups ahead).
    pub(in crate::engine) fn looked(
        self,
        n: usize,
        writes: u64,
    ) -> std::result::Result<Looked, Result<Vec<Fingerprints>>> {
        match self.ahead {
            Some(Ahead::Failed(e)) => Err(Err(e)),
            Some(Ahead::Found {
                found,
                lines,
                after,
            }) if after == writes && self.fps.len() == n => Ok(Looked {
                fps: self.fps,
                found,
                lines,
            }),
            _ => Err(Ok(self.fps)),
        }
    }

    /// How many documents' fingerprints it holds.
    pub fn len(&self) -> usize {
        self.fps.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.fps.is_empty()
    }
}

/// What [`Writer::look_up_before_lease`](super::Writer::look_up_before_lease) did.
pub(in crate::engine) enum BeforeLease {
    /// Nothing: the batch's fingerprints as given.
    Not(BatchFingerprints),
    /// What the lookups found before the lease, and what they counted.
    Looked(Looked, Arc<crate::engine::LookupCounters>),
}

/// `f` run on `pool`, or on the calling thread without one.
pub(in crate::engine) fn on_pool<R: Send>(
    pool: Option<&rayon::ThreadPool>,
    f: impl FnOnce() -> R + Send,
) -> R {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// What was committed through an [`Fpdb`](crate::Fpdb), read by a handle of its own
/// ([`Writer::committed_view`](super::Writer::committed_view)): the next batch's lookups run on it while a batch is decided.
pub(in crate::engine) struct Committed {
    store: Staged,
    opts: Options,
    fingerprinter: Fingerprinter,
    perms: Permutations,
    reads: Arc<crate::engine::LookupCounters>,
    batch_pages: bool,
}

impl Committed {
    /// The lookup part over what was committed.
    pub(in crate::engine) fn finder(&self) -> Finder<'_> {
        Finder {
            store: &self.store,
            opts: &self.opts,
            fingerprinter: &self.fingerprinter,
            perms: &self.perms,
            reads: &self.reads,
            batch_pages: self.batch_pages,
        }
    }
}

impl Writer<'_> {
    /// The threads of the batches' lookups: a pool of their own, so they never queue
    /// behind fingerprinting on rayon's global pool (None: it could not be built).
    pub(in crate::engine) fn lookup_pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        self.lookup_pool
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(rayon::current_num_threads())
                    .thread_name(|i| format!("fpdb-lookup-{i}"))
                    .build()
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }

    /// A handle that reads what was committed through this one and never writes, for the
    /// lookups of the next batch while this one decides (kept between batches).
    pub(in crate::engine) fn committed_view(&mut self) -> Box<Committed> {
        if let Some(v) = self.view.take() {
            return v;
        }
        self.view_counting(Arc::clone(&self.reads))
    }

    /// A read-only handle on what was committed through this one, counting its lookups
    /// into `reads`.
    pub(in crate::engine) fn view_counting(
        &self,
        reads: Arc<crate::engine::LookupCounters>,
    ) -> Box<Committed> {
        Box::new(Committed {
            store: self.store.over_committed(),
            opts: self.opts.clone(),
            fingerprinter: self.fingerprinter.clone(),
            perms: self.perms.clone(),
            reads,
            batch_pages: self.batch_pages,
        })
    }

    /// On a shared store that reads before its lease
    /// ([`ReadAhead::read_before_lease`](crate::store::ReadAhead::read_before_lease)): the
    /// batch looked up now, before the lease, so that its reads are made while other writers
    /// hold it. Taking the lease brings what they read up to date, and the lookups under
    /// it are answered from memory; where nothing was committed meanwhile
    /// ([`ReadAhead::unchanged`](crate::store::ReadAhead::unchanged)) what they found holds
    /// as found, with what they counted.
    pub(in crate::engine) fn look_up_before_lease(
        &self,
        docs: &[&Document],
        fps: BatchFingerprints,
        on_existing: OnExisting,
    ) -> Result<BeforeLease> {
        let fps = match fps.into_plain() {
            Ok(fps) => fps,
            Err(fps) => return Ok(BeforeLease::Not(fps)),
        };
        let reading = self
            .store
            .read_ahead()
            .filter(|_| !self.store.read_only())
            .map(crate::store::ReadAhead::read_before_lease);
        match reading {
            Some(Ok(true)) => {}
            Some(Err(e)) => return Err(e),
            _ => return Ok(BeforeLease::Not(fps.into())),
        }
        let reads = Arc::new(crate::engine::LookupCounters::default());
        let view = self.view_counting(Arc::clone(&reads));
        let pool = self.lookup_pool();
        let looking = std::time::Instant::now();
        let docs = docs.iter().copied().zip(fps).collect();
        let looked = view.finder().look_up(docs, on_existing, pool.as_deref())?;
        // What the decisions read of each cluster a document matched: its chain of clusters
        // and the document it names (kept as read, brought up to date under the lease).
        let similar: Vec<u64> = looked
            .found
            .iter()
            .flatten()
            .flat_map(|f| f.verified.values().map(|c| c.similar_id))
            .collect::<std::collections::BTreeSet<u64>>()
            .into_iter()
            .collect();
        on_pool(pool.as_deref(), || {
            similar.par_iter().for_each(|&id| {
                if let Ok((_, c)) = view.finder().records().find(id) {
                    let _ = view.finder().records().doc(c.named());
                }
            });
        });
        crate::engine::LookupCounters::add_time(&self.reads.lookup_ns, looking);
        Ok(BeforeLease::Looked(looked, reads))
    }

    /// Keep `view` ([`Writer::committed_view`](super::Writer::committed_view)) for the next batch.
    pub(in crate::engine) fn keep_view(&mut self, view: Box<Committed>) {
        self.view = Some(view);
    }
}

impl Finder<'_> {
    /// The lookups of a batch against the store as it stands (read-only; on `pool`, or on
    /// the pool the caller runs on): each document's furnished fingerprints, what it found,
    /// verified, and its page's lines.
    pub(in crate::engine) fn look_up(
        &self,
        docs: Vec<(&Document, Fingerprints)>,
        on_existing: OnExisting,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<Looked> {
        let (docs, lines) = self.furnish_batch(docs, pool)?;
        if let Some(ahead) = self.store.read_ahead() {
            // A remote store: what the lookups read first, in one round trip per node.
            self.index().prefetch(ahead, &docs)?;
        }
        let skip = on_existing == OnExisting::Skip;
        let lookups = || -> Vec<Result<Found>> {
            let (existing, predates): (Vec<Result<Option<Existing>>>, Vec<bool>) = docs
                .par_iter()
                .map(|(doc, fps)| match self.existing(doc, fps) {
                    Ok((e, p)) => (Ok(e), p),
                    Err(e) => (Err(e), false),
                })
                .unzip();
            // The postings and simhash tables of every document to look up, read in key
            // order; when that fails, each document reads its own (and meets the error as a
            // lookup of its own would, in input order).
            let looked: Vec<&Fingerprints> = docs
                .iter()
                .zip(&existing)
                .filter(|(_, e)| matches!(e, Ok(None)) || (!skip && matches!(e, Ok(Some(_)))))
                .map(|((_, fps), _)| fps)
                .collect();
            let read = self.index().read_many(&looked).ok();
            let found: Vec<Result<Found>> = docs
                .par_iter()
                .zip(existing.into_par_iter().zip(predates))
                .map(|((doc, fps), (existing, predates))| {
                    let f = self.found(fps, existing?, skip, read.as_ref())?;
                    let digest = self.opts.digests.then(|| doc.digest());
                    Ok(Found {
                        digest,
                        predates,
                        ..f
                    })
                })
                .collect();
            // The records of candidates of several documents, each read once for the batch
            // (a third of a batch's reads were of records another document of it read too,
            // on the short corpus at 10^6 documents); the others, and all of them when one
            // of these fails, each document reads itself (only the shared ones are held).
            let records = self
                .records()
                .shared_records(docs.iter().zip(&found).filter_map(|((_, fps), f)| {
                    let f = f.as_ref().ok()?;
                    Some(f.candidates(band_keys(self.opts, fps)).collect())
                }));
            docs.par_iter()
                .zip(found)
                .map(|((_, fps), f)| self.verify_found(fps, f?, records.as_ref()))
                .collect()
        };
        let found = on_pool(pool, lookups);
        let fps = docs.into_iter().map(|(_, fps)| fps).collect();
        Ok(Looked { fps, found, lines })
    }

    /// A site's furniture, before the lookups (stores with `furniture`): each page's lines as
    /// the store stood before the batch, read on all cores, and its fingerprints without
    /// those that were furniture then. The decisions see what the batch's earlier documents
    /// changed ([`Writer::decide`](super::Writer::decide)).
    fn furnish_batch<'d>(
        &self,
        docs: Vec<(&'d Document, Fingerprints)>,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<Furnished<'d>> {
        if !self.opts.furniture {
            let none = docs.iter().map(|_| Ok(None)).collect();
            return Ok((docs, none));
        }
        if let Some(ahead) = self.store.read_ahead() {
            let keys: Vec<[u8; 16]> = docs
                .iter()
                .flat_map(|(d, _)| self.sites().page_line_keys(d))
                .collect();
            let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            ahead.prefetch_keys(Cf::Furniture, &keys)?;
        }
        Ok(on_pool(pool, || {
            let mut lines: Vec<Lines> = docs
                .par_iter()
                .map(|(doc, _)| self.sites().page_lines(doc))
                .collect();
            if self.opts.batch_furniture && self.batch_pages {
                let mut pages: Vec<&mut PageLines> = lines
                    .iter_mut()
                    .filter_map(|l| l.as_mut().ok()?.as_mut())
                    .collect();
                crate::engine::learn::batch_furniture(&mut pages);
            }
            docs.into_par_iter()
                .zip(lines)
                .map(|((doc, fps), l)| match l {
                    Ok(Some(l)) => {
                        let fps = self.sites().furnished(doc, fps, &l);
                        ((doc, fps), Ok(Some(l)))
                    }
                    other => ((doc, fps), other),
                })
                .unzip()
        }))
    }

    /// The stored document with `doc`'s id: (seq, similar_id at ingest, same text), and
    /// whether `doc` is dated before it ([`predates`](super::ingest::predates)).
    fn existing(&self, doc: &Document, fps: &Fingerprints) -> Result<(Option<Existing>, bool)> {
        match self.records().seq_of(&doc.id)? {
            Some(seq) => {
                let rec = self.records().doc(seq)?;
                let same = super::ingest::same_text(&rec, doc, fps);
                let predates = super::ingest::predates(self.opts, &rec, doc).is_some();
                Ok((Some((seq, rec.similar_id, same)), predates))
            }
            None => Ok((None, false)),
        }
    }

    /// What a document (`fps`, its stored namesake `existing`) finds in the store, from what
    /// [`Index::read_many`](crate::engine::postings::Index::read_many) read for the batch when given (read-only; runs on many threads at
    /// once): its candidates, not yet verified.
    pub(in crate::engine) fn found(
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
        crate::engine::LookupCounters::add(&self.reads.lookups, 1);
        (f.holders, f.simhash) = self.index().holders_and_neighbours(fps, read)?;
        Ok(f)
    }

    /// `f` with each of its candidates checked against `fps` (records read for the whole
    /// batch taken from `records`).
    pub(in crate::engine) fn verify_found(
        &self,
        fps: &Fingerprints,
        mut f: Found,
        records: Option<&HashMap<u64, DocRecord>>,
    ) -> Result<Found> {
        for seq in f.candidates(band_keys(self.opts, fps)).collect::<Vec<_>>() {
            if let std::collections::hash_map::Entry::Vacant(e) = f.verified.entry(seq) {
                e.insert(self.check_stored_in(fps, seq, records, &SeenInBatch::default())?);
            }
        }
        Ok(f)
    }
}
