//! The write path of one document: lookup, decision (a fresh cluster, or the oldest matched
//! one with the others merged into it), one staged batch; replace = remove + ingest.

use std::collections::HashMap;

use super::Writer;
use crate::engine::furniture::PageLines;
use crate::engine::lookup::Lookup;
use crate::engine::read::stored_match;
use crate::engine::{Document, IngestResult, OnExisting, Outcome, AUTO_COMMIT_KEYS};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprints;
use crate::options::Options;
use crate::store::schema::{self, ClusterId, ClusterRecord, DocRecord, Original, Seq};
use crate::store::{Batch, Cf, Store};

/// Where a placed document's writes go ([`Writer::place`](super::Writer::place)).
pub(in crate::engine) struct Writes<'a> {
    /// Cluster changes and member entries (read back by later decisions).
    pub(in crate::engine) staged: &'a mut Batch,
    /// The document's ingest time.
    pub(in crate::engine) time: u64,
    /// The digest of its text when its lookups computed it ([`super::batch_lookup::Found`]),
    /// else computed here (stores with `digests`).
    pub(in crate::engine) digest: Option<u64>,
}

impl Writer<'_> {
    /// The work of [`Fpdb::ingest`](crate::Fpdb::ingest).
    pub(in crate::engine) fn ingest(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        if self.store.read_only() {
            return Err(Error::ReadOnly);
        }
        self.begin_write()?;
        let lines = self.sites().page_lines(doc)?;
        let fps = match &lines {
            Some(l) => self.sites().furnished(doc, fps, l),
            None => fps,
        };
        let mut emptied = None;
        let replaced = match self.records().seq_of(&doc.id)? {
            None => false,
            Some(seq) => {
                let rec = self.records().doc(seq)?;
                if on_existing == OnExisting::Skip {
                    let same_text = same_text(&rec, doc, &fps);
                    let similar_id = self.records().find(rec.similar_id)?.0;
                    if let Some(t) = predates(&self.opts, &rec, doc) {
                        self.predate(seq, rec, t)?;
                    }
                    return Ok(IngestResult::SkippedExisting {
                        id: doc.id.clone(),
                        similar_id,
                        same_text,
                    });
                }
                if same_fingerprints(&rec, &fps) && !self.moves_original(&rec, doc, &fps) {
                    // Unchanged text: the document stays where it is (its cluster, links and
                    // seq); only what was sent with it is updated. A new URL, publication
                    // time or citation may change its cluster's original: that replace is a
                    // removal and an ingest, as a fresh ingest would see it.
                    return self
                        .refresh(seq, rec, doc)
                        .map(|outcome| IngestResult::Added {
                            outcome,
                            replaced: true,
                        });
                }
                // A failure after this point leaves the document removed: a consistent store
                // (the removal is one staged batch), and the input is reported as failed.
                emptied = self.maintenance().remove_record(seq, &rec)?;
                true
            }
        };
        let outcome = self.add(doc, fps, lines.as_ref(), emptied)?;
        if self.store.staged() > AUTO_COMMIT_KEYS {
            self.stage_counters()?;
            self.store.commit()?;
        }
        Ok(IngestResult::Added { outcome, replaced })
    }

    /// The work of [`Fpdb::ingest_document`](crate::Fpdb::ingest_document).
    pub(in crate::engine) fn ingest_document(
        &mut self,
        doc: &Document,
        on_existing: OnExisting,
    ) -> Result<IngestResult> {
        let fps = self.fingerprinter.fingerprint_with(&doc.text, doc.meta());
        self.ingest(doc, fps, on_existing)
    }

    /// Re-store the fields sent with an unchanged document (title, url, description,
    /// keywords); its fingerprints, cluster and stored matches stay.
    pub(in crate::engine) fn refresh(
        &mut self,
        seq: u64,
        mut rec: DocRecord,
        doc: &Document,
    ) -> Result<Outcome> {
        let (root, crec) = self.records().find(rec.similar_id)?;
        rec.url = doc.url.clone();
        rec.title = doc.title.clone();
        rec.description = doc.description.clone();
        rec.keywords = doc.keywords.clone();
        if rec.digest.is_some() {
            rec.digest = Some(doc.digest());
        }
        let duplicate_of = if crec.named() == seq {
            None
        } else {
            Some(self.records().doc(crec.named())?.id)
        };
        let mut matches = Vec::new();
        let none = HashMap::new();
        for m in &rec.matches {
            if let Some(id) = self.records().id_of(m.seq, &none)? {
                matches.push(stored_match(id, m, &rec.excerpts));
            }
        }
        let mut b = Batch::new();
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&rec));
        self.store.write(b)?;
        Ok(Outcome::stored(rec.id, root, duplicate_of, matches))
    }

    /// The stored document at `seq` (`rec`) dated `published`, earlier than it was: its
    /// cluster's original is the earliest of the one it had and this document. Nothing else
    /// of the document changes (its text, cluster and links are the first read's).
    pub(in crate::engine) fn predate(
        &mut self,
        seq: u64,
        mut rec: DocRecord,
        published: i64,
    ) -> Result<()> {
        rec.published = Some(published);
        let (root, mut crec) = self.records().find(rec.similar_id)?;
        crec.original = Original::earliest(crec.original, Some(rec.original(seq)));
        let mut b = Batch::new();
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&rec));
        b.put(
            Cf::Clusters,
            schema::u64_key(root),
            schema::encode_cluster(&crec),
        );
        self.store.write(b)
    }

    /// Whether replacing stored `rec` by `doc` (same fingerprints) changes what its cluster's
    /// original is chosen by: its URL (citations name it), its publication time or the URLs
    /// it cites (stores with `originals`).
    fn moves_original(&self, rec: &DocRecord, doc: &Document, fps: &Fingerprints) -> bool {
        self.opts.originals
            && (rec.url != doc.url || rec.published != doc.published || rec.cites != fps.cites)
    }

    /// Store a document whose id is not stored: look up, decide, write one batch.
    /// `reuse`: an emptied cluster id to take when the document matches nothing.
    /// `lines`: the page's lines, whose standing it changes ([`Sites::seen_lines`](crate::engine::sites::Sites::seen_lines)).
    pub(in crate::engine) fn add(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        lines: Option<&PageLines>,
        reuse: Option<u64>,
    ) -> Result<Outcome> {
        let saved = self.counts;
        let r = self.decide_one(doc, fps, lines, reuse);
        if r.is_err() {
            self.counts = saved;
        }
        r
    }

    /// The decision for new document `me` (its seq and time): a fresh cluster (`reuse`d if
    /// given) when `lk` matched nothing, else the oldest matched root, with every other matched
    /// root merged into it (their member entries move). With `originals` the cluster's original
    /// is the earliest of the joined clusters' originals and `me`.
    fn join(
        &mut self,
        lk: &Lookup,
        (me, fps): (Original, &Fingerprints),
        reuse: Option<u64>,
        batch: &mut Batch,
    ) -> Result<Joined> {
        let seq = me.seq;
        let originals = self.opts.originals;
        let Some(target) = lk.roots.keys().next().copied() else {
            let id = reuse.unwrap_or_else(|| {
                self.counts.next_cluster += 1;
                self.counts.next_cluster - 1
            });
            self.counts.clusters += 1;
            let rec = ClusterRecord {
                parent: None,
                first_seq: seq,
                size: 1,
                original: originals.then_some(me),
                pending_cites: pending(&[], fps, &[]),
            };
            batch.put(
                Cf::Clusters,
                schema::u64_key(id),
                schema::encode_cluster(&rec),
            );
            return Ok(Joined {
                target: id,
                merged: Vec::new(),
                named: Named {
                    seq,
                    previous: None,
                    newly_cited: Vec::new(),
                    cited: false,
                },
            });
        };
        let mut trec = lk.roots[&target].clone();
        trec.size += 1;
        let mut waiting = trec.pending_cites.clone();
        let mut merged = Vec::new();
        for (&id, rec) in lk.roots.iter().skip(1) {
            waiting.extend(&rec.pending_cites);
            self.merge_root((target, &mut trec), (id, rec), batch)?;
            merged.push(id);
        }
        let (previous, newly_cited, cited_by_waiting) = if originals {
            choose_original(lk, &mut trec, me, fps, &waiting)
        } else {
            (None, Vec::new(), false)
        };
        batch.put(
            Cf::Clusters,
            schema::u64_key(target),
            schema::encode_cluster(&trec),
        );
        Ok(Joined {
            target,
            merged,
            named: Named {
                seq: trec.named(),
                previous,
                newly_cited,
                cited: cited_by_waiting,
            },
        })
    }

    /// Root cluster `id` (record `rec`) merged into root `target`, whose record `trec` takes
    /// its size, first document and original (the record of `target` is the caller's to
    /// write): `id` points at `target` and its member entries move there, into `batch`. Its
    /// waiting citations are the caller's.
    pub(in crate::engine) fn merge_root(
        &mut self,
        (target, trec): (u64, &mut ClusterRecord),
        (id, rec): (u64, &ClusterRecord),
        batch: &mut Batch,
    ) -> Result<()> {
        trec.size += rec.size;
        // Ids are not always in age order (a replaced singleton takes its id back): the
        // merged cluster's first document is the oldest of theirs.
        trec.first_seq = trec.first_seq.min(rec.first_seq);
        trec.original = Original::earliest(trec.original, rec.original);
        let moved = ClusterRecord {
            parent: Some(target),
            ..rec.clone()
        };
        batch.put(
            Cf::Clusters,
            schema::u64_key(id),
            schema::encode_cluster(&moved),
        );
        for m in self.records().members(id)? {
            batch.delete(Cf::Members, schema::members_key(ClusterId(id), Seq(m)));
            batch.put(
                Cf::Members,
                schema::members_key(ClusterId(target), Seq(m)),
                Vec::new(),
            );
        }
        self.counts.clusters -= 1;
        Ok(())
    }

    /// New document `seq`'s record, id and index entries (its postings and simhash table
    /// keys, pointing at its cluster at ingest) into `bulk`: all of them follow from the
    /// record, so a batch builds them at its commit, on all cores ([`Writer::place`](super::Writer::place) leaves
    /// them out).
    pub(in crate::engine) fn put_record(&self, seq: u64, rec: &DocRecord, bulk: &mut Batch) {
        let target = schema::u64_key(rec.similar_id);
        for &h in rec.postings() {
            bulk.put(Cf::Nshash, schema::nshash_key(h, Seq(seq)), target);
        }
        if let Some(q) = rec.simhash {
            for key in self.index().table_keys(q, seq) {
                bulk.put(Cf::Simhash, key, Vec::new());
            }
        }
        bulk.put(Cf::DocIds, rec.id.as_bytes(), schema::u64_key(seq));
        bulk.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(rec));
    }

    /// Stored document `seq`'s record, marked cited, into `bulk`.
    pub(in crate::engine) fn put_cited(&self, seq: u64, bulk: &mut Batch) -> Result<()> {
        let mut r = self.records().doc(seq)?;
        r.cited = true;
        bulk.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&r));
        Ok(())
    }

    /// Give new document `doc` (looked up as `lk`) the next seq and its cluster: the cluster
    /// changes and its member entry go to `staged` (read back by later decisions). Returns the
    /// outcome (without `duplicate_of` and `previous_original`), what they name and its record
    /// (for the caller to store under its seq with its id and index entries,
    /// [`Writer::put_record`](super::Writer::put_record)).
    pub(in crate::engine) fn place(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        lk: &Lookup,
        reuse: Option<u64>,
        w: Writes<'_>,
    ) -> Result<(Outcome, Named, DocRecord)> {
        let Writes {
            staged,
            time,
            digest,
        } = w;
        let seq = self.counts.next_seq;
        self.counts.next_seq += 1;
        self.counts.docs += 1;
        let originals = self.opts.originals;
        let published = doc.published.filter(|_| originals);
        // Cited: a document it verified against names its URL.
        let cited = originals && lk.candidates.iter().any(|c| c.standing.cites_doc);
        let me = Original {
            uncited: !cited,
            time: published.unwrap_or(i64::try_from(time).unwrap_or(i64::MAX)),
            seq,
        };
        let Joined {
            target,
            merged,
            named,
        } = self.join(lk, (me, &fps), reuse, staged)?;
        let (matches, stored_matches) = self.finder().matches(lk);
        let excerpts = excerpts_of(&matches, &stored_matches);
        staged.put(
            Cf::Members,
            schema::members_key(ClusterId(target), Seq(seq)),
            Vec::new(),
        );
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
            time,
            bands: fps.bands,
            keys: fps.keys,
            key_weights: fps.key_weights,
            order: fps.order,
            figures: fps.figures,
            published,
            cites: fps.cites,
            cited: cited || named.cited,
            digest: self
                .opts
                .digests
                .then(|| digest.unwrap_or_else(|| doc.digest())),
            template: match fps.host_seen {
                Some((_, seen)) if self.opts.site_templates => seen,
                _ => Vec::new(),
            },
            excerpts,
            highs: fps.highs,
        };
        Ok((
            Outcome {
                id: doc.id.clone(),
                similar_id: Some(target),
                duplicate_of: None,
                previous_original: None,
                composite_of: Vec::new(),
                excerpt_of: Outcome::excerpt_of(&matches),
                matches,
                merged,
            },
            named,
            record,
        ))
    }
}

