//! Read paths over the whole store: stored documents, stats, export, clusters. Streaming,
//! with bounded caches.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::searcher::Searcher;
use super::{Cluster, Match, Outcome, Stats, StoredDocument};
use crate::error::Result;
use crate::fingerprint::Fingerprints;
use crate::options::{Algo, Options};
use crate::store::schema::{self, ClusterId, DocRecord, Seq, StoredMatch};
use crate::store::{Cf, Store};

impl Searcher<'_> {
    /// The current similar_id of a cluster id handed out earlier.
    pub fn resolve(&self, similar_id: u64) -> Result<u64> {
        Ok(self.records().find(similar_id)?.0)
    }

    /// Every stored document whose simhash is within k of `q`, as (external id, distance),
    /// ordered by id.
    pub fn simhash_neighbors(&self, q: u64) -> Result<Vec<(String, u32)>> {
        let mut out = Vec::new();
        for (seq, d) in self.index().simhash_candidates(q)? {
            out.push((self.records().doc(seq)?.id, d));
        }
        out.sort();
        Ok(out)
    }

    /// The stored document with external id `id`, if any.
    pub fn stored_document(&self, id: &str) -> Result<Option<StoredDocument>> {
        let Some(seq) = self.records().seq_of(id)? else {
            return Ok(None);
        };
        let rec = self.records().doc(seq)?;
        let (mut matched, mut excerpt_of) = (Vec::new(), None);
        for m in &rec.matches {
            if let Ok(d) = self.records().doc(m.seq) {
                if excerpt_of.is_none() && rec.excerpts.contains(&m.seq) {
                    // As `export` names it: the first still stored ([`stored_match`]).
                    excerpt_of = Some(d.id.clone());
                }
                if !matched.contains(&d.id) {
                    matched.push(d.id);
                }
            }
        }
        let (root, crec) = self.records().find(rec.similar_id)?;
        let duplicate_of = match crec.named() {
            n if n == seq => None,
            n => Some(self.records().doc(n)?.id),
        };
        Ok(Some(StoredDocument {
            similar_id: root,
            duplicate_of,
            dates: Dates::of(&rec),
            fingerprints: fingerprints_of(self.opts, &rec),
            excerpt_of,
            id: rec.id,
            url: rec.url,
            title: rec.title,
            matched_at_ingest: matched,
        }))
    }

    /// The sentence sketch of the stored document with external id `id` (what
    /// [`crate::explain::marked_sentences`] compares a text with), if any: one record read, not
    /// the records of what it matched.
    pub fn sentence_sketch(&self, id: &str) -> Result<Option<Vec<u32>>> {
        match self.records().seq_of(id)? {
            Some(seq) => Ok(Some(self.records().doc(seq)?.sketch)),
            None => Ok(None),
        }
    }

    /// The documents and clusters the store holds (what [`Searcher::stats`] counts, without its
    /// reads of sizes and files).
    pub fn totals(&self) -> (u64, u64) {
        (self.counts.docs, self.counts.clusters)
    }

    /// Store-wide numbers.
    pub fn stats(&self) -> Stats {
        let files = self.store.maintenance();
        Stats {
            documents: self.counts.docs,
            clusters: self.counts.clusters,
            duplicates: self.counts.docs.saturating_sub(self.counts.clusters),
            disk_bytes: files.map_or(0, crate::store::Maintenance::disk_size),
            column_family_bytes: files
                .map(|m| m.cf_sizes().into_iter().collect())
                .unwrap_or_default(),
            simhash_tables: self.perms.len(),
            options: self.opts.clone(),
            rules_version: self.opts.rules_version(),
            presence_filter: self.path.and_then(|dir| {
                crate::store::saved_presence(self.store, dir).map(|(bytes, fit)| {
                    use crate::store::PresenceFit;
                    super::SavedFilter {
                        bytes,
                        current: fit != PresenceFit::No,
                        documents_since: match fit {
                            PresenceFit::Behind { documents, .. } => documents,
                            _ => 0,
                        },
                    }
                })
            }),
        }
    }

    /// Every stored document in ingest order, with its current similar_id, as an [`Outcome`].
    /// Streams: memory stays bounded whatever the store size.
    pub fn export(&self, visit: &mut dyn FnMut(Outcome) -> Result<()>) -> Result<()> {
        self.export_dated(&mut |o, _| visit(o))
    }

    /// [`Searcher::export`], each document with its times ([`Dates`]).
    pub fn export_dated(&self, visit: &mut dyn FnMut(Outcome, Dates) -> Result<()>) -> Result<()> {
        // Caches of cluster roots and of recent ids; cleared when full, so memory stays bounded
        // however many documents the store holds (a miss costs one point lookup).
        const CACHE_MAX: usize = 1 << 20;
        // A similar_id -> its root and the seq the cluster is named by.
        let mut roots: HashMap<u64, (ClusterId, Seq)> = HashMap::new();
        let mut ids: HashMap<u64, String> = HashMap::new();
        let mut records = Vec::new();
        let mut err = None;
        // Collect keys in chunks so no iterator is held while calling back into the store.
        let mut start = schema::u64_key(0).to_vec();
        let end = schema::u64_key(u64::MAX).to_vec();
        loop {
            records.clear();
            self.store.scan(Cf::Docs, &start, &end, &mut |k, v| {
                match schema::decode_doc(k, v) {
                    Ok(r) => records.push((schema::decode_u64(Cf::Docs, k, k).unwrap_or(0), r)),
                    Err(e) => err = Some(e),
                }
                err.is_none() && records.len() < 4096
            })?;
            if let Some(e) = err.take() {
                return Err(e);
            }
            let Some((last, _)) = records.last() else {
                break;
            };
            let next = last.checked_add(1);
            for (seq, rec) in records.drain(..) {
                if ids.len() >= CACHE_MAX {
                    ids.clear();
                }
                if roots.len() >= CACHE_MAX {
                    roots.clear();
                }
                ids.insert(seq, rec.id.clone());
                let (ClusterId(root), Seq(first_seq)) = match roots.get(&rec.similar_id) {
                    Some(r) => *r,
                    None => {
                        let (root, crec) = self.records().find(rec.similar_id)?;
                        let named = (ClusterId(root), Seq(crec.named()));
                        roots.insert(rec.similar_id, named);
                        named
                    }
                };
                let first = if first_seq == seq {
                    None
                } else {
                    Some(self.records().id_of(first_seq, &ids)?.ok_or_else(|| {
                        schema::corrupt(
                            Cf::Docs,
                            &schema::u64_key(first_seq),
                            "referenced document is missing".into(),
                        )
                    })?)
                };
                let mut matches = Vec::new();
                for m in &rec.matches {
                    // A matched document removed (replaced) since is no longer reported.
                    let Some(id) = self.records().id_of(m.seq, &ids)? else {
                        continue;
                    };
                    matches.push(stored_match(id, m, &rec.excerpts));
                }
                let duplicate_of = first.filter(|f| *f != rec.id);
                let dates = Dates::of(&rec);
                visit(Outcome::stored(rec.id, root, duplicate_of, matches), dates)?;
            }
            match next {
                Some(n) => start = schema::u64_key(n).to_vec(),
                None => break,
            }
        }
        Ok(())
    }

    /// The cluster that `similar_id` names now (an id merged into another resolves to that
    /// one): its current similar_id, its size and the ids of its first `limit` documents in
    /// ingest order. None when no cluster has that id or none of its documents is stored.
    pub fn cluster_members(&self, similar_id: u64, limit: usize) -> Result<Option<Cluster>> {
        let Some((root, rec)) = self.records().current_cluster(similar_id)? else {
            return Ok(None);
        };
        let seqs = self.records().members_first(root, limit)?;
        let mut members = Vec::with_capacity(seqs.len());
        for &seq in &seqs {
            members.push(self.records().doc(seq)?.id);
        }
        Ok(Some(Cluster {
            similar_id: root,
            size: rec.size,
            truncated: (members.len() as u64) < rec.size,
            members,
            original: self.records().doc(rec.named())?.id,
        }))
    }

    /// The id of the original of the cluster `similar_id` names now (see
    /// [`Outcome::duplicate_of`]); `None` when it holds no document.
    pub fn original_of(&self, similar_id: u64) -> Result<Option<String>> {
        let (_, rec) = self.records().find(similar_id)?;
        if rec.size == 0 {
            return Ok(None);
        }
        Ok(Some(self.records().doc(rec.named())?.id))
    }

    /// The times of the stored document with external id `id` (None when no document has it).
    pub fn dates(&self, id: &str) -> Result<Option<Dates>> {
        match self.records().seq_of(id)? {
            Some(seq) => Ok(Some(Dates::of(&self.records().doc(seq)?))),
            None => Ok(None),
        }
    }

    /// Where the stored document with external id `id` stands now: its seq, its cluster, and
    /// whether it is that cluster's original (see [`Outcome::duplicate_of`]); None when no
    /// document has that id.
    pub fn standing(&self, id: &str) -> Result<Option<Standing>> {
        let Some(seq) = self.records().seq_of(id)? else {
            return Ok(None);
        };
        let (root, crec) = self.records().find(self.records().doc(seq)?.similar_id)?;
        Ok(Some(Standing {
            seq,
            similar_id: root,
            original: crec.named() == seq,
        }))
    }

    /// The documents stored from seq `since` on (a run's, with `since` its [`Searcher::next_seq`]
    /// at its start) as they stand now: how many are their cluster's original, and how many
    /// are duplicates (members that are not). One scan of their records.
    pub fn originals_since(&self, since: u64) -> Result<(u64, u64)> {
        // Cluster at ingest -> the seq its cluster names now.
        let mut named: HashMap<u64, u64> = HashMap::new();
        let (mut originals, mut duplicates) = (0, 0);
        let mut failed = None;
        let end = schema::u64_key(u64::MAX);
        self.store
            .scan(Cf::Docs, &schema::u64_key(since), &end, &mut |k, v| {
                let mut step = || -> Result<bool> {
                    let seq = schema::decode_u64(Cf::Docs, k, k)?;
                    let rec = schema::decode_doc(k, v)?;
                    let n = match named.get(&rec.similar_id) {
                        Some(&n) => n,
                        None => {
                            let n = self.records().find(rec.similar_id)?.1.named();
                            named.insert(rec.similar_id, n);
                            n
                        }
                    };
                    Ok(n == seq)
                };
                match step() {
                    Ok(true) => originals += 1,
                    Ok(false) => duplicates += 1,
                    Err(e) => {
                        failed = Some(e);
                        return false;
                    }
                }
                true
            })?;
        match failed {
            Some(e) => Err(e),
            None => Ok((originals, duplicates)),
        }
    }

    /// The seq the next stored document gets: documents stored from now on have seqs from
    /// this one on (see [`Standing::seq`]).
    pub fn next_seq(&self) -> u64 {
        self.counts.next_seq
    }

    /// Current clusters with at least `min_size` documents: (similar_id, member ids in ingest
    /// order), by similar_id. Holds every member id in memory.
    pub fn clusters(&self, min_size: usize) -> Result<Vec<(u64, Vec<String>)>> {
        // Roots large enough, from the cluster records (sizes live on roots), so that only
        // their members' ids are held, not every document's.
        let wanted: Option<BTreeSet<u64>> = if min_size > 1 {
            let mut roots = BTreeSet::new();
            let mut err = None;
            self.store
                .scan(Cf::Clusters, &[], &[0xff; 9], &mut |k, v| {
                    match (
                        schema::decode_u64(Cf::Clusters, k, k),
                        schema::decode_cluster(k, v),
                    ) {
                        (Ok(id), Ok(rec)) => {
                            if rec.parent.is_none_or(|p| p == id) && rec.size >= min_size as u64 {
                                roots.insert(id);
                            }
                        }
                        (Err(e), _) | (_, Err(e)) => err = Some(e),
                    }
                    err.is_none()
                })?;
            if let Some(e) = err {
                return Err(e);
            }
            Some(roots)
        } else {
            None
        };
        let mut groups: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        self.export(&mut |o| {
            let root = o.similar_id.unwrap_or(0);
            if wanted.as_ref().is_none_or(|w| w.contains(&root)) {
                groups.entry(root).or_default().push(o.id);
            }
            Ok(())
        })?;
        Ok(groups
            .into_iter()
            .filter(|(_, m)| m.len() >= min_size.max(1))
            .collect())
    }
}

