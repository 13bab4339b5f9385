//! Candidate lookup and verification: sentence hashes name their oldest holder, simhash
//! neighbours come from the permuted tables; every candidate is verified against its stored
//! sketch. Never writes.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;

use super::postings::ReadMany;
use super::{Fpdb, LookupCounters, Match, MAX_MATCHES};
use crate::error::Result;
use crate::fingerprint::{keys, similarity, Fingerprints};
use crate::options::Algo;
use crate::store::schema::{self, ClusterRecord, StoredMatch};

/// With tight clusters, a candidate this similar joins its cluster even when the cluster's
/// first document does not verify: it is a copy of a member (an edited repost of an article
/// that had itself joined another's cluster), not a window overlapping a third document (their
/// links are weaker). Part of the rule of format 4 stores: a new value needs a new setting.
pub(super) const STRONG_LINK: f64 = 0.85;

/// A candidate stored document found by lookup.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) seq: u64,
    pub(super) id: String,
    pub(super) overlap: f64,
    pub(super) strong: bool,
    /// It verified only with its site's template lines left out ([`Checked::left_out_only`]).
    pub(super) left_out_only: bool,
    /// The sentences it shares with the document ([`Checked::shared`]).
    pub(super) shared: Vec<u32>,
    pub(super) algo: Algo,
    pub(super) score: f64,
    pub(super) distance: Option<u32>,
    pub(super) root: u64,
    pub(super) standing: Standing,
}

/// What checking a candidate against the document looked up gives.
#[derive(Debug, Clone)]
pub(super) struct Checked {
    /// The candidate's id.
    pub(super) id: String,
    /// Its cluster at ingest.
    pub(super) similar_id: u64,
    /// Its similarity with the document (what verification compares).
    pub(super) overlap: f64,
    /// The keyword weight check's distance ([`keys::weight_distance`]).
    pub(super) weight_distance: f64,
    /// Whether it is a strong link under the store's rules ([`is_strong`]).
    pub(super) strong: bool,
    /// Stores with `site_knowledge`: it verified only after the lines of a site's template
    /// were left out of the two (`compared.rs`: the page's lines its host showed before, the
    /// candidate's stored template); compared with those lines it does not. Such a link never
    /// merges the clusters of two articles ([`Lookup::left_out_joins_one`]).
    pub(super) left_out_only: bool,
    /// Stores with `site_knowledge`, a verified candidate compared where a site's template can
    /// be left out (a page whose host showed lines before, or a stored page with a template):
    /// the sentences it shares with the document, whole (sorted), which tell whether two of
    /// its clusters are one article's. Empty otherwise (no link there holds only so).
    pub(super) shared: Vec<u32>,
    /// Stores with `excerpts`: it verified only as an excerpt of the document (it holds the
    /// document's first sentences). Such a link joins the candidate's cluster only while the
    /// excerpt is alone in it: an excerpt of two sentences is the opening of its article and
    /// of a page quoting that opening alike, and must not chain the two.
    pub(super) excerpt_of_doc: bool,
    /// For a candidate that did not verify but whose sentences are at least half in the
    /// document (two or more): the sentences they share (a source of a composite).
    pub(super) contained: Option<Vec<u32>>,
    /// Where it stands for a cluster's original, and the citations between it and the
    /// document (stores with `originals`).
    pub(super) standing: Standing,
}

/// A candidate's standing for its cluster's original, and the citations between it and the
/// document looked up.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Standing {
    /// Its time ([`schema::DocRecord::dated`]).
    pub(super) dated: i64,
    /// Whether a document that verified against it cited it before.
    pub(super) cited: bool,
    /// The document cites it (names its URL, whose key this is).
    pub(super) cited_now: Option<u64>,
    /// It cites the document.
    pub(super) cites_doc: bool,
}

