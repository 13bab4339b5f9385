//! Tight clusters: which of the clusters a document verifies against it may join. A cluster
//! counts when the document verifies against its first document, links strongly to a member,
//! joins it as copies of its opening, or (stores with `first_links`) verifies against a
//! member that was linked to the first document at its own ingest.

use foldhash::HashMap;

use super::checked::Checked;
use super::finder::Finder;
use super::lookup::{Lookup, RecordOf, Verdict};
use crate::error::Result;
use crate::store::schema::DocRecord;

impl Finder<'_> {
    /// Tight clusters: a cluster counts only when the document also verifies against its
    /// first document, or links strongly to a member (is a copy of it): no chain of weaker
    /// links through a third document joins two that differ.
    pub(super) fn drop_loose_clusters(
        &self,
        lk: &mut Lookup,
        verdicts: &HashMap<u64, Verdict>,
        (verify, record): (&mut dyn FnMut(u64) -> Result<Checked>, RecordOf<'_>),
        min_overlap: f64,
    ) -> Result<()> {
        let mut loose = Vec::new();
        for (&root, rec) in &lk.roots {
            if lk.openings.contains(&root)
                || lk.candidates.iter().any(|c| c.root == root && c.strong)
            {
                continue;
            }
            let first = rec.first_seq;
            let overlap = match verdicts.get(&first) {
                Some(v) => v.checked.overlap,
                None => verify(first)?.overlap,
            };
            if overlap < min_overlap
                && !self.opening_of_candidate(lk, root, first, record)?
                && !(self.opts.first_links
                    && self.opts.link_shape
                    && self.next_to_first(lk, verdicts, (root, first), min_overlap, record)?)
            {
                loose.push(root);
            }
        }
        for root in loose {
            lk.roots.remove(&root);
        }
        lk.candidates.retain(|c| lk.roots.contains_key(&c.root));
        Ok(())
    }

    /// Stores with `first_links`: whether a verified candidate of cluster `root`, not linked
    /// to the document as two overlapping windows, was itself linked to the cluster's first
    /// document (`first`) at its ingest: its stored matches name it, verified above the
    /// threshold, or verified as an excerpt or a teaser when the document holds no sentence
    /// the member lacks (its cut last one aside). Had the document come before that member,
    /// the member would have verified against both first documents and merged the two
    /// clusters; joining through it now gives the same cluster in either order. Chained
    /// windows stay apart: the link must be known (both documents keep their sentences'
    /// order) not to be shaped as two windows, and the member's own link is one step to the
    /// first document, not a chain.
    fn next_to_first(
        &self,
        lk: &Lookup,
        verdicts: &HashMap<u64, Verdict>,
        (root, first): (u64, u64),
        min_overlap: f64,
        record: RecordOf<'_>,
    ) -> Result<bool> {
        let mut read: Vec<u64> = Vec::new();
        let not_window = |seq: &u64| verdicts.get(seq).is_some_and(|v| v.checked.not_window);
        for c in lk
            .candidates
            .iter()
            .filter(|c| c.root == root && c.seq != first && not_window(&c.seq))
        {
            if read.contains(&c.seq) {
                continue;
            }
            read.push(c.seq);
            let r = record(c.seq)?;
            // Verified by similarity, above the threshold; or by an exception (an excerpt, a
            // teaser: at the threshold exactly) when the document holds nothing the member
            // lacks. An excerpt's link to its article carries no page quoting the same
            // opening with words of its own.
            let within = verdicts.get(&c.seq).is_some_and(|v| v.checked.within);
            if r.matches.iter().any(|m| {
                m.seq == first && (m.overlap > min_overlap || (within && m.overlap >= min_overlap))
            }) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Stores with `excerpts`: whether cluster `root`'s first document (`first`) is the teaser
    /// or excerpt of a larger verified candidate of the cluster (compared as stored). Such a
    /// first document stands aside for that candidate under tight clusters: a window of the
    /// article verifies against the article, not against its opening. Chained windows are
    /// not so: neither of two windows is the other's opening.
    fn opening_of_candidate(
        &self,
        lk: &Lookup,
        root: u64,
        first: u64,
        record: RecordOf<'_>,
    ) -> Result<bool> {
        if !self.opts.excerpts {
            return Ok(false);
        }
        let mut opening: Option<DocRecord> = None;
        // A document proposed by several algorithms is a candidate once per algorithm.
        let mut read: Vec<u64> = Vec::new();
        for c in lk
            .candidates
            .iter()
            .filter(|c| c.root == root && c.seq != first)
        {
            if read.contains(&c.seq) {
                continue;
            }
            read.push(c.seq);
            if opening.is_none() {
                opening = Some(record(first)?);
            }
            let (f, c) = (opening.as_ref().expect("read above"), record(c.seq)?);
            if f.sketch.len() >= c.sketch.len() {
                continue;
            }
            let (a, b) = (super::record_sketches(f), super::record_sketches(&c));
            let opts = &self.opts;
            if crate::fingerprint::verified_as_teaser(opts, a, b)
                || crate::fingerprint::verified_as_excerpt(opts, a, b).is_some_and(|r| r.is_ok())
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
