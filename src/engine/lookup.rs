//! Candidate lookup and verification: sentence hashes name their oldest holder, simhash
//! neighbours come from the permuted tables; every candidate is verified against its stored
//! sketch. Never writes.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;

pub(super) use super::checked::{sorted_intersection, Checked, Standing};
use super::finder::Finder;
use super::furniture::SeenInBatch;
use super::postings::ReadMany;
use super::records::Records;
use super::{LookupCounters, Match, MAX_MATCHES};
use crate::error::Result;
use crate::fingerprint::{keys, Fingerprints};
use crate::options::Algo;
use crate::store::schema::{self, ClusterRecord, DocRecord, StoredMatch};

/// A candidate stored document found by lookup.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) seq: u64,
    pub(super) id: String,
    pub(super) overlap: f64,
    pub(super) strong: bool,
    /// It verified only with its site's template lines left out ([`Checked::left_out_only`]).
    pub(super) left_out_only: bool,
    /// It shares only lines the document's host showed before ([`Checked::host_lines_only`]).
    pub(super) host_lines_only: bool,
    /// The sentences it shares with the document ([`Checked::shared`]).
    pub(super) shared: Vec<u32>,
    /// The document is its excerpt ([`Checked::doc_is_excerpt`]).
    pub(super) excerpt: bool,
    pub(super) algo: Algo,
    pub(super) score: f64,
    pub(super) distance: Option<u32>,
    pub(super) root: u64,
    pub(super) standing: Standing,
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
    /// Roots joined through an excerpt as copies of the document's opening
    /// ([`Finder::all_excerpts_of_doc`]: every member verified as its excerpt or as a strong
    /// copy of one). Tight clusters keep them whatever their first document.
    pub(super) openings: BTreeSet<u64>,
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

/// A stored document's record by its seq (a store's, or one of the batch being decided).
pub(super) type RecordOf<'a> = &'a mut dyn FnMut(u64) -> Result<DocRecord>;

/// What verifying one proposed document found.
pub(super) struct Verdict {
    /// Its cluster's root; `None` when it did not verify (or joins no cluster through it).
    pub(super) root: Option<u64>,
    /// Its check against the document.
    pub(super) checked: Checked,
}

/// The most documents a cluster of excerpts may hold for a document to join it through one
/// of them ([`Finder::all_excerpts_of_doc`]): each is read and verified.
const EXCERPT_CLUSTER_MAX: u64 = 8;

/// The root of each cluster id met during one lookup, with its record: the store does not
/// change during one lookup, and a copy's sentence hashes mostly name one cluster (a `query
/// --batch` of copies read each cluster record 7 times instead of once).
struct Roots<'a> {
    db: Records<'a>,
    found: HashMap<u64, (u64, ClusterRecord)>,
}