impl Checked {
    /// A candidate (`id`, cluster `similar_id` at ingest, `sketches`, keyword `weights`, the
    /// page it was: its `url` and `template`) checked against `fps`.
    pub(super) fn new(
        opts: &crate::options::Options,
        fps: &Fingerprints,
        id: String,
        similar_id: u64,
        sketches: crate::fingerprint::Sketches<'_>,
        weights: &[f32],
        (url, template): (Option<&str>, &[u32]),
    ) -> Checked {
        let mut bufs = super::compared::Kept::default();
        let whole = sketches;
        let (doc, sketches) =
            super::compared::as_compared(opts, fps, sketches, (url, template), &mut bufs);
        let (mut overlap, mut sentences, mut resemblance) =
            crate::fingerprint::similarity_parts(opts, doc, sketches);
        let (mut doc, mut sketches, mut compared_whole) = (doc, sketches, false);
        if overlap < opts.verify_threshold() {
            if let Some(w) = super::compared::whole_elsewhere(fps, url) {
                // A page whose furniture is most of its main text, compared whole with a page
                // of another host: an article its host's other pages made furniture (stores
                // with `site_knowledge`) is still the article of a copy elsewhere.
                (overlap, sentences, resemblance) =
                    crate::fingerprint::similarity_parts(opts, w, whole);
                (doc, sketches, compared_whole) = (w, whole, true);
            }
        }
        // The shape is read only for a verified link (no other can join).
        let verified = overlap >= opts.verify_threshold();
        let left_out_only = verified
            && !compared_whole
            && opts.site_knowledge
            && super::compared::template_left_out(fps, doc, whole, sketches)
            && {
                let mut kept = (Vec::new(), Vec::new());
                let theirs = super::compared::without_furniture(fps, whole, &mut kept);
                crate::fingerprint::similarity_parts(opts, fps.sketches(), theirs).0
                    < opts.verify_threshold()
            };
        let shape = (opts.link_shape && verified)
            .then(|| {
                let (a, b) = (doc, sketches);
                similarity::shape(a.sketch, a.order, b.sketch, b.order)
            })
            .flatten();
        let strong = is_strong(opts, overlap, sentences, resemblance, shape);
        // An exception verifies at the threshold exactly.
        let excerpt_of_doc = verified
            && opts.excerpts
            && overlap == opts.verify_threshold()
            && sketches.sketch.len() < doc.sketch.len()
            && crate::fingerprint::verified_as_excerpt(opts, doc, sketches)
                .is_some_and(|r| r.is_ok());
        let contained = (!verified && sentences > 0.0)
            .then(|| sorted_intersection(&fps.sketch, sketches.sketch))
            .filter(|s| s.len() >= 2 && 2 * s.len() >= sketches.sketch.len());
        // Only where a site's template can be left out (pages of a host with a template seen).
        let templated = fps.host_seen.is_some() || !template.is_empty();
        let shared = if verified && opts.site_knowledge && templated {
            sorted_intersection(&fps.sketch, whole.sketch)
        } else {
            Vec::new()
        };
        Checked {
            id,
            similar_id,
            overlap,
            weight_distance: keys::weight_distance(&fps.key_weights, weights),
            strong,
            left_out_only,
            shared,
            excerpt_of_doc,
            contained,
            standing: Standing::default(),
        }
    }

    /// `fps` checked against a stored record.
    pub(super) fn of(
        opts: &crate::options::Options,
        fps: &Fingerprints,
        rec: &schema::DocRecord,
    ) -> Checked {
        let mut c = Checked::new(
            opts,
            fps,
            rec.id.clone(),
            rec.similar_id,
            super::record_sketches(rec),
            &rec.key_weights,
            (rec.url.as_deref(), &rec.template),
        );
        if opts.originals {
            // A citation counts between two sites only: a copier's own pages (a re-crawl of
            // its URL, another page of its site) do not make it the source.
            let elsewhere = || match (fps.host_key, rec.url.as_deref()) {
                (Some(mine), Some(url)) => crate::text::cites::host_key(url) != Some(mine),
                _ => true,
            };
            let cited_now = rec
                .url
                .as_deref()
                .filter(|_| !fps.cites.is_empty())
                .map(crate::text::cites::url_key)
                .filter(|k| fps.cites.binary_search(k).is_ok())
                .filter(|_| elsewhere());
            c.standing = Standing {
                dated: rec.dated(),
                cited: rec.cited,
                cited_now,
                cites_doc: fps.url_key.is_some_and(|k| rec.cites.contains(&k)) && elsewhere(),
            };
        }
        c
    }
}

