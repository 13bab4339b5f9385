//! The engine: opens a store, checks its format and options, and turns fingerprints into
//! decisions (which stored documents match, which `similar_id` a document gets) and into one
//! atomic write batch per document.
//!
//! Invariants kept by every write:
//! - a document's record, its `doc_ids` entry, its index entries, the cluster changes and the
//!   counters land in one batch;
//! - cluster ids and doc seqs only grow and are never reused; a merge points every joined root
//!   at the oldest (smallest) id, so following `parent` from any id reaches the current one.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::fingerprint::{simhash::hamming, Fingerprinter, Fingerprints};
use crate::index::Permutations;
use crate::options::{IdfSource, Options, SentenceHash};
use crate::store::schema::{self, meta, ClusterRecord, DocRecord, StoredMatch};
use crate::store::{Batch, Cf, MemoryStore, RocksStore, Staged, Store};
use crate::text::IdfTable;

/// Staged keys above which [`Fpdb::ingest`] commits to the store without waiting for a sync.
pub const AUTO_COMMIT_KEYS: usize = 1 << 20;

/// Most matches reported (and stored) per document.
pub const MAX_MATCHES: usize = 20;

/// One input document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// External id (unique within a store).
    pub id: String,
    /// Body text.
    pub text: String,
    /// Title, if known (stored, not fingerprinted: reposts often change titles).
    pub title: Option<String>,
    /// Source URL, if known.
    pub url: Option<String>,
    /// Meta description (HTML pages), stored.
    pub description: Option<String>,
    /// Meta keywords (HTML pages), stored.
    pub keywords: Option<String>,
}

impl Document {
    /// A document with an id and a body.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            text: text.into(),
            ..Default::default()
        }
    }
}

/// What to do when a document's id is already stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnExisting {
    /// Leave the stored document; report the new one as skipped.
    #[default]
    Skip,
    /// Remove the stored document and its index entries, then ingest the new one.
    Replace,
}

/// A stored document that matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// External id of the stored document.
    pub id: String,
    /// `nshash` or `simhash`.
    pub algo: &'static str,
    /// Similarity in [0, 1]: shared sentence hashes / this document's hashes for nshash,
    /// 1 - distance / 64 for simhash.
    pub score: f64,
    /// Hamming distance (simhash only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// Shared sentences over the sentences of the larger document (the verification signal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap: Option<f64>,
}

/// The answer for one document: its cluster and what it matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// External id.
    pub id: String,
    /// The cluster id (for a query that matched nothing: `None`, it would get a fresh id).
    pub similar_id: Option<u64>,
    /// The first document of the cluster, when it is not this one.
    pub duplicate_of: Option<String>,
    /// Stored documents that matched, best first.
    pub matches: Vec<Match>,
    /// Clusters merged into `similar_id` by this document.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<u64>,
}

impl Outcome {
    /// Whether the document matched a stored one.
    pub fn is_duplicate(&self) -> bool {
        !self.matches.is_empty()
    }
}

/// A stored document: what the store keeps of it (texts are not stored).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredDocument {
    /// External id.
    pub id: String,
    /// Source URL, if given.
    pub url: Option<String>,
    /// Title, if given.
    pub title: Option<String>,
    /// Its current cluster.
    pub similar_id: u64,
    /// Its fingerprints.
    pub fingerprints: Fingerprints,
    /// Ids of the stored documents it matched when it was ingested.
    pub matched_at_ingest: Vec<String>,
}

/// Result of [`Fpdb::ingest`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum IngestResult {
    /// Stored.
    Added {
        /// The decision.
        #[serde(flatten)]
        outcome: Outcome,
        /// A stored document with the same id was replaced.
        replaced: bool,
    },
    /// A document with this id is stored already and [`OnExisting::Skip`] was asked for.
    SkippedExisting {
        /// External id.
        id: String,
        /// The stored document's current cluster.
        similar_id: u64,
    },
}

/// Store-wide numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Documents stored.
    pub documents: u64,
    /// Clusters (distinct current similar_ids).
    pub clusters: u64,
    /// Documents that are not the first of their cluster.
    pub duplicates: u64,
    /// Bytes on disk.
    pub disk_bytes: u64,
    /// Bytes of table files per column family.
    pub column_family_bytes: BTreeMap<&'static str, u64>,
    /// Number of simhash tables.
    pub simhash_tables: usize,
    /// The store's settings.
    pub options: Options,
}

/// What [`Fpdb::verify`] found in a consistent store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// Documents checked.
    pub documents: u64,
    /// Distinct current clusters.
    pub roots: BTreeSet<u64>,
}

/// Explicitly requested settings; anything left `None` takes the store's value (or the default
/// at creation). An explicit value that differs from the store's is an error.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Enable nshash.
    pub nshash: Option<bool>,
    /// Enable simhash.
    pub simhash: Option<bool>,
    /// Traditional -> simplified conversion.
    pub t2s: Option<bool>,
    /// nshash n.
    pub nshash_n: Option<usize>,
    /// nshash hash function.
    pub nshash_hash: Option<SentenceHash>,
    /// Minimum sentence length.
    pub min_sentence_chars: Option<usize>,
    /// Shared sentences required for an nshash match.
    pub nshash_min_shared: Option<usize>,
    /// Sentence overlap (percent) required to accept a candidate.
    pub verify_overlap_pct: Option<u32>,
    /// simhash features.
    pub simhash_features: Option<crate::options::SimhashFeatures>,
    /// Robustness to re-wrapped lines.
    pub reflow: Option<bool>,
    /// simhash stop words.
    pub simhash_stopwords: Option<crate::options::Stopwords>,
    /// simhash IDF table learned from a corpus (None: the store's, or jieba's at creation).
    pub simhash_idf: Option<Arc<IdfTable>>,
    /// simhash k.
    pub simhash_k: Option<u32>,
    /// simhash blocks.
    pub simhash_blocks: Option<u32>,
    /// Expected number of documents.
    pub expected_docs: Option<u64>,
}

macro_rules! each_setting {
    ($m:ident) => {
        $m!(nshash, "nshash");
        $m!(simhash, "simhash");
        $m!(t2s, "t2s");
        $m!(nshash_n, "nshash_n");
        $m!(nshash_hash, "nshash_hash");
        $m!(min_sentence_chars, "min_sentence_chars");
        $m!(nshash_min_shared, "nshash_min_shared");
        $m!(verify_overlap_pct, "verify_overlap_pct");
        $m!(simhash_features, "simhash_features");
        $m!(simhash_stopwords, "simhash_stopwords");
        $m!(reflow, "reflow");
        $m!(simhash_k, "simhash_k");
        $m!(simhash_blocks, "simhash_blocks");
        $m!(expected_docs, "expected_docs");
    };
}