impl<'a> Roots<'a> {
    fn new(db: Records<'a>) -> Roots<'a> {
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

impl Finder<'_> {
    /// A stored candidate (`seq`) checked against `fps`: its record read (and counted).
    pub(super) fn check_stored(&self, fps: &Fingerprints, seq: u64) -> Result<Checked> {
        self.check_stored_in(fps, seq, None, &SeenInBatch::default())
    }

    /// [`Finder::check_stored`], the record taken from `records` (read once for a whole batch)
    /// when it is there, and what a batch's earlier documents wrote of their sites' lines
    /// (`written`) read before the store; counted as read either way.
    pub(super) fn check_stored_in(
        &self,
        fps: &Fingerprints,
        seq: u64,
        records: Option<&HashMap<u64, schema::DocRecord>>,
        written: &SeenInBatch,
    ) -> Result<Checked> {
        LookupCounters::add(&self.reads.records_read, 1);
        match records.and_then(|r| r.get(&seq)) {
            Some(rec) => self.sites().checked(fps, rec, written),
            None => self
                .sites()
                .checked(fps, &self.records().doc(seq)?, written),
        }
    }

    pub(super) fn lookup(&self, fps: &Fingerprints) -> Result<Lookup> {
        self.lookup_in(fps, None)
    }

    /// [`Finder::lookup`], its postings and simhash tables from what [`Index::read_many`](super::postings::Index::read_many) read
    /// when given.
    fn lookup_in(&self, fps: &Fingerprints, read: Option<&ReadMany>) -> Result<Lookup> {
        LookupCounters::add(&self.reads.lookups, 1);
        let (holders, simhash) = self.index().holders_and_neighbours(fps, read)?;
        let verify = &mut |seq| self.check_stored(fps, seq);
        self.lookup_with(
            fps,
            &holders,
            simhash,
            (verify, &mut |seq| self.records().doc(seq)),
        )
    }
    /// The decision inputs of `fps` from what was found for it: the holder of each sentence
    /// hash and band key (`holders`), the simhash neighbours (`simhash`: seq -> distance) and
    /// `verify`, which checks a candidate against `fps`. The
    /// one place the rules live: [`Finder::lookup`] feeds it from the store, a batch from the
    /// store plus the documents of the batch decided before.
    pub(super) fn lookup_with(
        &self,
        fps: &Fingerprints,
        holders: &super::postings::Holders,
        mut simhash: BTreeMap<u64, u32>,
        (verify, record): (&mut dyn FnMut(u64) -> Result<Checked>, RecordOf<'_>),
    ) -> Result<Lookup> {
        // Bounded where it was read; bounded again here, where the rules live (a no-op then).
        super::postings::bound_simhash(&mut simhash);
        let mut roots = Roots::new(self.records());
        let page = fps.is_page();
        let mut proposals = self.proposals((fps, page), holders, simhash, &mut roots)?;
        if let Some(whole) = &fps.whole {
            // A page with lines left out as furniture: what its whole page is posted under
            // proposes too (a page of its site fingerprinted before they were known; the
            // verification leaves them out of it).
            proposals.extend(self.proposals(
                (whole, page),
                holders,
                BTreeMap::new(),
                &mut roots,
            )?);
        }
        let min_overlap = self.opts.verify_threshold();
        let mut lk = Lookup::default();
        let verdicts = self.verified(
            proposals,
            (&mut *verify, &mut *record),
            &mut roots,
            min_overlap,
            &mut lk,
        )?;
        for c in &lk.candidates {
            if let std::collections::btree_map::Entry::Vacant(e) = lk.roots.entry(c.root) {
                e.insert(roots.find(c.root)?.1);
            }
        }
        if self.opts.tight_clusters && min_overlap > 0.0 {
            self.drop_loose_clusters(&mut lk, &verdicts, (verify, record), min_overlap)?;
        }
        if self.opts.site_knowledge {
            lk.left_out_joins_one();
        }
        if self.opts.excerpts {
            lk.excerpt_joins_one();
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
        (fps, page): (&Fingerprints, bool),
        holders: &super::postings::Holders,
        simhash: BTreeMap<u64, u32>,
        roots: &mut Roots<'_>,
    ) -> Result<Vec<Proposal>> {
        let mut raw = Vec::new();
        // nshash: each sentence hash names its oldest holder; count shared hashes per current
        // cluster.
        let mut per_root: BTreeMap<u64, (usize, BTreeMap<u64, usize>)> = BTreeMap::new();
        for h in &fps.nshash {
            if let Some(holder) = holders.get(h) {
                let (root, _) = roots.find(holder.cluster)?;
                // A page's: a later holder of another cluster shares the hash too (copies of
                // an article's opening cut apart into two clusters by their template lines,
                // the older one not verifying). Texts without URLs keep the oldest only: their
                // copies of one opening verify against each other, and what two clusters of
                // texts hold is more often boilerplate (a signature) than an opening.
                let mut other = None;
                if let Some((seq, cluster)) =
                    holder.next().filter(|_| self.opts.other_holders && page)
                {
                    let (r, _) = roots.find(cluster)?;
                    other = (r != root).then_some((r, seq));
                }
                for (root, seq) in std::iter::once((root, holder.seq)).chain(other) {
                    let e = per_root.entry(root).or_default();
                    e.0 += 1;
                    *e.1.entry(seq).or_default() += 1;
                }
                // And a later holder of the oldest's own cluster, proposed beside it (its
                // hash counted once for the cluster): the oldest may be a page whose template
                // lines keep it from verifying, a later copy in the cluster not.
                if let Some(seq) = holder.same().filter(|_| self.opts.other_holders && page) {
                    *per_root.entry(root).or_default().1.entry(seq).or_default() += 1;
                }
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
        // minhash: each band key names its oldest holder and (`band_holders`) its later ones
        // read; one shared band makes a candidate. A copy whose sentences were cut by a
        // re-wrap may verify against a later holder of its bands and not against the oldest.
        let mut bands: BTreeMap<u64, usize> = BTreeMap::new();
        for h in &fps.bands {
            if let Some(holder) = holders.get(h) {
                *bands.entry(holder.seq).or_default() += 1;
                if self.opts.band_holders {
                    for seq in holder.later() {
                        *bands.entry(seq).or_default() += 1;
                    }
                }
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

    /// Whether every member of root cluster `root` (of `size` documents, `checked` one of
    /// them) verifies against the document only as its excerpt, or is a copy of a member that
    /// does: then the cluster is copies of the document's opening, and the document joins it
    /// as each copy would have joined the document had it come first (an excerpt joins its
    /// article, and a copy of the excerpt joins through it by a strong link). The joining
    /// holds whatever the order the pages came in; a cluster holding anything else (an
    /// article, or a page quoting the same opening: it holds the excerpt, no copy of it) is
    /// not joined through an excerpt. Clusters of more than [`EXCERPT_CLUSTER_MAX`] documents
    /// are not read for it.
    fn all_excerpts_of_doc(
        &self,
        (root, size, checked): (u64, u64, u64),
        (verify, record): (&mut dyn FnMut(u64) -> Result<Checked>, RecordOf<'_>),
        min_overlap: f64,
    ) -> Result<bool> {
        if !self.opts.excerpts || size > EXCERPT_CLUSTER_MAX {
            return Ok(false);
        }
        let members = self.records().members_first(root, size as usize + 1)?;
        if members.len() as u64 != size {
            return Ok(false);
        }
        let (mut excerpts, mut others) = (vec![checked], Vec::new());
        for seq in members.into_iter().filter(|&s| s != checked) {
            let c = verify(seq)?;
            if c.excerpt_of_doc && c.overlap >= min_overlap {
                excerpts.push(seq);
            } else {
                others.push(seq);
            }
        }
        if others.is_empty() {
            return Ok(true);
        }
        if !self.opts.excerpt_copies {
            return Ok(false);
        }
        let excerpts: Vec<DocRecord> = excerpts
            .into_iter()
            .map(&mut *record)
            .collect::<Result<_>>()?;
        for seq in others {
            let rec = record(seq)?;
            let fps = super::read::fingerprints_of(self.opts, &rec);
            let copy = |x: &DocRecord| {
                let c = Checked::of(self.opts, &fps, x);
                c.strong && !c.excerpt_of_doc && !c.doc_is_excerpt
            };
            if !excerpts.iter().any(copy) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Verification: each proposed document checked once against its stored sentence
    /// sketch (`verify`); those that pass (and pass their algorithm's weight check) become
    /// `lk`'s candidates, with their cluster's root. Returns every document's verdict.
    fn verified(
        &self,
        proposals: Vec<Proposal>,
        (verify, record): (&mut dyn FnMut(u64) -> Result<Checked>, RecordOf<'_>),
        roots: &mut Roots<'_>,
        min_overlap: f64,
        lk: &mut Lookup,
    ) -> Result<HashMap<u64, Verdict>> {
        let mut docs: HashMap<u64, Verdict> = HashMap::default();
        for p in proposals {
            if let std::collections::hash_map::Entry::Vacant(e) = docs.entry(p.seq) {
                let mut c = verify(p.seq)?;
                // Only a verified candidate's cluster is looked up.
                let root = if min_overlap > 0.0 && c.overlap < min_overlap {
                    None
                } else {
                    LookupCounters::add(&self.reads.verified, 1);
                    let (root, rec) = roots.find(c.similar_id)?;
                    // An excerpt joins the document to its cluster only while alone in it, or
                    // while every member of it is an excerpt of the document too.
                    let openings = c.excerpt_of_doc
                        && rec.size > 1
                        && self.all_excerpts_of_doc(
                            (root, rec.size, p.seq),
                            (&mut *verify, &mut *record),
                            min_overlap,
                        )?;
                    if openings {
                        lk.openings.insert(root);
                    }
                    let joins = !c.excerpt_of_doc || rec.size <= 1 || openings;
                    joins.then_some(root)
                };
                if let (None, Some(shared)) = (root, c.contained.take()) {
                    lk.contained
                        .push((c.id.clone(), roots.find(c.similar_id)?.0, shared));
                }
                e.insert(Verdict { root, checked: c });
            }
            let Verdict { root, checked: v } = &docs[&p.seq];
            let Some(root) = *root else {
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
                host_lines_only: v.host_lines_only,
                shared: v.shared.clone(),
                excerpt: v.doc_is_excerpt,
                root,
                standing: v.standing,
            });
        }
        Ok(docs)
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
                excerpt: c.excerpt,
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