/// Whether a verified candidate is a strong link, which joins its cluster under tight clusters
/// even when the cluster's first document does not verify: similarity ≥ [`STRONG_LINK`], or
/// (stores with `strong_resemblance_pct`) a 4-gram resemblance that reaches it and exceeds
/// the sentence overlap by [`crate::options::STRONG_GAP`]: a copy edited inside its
/// sentences, where a window overlapping a third document shares whole sentences. In those
/// stores a link by similarity whose sentence overlap exceeds its resemblance by more than
/// [`crate::options::WINDOW_GAP`] is such a window, not strong. In stores with `link_shape`
/// (`shape` given), a link whose shared sentences sit as a copy's do is strong
/// ([`similarity::Shape::copy`]), and one that sits as two windows' do is not strong by
/// similarity ([`similarity::Shape::window`]).
fn is_strong(
    opts: &crate::options::Options,
    similarity: f64,
    sentences: f64,
    resemblance: f64,
    shape: Option<similarity::Shape>,
) -> bool {
    let by_resemblance = opts.strong_resemblance_pct > 0;
    let window =
        by_resemblance && resemblance > 0.0 && sentences - resemblance > crate::options::WINDOW_GAP
            || shape.is_some_and(|s| s.window());
    (similarity >= STRONG_LINK && !window)
        || (by_resemblance
            && resemblance >= f64::from(opts.strong_resemblance_pct) / 100.0
            && resemblance - sentences >= crate::options::STRONG_GAP)
        || shape.is_some_and(|s| s.copy())
}

/// Everything a decision needs, computed without writing.
#[derive(Debug, Default)]
pub(super) struct Lookup {
    pub(super) candidates: Vec<Candidate>,
    /// Matched roots and their records.
    pub(super) roots: BTreeMap<u64, ClusterRecord>,
    /// Candidates that did not verify but are at least half in the document: (id, their
    /// cluster's root, the sentences shared). Read only to report composites.
    pub(super) contained: Vec<(String, u64, Vec<u32>)>,
}

/// The values in both of two sorted lists.
pub(super) fn sorted_intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// A stored document an algorithm proposes, before verification.
struct Proposal {
    seq: u64,
    algo: Algo,
    /// The algorithm's own score (shared hashes, bands or key weight; simhash closeness).
    score: f64,
    /// The simhash distance (simhash proposals only).
    distance: Option<u32>,
    /// The weight check's bar (exact-key algorithms with one).
    bar: Option<f64>,
}

impl Proposal {
    fn new(seq: u64, algo: Algo, score: f64) -> Proposal {
        Proposal {
            seq,
            algo,
            score,
            distance: None,
            bar: None,
        }
    }
}

/// What verifying one proposed document found.
struct Verdict {
    id: String,
    /// Its cluster's root; `None` when it did not verify.
    root: Option<u64>,
    overlap: f64,
    weight_distance: f64,
    strong: bool,
    left_out_only: bool,
    shared: Vec<u32>,
    standing: Standing,
}

/// The root of each cluster id met during one lookup, with its record: the store does not
/// change during one lookup, and a copy's sentence hashes mostly name one cluster (a `query
/// --batch` of copies read each cluster record 7 times instead of once).
struct Roots<'a> {
    db: &'a Fpdb,
    found: HashMap<u64, (u64, ClusterRecord)>,
}

impl<'a> Roots<'a> {
    fn new(db: &'a Fpdb) -> Roots<'a> {
        Roots {
            db,
            found: HashMap::default(),
        }
    }

    fn find(&mut self, id: u64) -> Result<(u64, ClusterRecord)> {
        if let Some(r) = self.found.get(&id) {
            return Ok(r.clone());
        }
        let r = self.db.find(id)?;
        self.found.insert(id, r.clone());
        self.found.insert(r.0, r.clone());
        Ok(r)
    }
}

impl Fpdb {
    /// A stored candidate (`seq`) checked against `fps`: its record read (and counted).
    pub(super) fn check_stored(&self, fps: &Fingerprints, seq: u64) -> Result<Checked> {
        self.check_stored_in(fps, seq, None)
    }

    /// [`Fpdb::check_stored`], the record taken from `records` (read once for a whole batch)
    /// when it is there; counted as read either way.
    pub(super) fn check_stored_in(
        &self,
        fps: &Fingerprints,
        seq: u64,
        records: Option<&HashMap<u64, schema::DocRecord>>,
    ) -> Result<Checked> {
        LookupCounters::add(&self.reads.records_read, 1);
        match records.and_then(|r| r.get(&seq)) {
            Some(rec) => Ok(Checked::of(&self.opts, fps, rec)),
            None => Ok(Checked::of(&self.opts, fps, &self.doc(seq)?)),
        }
    }

    pub(super) fn lookup(&self, fps: &Fingerprints) -> Result<Lookup> {
        self.lookup_in(fps, None)
    }

