//! The store described for the people who run the crawl (`fpdb report`, serve's page): its
//! figures, how big the clusters are, how many documents of each day (published, else ingested) are duplicates,
//! which hosts' pages copy which, and the largest clusters with their members.
//!
//! One pass over the cluster records and one over the document records, a chunk at a time
//! ([`ReportScan::step`]): memory holds counters per size class and per day, the top clusters
//! and two bounded heavy-hitter tables of hosts ([`Heavy`]), never a list of every document,
//! so a store of 10^7 documents is reported in the memory of one of 10^4. Between chunks the
//! caller may release the store (serve lets writes through).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use serde::Serialize;

use super::heavy::Heavy;
use super::read::stored_match;
use super::searcher::Searcher;
use super::Match;
use crate::error::Result;
use crate::store::schema::{self, DocRecord};
use crate::store::{Cf, Store};
use crate::text::cites::host;

/// What a report lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportOptions {
    /// Largest clusters listed (of two documents or more).
    pub largest: usize,
    /// Members listed per cluster.
    pub members: usize,
    /// Hosts and host pairs listed.
    pub hosts: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            largest: 20,
            members: 10,
            hosts: 20,
        }
    }
}

/// The report of a store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// When it was made, seconds since the epoch.
    pub generated: u64,
    /// Documents stored.
    pub documents: u64,
    /// Clusters.
    pub clusters: u64,
    /// Documents that are not their cluster's original (documents - clusters).
    pub duplicates: u64,
    /// `duplicates` / `documents` (0 for an empty store).
    pub duplicate_share: f64,
    /// Bytes on disk.
    pub disk_bytes: u64,
    /// Clusters by size, in classes of powers of two (1, 2–3, 4–7, …), the empty ones left out.
    pub cluster_sizes: Vec<SizeClass>,
    /// Documents and duplicates per day they were published (their ingest day when their input
    /// gave no date; UTC), oldest first.
    pub days: Vec<Day>,
    /// Hosts whose pages are near-duplicates of another host's.
    pub hosts: Hosts,
    /// The largest clusters of two documents or more, largest first.
    pub largest: Vec<ClusterDetail>,
}

/// Clusters whose size is in `from..=to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizeClass {
    /// Smallest size of the class.
    pub from: u64,
    /// Largest size of the class.
    pub to: u64,
    /// Clusters of a size in the class.
    pub clusters: u64,
    /// Their documents.
    pub documents: u64,
}

/// One day (of publication, else of ingest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Day {
    /// The day, `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Documents published that day (ingested that day, without a date), still stored.
    pub documents: u64,
    /// Of those, the duplicates: members that are not their cluster's original.
    pub duplicates: u64,
}

/// Near-duplicates across hosts. A duplicate (a document that matched a stored one at ingest)
/// is counted between its host and the host of the document it matched best; the later of the
/// two by publication time (else ingest time) is the copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hosts {
    /// Documents with a URL that names a host.
    pub documents_with_host: u64,
    /// Duplicates whose match is on another host.
    pub across_hosts: u64,
    /// Duplicates whose match is on the same host.
    pub within_host: u64,
    /// Hosts with the most pages copied from another host's, most first.
    pub copying: Vec<HostCount>,
    /// (copy's host, source's host) pairs with the most pages, most first.
    pub pairs: Vec<HostPair>,
    /// Whether the counts are exact; when not, each may be low by at most `max_undercount`
    /// (the tables keep the heaviest hosts of a stream too large to count whole).
    pub exact: bool,
    /// How much any count may be low.
    pub max_undercount: u64,
}

/// A host and its pages copied from other hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    /// The host.
    pub host: String,
    /// Its pages that are near-duplicates of another host's earlier page.
    pub pages: u64,
}

/// Two hosts and the pages one copied from the other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostPair {
    /// The host of the later pages.
    pub copy: String,
    /// The host of the earlier pages.
    pub source: String,
    /// Pages of `copy` near-duplicates of a page of `source`.
    pub pages: u64,
}

/// A cluster with its members as a person reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterDetail {
    /// Its current similar_id.
    pub similar_id: u64,
    /// Documents in it.
    pub size: u64,
    /// Its original's id.
    pub original: String,
    /// Its first members in ingest order (and its original, wherever it is).
    pub members: Vec<Member>,
    /// Whether `members` lists fewer documents than `size`.
    pub truncated: bool,
}

/// Longest title a member lists, in characters: a longer one is cut and ends with `…` (ten
/// documents with titles of 2 million characters made a 3 MB store's report 63 MB).
pub const MAX_TITLE_CHARS: usize = 300;

