//! The records part of the engine: a document's record, a cluster's record and its root, the
//! seq of an external id, a cluster's members, records in key order. It reads the store and
//! nothing else; every other part reads records through it ([`Fpdb::records`]).

use std::collections::HashMap;

use super::Fpdb;
use crate::error::Result;
use crate::store::schema::{self, ClusterId, ClusterRecord, DocRecord};
use crate::store::{Cf, Staged, Store};

/// Records read from a store (borrowed from an [`Fpdb`] by [`Fpdb::records`]).
#[derive(Clone, Copy)]
pub(super) struct Records<'a> {
    pub(super) store: &'a Staged,
}

impl Fpdb {
    /// The records part, reading this handle's store.
    pub(super) fn records(&self) -> Records<'_> {
        Records { store: &self.store }
    }
}

impl Records<'_> {
    /// Count the keys of a column family, checking each with `check` (false ends the scan).
    pub(super) fn count_keys(
        &self,
        cf: Cf,
        check: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64> {
        let mut n = 0u64;
        self.store.scan(cf, &[], &[0xff; 18], &mut |k, v| {
            n += 1;
            check(k, v)
        })?;
        Ok(n)
    }

    pub(super) fn doc(&self, seq: u64) -> Result<DocRecord> {
        let k = schema::u64_key(seq);
        match self.store.get(Cf::Docs, &k)? {
            Some(v) => schema::decode_doc(&k, &v),
            None => Err(schema::corrupt(
                Cf::Docs,
                &k,
                "referenced document is missing".into(),
            )),
        }
    }

    pub(super) fn cluster(&self, id: u64) -> Result<ClusterRecord> {
        let k = schema::u64_key(id);
        match self.store.get(Cf::Clusters, &k)? {
            Some(v) => schema::decode_cluster(&k, &v),
            None => Err(schema::corrupt(
                Cf::Clusters,
                &k,
                "referenced cluster is missing".into(),
            )),
        }
    }

    /// The current (root) cluster id of `id`, with its record.
    pub(super) fn find(&self, mut id: u64) -> Result<(u64, ClusterRecord)> {
        for _ in 0..1_000_000 {
            let rec = self.cluster(id)?;
            match rec.parent {
                Some(p) if p != id => id = p,
                _ => return Ok((id, rec)),
            }
        }
        Err(schema::corrupt(
            Cf::Clusters,
            &schema::u64_key(id),
            "cycle in cluster parents".into(),
        ))
    }

    /// The stored document seq of an external id.
    pub(super) fn seq_of(&self, id: &str) -> Result<Option<u64>> {
        match self.store.get(Cf::DocIds, id.as_bytes())? {
            Some(v) => Ok(Some(schema::decode_u64(Cf::DocIds, id.as_bytes(), &v)?)),
            None => Ok(None),
        }
    }

    /// The cluster `similar_id` names now (its root and record); None when no cluster has that
    /// id or none of its documents is stored.
    pub(super) fn current_cluster(
        &self,
        similar_id: u64,
    ) -> Result<Option<(u64, schema::ClusterRecord)>> {
        if self
            .store
            .get(Cf::Clusters, &schema::u64_key(similar_id))?
            .is_none()
        {
            return Ok(None);
        }
        let (root, rec) = self.find(similar_id)?;
        Ok((rec.size > 0).then_some((root, rec)))
    }

    /// The external id of document `seq`, if it is still stored.
    pub(super) fn id_of(&self, seq: u64, cache: &HashMap<u64, String>) -> Result<Option<String>> {
        if let Some(id) = cache.get(&seq) {
            return Ok(Some(id.clone()));
        }
        let k = schema::u64_key(seq);
        match self.store.get(Cf::Docs, &k)? {
            Some(v) => Ok(Some(schema::decode_doc(&k, &v)?.id)),
            None => Ok(None),
        }
    }

    /// Up to `max` document records from seq `from` on, in seq order.
    pub(super) fn docs_from(&self, from: u64, max: usize) -> Result<Vec<(u64, DocRecord)>> {
        self.records_from(Cf::Docs, from, max, schema::decode_doc)
    }

    /// Up to `max` cluster records from cluster id `from` on, in id order.
    pub(super) fn clusters_from(
        &self,
        from: u64,
        max: usize,
    ) -> Result<Vec<(u64, schema::ClusterRecord)>> {
        self.records_from(Cf::Clusters, from, max, schema::decode_cluster)
    }

    /// Up to `max` records of `cf` (keyed by a u64) from key `from` on, in key order.
    pub(super) fn records_from<T>(
        &self,
        cf: Cf,
        from: u64,
        max: usize,
        decode: fn(&[u8], &[u8]) -> Result<T>,
    ) -> Result<Vec<(u64, T)>> {
        let mut recs = Vec::new();
        let mut err = None;
        let end = [0xffu8; 9];
        self.store
            .scan(cf, &schema::u64_key(from), &end, &mut |k, val| {
                match (schema::decode_u64(cf, k, k), decode(k, val)) {
                    (Ok(key), Ok(r)) => recs.push((key, r)),
                    (Err(e), _) | (_, Err(e)) => err = Some(e),
                }
                err.is_none() && recs.len() < max
            })?;
        match err {
            Some(e) => Err(e),
            None => Ok(recs),
        }
    }

    /// Visit every document record in seq order, a chunk at a time (no iterator is held
    /// while `visit` runs, so it may read the store).
    pub(super) fn for_each_doc(
        &self,
        visit: &mut dyn FnMut(u64, DocRecord) -> Result<()>,
    ) -> Result<()> {
        self.for_each_doc_chunk(&mut |recs| {
            for (seq, r) in recs {
                visit(seq, r)?;
            }
            Ok(())
        })
    }

    /// [`Records::for_each_doc`], a chunk of records (in seq order) per call.
    pub(super) fn for_each_doc_chunk(
        &self,
        visit: &mut dyn FnMut(Vec<(u64, DocRecord)>) -> Result<()>,
    ) -> Result<()> {
        let mut from = 0;
        loop {
            let recs = self.docs_from(from, 4096)?;
            let Some(&(last, _)) = recs.last() else {
                return Ok(());
            };
            visit(recs)?;
            match last.checked_add(1) {
                Some(n) => from = n,
                None => return Ok(()),
            }
        }
    }

    /// Seqs of the members of root cluster `root`, ascending.
    pub(super) fn members(&self, root: u64) -> Result<Vec<u64>> {
        self.members_first(root, usize::MAX)
    }

    /// Seqs of the first `limit` members of root cluster `root`, ascending.
    pub(super) fn members_first(&self, root: u64, limit: usize) -> Result<Vec<u64>> {
        let (start, end) = schema::members_range(ClusterId(root));
        let mut out = Vec::new();
        let mut err = None;
        if limit == 0 {
            return Ok(out);
        }
        self.store.scan(Cf::Members, &start, &end, &mut |k, _| {
            match schema::decode_members_key(k) {
                Ok((_, seq)) => out.push(seq.0),
                Err(e) => err = Some(e),
            }
            err.is_none() && out.len() < limit
        })?;
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The records of the documents that more than one of `candidates` (each lookup's
    /// candidates, a seq may come twice) names, each read once; `None` when one fails (each
    /// lookup then reads its own, and meets the error itself).
    pub(super) fn shared_records(
        &self,
        candidates: impl Iterator<Item = Vec<u64>>,
    ) -> Option<foldhash::HashMap<u64, schema::DocRecord>> {
        use rayon::prelude::*;
        let mut seqs: Vec<u64> = candidates
            .flat_map(|mut own| {
                own.sort_unstable();
                own.dedup();
                own
            })
            .collect();
        seqs.sort_unstable();
        let mut shared: Vec<u64> = seqs
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        shared.dedup();
        shared
            .par_iter()
            .map(|&seq| self.doc(seq).map(|r| (seq, r)))
            .collect::<Result<_>>()
            .ok()
    }
}
