//! The engine's writer part: how a document is written. Its lookups against the store and the
//! batch (`batch_lookup.rs`), the decision (`decide.rs`: one rule set, for a batch's documents
//! in input order and for a single document as a batch of one), the placement in a cluster
//! with merges, originals and citations (`ingest.rs`), and a batch's commit (`batch.rs`). A new
//! decision rule goes in the [`Finder`](super::finder::Finder) it applies (`finder.rs`,
//! `lookup.rs`) and is placed here; the public entry points stay on [`Fpdb`].

mod batch;
mod batch_lookup;
mod decide;
mod ingest;
mod late;

pub(super) use batch::LastBatch;
pub use batch::{BatchOutcome, NextBatch};
pub use batch_lookup::BatchFingerprints;
pub(super) use batch_lookup::Committed;

use super::{Document, Fpdb, IngestResult, OnExisting};
use crate::error::Result;
use crate::fingerprint::Fingerprints;

/// The write path of a store ([`Fpdb::ingest`](crate::Fpdb::ingest), [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch)): lookups, decisions,
/// placement and commits. Borrows the handle for as long as it lives.
pub(super) struct Writer<'a> {
    db: &'a mut Fpdb,
}

impl std::ops::Deref for Writer<'_> {
    type Target = Fpdb;
    fn deref(&self) -> &Fpdb {
        self.db
    }
}

impl std::ops::DerefMut for Writer<'_> {
    fn deref_mut(&mut self) -> &mut Fpdb {
        self.db
    }
}

impl Fpdb {
    /// The write path of this store.
    pub(super) fn writer(&mut self) -> Writer<'_> {
        Writer { db: self }
    }

    /// Store `doc` (with fingerprints from [`Fpdb::fingerprint`](crate::Fpdb::fingerprint)). Visible to later lookups at
    /// once; written to disk, atomically with the other documents since the last sync, and made
    /// durable by [`Fpdb::sync`](crate::Fpdb::sync) (or when the `Fpdb` is dropped). More than
    /// `AUTO_COMMIT_KEYS` (2^20) staged keys are committed (not synced) automatically.
    ///
    /// [`OnExisting::Replace`] removes the stored document (see [`Maintainer::remove`](crate::engine::Maintainer::remove)) and ingests
    /// the new one as a new document; when the removal emptied its cluster and the new version
    /// matches nothing, it gets that cluster id back (an unchanged singleton keeps its id).
    ///
    /// In stores with `furniture`, the lines of the page that are its site's furniture are
    /// left out of `fps` here (they are fingerprinted again when they left out others).
    pub fn ingest(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        self.writer().ingest(doc, fps, on_existing)
    }

    /// Fingerprint and ingest `doc`.
    pub fn ingest_document(
        &mut self,
        doc: &Document,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        self.writer().ingest_document(doc, on_existing)
    }

    /// Whether this handle's batches learn their pages' sites' furniture together (on by
    /// default, in stores with [`crate::Options::batch_furniture`]). Off, each batch decides
    /// as one document at a time would: for a caller whose batches are not the user's (`fpdb
    /// serve` cuts its writes into batches by the time each holds the store, so with it on
    /// the decisions would follow the timing).
    pub fn set_batch_furniture(&mut self, on: bool) {
        self.batch_pages = on;
    }

    /// Ingest `docs` (each with its fingerprints from [`Fpdb::fingerprint`](crate::Fpdb::fingerprint)) in order, with the
    /// result of calling [`Fpdb::ingest`](crate::Fpdb::ingest) on each in turn, and commit them (not synced: call
    /// [`Fpdb::sync`](crate::Fpdb::sync) to make them durable).
    ///
    /// Lookups run on as many threads as rayon's current pool has. A batch that replaces stored
    /// documents (or holds one id twice) with [`OnExisting::Replace`] is ingested one
    /// document at a time.
    ///
    /// On a store other processes write too ([`crate::store::Store::lease`]) the batch is
    /// looked up, decided and committed under the store's write lease and synced before it is
    /// given back, so the batches of all writers are decided one after another.
    pub fn ingest_batch(
        &mut self,
        docs: Vec<(&Document, Fingerprints)>,
        on_existing: OnExisting,
    ) -> BatchOutcome {
        self.writer().ingest_batch(docs, on_existing)
    }

    /// [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch) of `docs` (with `fps`: their fingerprints, or what the call
    /// before returned for them) while the lookups of the `next` batch run beside its
    /// decisions, against the store as this batch found it. Returns this batch's outcome and
    /// the next batch's fingerprints with what they found, to pass with the next batch's
    /// documents to the next call. The results are those of [`Fpdb::ingest_batch`](crate::Fpdb::ingest_batch) on each
    /// batch in turn: the next batch's decisions see this one's documents as they see their
    /// own batch's earlier documents. Anything written between the two calls makes the next
    /// call look its batch up again (as does a store other processes write: there the
    /// lookups run under the write lease).
    pub fn ingest_batch_ahead(
        &mut self,
        docs: Vec<&Document>,
        fps: BatchFingerprints,
        on_existing: OnExisting,
        next: NextBatch<'_>,
    ) -> (BatchOutcome, Option<BatchFingerprints>) {
        self.writer()
            .ingest_batch_ahead(docs, fps, on_existing, next)
    }
}
