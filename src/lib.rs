//! fpdb: a persistent, on-disk text-fingerprint database for near-duplicate documents.
//!
//! Data flow: text -> [`normalize`] -> sentences and weighted terms -> fingerprints (`nshash`,
//! `simhash`) -> lookup in a [`Store`] -> decision (`similar_id`) -> one atomic write batch.
//!
//! ```
//! use fpdb::{Document, Fpdb, OnExisting};
//! # fn main() -> fpdb::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let mut db = Fpdb::open(dir.path().join("store"))?;
//! let text = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。\
//!             第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内组织开展的监督检查。";
//! let a = db.ingest_document(&Document::new("a", text), OnExisting::Skip)?;
//! let b = db.ingest_document(&Document::new("b", format!("【转载】\n{text}")), OnExisting::Skip)?;
//! db.sync()?;
//! let id = |r: &fpdb::IngestResult| match r {
//!     fpdb::IngestResult::Added { outcome, .. } => outcome.similar_id,
//!     _ => None,
//! };
//! assert_eq!(id(&a), id(&b));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod clock;
mod engine;
mod error;
// Used by the `fpdb` binary and the tests, not a stable API: hidden from the documentation.
#[doc(hidden)]
pub mod eval;
#[doc(hidden)]
pub mod explain;
pub mod fingerprint;
mod hash;
pub mod index;
mod options;
pub mod pipeline;
pub mod reader;
pub mod store;
pub mod text;

pub use engine::now;
pub use engine::{
    BatchFingerprints, BatchOutcome, BatchSeconds, Builder, Cluster, Dates, Document, Fpdb,
    IngestResult, Job, LookupStats, Maintainer, Match, Meters, NextBatch, OnExisting, Outcome,
    QueryAnswer, ResultLine, SavedFilter, Searcher, Settings, Standing, Stats, StoredDocument,
    StoredTexts, Verified, ALGO_NAMES, BATCH_DOCS, MAX_MATCHES, SIMHASH_MOST,
};
/// The store described for people: `fpdb report` and serve's page.
pub mod report {
    pub use crate::engine::cut;
    pub use crate::engine::{
        ClusterDetail, Day, Heavy, HostCount, HostPair, Hosts, Member, Report, ReportOptions,
        ReportScan, SizeClass, MAX_LINK_ID_CHARS,
    };
}
pub use error::{Error, Result};
pub use fingerprint::{Fingerprints, Meta};
pub use options::{
    Algo, FormatVersion, IdfSource, KeyAlgo, KeyAlgos, Options, RulesVersion, Segmenter,
    SentenceHash, SetBy, SettingRow, SimhashFeatures, Stopwords, RULES_VERSIONS, SETTING_TABLE,
};
pub use store::{Lease, Maintenance, MemoryStore, RocksStore, Store};
pub use text::normalize;
