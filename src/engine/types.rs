//! The engine's public values: documents in, outcomes and numbers out.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::fingerprint::Fingerprints;
use crate::options::Options;

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
    /// When it was published, in seconds since the Unix epoch, as its input says (a time
    /// field, the page's `article:published_time` or `<time datetime>`, and only for a page
    /// without one its archive record's date: WARC-Date, an ARC record's date); `None`: its
    /// ingest time counts. A store with
    /// `originals` names the earliest member of a cluster its original.
    pub published: Option<i64>,
    /// A time the input gave that could not be read (the reader's located warning; the
    /// document is read without it).
    pub time_unread: Option<String>,
    /// A page's digest as read, before extraction (a WARC, ARC or whole-file page: its bytes,
    /// archive date and kind; [`crate::reader::Record::raw_digest`]). Stored as its digest in
    /// place of its text's (stores with `digests`), so that a re-run knows a stored page
    /// before extracting it again.
    pub raw_digest: Option<u64>,
    /// URLs its page links to as its source (links whose text or surroundings say so); its
    /// text's source lines ("来源：URL") are read when it is fingerprinted.
    pub cites: Vec<String>,
    /// An HTML page's visible text around its main text (one line per block): not
    /// fingerprinted, but its lines count toward the site's furniture as the main text's do
    /// (`engine/furniture.rs`), so a block on every page of a site is furniture on the pages
    /// whose main text takes it in.
    pub around: String,
    /// Who published it on its host, as the page names them (an HTML page's account, such
    /// as a WeChat article's): on a host many publish on, what the store learns of the site
    /// is kept per publisher ([`crate::text::sites`]; stores with `site_knowledge`). Not
    /// stored.
    pub publisher: Option<String>,
}

impl Document {
    /// The digest its record keeps (stores with `digests`): its page's as read when it came
    /// from one ([`Document::raw_digest`]), else its text's as given.
    pub fn digest(&self) -> u64 {
        self.raw_digest
            .unwrap_or_else(|| crate::hash::text_digest(&self.text))
    }

    /// A document with an id and a body.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            text: text.into(),
            ..Default::default()
        }
    }

    /// Its title, description and keywords, for the fingerprints that read them.
    pub fn meta(&self) -> crate::fingerprint::Meta<'_> {
        crate::fingerprint::Meta {
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            keywords: self.keywords.as_deref(),
            url: self.url.as_deref(),
            cites: &self.cites,
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
    /// The algorithm that linked them (serialized as its name: `nshash`, `simhash`, …).
    pub algo: crate::options::Algo,
    /// Similarity in [0, 1]: shared sentence hashes / this document's hashes for nshash,
    /// 1 - distance / 64 for simhash.
    pub score: f64,
    /// Hamming distance (simhash only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// Shared sentences over the sentences of the larger document (the verification signal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap: Option<f64>,
    /// This document verified against the stored one only as its excerpt (stores with
    /// `excerpts`: it holds the stored document's first sentences). Not kept in the store:
    /// an export's matches leave it out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub excerpt: bool,
}

/// The answer for one document: its cluster and what it matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// External id.
    pub id: String,
    /// The cluster id (for a query that matched nothing: `None`, it would get a fresh id).
    pub similar_id: Option<u64>,
    /// The cluster's original (the earliest member by publication time; in a store without
    /// `originals`, the first document ingested), when it is not this one.
    pub duplicate_of: Option<String>,
    /// The cluster's original until this document (published earlier) took its place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_original: Option<String>,
    /// A composite: it verified against members of two or more clusters and shares different
    /// sentences with each (their ids; see [`crate::Outcome`]'s clusters in `merged`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub composite_of: Vec<String>,
    /// An excerpt: the stored document whose first sentences it holds, when it verified
    /// against it only as such (the best such match; stores with `excerpts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt_of: Option<String>,
    /// Stored documents that matched, best first.
    pub matches: Vec<Match>,
    /// Clusters merged into `similar_id` by this document.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<u64>,
}

impl Outcome {
    /// A stored document as it stands (export, an unchanged replace): its cluster, original
    /// and stored matches (its excerpt links marked); nothing merged, displaced or drawn on.
    pub(crate) fn stored(
        id: String,
        similar_id: u64,
        duplicate_of: Option<String>,
        matches: Vec<Match>,
    ) -> Outcome {
        Outcome {
            id,
            similar_id: Some(similar_id),
            duplicate_of,
            previous_original: None,
            composite_of: Vec::new(),
            excerpt_of: Outcome::excerpt_of(&matches),
            matches,
            merged: Vec::new(),
        }
    }

    /// The match this document is an excerpt of ([`Match::excerpt`]), by id.
    pub(crate) fn excerpt_of(matches: &[Match]) -> Option<String> {
        matches.iter().find(|m| m.excerpt).map(|m| m.id.clone())
    }

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
    /// Its cluster's original, when that is another document.
    pub duplicate_of: Option<String>,
    /// Its times: published (as its input said), ingested, and the one its cluster's original
    /// is chosen by.
    pub dates: crate::engine::Dates,
    /// Its fingerprints.
    pub fingerprints: Fingerprints,
    /// Ids of the stored documents it matched when it was ingested.
    pub matched_at_ingest: Vec<String>,
    /// The stored document it is an excerpt of (it verified against it only as its opening;
    /// stores with `excerpts`), as `export` names it.
    pub excerpt_of: Option<String>,
}