/// A [`Match`] from a match stored with a document; an excerpt link when the document is an
/// excerpt of the matched one (`excerpts`: its record's).
pub(super) fn stored_match(id: String, m: &StoredMatch, excerpts: &[u64]) -> Match {
    Match {
        id,
        algo: m.algo,
        score: m.score,
        distance: (m.algo == Algo::Simhash).then(|| ((1.0 - m.score) * 64.0).round() as u32),
        overlap: Some(m.overlap),
        excerpt: excerpts.contains(&m.seq),
    }
}

/// The fingerprints stored in `rec` (what its ingest computed).
pub(super) fn fingerprints_of(opts: &Options, rec: &DocRecord) -> Fingerprints {
    let url = rec.url.as_deref().filter(|_| opts.originals);
    let host = rec.url.as_deref().and_then(crate::text::cites::host_key);
    Fingerprints {
        nshash: rec.nshash.clone(),
        simhash: rec.simhash,
        sketch: rec.sketch.clone(),
        order: rec.order.clone(),
        highs: rec.highs.clone(),
        shingles: rec.shingles.clone(),
        chars: rec.chars,
        bands: rec.bands.clone(),
        keys: rec.keys.clone(),
        key_weights: rec.key_weights.clone(),
        figures: rec.figures.clone(),
        url_key: url.map(crate::text::cites::url_key),
        host_key: host.filter(|_| opts.originals),
        cites: rec.cites.clone(),
        furniture: Vec::new(),
        whole: None,
        left_out: Vec::new(),
        // The sentences its host showed before it, as its ingest had them (stores with
        // `site_templates` keep them).
        host_seen: host
            .filter(|_| !rec.template.is_empty())
            .map(|h| (h, rec.template.clone())),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Document, Fpdb, IngestResult, OnExisting};

    #[test]
    fn a_stored_match_keeps_its_algorithm_name() {
        // Export and replace read matches back from records: every algorithm comes back as
        // itself (punct-title, two-stage and the checked keyword algorithms read as simhash
        // before).
        for algo in crate::options::Algo::ALL {
            let m = crate::store::schema::StoredMatch {
                seq: 1,
                algo,
                score: 0.5,
                overlap: 0.75,
            };
            let read = super::stored_match("a".into(), &m, &[]);
            assert_eq!(read.algo, algo);
            assert_eq!(read.distance.is_some(), algo.name() == "simhash");
        }
    }

    fn similar_id(r: IngestResult) -> u64 {
        match r {
            IngestResult::Added { outcome, .. } => outcome.similar_id.unwrap(),
            IngestResult::SkippedExisting { similar_id, .. } => similar_id,
        }
    }

    #[test]
    fn cluster_members_lists_a_cluster_in_ingest_order() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let text = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。\
                    第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内组织开展的监督检查。";
        let other = "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木。";
        let mut ingest = |id: &str, t: String| {
            similar_id(
                db.ingest_document(&Document::new(id, t), OnExisting::Skip)
                    .unwrap(),
            )
        };
        let a = ingest("a", text.to_string());
        let lone = ingest("lone", other.to_string());
        let b = ingest("b", format!("【转载】\n{text}"));
        let c = ingest("c", format!("{text}\n（来源：网络）"));
        assert_eq!((a, b, c), (a, a, a));
        assert_ne!(a, lone);
        let got = db.searcher().cluster_members(a, 10).unwrap().unwrap();
        assert_eq!(
            (got.similar_id, got.size, got.members, got.truncated),
            (a, 3, vec!["a".to_string(), "b".into(), "c".into()], false)
        );
        let two = db.searcher().cluster_members(a, 2).unwrap().unwrap();
        assert_eq!((two.members.len(), two.truncated), (2, true));
        assert_eq!(
            db.searcher()
                .cluster_members(lone, 10)
                .unwrap()
                .unwrap()
                .members,
            ["lone"]
        );
        assert!(db.searcher().cluster_members(12345, 10).unwrap().is_none());
        assert!(db.maintenance().remove("lone").unwrap());
        assert!(db.searcher().cluster_members(lone, 10).unwrap().is_none());
    }
}

/// A stored document's times, seconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dates {
    /// When it was published, as its input said (a time field, the page's own time, else its
    /// archive record's date); None when the input said nothing readable.
    pub published: Option<i64>,
    /// When it was ingested.
    pub ingested: u64,
    /// The time its cluster's original is chosen by: `published`, else `ingested`.
    pub dated: i64,
}

impl Dates {
    pub(crate) fn of(rec: &schema::DocRecord) -> Dates {
        Dates {
            published: rec.published,
            ingested: rec.time,
            dated: rec.dated(),
        }
    }
}

/// Where a stored document stands ([`Searcher::standing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Its seq: the order documents were stored in ([`Searcher::next_seq`]).
    pub seq: u64,
    /// Its cluster.
    pub similar_id: u64,
    /// It is its cluster's original.
    pub original: bool,
}