    /// [`Fpdb::lookup`], its postings and simhash tables from what [`Fpdb::read_many`] read
    /// when given.
    fn lookup_in(&self, fps: &Fingerprints, read: Option<&ReadMany>) -> Result<Lookup> {
        LookupCounters::add(&self.reads.lookups, 1);
        let (holders, simhash) = self.holders_and_neighbours(fps, read)?;
        self.lookup_with(fps, &holders, simhash, &mut |seq| {
            self.check_stored(fps, seq)
        })
    }
    /// The decision inputs of `fps` from what was found for it: the holder of each sentence
    /// hash and band key (`holders`), the simhash neighbours (`simhash`: seq -> distance) and
    /// `verify`, which checks a candidate against `fps`. The
    /// one place the rules live: [`Fpdb::lookup`] feeds it from the store, a batch from the
    /// store plus the documents of the batch decided before.
    pub(super) fn lookup_with(
        &self,
        fps: &Fingerprints,
        holders: &super::postings::Holders,
        mut simhash: BTreeMap<u64, u32>,
        verify: &mut dyn FnMut(u64) -> Result<Checked>,
    ) -> Result<Lookup> {
        // Bounded where it was read; bounded again here, where the rules live (a no-op then).
        super::postings::bound_simhash(&mut simhash);
        let mut roots = Roots::new(self);
        let mut proposals = self.proposals(fps, holders, simhash, &mut roots)?;
        if let Some(whole) = &fps.whole {
            // A page with lines left out as furniture: what its whole page is posted under
            // proposes too (a page of its site fingerprinted before they were known; the
            // verification leaves them out of it).
            proposals.extend(self.proposals(whole, holders, BTreeMap::new(), &mut roots)?);
        }
        let min_overlap = self.opts.verify_threshold();
        let mut lk = Lookup::default();
        let verdicts = self.verified(proposals, verify, &mut roots, min_overlap, &mut lk)?;
        for c in &lk.candidates {
            if let std::collections::btree_map::Entry::Vacant(e) = lk.roots.entry(c.root) {
                e.insert(roots.find(c.root)?.1);
            }
        }
        if self.opts.tight_clusters && min_overlap > 0.0 {
            Self::drop_loose_clusters(&mut lk, &verdicts, verify, min_overlap)?;
        }
        if self.opts.site_knowledge {
            lk.left_out_joins_one();
        }
        lk.candidates.sort_by(|a, b| {
            b.overlap
                .total_cmp(&a.overlap)
                .then(b.score.total_cmp(&a.score))
                .then(a.seq.cmp(&b.seq))
        });
        Ok(lk)
    }

    /// Candidate collection: every stored document an algorithm proposes for `fps`, in the
    /// order they are verified (nshash per cluster, minhash, the exact-key algorithms,
    /// simhash); a document may be proposed by several.
    fn proposals(
        &self,
        fps: &Fingerprints,
        holders: &super::postings::Holders,
        simhash: BTreeMap<u64, u32>,
        roots: &mut Roots<'_>,
    ) -> Result<Vec<Proposal>> {
        let mut raw = Vec::new();
        // nshash: each sentence hash names its oldest holder; count shared hashes per current
        // cluster.
        let mut per_root: BTreeMap<u64, (usize, BTreeMap<u64, usize>)> = BTreeMap::new();
        for h in &fps.nshash {
            if let Some(&super::postings::Holder { seq, cluster }) = holders.get(h) {
                let (root, _) = roots.find(cluster)?;
                let e = per_root.entry(root).or_default();
                e.0 += 1;
                *e.1.entry(seq).or_default() += 1;
            }
        }
        let need = self.opts.nshash_min_shared.min(fps.nshash.len()).max(1);
        let total = fps.nshash.len().max(1) as f64;
        for (_, (count, seqs)) in per_root {
            if count >= need {
                for (seq, shared) in seqs {
                    raw.push(Proposal::new(seq, Algo::Nshash, shared as f64 / total));
                }
            }
        }
        // minhash: each band key names its oldest holder; one shared band makes a candidate.
        let mut bands: BTreeMap<u64, usize> = BTreeMap::new();
        for h in &fps.bands {
            if let Some(&super::postings::Holder { seq, .. }) = holders.get(h) {
                *bands.entry(seq).or_default() += 1;
            }
        }
        for (seq, shared) in bands {
            let score = shared as f64 / fps.bands.len() as f64;
            raw.push(Proposal::new(seq, Algo::Minhash, score));
        }
        // Exact-key algorithms: each key names its oldest holder; a holder sharing the
        // algorithm's weight of keys (see `KeyAlgo::need`) is a candidate, and with a weight
        // check one whose weights pass it.
        for algo in &self.opts.key_algos.0 {
            let mine: Vec<u64> = fps
                .keys
                .iter()
                .copied()
                .filter(|&k| keys::owns(algo, k))
                .collect();
            let have: f64 = mine.iter().map(|&k| keys::weight(k)).sum();
            let need = algo.need(have);
            let mut shared: BTreeMap<u64, f64> = BTreeMap::new();
            for &h in &mine {
                if let Some(&super::postings::Holder { seq, .. }) = holders.get(&h) {
                    *shared.entry(seq).or_default() += keys::weight(h);
                }
            }
            for (seq, w) in shared {
                if w >= need {
                    raw.push(Proposal {
                        bar: algo.weight_check(),
                        ..Proposal::new(seq, algo.algo(), w / have)
                    });
                }
            }
        }
        for (seq, d) in simhash {
            raw.push(Proposal {
                distance: Some(d),
                ..Proposal::new(seq, Algo::Simhash, 1.0 - f64::from(d) / 64.0)
            });
        }
        Ok(raw)
    }

