//! A reader of the committed store for the fingerprinting threads: whether a document, or a
//! page before it is extracted, is already stored as read (a re-run).

use super::searcher::Searcher;
use super::Document;
use crate::error::Result;
use crate::store::schema::{self, Cf, DocRecord};

/// Reads the committed store on any thread while its `Fpdb` writes: whether a document is
/// already stored with the same text ([`Searcher::stored_texts`]). It sees what was committed, not
/// what is staged: a document it does not know is left to the ingest, which knows both.
#[derive(Clone)]
pub struct StoredTexts {
    store: std::sync::Arc<dyn crate::store::Store>,
}

impl StoredTexts {
    /// The cluster at ingest (resolve it with [`Searcher::resolve`]) of the stored document with
    /// `doc`'s id, when its record keeps the digest of `doc`'s text; None when no document has
    /// that id, or it has another text, or its record keeps no digest, or `doc` is dated before
    /// it.
    pub fn already_stored(&self, doc: &Document) -> Result<Option<u64>> {
        let Some(rec) = self.record_of(&doc.id)? else {
            return Ok(None);
        };
        // A document dated before the stored one is left to the ingest, which dates the
        // stored one earlier (`Fpdb::predate`).
        let earlier = doc.published.is_some_and(|t| t < rec.dated());
        let same = rec.digest == Some(crate::hash::text_digest(&doc.text))
            || (doc.raw_digest.is_some() && rec.digest == doc.raw_digest);
        Ok((!earlier && same).then_some(rec.similar_id))
    }

    /// The cluster at ingest of the stored page with id `id` when its record keeps
    /// `raw_digest` ([`crate::reader::Record::raw_digest`]): the same page read again, known
    /// before it is extracted. None otherwise.
    pub fn stored_page(&self, id: &str, raw_digest: u64) -> Result<Option<u64>> {
        Ok(self
            .record_of(id)?
            .filter(|rec| rec.digest == Some(raw_digest))
            .map(|rec| rec.similar_id))
    }

    /// The committed record of the document with id `id`.
    fn record_of(&self, id: &str) -> Result<Option<DocRecord>> {
        let Some(v) = self.store.get(Cf::DocIds, id.as_bytes())? else {
            return Ok(None);
        };
        let k = schema::u64_key(schema::decode_u64(Cf::DocIds, id.as_bytes(), &v)?);
        let Some(v) = self.store.get(Cf::Docs, &k)? else {
            return Ok(None);
        };
        schema::decode_doc(&k, &v).map(Some)
    }
}

impl Searcher<'_> {
    /// A reader of the committed store that tells, on any thread, whether a document is
    /// already stored with the same text, so that a re-run need not fingerprint it; None when
    /// the store keeps no digests (stores made before them) or holds no document yet.
    pub fn stored_texts(&self) -> Option<StoredTexts> {
        (self.opts.digests && self.counts.docs > 0).then(|| StoredTexts {
            store: self.store.committed(),
        })
    }
}