/// Longest id a member list names (a member's, and those of its links), in characters: cut as
/// titles are. Ids of up to 8,192 bytes, repeated in every member's links, made one list of
/// 1,000 members 172 MB; the cluster's plain list of ids (`Searcher::cluster_members`, serve's
/// `GET /v1/clusters/{similar_id}`) names them whole.
pub const MAX_LINK_ID_CHARS: usize = 256;

/// Longest URL a member lists, in characters (cut as titles are).
pub const MAX_URL_CHARS: usize = 2000;

/// `s` cut to at most `max` characters, the last of them `…` when it was cut (titles, URLs and
/// ids in lists that repeat them).
pub fn cut(s: String, max: usize) -> String {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if s[at..].chars().nth(1).is_some() => {
            let mut t = s[..at].to_string();
            t.push('…');
            t
        }
        _ => s,
    }
}

/// A member of a cluster and how it was linked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    /// External id.
    pub id: String,
    /// Source URL, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Title, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Whether it is the cluster's original.
    pub original: bool,
    /// When it was published, seconds since the epoch, as its input said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<i64>,
    /// When it was ingested, seconds since the epoch.
    pub ingested: u64,
    /// The stored documents it matched when it was ingested (what linked it): empty for the
    /// document that started the cluster.
    pub links: Vec<Match>,
}

/// Counters of each host table (~10 MB at most): exact while fewer distinct hosts or pairs
/// come; beyond, any one holding more than 1/65,537 of the duplicates across hosts is kept.
const HOST_COUNTERS: usize = 1 << 16;
/// Documents' hosts and times remembered for the matches that name them; cleared when full.
const HOST_CACHE: usize = 1 << 18;
/// Records read per step.
const CHUNK: usize = 4096;

/// Where a scan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading cluster records from this cluster id on.
    Clusters(u64),
    /// Reading document records from this seq on.
    Docs(u64),
    /// Every record read.
    Done,
}

/// A report being made, a chunk of records per [`ReportScan::step`].
#[derive(Debug)]
pub struct ReportScan {
    opts: ReportOptions,
    phase: Phase,
    /// (clusters, documents) per size class: class i holds sizes 2^i ..= 2^(i+1) - 1.
    sizes: [(u64, u64); 64],
    /// The largest clusters so far: (size, Reverse(root)), smallest on top.
    largest: BinaryHeap<Reverse<(u64, Reverse<u64>)>>,
    /// (documents, duplicates) per day since the epoch.
    days: BTreeMap<i64, (u64, u64)>,
    with_host: u64,
    across: u64,
    within: u64,
    copying: Heavy<String>,
    pairs: Heavy<(String, String)>,
    /// seq -> (host, time it is dated by).
    seen: HashMap<u64, (Option<String>, i64)>,
    /// Cluster at ingest -> the seq of its cluster's original now (cleared when it grows past
    /// [`HOST_CACHE`]).
    named: HashMap<u64, u64>,
}

impl ReportScan {
    /// A scan from the start.
    pub fn new(opts: ReportOptions) -> Self {
        ReportScan {
            opts,
            phase: Phase::Clusters(0),
            sizes: [(0, 0); 64],
            largest: BinaryHeap::new(),
            days: BTreeMap::new(),
            with_host: 0,
            across: 0,
            within: 0,
            copying: Heavy::new(HOST_COUNTERS),
            pairs: Heavy::new(HOST_COUNTERS),
            seen: HashMap::new(),
            named: HashMap::new(),
        }
    }

    /// Read the next chunk of records. False once every record has been read.
    pub fn step(&mut self, db: &Searcher<'_>) -> Result<bool> {
        match self.phase {
            Phase::Clusters(from) => self.clusters(db, from)?,
            Phase::Docs(from) => self.docs(db, from)?,
            Phase::Done => return Ok(false),
        }
        Ok(self.phase != Phase::Done)
    }

    fn clusters(&mut self, db: &Searcher<'_>, from: u64) -> Result<()> {
        let recs = db.records().clusters_from(from, CHUNK)?;
        self.phase = match recs.last() {
            Some((last, _)) => last.checked_add(1).map_or(Phase::Docs(0), Phase::Clusters),
            None => Phase::Docs(0),
        };
        for (id, rec) in recs {
            if rec.parent.is_some_and(|p| p != id) || rec.size == 0 {
                continue;
            }
            let class = &mut self.sizes[63 - rec.size.leading_zeros() as usize];
            class.0 += 1;
            class.1 += rec.size;
            if rec.size < 2 {
                continue;
            }
            self.largest.push(Reverse((rec.size, Reverse(id))));
            if self.largest.len() > self.opts.largest {
                self.largest.pop();
            }
        }
        Ok(())
    }

