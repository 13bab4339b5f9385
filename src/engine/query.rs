//! Queries: what a document would get if it were ingested now, one at a time or many at once
//! on all cores; never writes.

use super::furniture::SeenInBatch;
use super::lookup::Lookup;
use super::postings::{band_keys, candidate_seqs};
use super::searcher::Searcher;
use super::{LookupCounters, Outcome};
use crate::error::Result;
use crate::fingerprint::Fingerprints;
use crate::store::schema::Original;

impl Searcher<'_> {
    /// What `fps` would get if it were ingested now: never writes.
    pub fn query(&self, id: &str, fps: &Fingerprints) -> Result<Outcome> {
        self.outcome(id, self.finder().lookup(fps)?, &fps.sketch)
    }

    /// [`Searcher::query`] of each of `docs` (id, fingerprints), in order, on all cores of the
    /// current rayon pool. What their lookups read from the postings and simhash tables is
    /// read for all of them at once, in key order (`Index::read_many`); same answers.
    pub fn query_many(&self, docs: &[(&str, &Fingerprints)]) -> Vec<Result<Outcome>> {
        use rayon::prelude::*;
        let fps: Vec<&Fingerprints> = docs.iter().map(|d| d.1).collect();
        let read = self.index().read_many(&fps).ok();
        let found: Vec<Result<_>> = fps
            .par_iter()
            .map(|f| self.index().holders_and_neighbours(f, read.as_ref()))
            .collect();
        let records = self
            .records()
            .shared_records(fps.iter().zip(&found).filter_map(|(f, found)| {
                let (holders, simhash) = found.as_ref().ok()?;
                Some(candidate_seqs(holders, simhash, band_keys(self.opts, f)).collect())
            }));
        docs.par_iter()
            .zip(found)
            .map(|((id, fps), found)| {
                LookupCounters::add(&self.reads.lookups, 1);
                let (holders, simhash) = found?;
                let verify = &mut |seq| {
                    self.finder().check_stored_in(
                        fps,
                        seq,
                        records.as_ref(),
                        &SeenInBatch::default(),
                    )
                };
                let record = &mut |seq| match records.as_ref().and_then(|r| r.get(&seq)) {
                    Some(r) => Ok(r.clone()),
                    None => self.records().doc(seq),
                };
                let lk = self
                    .finder()
                    .lookup_with(fps, &holders, simhash, (verify, record))?;
                self.outcome(id, lk, &fps.sketch)
            })
            .collect()
    }

    /// The outcome of lookup `lk` for a document with id `id`.
    fn outcome(&self, id: &str, lk: Lookup, sketch: &[u32]) -> Result<Outcome> {
        let (matches, _) = self.finder().matches(&lk);
        let composite_of = lk.composite_of(sketch, &mut |seq| {
            let r = self.records().doc(seq)?;
            Ok((r.id, r.sketch))
        })?;
        let target = lk.roots.iter().next();
        // The cluster it would join names the earliest original of the clusters it matched.
        let original = lk
            .roots
            .values()
            .fold(None, |o, rec| Original::earliest(o, rec.original));
        Ok(Outcome {
            id: id.to_string(),
            similar_id: target.map(|(id, _)| *id),
            duplicate_of: match (original, target) {
                (Some(o), _) => Some(self.records().doc(o.seq)?.id),
                (None, Some((_, rec))) => Some(self.records().doc(rec.first_seq)?.id),
                (None, None) => None,
            },
            previous_original: None,
            composite_of,
            excerpt_of: Outcome::excerpt_of(&matches),
            matches,
            merged: lk.roots.keys().skip(1).copied().collect(),
        })
    }

    /// Query the text of a document (fingerprint + [`Searcher::query`]).
    pub fn query_text(&self, text: &str) -> Result<Outcome> {
        self.query("", &self.fingerprinter.fingerprint(text))
    }
}