/// Whether stored `rec` holds the text of `doc` (fingerprinted as `fps`): by its digest when it
/// keeps one, else by its fingerprints.
pub(in crate::engine) fn same_text(rec: &DocRecord, doc: &Document, fps: &Fingerprints) -> bool {
    match rec.digest {
        // A page keeps the digest of its record as read: the same page fetched again with
        // other bytes (another date, another header) is the same text when its fingerprints
        // are the same.
        Some(d) if doc.raw_digest.is_some() => {
            Some(d) == doc.raw_digest
                || d == crate::hash::text_digest(&doc.text)
                || same_fingerprints(rec, fps)
        }
        Some(d) => d == crate::hash::text_digest(&doc.text),
        None => same_fingerprints(rec, fps),
    }
}

/// Whether a document of `docs` has the id of an earlier one of them, or one that `in_last`
/// (the batch before, committed after this one was looked up) holds; with `dated`, only a
/// document with a publication time counts (it may be dated before the other:
/// [`Writer::predate`](super::Writer::predate)). Such a batch is decided one document at a time ([`Fpdb::ingest`](crate::Fpdb::ingest)).
pub(in crate::engine) fn again_in_batch(
    docs: &[&Document],
    in_last: impl Fn(&str) -> bool,
    dated: bool,
) -> bool {
    if dated && docs.iter().all(|d| d.published.is_none()) {
        return false;
    }
    let mut ids = std::collections::HashSet::with_capacity(docs.len());
    docs.iter().any(|d| {
        let again = !ids.insert(d.id.as_str()) || in_last(&d.id);
        again && (!dated || d.published.is_some())
    })
}