    fn docs(&mut self, db: &Searcher<'_>, from: u64) -> Result<()> {
        let recs = db.records().docs_from(from, CHUNK)?;
        self.phase = match recs.last() {
            Some(&(last, _)) => last.checked_add(1).map_or(Phase::Done, Phase::Docs),
            None => Phase::Done,
        };
        for (seq, rec) in recs {
            self.doc(db, seq, &rec)?;
        }
        Ok(())
    }

    fn doc(&mut self, db: &Searcher<'_>, seq: u64, rec: &DocRecord) -> Result<()> {
        let day = rec.dated().div_euclid(86_400);
        if self.named.len() >= HOST_CACHE {
            self.named.clear();
        }
        let named = match self.named.get(&rec.similar_id) {
            Some(&n) => n,
            None => {
                let n = db.records().find(rec.similar_id)?.1.named();
                self.named.insert(rec.similar_id, n);
                n
            }
        };
        let counts = self.days.entry(day).or_default();
        counts.0 += 1;
        counts.1 += u64::from(named != seq);
        let mine = rec.url.as_deref().and_then(host);
        if mine.is_some() {
            self.with_host += 1;
        }
        if self.seen.len() >= HOST_CACHE {
            self.seen.clear();
        }
        self.seen.insert(seq, (mine.clone(), rec.dated()));
        let Some(best) = rec.matches.first() else {
            return Ok(());
        };
        let Some(mine) = mine else {
            return Ok(());
        };
        let (theirs, their_time) = match self.seen.get(&best.seq) {
            Some(v) => v.clone(),
            None => match db.store.get(Cf::Docs, &schema::u64_key(best.seq))? {
                Some(v) => {
                    let r = schema::decode_doc(&schema::u64_key(best.seq), &v)?;
                    let v = (r.url.as_deref().and_then(host), r.dated());
                    self.seen.insert(best.seq, v.clone());
                    v
                }
                // Removed since: nothing to count it against.
                None => return Ok(()),
            },
        };
        let Some(theirs) = theirs else {
            return Ok(());
        };
        if theirs == mine {
            self.within += 1;
            return Ok(());
        }
        self.across += 1;
        let (copy, source) = if (rec.dated(), seq) >= (their_time, best.seq) {
            (mine, theirs)
        } else {
            (theirs, mine)
        };
        self.copying.add(copy.clone());
        self.pairs.add((copy, source));
        Ok(())
    }

    /// The report, once [`ReportScan::step`] has returned false (it reads the largest
    /// clusters' members and the store's figures).
    pub fn finish(self, db: &Searcher<'_>) -> Result<Report> {
        let stats = db.stats();
        let mut largest: Vec<(u64, u64)> = self
            .largest
            .into_iter()
            .map(|Reverse((size, Reverse(id)))| (size, id))
            .collect();
        largest.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut details = Vec::with_capacity(largest.len());
        for (_, id) in largest {
            if let Some(d) = db.cluster_detail(id, self.opts.members)? {
                details.push(d);
            }
        }
        let n = self.opts.hosts;
        let undercount = self
            .copying
            .max_undercount()
            .max(self.pairs.max_undercount());
        // The figures are those of the cluster scan, not the store's counters: a report made
        // while writes go on between its chunks then still adds up (its size classes sum to
        // its documents and clusters), as of the scan.
        let (clusters, documents) = self
            .sizes
            .iter()
            .fold((0u64, 0u64), |(c, d), s| (c + s.0, d + s.1));
        let duplicates = documents - clusters;
        Ok(Report {
            generated: crate::clock::now(),
            documents,
            clusters,
            duplicates,
            duplicate_share: if documents == 0 {
                0.0
            } else {
                duplicates as f64 / documents as f64
            },
            disk_bytes: stats.disk_bytes,
            cluster_sizes: self
                .sizes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.0 > 0)
                .map(|(i, &(clusters, documents))| SizeClass {
                    from: 1 << i,
                    to: if i == 63 {
                        u64::MAX
                    } else {
                        (1 << (i + 1)) - 1
                    },
                    clusters,
                    documents,
                })
                .collect(),
            days: self
                .days
                .into_iter()
                .map(|(day, (documents, duplicates))| Day {
                    day: chrono::DateTime::from_timestamp(day.saturating_mul(86_400), 0)
                        .map_or_else(|| day.to_string(), |t| t.date_naive().to_string()),
                    documents,
                    duplicates,
                })
                .collect(),
            hosts: Hosts {
                documents_with_host: self.with_host,
                across_hosts: self.across,
                within_host: self.within,
                copying: self
                    .copying
                    .top(n)
                    .into_iter()
                    .map(|(host, pages)| HostCount { host, pages })
                    .collect(),
                pairs: self
                    .pairs
                    .top(n)
                    .into_iter()
                    .map(|((copy, source), pages)| HostPair {
                        copy,
                        source,
                        pages,
                    })
                    .collect(),
                exact: undercount == 0,
                max_undercount: undercount,
            },
            largest: details,
        })
    }
}