/// Result of `Fpdb::ingest`.
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
        /// The stored document has this text (its digest, in stores with `digests`; else its
        /// fingerprints): a re-run sent it again. Otherwise another text came under a stored
        /// id.
        same_text: bool,
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
    /// The rules version its settings belong to ([`Options::rules_version`]).
    pub rules_version: &'static str,
    /// The presence filter saved with the store, if any ([`crate::store::Presence`]).
    pub presence_filter: Option<SavedFilter>,
}

/// A presence filter saved with a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SavedFilter {
    /// Its size on disk (and about its size in memory when loaded).
    pub bytes: u64,
    /// Whether it serves the store as it is: saved at its present state, or at an earlier
    /// state of this store (then the next open reads the documents written since into it).
    /// When not, a writer removes it, and `ingest --memory-filters` or `compact` builds
    /// another.
    pub current: bool,
    /// Document seqs given out since it was saved: read into it at the next open (0 when it
    /// was saved at the present state).
    pub documents_since: u64,
}

/// What [`Searcher::verify`](crate::Searcher::verify) found in a consistent store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// Documents checked.
    pub documents: u64,
    /// Distinct current clusters.
    pub roots: BTreeSet<u64>,
}

/// One cluster: what [`Searcher::cluster_members`](crate::Searcher::cluster_members) returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cluster {
    /// Its current similar_id.
    pub similar_id: u64,
    /// Documents in it.
    pub size: u64,
    /// Ids of its first documents, in ingest order.
    pub members: Vec<String>,
    /// Whether `members` lists fewer documents than `size`.
    pub truncated: bool,
    /// Its original (see [`Outcome::duplicate_of`]): the earliest member, or, in a store
    /// without `originals`, the first ingested.
    pub original: String,
}

/// The answer to a lookup as every front end prints it (`fpdb query --json`, each line of
/// `fpdb query --batch`, `fpdb serve`, the Python package): from [`Outcome::answer`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryAnswer<'a> {
    /// The looked-up document's id (batch answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// Whether a stored document matched.
    pub duplicate: bool,
    /// The cluster it would join (None: a fresh one).
    pub similar_id: Option<u64>,
    /// That cluster's original (see [`Outcome::duplicate_of`]).
    pub duplicate_of: Option<&'a str>,
    /// The documents it is a composite of (see [`Outcome::composite_of`]).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub composite_of: &'a [String],
    /// The stored document it is an excerpt of (see `Outcome::excerpt_of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt_of: Option<&'a str>,
    /// Stored documents that matched, best first.
    pub matches: &'a [Match],
}

impl Outcome {
    /// This outcome as a lookup's answer, with `id` for batch answers.
    pub fn answer<'a>(&'a self, id: Option<&'a str>) -> QueryAnswer<'a> {
        QueryAnswer {
            id,
            duplicate: self.is_duplicate(),
            similar_id: self.similar_id,
            duplicate_of: self.duplicate_of.as_deref(),
            composite_of: &self.composite_of,
            excerpt_of: self.excerpt_of.as_deref(),
            matches: &self.matches,
        }
    }
}

/// One line of `fpdb ingest --output` (also what `fpdb serve` and the Python package return
/// for an ingested document).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultLine<'a> {
    /// The document's id (None: a record that held no readable id).
    pub id: Option<&'a str>,
    /// Its cluster (None when it was not ingested).
    pub similar_id: Option<u64>,
    /// Its cluster's original (see [`Outcome::duplicate_of`]), when that is another document.
    pub duplicate_of: Option<&'a str>,
    /// The original this document displaced (see [`Outcome::previous_original`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_original: Option<&'a str>,
    /// The documents it is a composite of (see [`Outcome::composite_of`]).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub composite_of: &'a [String],
    /// The stored document it is an excerpt of (see `Outcome::excerpt_of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt_of: Option<&'a str>,
    /// Stored documents that matched, best first.
    pub matches: &'a [Match],
    /// `added`, `replaced`, `already_stored` (its id is stored with the same text) or
    /// `skipped`.
    pub status: &'static str,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    /// Where a skipped record was read (`file:line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl<'a> ResultLine<'a> {
    /// The line of a document that was ingested or skipped for its id (`source`: where it
    /// was read, for skipped ones).
    pub fn of(r: &'a IngestResult, source: impl FnOnce() -> Option<String>) -> Self {
        match r {
            IngestResult::Added { outcome, replaced } => ResultLine {
                id: Some(&outcome.id),
                similar_id: outcome.similar_id,
                duplicate_of: outcome.duplicate_of.as_deref(),
                previous_original: outcome.previous_original.as_deref(),
                composite_of: &outcome.composite_of,
                excerpt_of: outcome.excerpt_of.as_deref(),
                matches: &outcome.matches,
                status: if *replaced { "replaced" } else { "added" },
                reason: None,
                source: None,
            },
            IngestResult::SkippedExisting {
                id,
                similar_id,
                same_text,
            } => ResultLine {
                id: Some(id),
                similar_id: Some(*similar_id),
                duplicate_of: None,
                previous_original: None,
                composite_of: &[],
                excerpt_of: None,
                matches: &[],
                status: if *same_text {
                    "already_stored"
                } else {
                    "skipped"
                },
                reason: (!same_text).then_some("id already stored with another text"),
                source: if *same_text { None } else { source() },
            },
        }
    }
}
