//! Late joins (stores with `late_joins`): a page stored alone before its site's furniture was
//! known, looked up again once lines it holds become furniture. Its record's sentences of
//! those lines are left out, as its ingest would have left them out had the store known
//! them, and when it then links to one cluster it joins it. So what a store finds does not
//! hang on whether a page came before or after the pages that taught its site's furniture:
//! `rechecked.rs` lets a later copy find such a page; this lets the page find an earlier one.

use super::Writer;
use crate::engine::checked::Checked;
use crate::engine::furniture::{own_page_seq, SeenInBatch, FURNITURE_SENTENCE, OWN_PAGE};
use crate::error::Result;
use crate::store::schema::{self, ClusterId, ClusterRecord, DocRecord, Original, Seq};
use crate::store::{Batch, Cf, Store};

/// At most this many pages are looked up again after one batch: the pages of the clusters
/// that made its new furniture lines so (at most [`FURNITURE_CLUSTERS`] a line) are few, and
/// a batch that made a whole site's furniture at once is bounded all the same.
///
/// [`FURNITURE_CLUSTERS`]: crate::engine::furniture::FURNITURE_CLUSTERS
const LATE_JOINS_MOST: usize = 256;

impl Writer<'_> {
    /// After a batch's commit: the clusters and pages that made lines furniture in it
    /// (`made`, as [`Seen::Made`](crate::engine::furniture::Seen::Made) names them) whose cluster
    /// is still one page, each looked up again without its sentences of its site's furniture
    /// as the store knows it now, and joined to the one cluster it then links to. Staged, each
    /// read by the next. Returns how many joined.
    pub(in crate::engine) fn late_joins(&mut self, made: &[u64]) -> Result<usize> {
        let mut made = made.to_vec();
        made.sort_unstable();
        made.dedup();
        let mut seqs = Vec::new();
        for id in made {
            let found = if id & OWN_PAGE != 0 {
                let seq = own_page_seq(id);
                match self.records().doc(seq) {
                    Ok(rec) => self
                        .records()
                        .current_cluster(rec.similar_id)?
                        .map(|(_, c)| (c, Some(seq))),
                    // Removed since.
                    Err(_) => None,
                }
            } else {
                self.records().current_cluster(id)?.map(|(_, c)| (c, None))
            };
            if let Some((c, seq)) = found.filter(|(c, _)| c.size == 1) {
                let seq = seq.unwrap_or(c.first_seq);
                if !seqs.contains(&seq) {
                    seqs.push(seq);
                }
            }
        }
        seqs.truncate(LATE_JOINS_MOST);
        let mut joined = 0;
        for seq in seqs {
            if self.late_join(seq)? {
                joined += 1;
            }
        }
        crate::engine::LookupCounters::add(&self.reads.late_joins, joined);
        Ok(joined)
    }

    /// Stored page `seq` (alone in its cluster) looked up again without its sentences of its
    /// site's furniture; joined (its cluster merged into the other, its record given the
    /// matches) when it links to exactly one other cluster. Staged, so that the next one reads
    /// it.
    fn late_join(&mut self, seq: u64) -> Result<bool> {
        let rec = self.records().doc(seq)?;
        let Some(site) = rec
            .url
            .as_deref()
            .and_then(|u| crate::text::sites::site_key(u, None))
        else {
            return Ok(false);
        };
        let none = SeenInBatch::default();
        let mut furniture = Vec::new();
        for &h in &rec.sketch {
            if self
                .sites()
                .standing_in(site, FURNITURE_SENTENCE | u64::from(h), &none)?
                == Some(true)
            {
                furniture.push(h);
            }
        }
        let kept = rec.sketch.len() - furniture.len();
        if furniture.is_empty() || kept < 2 {
            return Ok(false);
        }
        let mut fps = crate::engine::read::fingerprints_of(&self.opts, &rec);
        let at: Vec<usize> = (0..rec.sketch.len())
            .filter(|&i| furniture.binary_search(&rec.sketch[i]).is_err())
            .collect();
        fps.sketch = at.iter().map(|&i| rec.sketch[i]).collect();
        if rec.order.len() == rec.sketch.len() {
            fps.order = at.iter().map(|&i| rec.order[i]).collect();
        }
        if let Some((_, seen)) = &mut fps.host_seen {
            seen.retain(|h| furniture.binary_search(h).is_err());
        }
        fps.furniture = furniture;
        // Its character shingles are of its whole text, furniture and all (a record keeps no
        // text to take them again): it is compared by its sentences.
        fps.shingles.clear();
        let (own, own_rec) = self.records().find(rec.similar_id)?;
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
        let others: Vec<u64> = lk.roots.keys().copied().filter(|&r| r != own).collect();
        let [target] = others[..] else {
            return Ok(false);
        };
        let mut b = Batch::new();
        let mut trec = lk.roots[&target].clone();
        trec.size += own_rec.size;
        trec.first_seq = trec.first_seq.min(own_rec.first_seq);
        trec.original = Original::earliest(trec.original, own_rec.original);
        for &k in &own_rec.pending_cites {
            if !trec.pending_cites.contains(&k)
                && trec.pending_cites.len() < crate::text::cites::MAX_CITES
            {
                trec.pending_cites.push(k);
            }
        }
        b.put(
            Cf::Clusters,
            schema::u64_key(own),
            schema::encode_cluster(&ClusterRecord {
                parent: Some(target),
                ..own_rec
            }),
        );
        b.put(
            Cf::Clusters,
            schema::u64_key(target),
            schema::encode_cluster(&trec),
        );
        b.delete(Cf::Members, schema::members_key(ClusterId(own), Seq(seq)));
        b.put(
            Cf::Members,
            schema::members_key(ClusterId(target), Seq(seq)),
            Vec::new(),
        );
        let mut joined = rec;
        joined.matches = self.finder().matches(&lk).1;
        b.put(Cf::Docs, schema::u64_key(seq), schema::encode_doc(&joined));
        self.counts.clusters -= 1;
        self.store.write(b)?;
        Ok(true)
    }
}