impl Settings {
    /// Options for a new store: defaults overridden by what was asked for.
    pub fn resolve(&self) -> Result<Options> {
        let mut o = Options {
            simhash_blocks: 0,
            ..Options::default()
        };
        macro_rules! set {
            ($f:ident, $n:expr) => {
                if let Some(v) = self.$f.clone() {
                    o.$f = v;
                }
            };
        }
        each_setting!(set);
        if let Some(t) = &self.simhash_idf {
            o.simhash_idf = IdfSource::Table {
                digest: t.digest(),
                words: t.len() as u64,
                docs: t.docs(),
            };
        }
        o.validate()
    }

    /// Refuse a store whose saved options differ from an explicit setting.
    pub fn check(&self, stored: &Options) -> Result<()> {
        macro_rules! cmp {
            ($f:ident, $n:expr) => {
                if let Some(v) = &self.$f {
                    if *v != stored.$f {
                        return Err(Error::OptionsMismatch {
                            setting: $n,
                            stored: format!("{}", stored.$f),
                            requested: format!("{v}"),
                        });
                    }
                }
            };
        }
        each_setting!(cmp);
        if let Some(t) = &self.simhash_idf {
            let same = matches!(&stored.simhash_idf, IdfSource::Table { digest, .. } if *digest == t.digest());
            if !same {
                return Err(Error::OptionsMismatch {
                    setting: "simhash_idf",
                    stored: stored.simhash_idf.to_string(),
                    requested: format!("table {}", t.digest()),
                });
            }
        }
        Ok(())
    }
}

/// Opens an [`Fpdb`].
#[derive(Debug, Clone, Default)]
pub struct Builder {
    settings: Settings,
    create: bool,
    read_only: bool,
}

impl Builder {
    /// Settings to create a store with (and to insist on when reopening).
    pub fn settings(mut self, s: Settings) -> Self {
        self.settings = s;
        self
    }
    /// simhash k (inclusive Hamming distance).
    pub fn simhash_k(mut self, k: u32) -> Self {
        self.settings.simhash_k = Some(k);
        self
    }
    /// nshash n.
    pub fn nshash_n(mut self, n: usize) -> Self {
        self.settings.nshash_n = Some(n);
        self
    }
    /// Create the store when it does not exist.
    pub fn create(mut self, yes: bool) -> Self {
        self.create = yes;
        self
    }
    /// Open read-only (no lock; writes refused).
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }
    /// Open the RocksDB store at `path`.
    pub fn open(self, path: impl AsRef<Path>) -> Result<Fpdb> {
        let path = path.as_ref();
        let store: Box<dyn Store> = if self.read_only {
            Box::new(RocksStore::open_read_only(path)?)
        } else {
            if self.create {
                std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
            }
            Box::new(RocksStore::open(path, self.create)?)
        };
        Fpdb::init(store, &self.settings, Some(path.to_path_buf()))
    }
    /// Open a fresh in-memory store.
    pub fn open_in_memory(self) -> Result<Fpdb> {
        Fpdb::init(Box::new(MemoryStore::new()), &self.settings, None)
    }
    /// Open over any [`Store`].
    pub fn open_store(self, store: Box<dyn Store>) -> Result<Fpdb> {
        Fpdb::init(store, &self.settings, None)
    }
}

/// A fingerprint database.
pub struct Fpdb {
    /// Writes are staged in memory and committed as one batch by [`Fpdb::sync`].
    store: Staged,
    opts: Options,
    fingerprinter: Fingerprinter,
    perms: Permutations,
    next_seq: u64,
    next_cluster: u64,
    doc_count: u64,
    cluster_count: u64,
    /// A format 2 store opened read-only: bare-hash `nshash` entries, no `members`.
    legacy: bool,
    path: Option<PathBuf>,
}

