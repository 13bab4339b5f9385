//! Late links (stores with `late_links`): what a batch's new furniture changes for the pages
//! stored before it was known. A page is fingerprinted with the furniture its site has shown
//! so far; once lines it holds become furniture, the pages of the clusters that showed them
//! are checked again from their records, those lines left out as their ingest would have left
//! them out had the store known them. A page alone in its cluster is looked up again and
//! joins the one cluster it then links to (late joins); a small cluster whose pages of one
//! host were linked only through those lines is split (late splits); the pages of a small
//! cluster still of two or more are looked up again, and a page alone that one of them then
//! links to (and no other cluster) joins it (gathered: the article a short copy in a template
//! hid from its copies). One page joins one cluster each time: two clusters never merge late.
//! So what a store finds
//! does not hang on whether a page came before or after the pages that taught its site's
//! furniture: `rechecked.rs` lets a later copy find such a page; this lets the page find an
//! earlier one, and parts what the site's template alone had joined.

use super::Writer;
use crate::engine::checked::Checked;
use crate::engine::furniture::{own_page_seq, SeenInBatch, FURNITURE_SENTENCE, OWN_PAGE};
use crate::engine::lookup::Lookup;
use crate::error::Result;
use crate::store::schema::{self, ClusterRecord, DocRecord};
use crate::store::{Batch, Cf, Store};

/// At most this many pages are looked up again after one batch: the pages of the clusters
/// that made its new furniture lines so (at most [`FURNITURE_CLUSTERS`] a line) are few, and
/// a batch that made a whole site's furniture at once is bounded all the same.
///
/// [`FURNITURE_CLUSTERS`]: crate::engine::furniture::FURNITURE_CLUSTERS
const LATE_JOINS_MOST: usize = 256;

/// A cluster of at most this many pages is checked again when lines its pages show become
/// furniture ([`Writer::late_split`]): the clusters two short articles in one template share
/// are small, and a cluster's check reads each member's record.
const SPLIT_MEMBERS_MOST: u64 = 16;

/// Most sentences a page is posted under late ([`Writer::late_keys`]): as many as its ingest
/// keys (the longest `nshash_n` and its opening), at most this.
const LATE_KEYS: usize = 8;

/// A stored page looked up again ([`Writer::late_lookup`]): its record, its cluster (root and
/// record) and what the lookup found.
type LateLookup = (DocRecord, (u64, ClusterRecord), Lookup);