    /// Verification: each proposed document checked once against its stored sentence
    /// sketch (`verify`); those that pass (and pass their algorithm's weight check) become
    /// `lk`'s candidates, with their cluster's root. Returns every document's verdict.
    fn verified(
        &self,
        proposals: Vec<Proposal>,
        verify: &mut dyn FnMut(u64) -> Result<Checked>,
        roots: &mut Roots<'_>,
        min_overlap: f64,
        lk: &mut Lookup,
    ) -> Result<HashMap<u64, Verdict>> {
        let mut docs: HashMap<u64, Verdict> = HashMap::default();
        for p in proposals {
            if let std::collections::hash_map::Entry::Vacant(e) = docs.entry(p.seq) {
                let c = verify(p.seq)?;
                // Only a verified candidate's cluster is looked up.
                let root = if min_overlap > 0.0 && c.overlap < min_overlap {
                    None
                } else {
                    LookupCounters::add(&self.reads.verified, 1);
                    let (root, rec) = roots.find(c.similar_id)?;
                    // An excerpt joins the document to its cluster only while alone in it.
                    (!c.excerpt_of_doc || rec.size <= 1).then_some(root)
                };
                if let (None, Some(shared)) = (root, c.contained) {
                    lk.contained
                        .push((c.id.clone(), roots.find(c.similar_id)?.0, shared));
                }
                e.insert(Verdict {
                    id: c.id,
                    root,
                    overlap: c.overlap,
                    weight_distance: c.weight_distance,
                    strong: c.strong,
                    left_out_only: c.left_out_only,
                    shared: c.shared,
                    standing: c.standing,
                });
            }
            let v = &docs[&p.seq];
            let Some(root) = v.root else {
                continue;
            };
            if p.bar.is_some_and(|a| v.weight_distance >= a) {
                continue;
            }
            lk.candidates.push(Candidate {
                seq: p.seq,
                id: v.id.clone(),
                algo: p.algo,
                score: p.score,
                distance: p.distance,
                overlap: v.overlap,
                strong: v.strong,
                left_out_only: v.left_out_only,
                shared: v.shared.clone(),
                root,
                standing: v.standing,
            });
        }
        Ok(docs)
    }

    /// Tight clusters: a cluster counts only when the document also verifies against its
    /// first document, or links strongly to a member (is a copy of it): no chain of weaker
    /// links through a third document joins two that differ.
    fn drop_loose_clusters(
        lk: &mut Lookup,
        verdicts: &HashMap<u64, Verdict>,
        verify: &mut dyn FnMut(u64) -> Result<Checked>,
        min_overlap: f64,
    ) -> Result<()> {
        let mut loose = Vec::new();
        for (&root, rec) in &lk.roots {
            if lk.candidates.iter().any(|c| c.root == root && c.strong) {
                continue;
            }
            let overlap = match verdicts.get(&rec.first_seq) {
                Some(v) => v.overlap,
                None => verify(rec.first_seq)?.overlap,
            };
            if overlap < min_overlap {
                loose.push(root);
            }
        }
        for root in loose {
            lk.roots.remove(&root);
        }
        lk.candidates.retain(|c| lk.roots.contains_key(&c.root));
        Ok(())
    }

    /// The matches to report and store, best first: at most [`MAX_MATCHES`], plus the best
    /// candidate of any matched cluster not among them, so the stored matches keep every link
    /// that joined clusters (splits re-derive clusters from them).
    pub(super) fn matches(&self, lk: &Lookup) -> (Vec<Match>, Vec<StoredMatch>) {
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
                algo: c.algo,
                score: c.score,
                overlap: c.overlap,
            });
        }
        (out, stored)
    }
}