impl Drop for Fpdb {
    fn drop(&mut self) {
        // Best effort: an explicit sync() reports errors; a drop cannot.
        let _ = self.store.sync();
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

const DOC_COUNT: &[u8] = b"doc_count";
const CLUSTER_COUNT: &[u8] = b"cluster_count";

/// A candidate stored document found by lookup.
#[derive(Debug, Clone)]
struct Candidate {
    seq: u64,
    id: String,
    overlap: f64,
    algo: &'static str,
    score: f64,
    distance: Option<u32>,
    root: u64,
}

/// Everything a decision needs, computed without writing.
#[derive(Debug, Default)]
struct Lookup {
    candidates: Vec<Candidate>,
    /// Matched roots and their records.
    roots: BTreeMap<u64, ClusterRecord>,
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

    fn init(store: Box<dyn Store>, settings: &Settings, path: Option<PathBuf>) -> Result<Fpdb> {
        let store = Staged::new(store);
        let opts = match store.get(Cf::Meta, meta::FORMAT)? {
            None => {
                if store.read_only() {
                    return Err(Error::NotFound {
                        path: path.unwrap_or_default(),
                    });
                }
                let opts = settings.resolve()?;
                let mut b = Batch::new();
                b.put(Cf::Meta, meta::FORMAT, schema::format_value());
                b.put(
                    Cf::Meta,
                    meta::OPTIONS,
                    serde_json::to_vec(&opts).expect("options encode"),
                );
                if let Some(t) = &settings.simhash_idf {
                    b.put(Cf::Meta, meta::IDF_TABLE, t.to_text().into_bytes());
                }
                b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(1));
                b.put(Cf::Meta, meta::NEXT_CLUSTER, schema::u64_key(1));
                b.put(Cf::Meta, DOC_COUNT, schema::u64_key(0));
                b.put(Cf::Meta, CLUSTER_COUNT, schema::u64_key(0));
                store.write(b)?;
                store.sync()?;
                opts
            }
            Some(f) => {
                let legacy = f == schema::format_value_of(schema::LEGACY_FORMAT_VERSION);
                if f != schema::format_value() && !legacy {
                    return Err(Error::IncompatibleFormat {
                        found: schema::describe_format(&f),
                        expected: schema::describe_format(&schema::format_value()),
                    });
                }
                let raw = store.get(Cf::Meta, meta::OPTIONS)?.unwrap_or_default();
                let opts: Options = serde_json::from_slice(&raw)
                    .map_err(|e| schema::corrupt(Cf::Meta, meta::OPTIONS, e.to_string()))?;
                settings.check(&opts)?;
                opts
            }
        };
        let counter = |k: &[u8]| -> Result<u64> {
            match store.get(Cf::Meta, k)? {
                Some(v) => schema::decode_u64(Cf::Meta, k, &v),
                None => Err(schema::corrupt(Cf::Meta, k, "missing counter".into())),
            }
        };
        let idf = match &opts.simhash_idf {
            IdfSource::Jieba => None,
            IdfSource::Table { .. } => {
                let raw = store.get(Cf::Meta, meta::IDF_TABLE)?.unwrap_or_default();
                let text = String::from_utf8(raw)
                    .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
                let t = IdfTable::parse(&text, "idf table")
                    .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
                Some(Arc::new(t))
            }
        };
        let fingerprinter = Fingerprinter::new(opts.clone(), idf)
            .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
        let perms = Permutations::new(opts.simhash_k, opts.simhash_blocks)?;
        let legacy = store.get(Cf::Meta, meta::FORMAT)?
            == Some(schema::format_value_of(schema::LEGACY_FORMAT_VERSION));
        let mut db = Fpdb {
            fingerprinter,
            next_seq: counter(meta::NEXT_SEQ)?,
            next_cluster: counter(meta::NEXT_CLUSTER)?,
            doc_count: counter(DOC_COUNT)?,
            cluster_count: counter(CLUSTER_COUNT)?,
            legacy,
            store,
            opts,
            perms,
            path,
        };
        if legacy && !db.store.read_only() {
            db.upgrade()?;
        }
        Ok(db)
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

    /// This store's fingerprinter (clone it to fingerprint on other threads).
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Commit, then reorganize the store's files for fast lookups (worth it after a bulk load;
    /// RocksDB also does this in the background over time).
    pub fn compact(&self) -> Result<()> {
        self.store.sync()?;
        self.store.compact()
    }

    /// Commit every ingested document as one atomic batch and make it durable.
    pub fn sync(&self) -> Result<()> {
        self.store.sync()
    }

    fn doc(&self, seq: u64) -> Result<DocRecord> {
        let k = schema::u64_key(seq);
        match self.store.get(Cf::Docs, &k)? {
            Some(v) => schema::decode(Cf::Docs, &k, &v),
            None => Err(schema::corrupt(
                Cf::Docs,
                &k,
                "referenced document is missing".into(),
            )),
        }
    }

    fn cluster(&self, id: u64) -> Result<ClusterRecord> {
        let k = schema::u64_key(id);
        match self.store.get(Cf::Clusters, &k)? {
            Some(v) => schema::decode(Cf::Clusters, &k, &v),
            None => Err(schema::corrupt(
                Cf::Clusters,
                &k,
                "referenced cluster is missing".into(),
            )),
        }
    }

    /// The current (root) cluster id of `id`, with its record.
    fn find(&self, mut id: u64) -> Result<(u64, ClusterRecord)> {
        for _ in 0..1_000_000 {
            let rec = self.cluster(id)?;
            match rec.parent {
                Some(p) if p != id => id = p,
                _ => return Ok((id, rec)),
            }
        }
        Err(schema::corrupt(
            Cf::Clusters,
            &schema::u64_key(id),
            "cycle in cluster parents".into(),
        ))
    }

    /// The stored document with external id `id`, if any.
    pub fn stored_document(&self, id: &str) -> Result<Option<StoredDocument>> {
        let Some(seq) = self.seq_of(id)? else {
            return Ok(None);
        };
        let rec = self.doc(seq)?;
        let mut matched = Vec::new();
        for m in &rec.matches {
            if let Ok(d) = self.doc(m.seq) {
                if !matched.contains(&d.id) {
                    matched.push(d.id);
                }
            }
        }
        Ok(Some(StoredDocument {
            similar_id: self.resolve(rec.similar_id)?,
            fingerprints: Fingerprints {
                nshash: rec.nshash,
                simhash: rec.simhash,
                sketch: rec.sketch,
                shingles: rec.shingles,
                chars: rec.chars,
            },
            id: rec.id,
            url: rec.url,
            title: rec.title,
            matched_at_ingest: matched,
        }))
    }

    /// The current similar_id of a cluster id handed out earlier.
    pub fn resolve(&self, similar_id: u64) -> Result<u64> {
        Ok(self.find(similar_id)?.0)
    }

    /// The stored document seq of an external id.
    fn seq_of(&self, id: &str) -> Result<Option<u64>> {
        match self.store.get(Cf::DocIds, id.as_bytes())? {
            Some(v) => Ok(Some(schema::decode_u64(Cf::DocIds, id.as_bytes(), &v)?)),
            None => Ok(None),
        }
    }

    /// Simhash candidates: stored (seq, distance) within k of `q`, found through every table.
    fn simhash_candidates(&self, q: u64) -> Result<BTreeMap<u64, u32>> {
        let k = self.opts.simhash_k;
        let bounds: Vec<([u8; 17], [u8; 18], u64)> = (0..self.perms.len())
            .map(|t| {
                let (lo, hi) = self.perms.range(t, q);
                let (start, end) = schema::simhash_range(t as u8, lo, hi);
                (start, end, self.perms.permute(t, q))
            })
            .collect();
        let ranges: Vec<(&[u8], &[u8])> = bounds.iter().map(|(s, e, _)| (&s[..], &e[..])).collect();
        let mut found = BTreeMap::new();
        let mut err = None;
        self.store.scan_ranges(
            Cf::Simhash,
            &ranges,
            &mut |key, _| match schema::decode_simhash_key(key) {
                Ok((t, _, _)) if t as usize >= bounds.len() => {
                    err = Some(schema::corrupt(Cf::Simhash, key, format!("no table {t}")));
                    false
                }
                Ok((t, p, seq)) => {
                    let d = hamming(p, bounds[t as usize].2);
                    if d <= k {
                        found.insert(seq, d);
                    }
                    true
                }
                Err(e) => {
                    err = Some(e);
                    false
                }
            },
        )?;
        match err {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// Every stored document whose simhash is within k of `q`, as (external id, distance),
    /// ordered by id.
    pub fn simhash_neighbors(&self, q: u64) -> Result<Vec<(String, u32)>> {
        let mut out = Vec::new();
        for (seq, d) in self.simhash_candidates(q)? {
            out.push((self.doc(seq)?.id, d));
        }
        out.sort();
        Ok(out)
    }

    /// Up to `max` document records from seq `from` on, in seq order.
    fn docs_from(&self, from: u64, max: usize) -> Result<Vec<(u64, DocRecord)>> {
        let mut recs = Vec::new();
        let mut err = None;
        let end = [0xffu8; 9];
        self.store
            .scan(Cf::Docs, &schema::u64_key(from), &end, &mut |k, val| {
                match (
                    schema::decode_u64(Cf::Docs, k, k),
                    schema::decode::<DocRecord>(Cf::Docs, k, val),
                ) {
                    (Ok(seq), Ok(r)) => recs.push((seq, r)),
                    (Err(e), _) | (_, Err(e)) => err = Some(e),
                }
                err.is_none() && recs.len() < max
            })?;
        match err {
            Some(e) => Err(e),
            None => Ok(recs),
        }
    }

    /// Visit every document record in seq order, a chunk at a time (no iterator is held
    /// while `visit` runs, so it may read the store).
    fn for_each_doc(&self, visit: &mut dyn FnMut(u64, DocRecord) -> Result<()>) -> Result<()> {
        let mut from = 0;
        loop {
            let recs = self.docs_from(from, 4096)?;
            let Some(&(last, _)) = recs.last() else {
                return Ok(());
            };
            for (seq, r) in recs {
                visit(seq, r)?;
            }
            match last.checked_add(1) {
                Some(n) => from = n,
                None => return Ok(()),
            }
        }
    }

    /// Count the keys of a column family, checking each with `check` (false ends the scan).
    fn count_keys(&self, cf: Cf, check: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64> {
        let mut n = 0u64;
        self.store.scan(cf, &[], &[0xff; 18], &mut |k, v| {
            n += 1;
            check(k, v)
        })?;
        Ok(n)
    }

    /// Check that every index agrees with the document records and the clusters with their
    /// members: each document has its `doc_ids` entry, one key per simhash table, a posting
    /// per sentence hash naming its cluster, its `members` entry under its cluster's root; no
    /// index entry points at a missing document; every root's size and first document are
    /// its members' count and oldest member (so every `duplicate_of` is a current member of
    /// the same cluster); the counters match.
    pub fn verify(&self) -> Result<Verified> {
        let mut v = Verified::default();
        let bad = |what: String| Error::Corruption {
            cf: "*",
            key: String::new(),
            detail: what,
        };
        let mut seqs = BTreeSet::new();
        let mut with_simhash = 0u64;
        let mut postings = 0u64;
        // root -> (members, oldest member)
        let mut counted: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        self.for_each_doc(&mut |seq, r| {
            v.documents += 1;
            seqs.insert(seq);
            if seq >= self.next_seq {
                return Err(bad(format!(
                    "document seq {seq} >= next_seq {}",
                    self.next_seq
                )));
            }
            if self.seq_of(&r.id)? != Some(seq) {
                return Err(bad(format!(
                    "doc_ids[{}] does not point at seq {seq}",
                    r.id
                )));
            }
            let (root, _) = self.find(r.similar_id)?;
            let distinct: BTreeSet<u64> = r.nshash.iter().copied().collect();
            for &h in &distinct {
                if self.legacy {
                    if self.nshash_holder(h)?.is_none() {
                        return Err(bad(format!(
                            "sentence hash {h:016x} of {} is not indexed",
                            r.id
                        )));
                    }
                    continue;
                }
                let key = schema::nshash_key(h, seq);
                let Some(val) = self.store.get(Cf::Nshash, &key)? else {
                    return Err(bad(format!(
                        "sentence hash {h:016x} of {} is not indexed",
                        r.id
                    )));
                };
                let (_, _, c) = schema::decode_nshash(&key, &val)?;
                if self.find(c)?.0 != root {
                    return Err(bad(format!(
                        "sentence hash {h:016x} of {} names cluster {c}, outside its cluster {root}",
                        r.id
                    )));
                }
            }
            postings += distinct.len() as u64;
            if let Some(q) = r.simhash {
                with_simhash += 1;
                for t in 0..self.perms.len() {
                    let key = schema::simhash_key(t as u8, self.perms.permute(t, q), seq);
                    if self.store.get(Cf::Simhash, &key)?.is_none() {
                        return Err(bad(format!("simhash table {t} lacks document {}", r.id)));
                    }
                }
            }
            if !self.legacy
                && self
                    .store
                    .get(Cf::Members, &schema::members_key(root, seq))?
                    .is_none()
            {
                return Err(bad(format!(
                    "document {} is not listed as a member of its cluster {root}",
                    r.id
                )));
            }
            let e = counted.entry(root).or_insert((0, seq));
            e.0 += 1;
            v.roots.insert(root);
            Ok(())
        })?;
        let mut dangling = None;
        let ids = self.count_keys(Cf::DocIds, &mut |k, val| {
            match schema::decode_u64(Cf::DocIds, k, val) {
                Ok(s) if seqs.contains(&s) => {}
                _ => dangling = Some(String::from_utf8_lossy(k).into_owned()),
            }
            dangling.is_none()
        })?;
        if let Some(id) = dangling {
            return Err(bad(format!("doc_ids[{id}] points at no document")));
        }
        let mut orphan = None;
        let keys = self.count_keys(Cf::Simhash, &mut |k, _| {
            if let Ok((_, _, s)) = schema::decode_simhash_key(k) {
                if !seqs.contains(&s) {
                    orphan = Some(s);
                }
            }
            orphan.is_none()
        })?;
        if let Some(s) = orphan {
            return Err(bad(format!(
                "simhash key points at missing document seq {s}"
            )));
        }
        if ids != v.documents || v.documents != self.doc_count {
            return Err(bad(format!(
                "{} documents, {ids} doc_ids entries, doc_count counter {}",
                v.documents, self.doc_count
            )));
        }
        if keys != with_simhash * self.perms.len() as u64 {
            return Err(bad(format!(
                "{keys} simhash keys for {with_simhash} documents x {} tables",
                self.perms.len()
            )));
        }
        if !self.legacy {
            // Each document's postings and member entry exist (checked above), so equal
            // counts mean there is no other.
            let n = self.count_keys(Cf::Nshash, &mut |_, _| true)?;
            if n != postings {
                return Err(bad(format!(
                    "{n} sentence hash postings, {postings} held by the documents"
                )));
            }
            let n = self.count_keys(Cf::Members, &mut |_, _| true)?;
            if n != v.documents {
                return Err(bad(format!(
                    "{n} cluster member entries for {} documents",
                    v.documents
                )));
            }
        }
        // Every root: size and first document agree with its members; empty roots are
        // counted nowhere.
        let mut roots_with_members = 0u64;
        let mut err = None;
        self.count_keys(Cf::Clusters, &mut |k, val| {
            let rec = match (
                schema::decode_u64(Cf::Clusters, k, k),
                schema::decode::<ClusterRecord>(Cf::Clusters, k, val),
            ) {
                (Ok(id), Ok(rec)) if rec.parent.is_none_or(|p| p == id) => (id, rec),
                (Ok(_), Ok(_)) => return true,
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return false;
                }
            };
            let (id, rec) = rec;
            let (size, first) = counted.get(&id).copied().unwrap_or((0, 0));
            if rec.size != size || (size > 0 && rec.first_seq != first) {
                err = Some(bad(format!(
                    "cluster {id} records {} documents and first document seq {}, its members are {size} from seq {first}",
                    rec.size, rec.first_seq
                )));
                return false;
            }
            roots_with_members += u64::from(size > 0);
            true
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        if roots_with_members != counted.len() as u64 || self.cluster_count != counted.len() as u64
        {
            return Err(bad(format!(
                "{} clusters hold documents, cluster_count counter {}",
                counted.len(),
                self.cluster_count
            )));
        }
        Ok(v)
    }

    /// Rewrite a format 2 store in the current format: a posting per (sentence hash, holder)
    /// and the `members` lists from the document records, bare-hash entries removed, root
    /// sizes, first documents and the cluster count recomputed from the members. Runs once,
    /// on the first writable open; a killed upgrade is redone from the start on the next one
    /// (the format marker is written last).
    fn upgrade(&mut self) -> Result<()> {
        const CHUNK: usize = 1 << 16;
        let mut counted: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        let mut b = Batch::new();
        let flush = |b: &mut Batch, store: &Staged| -> Result<()> {
            store.write(std::mem::take(b))?;
            store.commit()
        };
        self.for_each_doc(&mut |seq, r| {
            let (root, _) = self.find(r.similar_id)?;
            for &h in &r.nshash {
                b.put(
                    Cf::Nshash,
                    schema::nshash_key(h, seq),
                    schema::u64_key(r.similar_id),
                );
            }
            b.put(Cf::Members, schema::members_key(root, seq), Vec::new());
            counted.entry(root).or_insert((0, seq)).0 += 1;
            if b.len() >= CHUNK {
                flush(&mut b, &self.store)?;
            }
            Ok(())
        })?;
        flush(&mut b, &self.store)?;
        // Bare-hash entries (8-byte keys), a chunk at a time.
        let mut from = Vec::new();
        loop {
            let mut legacy = Vec::new();
            let mut last = None;
            self.store
                .scan(Cf::Nshash, &from, &[0xff; 18], &mut |k, _| {
                    if k.len() == 8 {
                        legacy.push(k.to_vec());
                    }
                    last = Some(k.to_vec());
                    legacy.len() < CHUNK
                })?;
            for k in &legacy {
                b.delete(Cf::Nshash, k.clone());
            }
            flush(&mut b, &self.store)?;
            match last {
                Some(mut k) => {
                    k.push(0);
                    from = k;
                }
                None => break,
            }
        }
        let mut roots = Vec::new();
        self.count_keys(Cf::Clusters, &mut |k, val| {
            if let (Ok(id), Ok(rec)) = (
                schema::decode_u64(Cf::Clusters, k, k),
                schema::decode::<ClusterRecord>(Cf::Clusters, k, val),
            ) {
                if rec.parent.is_none_or(|p| p == id) {
                    roots.push((id, rec));
                }
            }
            true
        })?;
        for (id, mut rec) in roots {
            let (size, first) = counted.get(&id).copied().unwrap_or((0, rec.first_seq));
            rec.size = size;
            rec.first_seq = first;
            b.put(Cf::Clusters, schema::u64_key(id), schema::encode(&rec));
        }
        self.cluster_count = counted.len() as u64;
        self.put_counters(&mut b);
        flush(&mut b, &self.store)?;
        self.store.sync()?;
        b.put(Cf::Meta, meta::FORMAT, schema::format_value());
        flush(&mut b, &self.store)?;
        self.store.sync()?;
        self.legacy = false;
        Ok(())
    }

    /// The oldest stored holder of sentence hash `h`: (seq, cluster at its ingest).
    fn nshash_holder(&self, h: u64) -> Result<Option<(u64, u64)>> {
        let (start, end) = schema::nshash_range(h);
        let mut found = None;
        self.store.scan(Cf::Nshash, &start, &end, &mut |k, v| {
            found = Some(schema::decode_nshash(k, v).map(|(_, seq, c)| (seq, c)));
            false
        })?;
        found.transpose()
    }

    /// [`Fpdb::nshash_holder`] of every hash, through one iterator.
    fn nshash_holders(&self, hashes: &[u64]) -> Result<HashMap<u64, (u64, u64)>> {
        let mut sorted = hashes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let bounds: Vec<([u8; 8], [u8; 17])> =
            sorted.iter().map(|&h| schema::nshash_range(h)).collect();
        let ranges: Vec<(&[u8], &[u8])> = bounds.iter().map(|(s, e)| (&s[..], &e[..])).collect();
        let mut found = HashMap::with_capacity(sorted.len());
        let mut err = None;
        self.store.scan_ranges(Cf::Nshash, &ranges, &mut |k, v| {
            match schema::decode_nshash(k, v) {
                Ok((h, seq, c)) => {
                    found.entry(h).or_insert((seq, c));
                }
                Err(e) => err = Some(e),
            }
            false
        })?;
        match err {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    fn lookup(&self, fps: &Fingerprints) -> Result<Lookup> {
        let mut lk = Lookup::default();
        // nshash: each sentence hash names its oldest holder; count shared hashes per current
        // cluster.
        let mut per_root: BTreeMap<u64, (usize, BTreeMap<u64, usize>)> = BTreeMap::new();
        let holders = self.nshash_holders(&fps.nshash)?;
        for h in &fps.nshash {
            if let Some(&(seq, cluster)) = holders.get(h) {
                let (root, _) = self.find(cluster)?;
                let e = per_root.entry(root).or_default();
                e.0 += 1;
                *e.1.entry(seq).or_default() += 1;
            }
        }
        let need = self.opts.nshash_min_shared.min(fps.nshash.len()).max(1);
        let total = fps.nshash.len().max(1) as f64;
        let mut raw: Vec<(u64, &'static str, f64, Option<u32>)> = Vec::new();
        for (_, (count, seqs)) in per_root {
            if count >= need {
                for (seq, shared) in seqs {
                    raw.push((seq, "nshash", shared as f64 / total, None));
                }
            }
        }
        if let Some(q) = fps.simhash {
            for (seq, d) in self.simhash_candidates(q)? {
                raw.push((seq, "simhash", 1.0 - d as f64 / 64.0, Some(d)));
            }
        }
        // Verify every candidate against its stored sentence sketch.
        let min_overlap = self.opts.verify_overlap_pct as f64 / 100.0;
        let mut docs: HashMap<u64, (String, u64, f64)> = HashMap::new();
        for (seq, algo, score, distance) in raw {
            if let std::collections::hash_map::Entry::Vacant(e) = docs.entry(seq) {
                let rec = self.doc(seq)?;
                let overlap = crate::fingerprint::nshash::similarity(
                    &fps.sketch,
                    &fps.shingles,
                    &rec.sketch,
                    &rec.shingles,
                );
                let (root, _) = self.find(rec.similar_id)?;
                e.insert((rec.id, root, overlap));
            }
            let (id, root, overlap) = &docs[&seq];
            if min_overlap > 0.0 && *overlap < min_overlap {
                continue;
            }
            lk.candidates.push(Candidate {
                seq,
                id: id.clone(),
                algo,
                score,
                distance,
                overlap: *overlap,
                root: *root,
            });
        }
        for c in &lk.candidates {
            if let std::collections::btree_map::Entry::Vacant(e) = lk.roots.entry(c.root) {
                e.insert(self.cluster(c.root)?);
            }
        }
        lk.candidates.sort_by(|a, b| {
            b.overlap
                .total_cmp(&a.overlap)
                .then(b.score.total_cmp(&a.score))
                .then(a.seq.cmp(&b.seq))
        });
        Ok(lk)
    }

    /// The matches to report and store, best first: at most [`MAX_MATCHES`], plus the best
    /// candidate of any matched cluster not among them, so the stored matches keep every link
    /// that joined clusters (splits re-derive clusters from them).
    fn matches(&self, lk: &Lookup) -> (Vec<Match>, Vec<StoredMatch>) {
        let mut out = Vec::new();
        let mut stored = Vec::new();
        let mut seen = BTreeSet::new();
        let mut linked = BTreeSet::new();
        for c in &lk.candidates {
            if seen.contains(&(c.seq, c.algo))
                || (out.len() >= MAX_MATCHES && linked.contains(&c.root))
            {
                continue;
            }
            seen.insert((c.seq, c.algo));
            linked.insert(c.root);
            out.push(Match {
                id: c.id.clone(),
                algo: c.algo,
                score: c.score,
                distance: c.distance,
                overlap: Some(c.overlap),
            });
            stored.push(StoredMatch {
                seq: c.seq,
                algo: c.algo.to_string(),
                score: c.score,
                overlap: c.overlap,
            });
        }
        (out, stored)
    }

    /// What `fps` would get if it were ingested now: never writes.
    pub fn query(&self, id: &str, fps: &Fingerprints) -> Result<Outcome> {
        let lk = self.lookup(fps)?;
        let (matches, _) = self.matches(&lk);
        let target = lk.roots.iter().next();
        Ok(Outcome {
            id: id.to_string(),
            similar_id: target.map(|(id, _)| *id),
            duplicate_of: match target {
                Some((_, rec)) => Some(self.doc(rec.first_seq)?.id),
                None => None,
            },
            matches,
            merged: lk.roots.keys().skip(1).copied().collect(),
        })
    }

    /// Query the text of a document (fingerprint + [`Fpdb::query`]).
    pub fn query_text(&self, text: &str) -> Result<Outcome> {
        self.query("", &self.fingerprint(text))
    }

    /// Store `doc` (with fingerprints from [`Fpdb::fingerprint`]). Visible to later lookups at
    /// once; written to disk, atomically with the other documents since the last sync, and made
    /// durable by [`Fpdb::sync`] (or when the `Fpdb` is dropped). More than
    /// `AUTO_COMMIT_KEYS` (2^20) staged keys are committed (not synced) automatically.
    ///
    /// [`OnExisting::Replace`] removes the stored document (see [`Fpdb::remove`]) and ingests
    /// the new one as a new document; when the removal emptied its cluster and the new version
    /// matches nothing, it gets that cluster id back (an unchanged singleton keeps its id).
    pub fn ingest(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        if self.store.read_only() {
            return Err(Error::ReadOnly);
        }
        let mut emptied = None;
        let replaced = match self.seq_of(&doc.id)? {
            None => false,
            Some(seq) => {
                let rec = self.doc(seq)?;
                if on_existing == OnExisting::Skip {
                    return Ok(IngestResult::SkippedExisting {
                        id: doc.id.clone(),
                        similar_id: self.find(rec.similar_id)?.0,
                    });
                }
                if same_fingerprints(&rec, &fps) {
                    // Unchanged text: the document stays where it is (its cluster, links and
                    // seq); only what was sent with it is updated.
                    return self
                        .refresh(seq, rec, doc)
                        .map(|outcome| IngestResult::Added {
                            outcome,
                            replaced: true,
                        });
                }
                // A failure after this point leaves the document removed: a consistent store
                // (the removal is one staged batch), and the input is reported as failed.
                emptied = self.remove_record(seq, &rec)?;
                true
            }
        };
        let outcome = self.add(doc, fps, emptied)?;
        if self.store.staged() > AUTO_COMMIT_KEYS {
            self.store.commit()?;
        }
        Ok(IngestResult::Added { outcome, replaced })
    }

    /// Re-store the fields sent with an unchanged document (title, url, description,
    /// keywords); its fingerprints, cluster and stored matches stay.
    fn refresh(&mut self, seq: u64, mut rec: DocRecord, doc: &Document) -> Result<Outcome> {
        let (root, crec) = self.find(rec.similar_id)?;
        rec.url = doc.url.clone();
        rec.title = doc.title.clone();
        rec.description = doc.description.clone();
        rec.keywords = doc.keywords.clone();
        let duplicate_of = if crec.first_seq == seq {
            None
        } else {
            Some(self.doc(crec.first_seq)?.id)
        };
        let mut matches = Vec::new();
        let none = HashMap::new();
        for m in &rec.matches {
            if let Some(id) = self.id_of(m.seq, &none)? {
                matches.push(stored_match(id, m));
            }
        }
        let mut b = Batch::new();
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode(&rec));
        self.store.write(b)?;
        Ok(Outcome {
            id: rec.id,
            similar_id: Some(root),
            duplicate_of,
            matches,
            merged: Vec::new(),
        })
    }

    /// Remove the document with external id `id`: its record and every index entry; its
    /// cluster loses it (a new first document when it was the first) and is split into the
    /// connected components of its remaining members' stored matches when the removed
    /// document held them together (the component with the oldest document keeps the id).
    /// Costs one record read per member of its cluster. Returns whether it was stored.
    pub fn remove(&mut self, id: &str) -> Result<bool> {
        if self.store.read_only() {
            return Err(Error::ReadOnly);
        }
        let Some(seq) = self.seq_of(id)? else {
            return Ok(false);
        };
        let rec = self.doc(seq)?;
        self.remove_record(seq, &rec)?;
        Ok(true)
    }

    /// [`Fpdb::remove`] of a read record; returns its cluster id when that cluster is now empty.
    fn remove_record(&mut self, seq: u64, rec: &DocRecord) -> Result<Option<u64>> {
        let saved = self.counters();
        let r = self.remove_record_inner(seq, rec);
        if r.is_err() {
            self.set_counters(saved);
        }
        r
    }

    fn remove_record_inner(&mut self, seq: u64, rec: &DocRecord) -> Result<Option<u64>> {
        let (root, mut crec) = self.find(rec.similar_id)?;
        let mut b = Batch::new();
        b.delete(Cf::Docs, schema::u64_key(seq));
        b.delete(Cf::DocIds, rec.id.as_bytes());
        for &h in &rec.nshash {
            b.delete(Cf::Nshash, schema::nshash_key(h, seq));
        }
        if let Some(q) = rec.simhash {
            for t in 0..self.perms.len() {
                b.delete(
                    Cf::Simhash,
                    schema::simhash_key(t as u8, self.perms.permute(t, q), seq),
                );
            }
        }
        b.delete(Cf::Members, schema::members_key(root, seq));
        let members: Vec<u64> = self
            .members(root)?
            .into_iter()
            .filter(|&m| m != seq)
            .collect();
        self.doc_count -= 1;
        let emptied = if members.is_empty() {
            crec.size = 0;
            self.cluster_count -= 1;
            b.put(Cf::Clusters, schema::u64_key(root), schema::encode(&crec));
            Some(root)
        } else {
            self.split(root, crec, &members, &mut b)?;
            None
        };
        self.put_counters(&mut b);
        self.store.write(b)?;
        Ok(emptied)
    }

    /// Seqs of the members of root cluster `root`, ascending.
    fn members(&self, root: u64) -> Result<Vec<u64>> {
        let (start, end) = schema::members_range(root);
        let mut out = Vec::new();
        let mut err = None;
        self.store.scan(Cf::Members, &start, &end, &mut |k, _| {
            match schema::decode_members_key(k) {
                Ok((_, seq)) => out.push(seq),
                Err(e) => err = Some(e),
            }
            err.is_none()
        })?;
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Re-derive root cluster `root` from its remaining `members` (ascending seqs): the
    /// connected components of their stored matches. The component holding the oldest member
    /// keeps `root`; every other one gets a fresh cluster id, and its members' records,
    /// postings and `members` entries move to it.
    fn split(
        &mut self,
        root: u64,
        mut crec: ClusterRecord,
        members: &[u64],
        b: &mut Batch,
    ) -> Result<()> {
        let index: HashMap<u64, usize> = members.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let recs = members
            .iter()
            .map(|&s| self.doc(s))
            .collect::<Result<Vec<_>>>()?;
        let mut parent: Vec<usize> = (0..members.len()).collect();
        fn top(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for (i, r) in recs.iter().enumerate() {
            for m in &r.matches {
                if let Some(&j) = index.get(&m.seq) {
                    let (a, c) = (top(&mut parent, i), top(&mut parent, j));
                    // The smaller index (older member) represents the component.
                    parent[a.max(c)] = a.min(c);
                }
            }
        }
        // Components in order of their oldest member; members ascend within each.
        let mut comps: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..members.len() {
            let t = top(&mut parent, i);
            comps.entry(t).or_default().push(i);
        }
        let mut comps = comps.into_values();
        let kept = comps.next().expect("members is not empty");
        crec.size = kept.len() as u64;
        crec.first_seq = members[kept[0]];
        b.put(Cf::Clusters, schema::u64_key(root), schema::encode(&crec));
        for comp in comps {
            let id = self.next_cluster;
            self.next_cluster += 1;
            self.cluster_count += 1;
            let rec = ClusterRecord {
                parent: None,
                first_seq: members[comp[0]],
                size: comp.len() as u64,
            };
            b.put(Cf::Clusters, schema::u64_key(id), schema::encode(&rec));
            for i in comp {
                let seq = members[i];
                let mut r = recs[i].clone();
                r.similar_id = id;
                for &h in &r.nshash {
                    b.put(Cf::Nshash, schema::nshash_key(h, seq), schema::u64_key(id));
                }
                b.delete(Cf::Members, schema::members_key(root, seq));
                b.put(Cf::Members, schema::members_key(id, seq), Vec::new());
                b.put(Cf::Docs, schema::u64_key(seq), schema::encode(&r));
            }
        }
        Ok(())
    }

    /// (next_seq, next_cluster, doc_count, cluster_count).
    fn counters(&self) -> [u64; 4] {
        [
            self.next_seq,
            self.next_cluster,
            self.doc_count,
            self.cluster_count,
        ]
    }

    fn set_counters(&mut self, [a, b, c, d]: [u64; 4]) {
        (
            self.next_seq,
            self.next_cluster,
            self.doc_count,
            self.cluster_count,
        ) = (a, b, c, d);
    }

    /// The counters, as `meta` puts.
    fn put_counters(&self, b: &mut Batch) {
        b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(self.next_seq));
        b.put(
            Cf::Meta,
            meta::NEXT_CLUSTER,
            schema::u64_key(self.next_cluster),
        );
        b.put(Cf::Meta, DOC_COUNT, schema::u64_key(self.doc_count));
        b.put(Cf::Meta, CLUSTER_COUNT, schema::u64_key(self.cluster_count));
    }

    /// Store a document whose id is not stored: look up, decide, write one batch.
    /// `reuse`: an emptied cluster id to take when the document matches nothing.
    fn add(&mut self, doc: &Document, fps: Fingerprints, reuse: Option<u64>) -> Result<Outcome> {
        let saved = self.counters();
        let r = self.add_inner(doc, fps, reuse);
        if r.is_err() {
            self.set_counters(saved);
        }
        r
    }

    fn add_inner(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        reuse: Option<u64>,
    ) -> Result<Outcome> {
        let lk = self.lookup(&fps)?;
        let mut batch = Batch::new();
        let seq = self.next_seq;
        self.next_seq += 1;
        self.doc_count += 1;
        let (target, merged, first_seq) = match lk.roots.keys().next().copied() {
            None => {
                let id = reuse.unwrap_or_else(|| {
                    self.next_cluster += 1;
                    self.next_cluster - 1
                });
                self.cluster_count += 1;
                let rec = ClusterRecord {
                    parent: None,
                    first_seq: seq,
                    size: 1,
                };
                batch.put(Cf::Clusters, schema::u64_key(id), schema::encode(&rec));
                (id, Vec::new(), seq)
            }
            Some(target) => {
                let mut trec = lk.roots[&target].clone();
                trec.size += 1;
                let mut merged = Vec::new();
                for (&id, rec) in lk.roots.iter().skip(1) {
                    trec.size += rec.size;
                    let moved = ClusterRecord {
                        parent: Some(target),
                        ..rec.clone()
                    };
                    batch.put(Cf::Clusters, schema::u64_key(id), schema::encode(&moved));
                    for m in self.members(id)? {
                        batch.delete(Cf::Members, schema::members_key(id, m));
                        batch.put(Cf::Members, schema::members_key(target, m), Vec::new());
                    }
                    merged.push(id);
                    self.cluster_count -= 1;
                }
                batch.put(Cf::Clusters, schema::u64_key(target), schema::encode(&trec));
                (target, merged, trec.first_seq)
            }
        };
        let (matches, stored_matches) = self.matches(&lk);
        let duplicate_of = if first_seq == seq {
            None
        } else {
            Some(self.doc(first_seq)?.id)
        };
        for &h in &fps.nshash {
            batch.put(
                Cf::Nshash,
                schema::nshash_key(h, seq),
                schema::u64_key(target),
            );
        }
        if let Some(q) = fps.simhash {
            for t in 0..self.perms.len() {
                batch.put(
                    Cf::Simhash,
                    schema::simhash_key(t as u8, self.perms.permute(t, q), seq),
                    Vec::new(),
                );
            }
        }
        batch.put(Cf::Members, schema::members_key(target, seq), Vec::new());
        let record = DocRecord {
            id: doc.id.clone(),
            url: doc.url.clone(),
            title: doc.title.clone(),
            description: doc.description.clone(),
            keywords: doc.keywords.clone(),
            chars: fps.chars,
            nshash: fps.nshash,
            simhash: fps.simhash,
            sketch: fps.sketch,
            shingles: fps.shingles,
            similar_id: target,
            matches: stored_matches,
            time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        };
        batch.put(Cf::Docs, schema::u64_key(seq), schema::encode(&record));
        batch.put(Cf::DocIds, doc.id.as_bytes(), schema::u64_key(seq));
        self.put_counters(&mut batch);
        self.store.write(batch)?;
        Ok(Outcome {
            id: doc.id.clone(),
            similar_id: Some(target),
            duplicate_of,
            matches,
            merged,
        })
    }

    /// Fingerprint and ingest `doc`.
    pub fn ingest_document(
        &mut self,
        doc: &Document,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        let fps = self.fingerprint(&doc.text);
        self.ingest(doc, fps, on_existing)
    }

    /// Store-wide numbers.
    pub fn stats(&self) -> Stats {
        Stats {
            documents: self.doc_count,
            clusters: self.cluster_count,
            duplicates: self.doc_count.saturating_sub(self.cluster_count),
            disk_bytes: self.store.disk_size(),
            column_family_bytes: self.store.cf_sizes().into_iter().collect(),
            simhash_tables: self.perms.len(),
            options: self.opts.clone(),
        }
    }

    /// Every stored document in ingest order, with its current similar_id, as an [`Outcome`].
    /// Streams: memory stays bounded whatever the store size.
    pub fn export(&self, visit: &mut dyn FnMut(Outcome) -> Result<()>) -> Result<()> {
        // Caches of cluster roots and of recent ids; cleared when full, so memory stays bounded
        // however many documents the store holds (a miss costs one point lookup).
        const CACHE_MAX: usize = 1 << 20;
        let mut roots: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut ids: HashMap<u64, String> = HashMap::new();
        let mut records = Vec::new();
        let mut err = None;
        // Collect keys in chunks so no iterator is held while calling back into the store.
        let mut start = schema::u64_key(0).to_vec();
        let end = schema::u64_key(u64::MAX).to_vec();
        loop {
            records.clear();
            self.store.scan(Cf::Docs, &start, &end, &mut |k, v| {
                match schema::decode::<DocRecord>(Cf::Docs, k, v) {
                    Ok(r) => records.push((schema::decode_u64(Cf::Docs, k, k).unwrap_or(0), r)),
                    Err(e) => err = Some(e),
                }
                err.is_none() && records.len() < 4096
            })?;
            if let Some(e) = err.take() {
                return Err(e);
            }
            let Some((last, _)) = records.last() else {
                break;
            };
            let next = last.checked_add(1);
            for (seq, rec) in records.drain(..) {
                if ids.len() >= CACHE_MAX {
                    ids.clear();
                }
                if roots.len() >= CACHE_MAX {
                    roots.clear();
                }
                ids.insert(seq, rec.id.clone());
                let (root, first_seq) = match roots.get(&rec.similar_id) {
                    Some(r) => *r,
                    None => {
                        let (root, crec) = self.find(rec.similar_id)?;
                        roots.insert(rec.similar_id, (root, crec.first_seq));
                        (root, crec.first_seq)
                    }
                };
                let first = if first_seq == seq {
                    None
                } else {
                    Some(self.id_of(first_seq, &ids)?.ok_or_else(|| {
                        schema::corrupt(
                            Cf::Docs,
                            &schema::u64_key(first_seq),
                            "referenced document is missing".into(),
                        )
                    })?)
                };
                let mut matches = Vec::new();
                for m in &rec.matches {
                    // A matched document removed (replaced) since is no longer reported.
                    let Some(id) = self.id_of(m.seq, &ids)? else {
                        continue;
                    };
                    matches.push(stored_match(id, m));
                }
                let duplicate_of = first.filter(|f| *f != rec.id);
                visit(Outcome {
                    id: rec.id,
                    similar_id: Some(root),
                    duplicate_of,
                    matches,
                    merged: Vec::new(),
                })?;
            }
            match next {
                Some(n) => start = schema::u64_key(n).to_vec(),
                None => break,
            }
        }
        Ok(())
    }

    /// Current clusters with at least `min_size` documents: (similar_id, member ids in ingest
    /// order), by similar_id. Holds every member id in memory.
    pub fn clusters(&self, min_size: usize) -> Result<Vec<(u64, Vec<String>)>> {
        // Roots large enough, from the cluster records (sizes live on roots), so that only
        // their members' ids are held, not every document's.
        let wanted: Option<BTreeSet<u64>> = if min_size > 1 {
            let mut roots = BTreeSet::new();
            let mut err = None;
            self.store
                .scan(Cf::Clusters, &[], &[0xff; 9], &mut |k, v| {
                    match (
                        schema::decode_u64(Cf::Clusters, k, k),
                        schema::decode::<ClusterRecord>(Cf::Clusters, k, v),
                    ) {
                        (Ok(id), Ok(rec)) => {
                            if rec.parent.is_none_or(|p| p == id) && rec.size >= min_size as u64 {
                                roots.insert(id);
                            }
                        }
                        (Err(e), _) | (_, Err(e)) => err = Some(e),
                    }
                    err.is_none()
                })?;
            if let Some(e) = err {
                return Err(e);
            }
            Some(roots)
        } else {
            None
        };
        let mut groups: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        self.export(&mut |o| {
            let root = o.similar_id.unwrap_or(0);
            if wanted.as_ref().is_none_or(|w| w.contains(&root)) {
                groups.entry(root).or_default().push(o.id);
            }
            Ok(())
        })?;
        Ok(groups
            .into_iter()
            .filter(|(_, m)| m.len() >= min_size.max(1))
            .collect())
    }

    /// The external id of document `seq`, if it is still stored.
    fn id_of(&self, seq: u64, cache: &HashMap<u64, String>) -> Result<Option<String>> {
        if let Some(id) = cache.get(&seq) {
            return Ok(Some(id.clone()));
        }
        let k = schema::u64_key(seq);
        match self.store.get(Cf::Docs, &k)? {
            Some(v) => Ok(Some(schema::decode::<DocRecord>(Cf::Docs, &k, &v)?.id)),
            None => Ok(None),
        }
    }

    /// Where the store lives (None for memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// Whether a stored document has exactly these fingerprints (its text is unchanged for every
/// rule of the store).
fn same_fingerprints(rec: &DocRecord, fps: &Fingerprints) -> bool {
    rec.nshash == fps.nshash
        && rec.simhash == fps.simhash
        && rec.sketch == fps.sketch
        && rec.shingles == fps.shingles
        && rec.chars == fps.chars
}

/// A [`Match`] from a match stored with a document.
fn stored_match(id: String, m: &StoredMatch) -> Match {
    Match {
        id,
        algo: if m.algo == "nshash" {
            "nshash"
        } else {
            "simhash"
        },
        score: m.score,
        distance: (m.algo == "simhash").then(|| ((1.0 - m.score) * 64.0).round() as u32),
        overlap: Some(m.overlap),
    }
}