impl Writer<'_> {
    /// After a batch's commit, the clusters and pages that made lines furniture in it (`made`,
    /// as [`Seen::Made`](crate::engine::furniture::Seen::Made) and
    /// [`Seen::Batch`](crate::engine::furniture::Seen::Batch) name them): each cluster of two
    /// to [`SPLIT_MEMBERS_MOST`] pages checked again ([`Writer::late_split`]), then each page
    /// alone in its cluster (or left alone by a split) looked up again without its sentences
    /// of its site's furniture as the store knows it now, and joined to the one cluster it then
    /// links to ([`Writer::late_join`]), then the pages of those clusters still of two or more
    /// looked up so too, each gathering the page alone it links to ([`Writer::late_gather`]).
    /// At most [`LATE_JOINS_MOST`] lookups of each kind. Staged, each read by the next.
    /// Returns how many joined.
    pub(in crate::engine) fn late_links(&mut self, made: &[u64]) -> Result<usize> {
        let mut made = made.to_vec();
        made.sort_unstable();
        made.dedup();
        let (mut alone, mut roots) = (Vec::new(), Vec::new());
        for id in made {
            let found = if id & OWN_PAGE != 0 {
                let seq = own_page_seq(id);
                match self.records().doc(seq) {
                    Ok(rec) => self
                        .records()
                        .current_cluster(rec.similar_id)?
                        .map(|(root, c)| (root, c, Some(seq))),
                    // Removed since.
                    Err(_) => None,
                }
            } else {
                self.records()
                    .current_cluster(id)?
                    .map(|(root, c)| (root, c, None))
            };
            match found {
                Some((_, c, seq)) if c.size == 1 => alone.push(seq.unwrap_or(c.first_seq)),
                Some((root, c, _)) if c.size <= SPLIT_MEMBERS_MOST => roots.push(root),
                _ => {}
            }
        }
        roots.sort_unstable();
        roots.dedup();
        roots.truncate(LATE_JOINS_MOST);
        let mut parted = Vec::new();
        for &root in &roots {
            parted.extend(self.late_split(root)?);
        }
        parted.sort_unstable();
        alone.extend(&parted);
        alone.sort_unstable();
        alone.dedup();
        alone.truncate(LATE_JOINS_MOST);
        let mut joined = 0;
        for &seq in &alone {
            if self.late_join(seq)? {
                joined += 1;
            }
        }
        // Then the pages of the clusters still of two or more, each looked up again, gather
        // a page alone that they now link to.
        let mut looked = 0;
        for root in roots {
            let Some((r, c)) = self.records().current_cluster(root)? else {
                continue;
            };
            if r != root || c.size < 2 || c.size > SPLIT_MEMBERS_MOST {
                continue;
            }
            for seq in self.records().members(root)? {
                if looked == LATE_JOINS_MOST {
                    break;
                }
                looked += 1;
                if self.late_gather(seq, &parted)? {
                    joined += 1;
                }
            }
        }
        crate::engine::LookupCounters::add(&self.reads.late_joins, joined);
        Ok(joined)
    }

    /// Cluster `root` (of two to [`SPLIT_MEMBERS_MOST`] members, held together by their
    /// stored matches) checked again where its site's furniture changed: each stored match
    /// between two of its pages of one host is verified again with the lines of that host now
    /// furniture left out of both, and a match that no longer verifies is dropped. When that
    /// parts the cluster, it is split into the components of the matches that hold (the
    /// component with the oldest page keeps the id, as a removal's split does). Returns the
    /// pages left alone (looked up again by [`Writer::late_links`]).
    fn late_split(&mut self, root: u64) -> Result<Vec<u64>> {
        let Some((r, crec)) = self.records().current_cluster(root)? else {
            return Ok(Vec::new());
        };
        if r != root || crec.size < 2 || crec.size > SPLIT_MEMBERS_MOST {
            return Ok(Vec::new());
        }
        let members = self.records().members(root)?;
        if members.len() as u64 != crec.size {
            return Ok(Vec::new());
        }
        let mut recs = members
            .iter()
            .map(|&s| self.records().doc(s))
            .collect::<Result<Vec<_>>>()?;
        if crate::engine::clusters::components(&recs, &members).len() != 1 {
            return Ok(Vec::new());
        }
        let furniture = recs
            .iter()
            .map(|r| self.furniture_of(r))
            .collect::<Result<Vec<_>>>()?;
        if furniture.iter().all(Vec::is_empty) {
            return Ok(Vec::new());
        }
        let index: std::collections::HashMap<u64, usize> =
            members.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let host = |r: &DocRecord| r.url.as_deref().and_then(crate::text::cites::host_key);
        let judged = judged(&recs, &furniture);
        let mut changed = vec![false; recs.len()];
        for i in 0..recs.len() {
            let Some(mine) = host(&recs[i]) else {
                continue;
            };
            let mut kept = Vec::with_capacity(recs[i].matches.len());
            for m in recs[i].matches.clone() {
                let j = match index.get(&m.seq) {
                    Some(&j) if host(&recs[j]) == Some(mine) => j,
                    _ => {
                        kept.push(m);
                        continue;
                    }
                };
                // A link strong at its ingest is a copy's (an edited repost), which shares the
                // page's furniture and its text alike.
                if (furniture[i].is_empty() && furniture[j].is_empty())
                    || !judged[i]
                    || !judged[j]
                    || m.overlap >= crate::engine::checked::STRONG_LINK
                {
                    kept.push(m);
                    continue;
                }
                if still_linked(&self.opts, &recs, (i, j), &furniture) {
                    kept.push(m);
                } else {
                    changed[i] = true;
                }
            }
            recs[i].matches = kept;
        }
        if !changed.contains(&true) {
            return Ok(Vec::new());
        }
        let comps = crate::engine::clusters::components(&recs, &members);
        if comps.len() < 2 {
            return Ok(Vec::new());
        }
        let mut b = Batch::new();
        for (i, r) in recs.iter().enumerate().filter(|&(i, _)| changed[i]) {
            b.put(Cf::Docs, schema::u64_key(members[i]), schema::encode_doc(r));
        }
        // Read back by the split, which reads its members' records from the store.
        self.store.write(b)?;
        let mut b = Batch::new();
        self.db
            .maintenance()
            .split(root, crec, &members, u64::MAX, &mut b)?;
        self.store.write(b)?;
        crate::engine::LookupCounters::add(&self.reads.late_splits, 1);
        Ok(comps
            .iter()
            .filter(|c| c.len() == 1)
            .map(|c| members[c[0]])
            .collect())
    }

    /// Stored page `seq` looked up again without its sentences of its site's furniture as the
    /// store knows it now (with `template`, in stores with `later_templates`, and of the lines
    /// its site has shown in two clusters or more: its template, as had they been shown
    /// before it): its record, its cluster (root and record) and what the lookup found; None
    /// when it holds no such sentence, or keeps fewer than two beside them.
    fn late_lookup(&mut self, seq: u64, template: bool) -> Result<Option<LateLookup>> {
        let mut rec = self.records().doc(seq)?;
        let StoredLeftOut {
            left_out: furniture,
            furniture: only_furniture,
        } = self.left_out_of(&rec, template)?;
        if self.opts.late_keys && self.opts.nshash && !rec.highs.is_empty() && !furniture.is_empty()
        {
            self.late_keys(seq, &mut rec, &only_furniture)?;
        }
        if furniture.is_empty() || rec.sketch.len() - furniture.len() < 2 {
            return Ok(None);
        }
        let fps = late_fingerprints(&self.opts, &rec, furniture);
        let own = self.records().find(rec.similar_id)?;
        let (holders, simhash) = self.index().holders_and_neighbours(&fps, None)?;
        let gone = DocRecord::default();
        let verify = &mut |s: u64| -> Result<Checked> {
            if s == seq {
                return Ok(Checked::of(&self.opts, &fps, &gone));
            }
            self.finder().check_stored(&fps, s)
        };
        let record = &mut |s: u64| self.records().doc(s);
        let lk = self
            .finder()
            .lookup_with(&fps, &holders, simhash, (verify, record))?;
        Ok(Some((rec, own, lk)))
    }

    /// Stores with `late_keys`: stored page `rec` (at `seq`), every sentence of whose keys is
    /// now its site's furniture (`furniture`, sorted: a page whose longest sentences and
    /// first lines were its template, stored before the template was known), posted under
    /// its other sentences: the first [`LATE_KEYS`] of them as they sit in its text (an
    /// excerpt's sentences, or its article's opening after its template; a copy of the
    /// article is keyed by its opening too), their whole hashes from its record's high
    /// halves. The postings point at its cluster at ingest, as its others do, and its record
    /// names them (a removal withdraws them). Written at once: a later copy finds it by them.
    fn late_keys(&mut self, seq: u64, rec: &mut DocRecord, furniture: &[u32]) -> Result<()> {
        let kept = |h: &u32| furniture.binary_search(h).is_err();
        if rec.highs.len() != rec.sketch.len()
            || rec.order.len() != rec.sketch.len()
            || rec.nshash.iter().any(|&k| kept(&(k as u32)))
        {
            return Ok(());
        }
        let mut at: Vec<usize> = (0..rec.sketch.len())
            .filter(|&i| kept(&rec.sketch[i]))
            .collect();
        // In text order; a page's headings (`HEADING_PLACE`) last.
        at.sort_by_key(|&i| (rec.order[i], i));
        let keys: Vec<u64> = at
            .iter()
            .map(|&i| u64::from(rec.highs[i]) << 32 | u64::from(rec.sketch[i]))
            .filter(|k| !rec.nshash.contains(k))
            .take(LATE_KEYS.min(self.opts.nshash_n + 1))
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        if let Some(filter) = self.store.presence_filter() {
            filter.forget_saved()?;
        }
        let mut b = Batch::new();
        let cluster = schema::u64_key(rec.similar_id);
        for &k in &keys {
            b.put(Cf::Nshash, schema::nshash_key(k, schema::Seq(seq)), cluster);
        }
        rec.nshash.extend(&keys);
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(rec));
        self.store.write(b)?;
        Ok(())
    }

    /// Stored page `seq` (alone in its cluster) looked up again ([`Writer::late_lookup`]);
    /// joined (its cluster merged into the other, its record given the matches) when it links
    /// to exactly one other cluster. Staged, so that the next one reads it.
    fn late_join(&mut self, seq: u64) -> Result<bool> {
        let Some((rec, (own, own_rec), lk)) = self.late_lookup(seq, false)? else {
            return Ok(false);
        };
        let others: Vec<u64> = lk.roots.keys().copied().filter(|&r| r != own).collect();
        let [target] = others[..] else {
            return Ok(false);
        };
        let mut b = Batch::new();
        let mut trec = lk.roots[&target].clone();
        self.late_merge((target, &mut trec), (own, &own_rec), &mut b)?;
        let mut joined = rec;
        joined.matches = self.finder().matches(&lk).1;
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&joined));
        self.store.write(b)?;
        Ok(true)
    }

    /// Member `seq` of a cluster of two pages or more looked up again
    /// ([`Writer::late_lookup`]); when it links to exactly one other cluster, and that is a
    /// page alone (the article a short copy in a template shows, stored after the copy and
    /// not verifying against it through the template's lines), that page joins this cluster,
    /// its record given the matches to the member; not a page in `skip` (sorted: those the
    /// late splits just parted, which the link a split dropped would gather back). The
    /// member is looked up without its template lines too (the lines its site has shown in
    /// two clusters or more, as `rechecked.rs` leaves them out). One page joins one cluster,
    /// as a late join: two clusters never merge. Staged.
    fn late_gather(&mut self, seq: u64, skip: &[u64]) -> Result<bool> {
        let Some((_, (own, mut own_rec), lk)) = self.late_lookup(seq, true)? else {
            return Ok(false);
        };
        let others: Vec<u64> = lk.roots.keys().copied().filter(|&r| r != own).collect();
        let [lone] = others[..] else {
            return Ok(false);
        };
        let lrec = lk.roots[&lone].clone();
        if lrec.size != 1 || skip.binary_search(&lrec.first_seq).is_ok() {
            return Ok(false);
        }
        let mut b = Batch::new();
        self.late_merge((own, &mut own_rec), (lone, &lrec), &mut b)?;
        // The gathered page's record names the member, as a page that links to a cluster
        // at its ingest does: removing the member looks it up again (`clusters.rs`).
        let gathered = lrec.first_seq;
        let mut grec = self.records().doc(gathered)?;
        for m in self.finder().matches(&lk).1 {
            if m.seq == gathered {
                grec.matches.push(schema::StoredMatch { seq, ..m });
            }
        }
        b.put(
            Cf::Docs,
            schema::u64_key(gathered),
            schema::encode_doc(&grec),
        );
        self.store.write(b)?;
        Ok(true)
    }

    /// Root `id` (record `rec`) merged into root `target` ([`Writer::merge_root`]), `target`
    /// taking its waiting citations, `target`'s record put into `b`.
    fn late_merge(
        &mut self,
        (target, trec): (u64, &mut ClusterRecord),
        (id, rec): (u64, &ClusterRecord),
        b: &mut Batch,
    ) -> Result<()> {
        for &k in &rec.pending_cites {
            if !trec.pending_cites.contains(&k)
                && trec.pending_cites.len() < crate::text::cites::MAX_CITES
            {
                trec.pending_cites.push(k);
            }
        }
        self.merge_root((target, trec), (id, rec), b)?;
        b.put(
            Cf::Clusters,
            schema::u64_key(target),
            schema::encode_cluster(trec),
        );
        Ok(())
    }

    /// The sentences of stored page `rec` that its site's lines now furniture hold
    /// ([`FURNITURE_SENTENCE`]), sorted; none for a document without a URL.
    fn furniture_of(&self, rec: &DocRecord) -> Result<Vec<u32>> {
        Ok(self.left_out_of(rec, false)?.furniture)
    }

    /// [`Writer::furniture_of`] (`furniture`), and what a late lookup leaves out
    /// (`left_out`): the furniture, and with `template` (in stores with `later_templates`) the
    /// sentences of the lines its site has shown in two clusters or more (not furniture yet:
    /// its template, which `rechecked.rs` leaves out of a stored page as had its site shown
    /// them before it). Each sentence's standing is read once.
    fn left_out_of(&self, rec: &DocRecord, template: bool) -> Result<StoredLeftOut> {
        let template = template && self.opts.later_templates;
        let mut out = StoredLeftOut::default();
        let Some(site) = rec
            .url
            .as_deref()
            .and_then(|u| crate::text::sites::site_key(u, None))
        else {
            return Ok(out);
        };
        let none = SeenInBatch::default();
        for &h in &rec.sketch {
            match self
                .sites()
                .standing_in(site, FURNITURE_SENTENCE | u64::from(h), &none)?
            {
                Some(true) => {
                    out.furniture.push(h);
                    out.left_out.push(h);
                }
                Some(false) if template => out.left_out.push(h),
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The sentences of a stored page that [`Writer::left_out_of`] found, sorted (as its sketch is).
#[derive(Default)]
struct StoredLeftOut {
    /// Those its late lookup leaves out: furniture, and its template where asked.
    left_out: Vec<u32>,
    /// Those of its site's furniture alone.
    furniture: Vec<u32>,
}

/// Stored page `rec`'s fingerprints without its sentences of `furniture` (sorted), as its
/// ingest would have left them out had the store known them. Its character shingles are of
/// its whole text, furniture and all (a record keeps no text to take them again): it is
/// compared by its sentences.
fn late_fingerprints(
    opts: &crate::options::Options,
    rec: &DocRecord,
    furniture: Vec<u32>,
) -> crate::fingerprint::Fingerprints {
    let mut fps = crate::engine::read::fingerprints_of(opts, rec);
    (fps.sketch, fps.order) =
        crate::engine::compared::sketch_without(rec, &furniture, opts.cut_excerpts);
    if let Some((_, seen)) = &mut fps.host_seen {
        seen.retain(|h| furniture.binary_search(h).is_err());
    }
    fps.furniture = furniture;
    fps.shingles.clear();
    if opts.left_out_figures {
        // Its figures are its whole text's too, the furniture's included.
        fps.figures.clear();
    }
    fps
}

/// Whether each of `recs` (a cluster's members, `furniture` the sentences of each that are
/// its site's furniture) can be judged without its site's furniture: it keeps two sentences
/// or more beside it, or one that no other member holds. A page that keeps one sentence of
/// another member, or none (a teaser of its article on its site: the site's lines and the
/// article's opening), is judged by nothing and keeps its links ([`Writer::late_split`]).
fn judged(recs: &[DocRecord], furniture: &[Vec<u32>]) -> Vec<bool> {
    let mut all: Vec<u32> = furniture.iter().flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    (0..recs.len())
        .map(|k| {
            let kept: Vec<u32> = recs[k]
                .sketch
                .iter()
                .copied()
                .filter(|h| all.binary_search(h).is_err())
                .collect();
            kept.len() >= 2
                || kept.iter().any(|h| {
                    (0..recs.len()).all(|m| m == k || recs[m].sketch.binary_search(h).is_err())
                })
        })
        .collect()
}

/// Whether the stored match between members `i` and `j` of `recs` (two pages of one host)
/// still holds with the sentences of their site's furniture left out of both: either way
/// verified (a teaser verifies as the candidate of its article, not as the document), or one
/// of them holding, beside the furniture, only sentences of the other (a teaser of its article
/// on its site: its opening and the site's lines).
fn still_linked(
    opts: &crate::options::Options,
    recs: &[DocRecord],
    (i, j): (usize, usize),
    furniture: &[Vec<u32>],
) -> bool {
    let mut both = furniture[i].clone();
    both.extend(&furniture[j]);
    both.sort_unstable();
    both.dedup();
    // The records' 4-grams are of the whole texts: they say the two are less alike than
    // without the furniture when no furniture sentence is in both (leaving lines of one only
    // out can only make them more alike), and are kept then; else the two are compared by
    // their sentences.
    let shared = furniture[i]
        .iter()
        .any(|h| recs[j].sketch.binary_search(h).is_ok())
        || furniture[j]
            .iter()
            .any(|h| recs[i].sketch.binary_search(h).is_ok());
    let holds = |a: usize, b: usize| {
        let mut fps = late_fingerprints(opts, &recs[a], both.clone());
        if !shared {
            fps.shingles.clone_from(&recs[a].shingles);
        }
        Checked::of(opts, &fps, &recs[b]).overlap >= opts.verify_threshold()
    };
    let within = |a: usize, b: usize| {
        let mut own = recs[a]
            .sketch
            .iter()
            .filter(|h| both.binary_search(h).is_err())
            .peekable();
        own.peek().is_some() && own.all(|h| recs[b].sketch.binary_search(h).is_ok())
    };
    holds(i, j) || holds(j, i) || within(i, j) || within(j, i)
}

#[cfg(test)]
mod tests {
    use super::{judged, still_linked};
    use crate::options::Options;
    use crate::store::schema::DocRecord;

    /// A page of `news.example` whose sentence sketch is `sketch` (sorted here), placed in
    /// text order.
    fn page(id: &str, sketch: &[u32]) -> DocRecord {
        let mut sketch = sketch.to_vec();
        sketch.sort_unstable();
        DocRecord {
            id: id.into(),
            url: Some(format!("https://news.example/{id}")),
            order: (0..sketch.len()).map(|i| (i * 16) as u8).collect(),
            sketch,
            ..DocRecord::default()
        }
    }

    #[test]
    fn a_page_is_judged_by_sentences_of_its_own_only() {
        // 1..=4: the site's furniture, on every page.
        let furniture = [1, 2, 3, 4];
        let recs = [
            // An article: the furniture and its own text.
            page("article", &[1, 2, 3, 4, 10, 11, 12]),
            // Its teaser on the site: the furniture and the article's opening.
            page("teaser", &[1, 2, 3, 4, 10]),
            // A page whose extraction kept the furniture only.
            page("template", &[1, 2, 3, 4]),
            // Another short article in the template: one sentence of its own.
            page("other", &[1, 2, 3, 4, 20]),
        ];
        let f: Vec<Vec<u32>> = recs.iter().map(|_| furniture.to_vec()).collect();
        assert_eq!(judged(&recs, &f), [true, false, false, true]);
    }

    #[test]
    fn a_link_holds_without_the_furniture_by_sentences_or_as_a_teaser() {
        let opts = Options::default();
        let furniture = vec![1, 2, 3, 4];
        let recs = [
            page("article", &[1, 2, 3, 4, 10, 11, 12]),
            page("repost", &[1, 2, 3, 4, 10, 11, 12, 13]),
            page("teaser", &[1, 2, 3, 4, 10]),
            page("other", &[1, 2, 3, 4, 20, 21, 22]),
        ];
        let f = vec![furniture; recs.len()];
        // 3 of 4 sentences shared without the furniture: verified either way.
        assert!(still_linked(&opts, &recs, (1, 0), &f));
        // The teaser holds only the article's opening beside the furniture.
        assert!(still_linked(&opts, &recs, (2, 0), &f));
        assert!(still_linked(&opts, &recs, (0, 2), &f));
        // Two articles that shared the template only.
        assert!(!still_linked(&opts, &recs, (3, 0), &f));
        assert!(!still_linked(&opts, &recs, (0, 3), &f));
        // With no furniture left out it is the plain comparison: 4 of 7 shared, not verified.
        let none = vec![Vec::new(); recs.len()];
        assert!(!still_linked(&opts, &recs, (3, 0), &none));
    }
}
