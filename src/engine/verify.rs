//! `verify`: every index and every cluster checked against the document records.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::clusters::Tally;
use super::searcher::Searcher;
use super::Verified;
use crate::error::{Error, Result};
use crate::store::schema::{self, ClusterId, DocRecord, Original, Seq};
use crate::store::{Cf, ReadAhead, Store};
use crate::text::cites::{host_key, url_key};

/// What the pass over the document records saw.
#[derive(Default)]
struct Seen {
    verified: Verified,
    seqs: BTreeSet<u64>,
    with_simhash: u64,
    /// Distinct sentence hashes over all documents (= postings expected).
    postings: u64,
    /// root -> its members counted
    members: BTreeMap<u64, Tally>,
    /// root -> its earliest member by (publication time, seq): its original.
    earliest: BTreeMap<u64, Original>,
    /// Members marked cited: (root, URL key, host key, seq, id).
    cited: Vec<(u64, u64, Option<u64>, u64, String)>,
    /// (root, URL key) -> who cites it there, a few per key.
    citers: HashMap<(u64, u64), Vec<Citer>>,
}

/// A member citing a URL: its seq and its host's key.
type Citer = (u64, Option<u64>);

/// Citers of one URL kept per cluster, one per site: enough to find one other than the cited
/// page itself on another site than its own.
const CITERS_KEPT: usize = 3;

impl Seen {
    /// What document `seq` (`r`, in root `root`) cites, and whether it is marked cited.
    fn note_citations(&mut self, root: u64, seq: u64, r: &DocRecord) {
        let host = r.url.as_deref().and_then(host_key);
        if r.cited {
            if let Some(url) = r.url.as_deref() {
                self.cited
                    .push((root, url_key(url), host, seq, r.id.clone()));
            }
        }
        for &k in &r.cites {
            let v = self.citers.entry((root, k)).or_default();
            if v.len() < CITERS_KEPT && !v.iter().any(|&(_, h)| h.is_some() && h == host) {
                v.push((seq, host));
            }
        }
    }

    /// Every member marked cited is cited by another member of its cluster on another site,
    /// as an ingest marks it and a removal unmarks it (a stale mark would name a copier the
    /// original after its citer was deleted or replaced).
    fn check_citations(&self) -> Result<()> {
        for (root, key, host, seq, id) in &self.cited {
            let citers = self
                .citers
                .get(&(*root, *key))
                .map_or(&[][..], Vec::as_slice);
            let counts =
                |&(s, h): &Citer| s != *seq && (host.is_none() || h.is_none() || h != *host);
            if !citers.iter().any(counts) {
                return Err(bad(format!(
                    "document {id} is marked cited, but no other member of its cluster {root} on another site cites it"
                )));
            }
        }
        Ok(())
    }
}

fn bad(what: String) -> Error {
    Error::Corruption {
        cf: "*",
        key: String::new(),
        detail: what,
    }
}

