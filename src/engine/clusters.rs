//! Cluster membership: removing a document, re-deriving its cluster from the remaining
//! members' stored matches (splits), member lists.

use std::collections::{BTreeMap, HashMap};

use super::furniture::SeenInBatch;
use super::maintenance::Maintainer;
use crate::error::{Error, Result};
use crate::store::schema::{self, meta, ClusterId, ClusterRecord, DocRecord, Seq};
use crate::store::{Batch, Cf, Store};

/// What a root cluster's members add up to, counted from the documents (`verify`, the
/// format 2 upgrade): how many, and the first one's seq (the documents are read in seq
/// order, so the first counted is the oldest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tally {
    /// Members counted.
    pub(super) size: u64,
    /// The oldest member.
    pub(super) first: Seq,
}

impl Tally {
    /// Nothing counted yet, the first member to count being `first`.
    pub(super) fn starting_at(first: Seq) -> Tally {
        Tally { size: 0, first }
    }
}

impl Maintainer<'_> {
    /// Remove the document with external id `id`: its record and every index entry; its
    /// cluster loses it (a new first document when it was the first) and is split into the
    /// connected components of its remaining members' stored matches when the removed
    /// document held them together (the component with the oldest document keeps the id).
    /// Costs one record read per member of its cluster. Returns whether it was stored.
    pub fn remove(&mut self, id: &str) -> Result<bool> {
        if self.store.read_only() {
            return Err(Error::ReadOnly);
        }
        self.begin_write()?;
        let Some(seq) = self.records().seq_of(id)? else {
            return Ok(false);
        };
        let rec = self.records().doc(seq)?;
        self.remove_record(seq, &rec)?;
        self.note_removed(&rec);
        Ok(true)
    }

    /// Remove every document ingested before `before` (seconds since the Unix epoch), a chunk
    /// of records at a time, each chunk synced: a killed run keeps what it removed and the
    /// next run goes on. Reads every record once. Returns how many were removed.
    pub fn expire(&mut self, before: u64) -> Result<u64> {
        if self.store.read_only() {
            return Err(Error::ReadOnly);
        }
        let mut removed = 0;
        let mut from = 0;
        loop {
            self.begin_write()?;
            let recs = self.records().docs_from(from, 4096)?;
            let Some(&(last, _)) = recs.last() else {
                return self.sync().map(|()| removed);
            };
            for (seq, rec) in recs {
                if rec.time < before {
                    // Read again: removing an earlier document of this chunk may have split
                    // its cluster and moved this one (a new similar_id in its record).
                    let rec = self.records().doc(seq)?;
                    self.remove_record(seq, &rec)?;
                    self.note_removed(&rec);
                    removed += 1;
                }
            }
            self.sync()?;
            match last.checked_add(1) {
                Some(n) => from = n,
                None => return Ok(removed),
            }
        }
    }

    /// The store's retention (seconds), if set.
    pub fn retention(&self) -> Result<Option<u64>> {
        match self.store.get(Cf::Meta, meta::RETENTION)? {
            Some(v) => Ok(Some(schema::decode_u64(Cf::Meta, meta::RETENTION, &v)?)),
            None => Ok(None),
        }
    }

    /// Set (or clear) the store's retention; applied by [`Maintainer::apply_retention`].
    pub fn set_retention(&mut self, secs: Option<u64>) -> Result<()> {
        self.begin_write()?;
        let mut b = Batch::new();
        match secs {
            Some(s) => b.put(Cf::Meta, meta::RETENTION, schema::u64_key(s)),
            None => b.delete(Cf::Meta, meta::RETENTION),
        }
        self.store.write(b)?;
        self.sync()
    }

    /// Expire the documents older than the store's retention (none when unset); returns how
    /// many were removed.
    pub fn apply_retention(&mut self) -> Result<u64> {
        match self.retention()? {
            Some(secs) => self.expire(super::now().saturating_sub(secs)),
            None => Ok(0),
        }
    }

    /// [`Maintainer::remove`] of a read record; returns its cluster id when that cluster is now empty.
    pub(super) fn remove_record(&mut self, seq: u64, rec: &DocRecord) -> Result<Option<u64>> {
        let saved = self.counts;
        let r = self.remove_record_inner(seq, rec);
        if r.is_err() {
            self.counts = saved;
        }
        r
    }

    pub(super) fn remove_record_inner(&mut self, seq: u64, rec: &DocRecord) -> Result<Option<u64>> {
        let (root, mut crec) = self.records().find(rec.similar_id)?;
        let mut b = Batch::new();
        b.delete(Cf::Docs, schema::u64_key(seq));
        b.delete(Cf::DocIds, rec.id.as_bytes());
        for &h in rec.postings() {
            b.delete(Cf::Nshash, schema::nshash_key(h, Seq(seq)));
        }
        if let Some(q) = rec.simhash {
            for key in self.index().table_keys(q, seq) {
                b.delete(Cf::Simhash, key);
            }
        }
        b.delete(Cf::Members, schema::members_key(ClusterId(root), Seq(seq)));
        let members: Vec<u64> = self
            .records()
            .members(root)?
            .into_iter()
            .filter(|&m| m != seq)
            .collect();
        self.counts.docs -= 1;
        let emptied = if members.is_empty() {
            crec.size = 0;
            self.counts.clusters -= 1;
            b.put(
                Cf::Clusters,
                schema::u64_key(root),
                schema::encode_cluster(&crec),
            );
            Some(root)
        } else {
            self.split(root, crec, &members, seq, &mut b)?;
            None
        };
        self.store.write(b)?;
        Ok(emptied)
    }

    /// Re-derive root cluster `root` from its remaining `members` (ascending seqs) once the
    /// document at `removed_seq` is gone: the members that matched it look up again among
    /// those before them ([`Maintainer::rematch`]); the clusters are the connected components of
    /// the stored matches. The component holding the oldest member keeps `root`; every other
    /// one gets a fresh cluster id, and its members' records, postings and `members` entries
    /// move to it. With `originals`, a member no other member of its component cites from another
    /// site is cited no more ([`uncite`]).
    pub(super) fn split(
        &mut self,
        root: u64,
        mut crec: ClusterRecord,
        members: &[u64],
        removed_seq: u64,
        b: &mut Batch,
    ) -> Result<()> {
        let mut recs = members
            .iter()
            .map(|&s| self.records().doc(s))
            .collect::<Result<Vec<_>>>()?;
        let rematched = self.rematch(&mut recs, members, root, removed_seq)?;
        let comps = components(&recs, members);
        let originals = self.opts.originals;
        let uncited = if originals {
            uncite(&mut recs, &comps)
        } else {
            Vec::new()
        };
        let recs = recs;
        let mut comps = comps.into_iter();
        // A component's original: its earliest member (the removed document may have been
        // the original: the next-earliest takes over).
        let original_of = |comp: &[usize]| {
            comp.iter()
                .map(|&i| recs[i].original(members[i]))
                .min()
                .filter(|_| originals)
        };
        // What a component's members cite that none of them is.
        let pending_of = |comp: &[usize]| -> Vec<u64> {
            if !originals {
                return Vec::new();
            }
            let have: Vec<u64> = comp
                .iter()
                .filter_map(|&i| recs[i].url.as_deref().map(crate::text::cites::url_key))
                .collect();
            let mut out: Vec<u64> = Vec::new();
            for k in comp.iter().flat_map(|&i| recs[i].cites.iter()) {
                if !have.contains(k)
                    && !out.contains(k)
                    && out.len() < crate::text::cites::MAX_CITES
                {
                    out.push(*k);
                }
            }
            out
        };
        let kept = comps.next().expect("members is not empty");
        crec.size = kept.len() as u64;
        crec.first_seq = members[kept[0]];
        crec.original = original_of(&kept);
        crec.pending_cites = pending_of(&kept);
        // The kept members cited no more, or whose matches were looked up again (the
        // moved ones are rewritten below).
        for &i in kept
            .iter()
            .filter(|i| uncited.contains(i) || rematched.contains(i))
        {
            b.put(
                Cf::Docs,
                schema::u64_key(members[i]),
                schema::encode_doc(&recs[i]),
            );
        }
        b.put(
            Cf::Clusters,
            schema::u64_key(root),
            schema::encode_cluster(&crec),
        );
        for comp in comps {
            let id = self.counts.next_cluster;
            self.counts.next_cluster += 1;
            self.counts.clusters += 1;
            let rec = ClusterRecord {
                parent: None,
                first_seq: members[comp[0]],
                size: comp.len() as u64,
                original: original_of(&comp),
                pending_cites: pending_of(&comp),
            };
            b.put(
                Cf::Clusters,
                schema::u64_key(id),
                schema::encode_cluster(&rec),
            );
            for i in comp {
                let seq = members[i];
                let mut r = recs[i].clone();
                r.similar_id = id;
                for &h in r.postings() {
                    b.put(
                        Cf::Nshash,
                        schema::nshash_key(h, Seq(seq)),
                        schema::u64_key(id),
                    );
                }
                b.delete(Cf::Members, schema::members_key(ClusterId(root), Seq(seq)));
                b.put(
                    Cf::Members,
                    schema::members_key(ClusterId(id), Seq(seq)),
                    Vec::new(),
                );
                b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&r));
            }
        }
        Ok(())
    }
}