/// Whether a stored document has exactly these fingerprints (its text is unchanged for every
/// rule of the store).
pub(in crate::engine) fn same_fingerprints(rec: &DocRecord, fps: &Fingerprints) -> bool {
    rec.nshash == fps.nshash
        && rec.simhash == fps.simhash
        && rec.sketch == fps.sketch
        && rec.order == fps.order
        && rec.shingles == fps.shingles
        && rec.chars == fps.chars
        && rec.bands == fps.bands
        && rec.keys == fps.keys
}

/// What a new document joined ([`Writer::join`](super::Writer::join)).
struct Joined {
    target: u64,
    merged: Vec<u64>,
    named: Named,
}

/// The document `duplicate_of` names for a new document's cluster, after it joined.
pub(in crate::engine) struct Named {
    /// Its seq: the cluster's original (or, without `originals`, first document).
    pub(in crate::engine) seq: u64,
    /// The original this document displaced (it was published earlier, or cited), if it did.
    pub(in crate::engine) previous: Option<u64>,
    /// Members this document cites that no document had cited before: their records are
    /// marked cited.
    pub(in crate::engine) newly_cited: Vec<u64>,
    /// A member cited this document's URL before it came (its record is marked cited).
    pub(in crate::engine) cited: bool,
}

/// The original of cluster `trec` once new document `me` (`fps`) joined it, with `waiting`
/// the citations its clusters were waiting for: the earliest of its originals, the members
/// the document cites (cited from now on) and the document (cited when a member named it
/// before it came, or when a member it verified against cites it). Returns the original it
/// displaced, the members cited for the first time, and whether a waiting citation named it.
fn choose_original(
    lk: &Lookup,
    trec: &mut ClusterRecord,
    mut me: Original,
    fps: &Fingerprints,
    waiting: &[u64],
) -> (Option<u64>, Vec<u64>, bool) {
    let mut cited_by_waiting = false;
    if me.uncited && fps.url_key.is_some_and(|k| waiting.contains(&k)) {
        me.uncited = false;
        cited_by_waiting = true;
    }
    let found: Vec<u64> = lk
        .candidates
        .iter()
        .filter_map(|c| c.standing.cited_now)
        .collect();
    trec.pending_cites = pending(waiting, fps, &found);
    let before = trec.original;
    let mut newly_cited = Vec::new();
    for c in lk
        .candidates
        .iter()
        .filter(|c| c.standing.cited_now.is_some())
    {
        let o = Original {
            uncited: false,
            time: c.standing.dated,
            seq: c.seq,
        };
        trec.original = Original::earliest(trec.original, Some(o));
        if !c.standing.cited && !newly_cited.contains(&c.seq) {
            newly_cited.push(c.seq);
        }
    }
    trec.original = Original::earliest(trec.original, Some(me));
    let previous = before
        .map(|o| o.seq)
        .filter(|&s| Some(s) != trec.original.map(|o| o.seq));
    (previous, newly_cited, cited_by_waiting)
}