impl Searcher<'_> {
    /// The report of this store ([`ReportScan`] from start to end).
    pub fn report(&self, opts: ReportOptions) -> Result<Report> {
        let mut scan = ReportScan::new(opts);
        while scan.step(self)? {}
        scan.finish(self)
    }

    /// The cluster `similar_id` names now, with its first `limit` members in ingest order (and
    /// its original), each with its URL, title, times and what linked it. None when no
    /// cluster has that id or it holds no document.
    pub fn cluster_detail(&self, similar_id: u64, limit: usize) -> Result<Option<ClusterDetail>> {
        let Some((root, crec)) = self.records().current_cluster(similar_id)? else {
            return Ok(None);
        };
        let original = crec.named();
        let mut seqs = self.records().members_first(root, limit)?;
        if !seqs.contains(&original) {
            seqs.push(original);
        }
        let mut ids: HashMap<u64, String> = HashMap::new();
        let mut members = Vec::with_capacity(seqs.len());
        for &seq in &seqs {
            let rec = self.records().doc(seq)?;
            let mut links = Vec::new();
            for m in &rec.matches {
                if let Some(id) = self.records().id_of(m.seq, &ids)? {
                    ids.insert(m.seq, id.clone());
                    links.push(stored_match(cut(id, MAX_LINK_ID_CHARS), m, &rec.excerpts));
                }
            }
            ids.insert(seq, rec.id.clone());
            members.push(Member {
                original: seq == original,
                id: cut(rec.id, MAX_LINK_ID_CHARS),
                url: rec.url.map(|u| cut(u, MAX_URL_CHARS)),
                title: rec.title.map(|t| cut(t, MAX_TITLE_CHARS)),
                published: rec.published,
                ingested: rec.time,
                links,
            });
        }
        Ok(Some(ClusterDetail {
            similar_id: root,
            size: crec.size,
            original: members
                .iter()
                .find(|m| m.original)
                .map(|m| m.id.clone())
                .unwrap_or_default(),
            truncated: (members.len() as u64) < crec.size,
            members,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_titles_are_cut() {
        assert_eq!(cut("abc".into(), 3), "abc");
        assert_eq!(cut("abcd".into(), 3), "ab…");
        assert_eq!(cut("标题很长".into(), 3), "标题…");
        assert_eq!(cut(String::new(), 3), "");
        let long = "长".repeat(2_000_000);
        assert_eq!(cut(long, MAX_TITLE_CHARS).chars().count(), MAX_TITLE_CHARS);
    }

    proptest! {
        /// Against exact counts: a kept count is never high and low by at most
        /// `max_undercount`; a key seen more than n / (cap + 1) times is kept; with nothing
        /// lowered the counts are exact.
        #[test]
        fn heavy_hitters_bound_their_error(keys in proptest::collection::vec(0u8..40, 0..400), cap in 1usize..24) {
            let mut h = Heavy::new(cap);
            let mut exact: HashMap<u8, u64> = HashMap::new();
            for &k in &keys {
                h.add(k);
                *exact.entry(k).or_default() += 1;
            }
            let n = keys.len() as u64;
            prop_assert!(h.max_undercount() <= n / (cap as u64 + 1));
            for (k, &c) in &exact {
                let kept = h.count(k);
                prop_assert!(kept <= c);
                prop_assert!(c - kept <= h.max_undercount());
                if c > n / (cap as u64 + 1) {
                    prop_assert!(kept > 0, "key {} seen {} of {} times", k, c, n);
                }
                if h.max_undercount() == 0 {
                    prop_assert_eq!(kept, c);
                }
            }
            let top = h.top(3);
            prop_assert!(top.windows(2).all(|w| w[0].1 >= w[1].1));
        }
    }
}