impl Maintainer<'_> {
    /// The members (`recs`, at ascending seqs `members`, of root `root`) that matched the
    /// removed document at `removed` look up again among the members before them, as a fresh
    /// ingest of the remaining documents would: a sentence hash names its oldest holder, so
    /// the removed document may have hidden the member a copy would have matched instead (two
    /// copies of an article that each named only the first). Their stored matches become what
    /// this lookup verifies, and the citations it finds mark members cited. Costs a popcount per
    /// distinct earlier simhash and a check per candidate for
    /// each such member; reads nothing but root cluster records. Returns the indices changed.
    fn rematch(
        &self,
        recs: &mut [DocRecord],
        members: &[u64],
        root: u64,
        removed: u64,
    ) -> Result<Vec<usize>> {
        let mut changed = Vec::new();
        if !recs
            .iter()
            .any(|r| r.matches.iter().any(|m| m.seq == removed))
        {
            return Ok(changed);
        }
        let index: HashMap<u64, usize> = members.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let mut holders = foldhash::HashMap::default();
        // Earlier members by simhash value, the oldest `SIMHASH_MOST` of each (all the bound
        // can keep of one value): copies of one text cost one popcount, not one per copy.
        let mut simhashes: HashMap<u64, Vec<u64>> = HashMap::new();
        for i in 0..recs.len() {
            if recs[i].matches.iter().any(|m| m.seq == removed) {
                let fps = super::read::fingerprints_of(&self.opts, &recs[i]);
                let mut near = BTreeMap::new();
                if let Some(q) = fps.simhash {
                    for (p, seqs) in &simhashes {
                        let d = crate::fingerprint::simhash::hamming(*p, q);
                        if d <= self.opts.simhash_k {
                            near.extend(seqs.iter().map(|&seq| (seq, d)));
                        }
                    }
                }
                // Candidates are earlier members; the tight-cluster rule also checks the
                // cluster's first document, which may be the removed one (it verifies nothing).
                let gone = DocRecord::default();
                let all = &*recs;
                let verify = &mut |seq| {
                    let rec = index.get(&seq).map_or(&gone, |&j| &all[j]);
                    self.sites().checked(&fps, rec, &SeenInBatch::default())
                };
                let record = &mut |seq| Ok(index.get(&seq).map_or(&gone, |&j| &all[j]).clone());
                let lk = self
                    .finder()
                    .lookup_with(&fps, &holders, near, (verify, record))?;
                recs[i].matches = self.finder().matches(&lk).1;
                changed.push(i);
                // Citations, as its ingest would have found them among these candidates: a
                // verified member it cites is cited, and so is it when one cites it.
                for c in &lk.candidates {
                    if c.standing.cited_now.is_some() && !recs[index[&c.seq]].cited {
                        recs[index[&c.seq]].cited = true;
                        changed.push(index[&c.seq]);
                    }
                    if c.standing.cites_doc {
                        recs[i].cited = true;
                    }
                }
            }
            for &h in recs[i].postings() {
                super::postings::hold(&mut holders, h, members[i], root);
            }
            if let Some(q) = recs[i].simhash {
                let seqs = simhashes.entry(q).or_default();
                if seqs.len() < crate::SIMHASH_MOST {
                    seqs.push(members[i]);
                }
            }
        }
        Ok(changed)
    }
}