/// A cluster's citations still waiting for their page: `waiting` and the URLs `fps` cites,
/// without `fps`'s own URL and the `found` ones (members), each once, at most
/// [`crate::text::cites::MAX_CITES`].
fn pending(waiting: &[u64], fps: &Fingerprints, found: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for &k in waiting.iter().chain(&fps.cites) {
        if Some(k) != fps.url_key
            && !found.contains(&k)
            && !out.contains(&k)
            && out.len() < crate::text::cites::MAX_CITES
        {
            out.push(k);
        }
    }
    out
}

/// The seqs of the matches a new document verified against only as their excerpt, in the
/// order they were matched, once each (`matches` and `stored` are one list, as reported and
/// as stored).
fn excerpts_of(matches: &[crate::engine::Match], stored: &[schema::StoredMatch]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (m, s) in matches.iter().zip(stored) {
        if m.excerpt && !out.contains(&s.seq) {
            out.push(s.seq);
        }
    }
    out
}

/// The publication time of `doc` when it is earlier than that of the stored document of
/// its id, `rec` (stores with `originals`): the same URL fetched twice, the earlier fetch
/// read second. The stored document then keeps the earliest time ([`Writer::predate`](super::Writer::predate)).
pub(in crate::engine) fn predates(opts: &Options, rec: &DocRecord, doc: &Document) -> Option<i64> {
    doc.published.filter(|&t| opts.originals && t < rec.dated())
}