impl Searcher<'_> {
    /// Read every block of every table file and check its checksum (RocksDB's
    /// `VerifyChecksum`): damage in blocks no lookup or scan reads yet is found too.
    pub fn verify_checksums(&self) -> Result<()> {
        self.store
            .maintenance()
            .map_or(Ok(()), crate::store::Maintenance::verify_checksums)
    }

    /// Check that every index agrees with the document records and the clusters with their
    /// members: each document has its `doc_ids` entry, one key per simhash table, a posting
    /// per sentence hash naming its cluster, its `members` entry under its cluster's root; no
    /// index entry points at a missing document; every root's size and first document are
    /// its members' count and oldest member (so every `duplicate_of` is a current member of
    /// the same cluster); the counters match.
    pub fn verify(&self) -> Result<Verified> {
        let mut seen = Seen::default();
        self.records().for_each_doc_chunk(&mut |recs| {
            let ahead = self.store.read_ahead();
            if let Some(ahead) = ahead {
                self.prefetch_checks(ahead, &recs)?;
            }
            for (seq, r) in recs {
                let root = self.check_document(seq, &r)?;
                seen.verified.documents += 1;
                seen.verified.roots.insert(root);
                seen.seqs.insert(seq);
                seen.with_simhash += u64::from(r.simhash.is_some());
                seen.postings += r.postings().collect::<BTreeSet<_>>().len() as u64;
                seen.members
                    .entry(root)
                    .or_insert(Tally::starting_at(Seq(seq)))
                    .size += 1;
                if self.opts.originals {
                    seen.note_citations(root, seq, &r);
                }
                let me = r.original(seq);
                seen.earliest
                    .entry(root)
                    .and_modify(|o| *o = (*o).min(me))
                    .or_insert(me);
            }
            if let Some(ahead) = ahead {
                ahead.end_prefetch();
            }
            Ok(())
        })?;
        self.check_index_totals(&seen)?;
        self.check_clusters(&seen.members, &seen.earliest)?;
        seen.check_citations()?;
        Ok(seen.verified)
    }

    /// A remote store: read ahead, in a few pipelines, the keys that
    /// [`Searcher::check_document`] reads for `recs` (one round trip each otherwise).
    fn prefetch_checks(&self, ahead: &dyn ReadAhead, recs: &[(u64, DocRecord)]) -> Result<()> {
        let ids: Vec<&[u8]> = recs.iter().map(|(_, r)| r.id.as_bytes()).collect();
        ahead.prefetch_keys(Cf::DocIds, &ids)?;
        let clusters: Vec<[u8; 8]> = recs
            .iter()
            .map(|(_, r)| schema::u64_key(r.similar_id))
            .collect();
        let keys: Vec<&[u8]> = clusters.iter().map(|k| &k[..]).collect();
        ahead.prefetch_keys(Cf::Clusters, &keys)?;
        if !self.legacy {
            let postings: Vec<[u8; 16]> = recs
                .iter()
                .flat_map(|(seq, r)| r.postings().map(move |&h| schema::nshash_key(h, Seq(*seq))))
                .collect();
            let keys: Vec<&[u8]> = postings.iter().map(|k| &k[..]).collect();
            ahead.prefetch_keys(Cf::Nshash, &keys)?;
            let mut members = Vec::with_capacity(recs.len());
            for (seq, r) in recs {
                members.push(schema::members_key(
                    ClusterId(self.records().find(r.similar_id)?.0),
                    Seq(*seq),
                ));
            }
            let keys: Vec<&[u8]> = members.iter().map(|k| &k[..]).collect();
            ahead.prefetch_keys(Cf::Members, &keys)?;
        }
        let simhash: Vec<[u8; 17]> = recs
            .iter()
            .filter_map(|(seq, r)| r.simhash.map(|q| (*seq, q)))
            .flat_map(|(seq, q)| self.index().table_keys(q, seq))
            .collect();
        let keys: Vec<&[u8]> = simhash.iter().map(|k| &k[..]).collect();
        ahead.prefetch_keys(Cf::Simhash, &keys)
    }

    /// One document's entries in every index; returns its root cluster.
    fn check_document(&self, seq: u64, r: &DocRecord) -> Result<u64> {
        if seq >= self.counts.next_seq {
            return Err(bad(format!(
                "document seq {seq} >= next_seq {}",
                self.counts.next_seq
            )));
        }
        if self.records().seq_of(&r.id)? != Some(seq) {
            return Err(bad(format!(
                "doc_ids[{}] does not point at seq {seq}",
                r.id
            )));
        }
        // Stores with the link shape keep one place per sketch entry, others none.
        let places = if self.opts.link_shape {
            r.sketch.len()
        } else {
            0
        };
        if r.order.len() != places {
            return Err(bad(format!(
                "document {} has {} sentence places for {} sketch entries",
                r.id,
                r.order.len(),
                places
            )));
        }
        let (root, _) = self.records().find(r.similar_id)?;
        for &h in r.postings() {
            let unindexed = || bad(format!("sentence hash {h:016x} of {} is not indexed", r.id));
            if self.legacy {
                self.index().nshash_holder(h)?.ok_or_else(unindexed)?;
                continue;
            }
            let key = schema::nshash_key(h, Seq(seq));
            let val = self.store.get(Cf::Nshash, &key)?.ok_or_else(unindexed)?;
            let c = schema::decode_nshash(&key, &val)?.cluster.0;
            if self.records().find(c)?.0 != root {
                return Err(bad(format!(
                    "sentence hash {h:016x} of {} names cluster {c}, outside its cluster {root}",
                    r.id
                )));
            }
        }
        if let Some(q) = r.simhash {
            for (t, key) in self.index().table_keys(q, seq).enumerate() {
                if self.store.get(Cf::Simhash, &key)?.is_none() {
                    return Err(bad(format!("simhash table {t} lacks document {}", r.id)));
                }
            }
        }
        let member = schema::members_key(ClusterId(root), Seq(seq));
        if !self.legacy && self.store.get(Cf::Members, &member)?.is_none() {
            return Err(bad(format!(
                "document {} is not listed as a member of its cluster {root}",
                r.id
            )));
        }
        Ok(root)
    }

    /// No index entry beyond the documents' own: every doc_ids entry and simhash key points at
    /// a document, and (each document's entries being present) the totals are equal.
    fn check_index_totals(&self, seen: &Seen) -> Result<()> {
        let documents = seen.verified.documents;
        let mut dangling = None;
        let ids = self.records().count_keys(Cf::DocIds, &mut |k, val| {
            match schema::decode_u64(Cf::DocIds, k, val) {
                Ok(s) if seen.seqs.contains(&s) => {}
                _ => dangling = Some(String::from_utf8_lossy(k).into_owned()),
            }
            dangling.is_none()
        })?;
        if let Some(id) = dangling {
            return Err(bad(format!("doc_ids[{id}] points at no document")));
        }
        let mut orphan = None;
        let keys = self.records().count_keys(Cf::Simhash, &mut |k, _| {
            if let Ok((_, _, Seq(s))) = schema::decode_simhash_key(k) {
                if !seen.seqs.contains(&s) {
                    orphan = Some(s);
                }
            }
            orphan.is_none()
        })?;
        if let Some(s) = orphan {
            return Err(bad(format!(
                "simhash key points at missing document seq {s}"
            )));
        }
        if ids != documents || documents != self.counts.docs {
            return Err(bad(format!(
                "{documents} documents, {ids} doc_ids entries, doc_count counter {}",
                self.counts.docs
            )));
        }
        if keys != seen.with_simhash * self.perms.len() as u64 {
            return Err(bad(format!(
                "{keys} simhash keys for {} documents x {} tables",
                seen.with_simhash,
                self.perms.len()
            )));
        }
        if self.legacy {
            return Ok(());
        }
        let n = self.records().count_keys(Cf::Nshash, &mut |_, _| true)?;
        if n != seen.postings {
            return Err(bad(format!(
                "{n} sentence hash postings, {} held by the documents",
                seen.postings
            )));
        }
        let n = self.records().count_keys(Cf::Members, &mut |_, _| true)?;
        if n != documents {
            return Err(bad(format!(
                "{n} cluster member entries for {documents} documents"
            )));
        }
        Ok(())
    }

    /// Every root's size and first document agree with its members (`members`),
    /// and, with `originals`, its original is its earliest member (`earliest`); empty roots
    /// count nowhere; the cluster counter is the number of roots with members.
    fn check_clusters(
        &self,
        members: &BTreeMap<u64, Tally>,
        earliest: &BTreeMap<u64, Original>,
    ) -> Result<()> {
        let mut roots_with_members = 0u64;
        let mut err = None;
        self.records().count_keys(Cf::Clusters, &mut |k, val| {
            let (id, rec) = match (
                schema::decode_u64(Cf::Clusters, k, k),
                schema::decode_cluster(k, val),
            ) {
                (Ok(id), Ok(rec)) if rec.parent.is_none_or(|p| p == id) => (id, rec),
                (Ok(_), Ok(_)) => return true,
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return false;
                }
            };
            let Tally { size, first } = members.get(&id).copied().unwrap_or(Tally::starting_at(Seq(0)));
            let first = first.0;
            if rec.size != size || (size > 0 && rec.first_seq != first) {
                err = Some(bad(format!(
                    "cluster {id} records {} documents and first document seq {}, its members are {size} from seq {first}",
                    rec.size, rec.first_seq
                )));
                return false;
            }
            let want = earliest.get(&id).copied().filter(|_| self.opts.originals);
            if size > 0 && rec.original != want {
                let show = |o: Option<Original>| {
                    o.map_or("none".to_string(), |o| format!("seq {} at {}", o.seq, o.time))
                };
                err = Some(bad(format!(
                    "cluster {id} names original {}, its earliest member is {}",
                    show(rec.original),
                    show(want)
                )));
                return false;
            }
            roots_with_members += u64::from(size > 0);
            true
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        let n = members.len() as u64;
        if roots_with_members != n || self.counts.clusters != n {
            return Err(bad(format!(
                "{n} clusters hold documents, cluster_count counter {}",
                self.counts.clusters
            )));
        }
        Ok(())
    }
}