/// After a removal that took a citation with it: the members of each component (`comps`,
/// indices into `recs`) marked cited that no other member of their component cites from
/// another site are cited no more, as in a fresh ingest of the remaining documents (a deleted
/// sockpuppet page kept the copier it cited the original). Never marks one cited. Returns the
/// indices whose record changed.
fn uncite(recs: &mut [DocRecord], comps: &[Vec<usize>]) -> Vec<usize> {
    use crate::text::cites::{host_key, url_key};
    let mut changed = Vec::new();
    for comp in comps {
        for &i in comp {
            let Some(url) = recs[i].url.as_deref().filter(|_| recs[i].cited) else {
                continue;
            };
            let (key, host) = (url_key(url), host_key(url));
            let still = comp.iter().any(|&j| {
                j != i
                    && recs[j].cites.contains(&key)
                    && (host.is_none() || recs[j].url.as_deref().and_then(host_key) != host)
            });
            if !still {
                changed.push(i);
            }
        }
    }
    for &i in &changed {
        recs[i].cited = false;
    }
    changed
}

/// The connected components of `members` (ascending seqs; `recs` their records) by their
/// stored matches, as indices: in order of their oldest member, members ascending within each.
pub(super) fn components(recs: &[DocRecord], members: &[u64]) -> Vec<Vec<usize>> {
    fn top(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let index: HashMap<u64, usize> = members.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    let mut parent: Vec<usize> = (0..members.len()).collect();
    for (i, r) in recs.iter().enumerate() {
        for m in &r.matches {
            if let Some(&j) = index.get(&m.seq) {
                let (a, c) = (top(&mut parent, i), top(&mut parent, j));
                // The smaller index (older member) represents the component.
                parent[a.max(c)] = a.min(c);
            }
        }
    }
    let mut comps: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..members.len() {
        let t = top(&mut parent, i);
        comps.entry(t).or_default().push(i);
    }
    comps.into_values().collect()
}
