//! Forgetting what removed pages taught (stores with `furniture` and `site_knowledge`): the
//! `furniture` family names, for each line of a host, the clusters and pages that showed it
//! (`learn.rs`), and a line's standing holds only while they are kept. Removing documents
//! ([`Maintainer::remove`], [`Maintainer::expire`]) notes their sites (`text::sites`); the next
//! [`Fpdb::sync`] sweeps those sites' lines: a line none of whose clusters or pages is left
//! is deleted, a furniture line left with fewer than [`FURNITURE_CLUSTERS`] goes back to
//! "seen in" them, and the site is bounded to [`SITE_LINES`] lines. `compact` sweeps every
//! site so, then lets the store reclaim the space. A site that only grows is bounded too: once
//! its pages have written [`SITE_LINES`] lines since it was last bounded ([`Grown`]), the next
//! sync drops its lines seen in one cluster beyond the bound, and changes nothing else. After
//! the sweeps, a shared host's lines taken from its publishers are checked against them
//! (`publishers.rs`: a line three of them no longer hold goes back to theirs). A replace ([`crate::OnExisting::Replace`]) does not sweep: the new version counts as
//! the page it replaces (one page is one URL), and a cluster emptied by it is passed over by
//! the next page that reads its lines.

use foldhash::HashMap;

use super::furniture::{own_page_seq, Seen, FURNITURE_CLUSTERS, FURNITURE_MARK, OWN_PAGE};
use super::maintenance::Maintainer;
use super::Fpdb;
use crate::error::Result;
use crate::store::schema::{self, DocRecord};
use crate::store::{Batch, Cf, Store};

/// The most lines a host keeps in the `furniture` family after a sweep (the sync after a
/// removal of its pages, `expire` and `--retention` included, and `compact`): beyond it, lines
/// seen in one cluster only are dropped (they are seen anew if they come again). A host's
/// template has tens to hundreds of lines; its articles bring the rest.
pub const SITE_LINES: usize = 1 << 16;

/// Entries swept per write.
const SWEEP_BATCH: usize = 4096;

/// The lines each site's pages wrote since the site was last bounded, and the sites that
/// wrote [`SITE_LINES`] of them: the next sync bounds those ([`Fpdb::sync`]), so a store that
/// is never compacted and never loses a page still holds at most about twice the bound per
/// site.
#[derive(Debug)]
pub(super) struct Grown {
    /// Lines written per site (a `furniture` key's host) since its last bound.
    written: HashMap<u64, usize>,
    /// Sites that reached `bound`, for the next sync.
    full: Vec<u64>,
    /// [`SITE_LINES`] (smaller in tests).
    bound: usize,
}

impl Default for Grown {
    fn default() -> Self {
        Grown {
            written: HashMap::default(),
            full: Vec::new(),
            bound: SITE_LINES,
        }
    }
}

impl Grown {
    /// Count the lines a decision writes (`put_seen`'s changes).
    pub(super) fn note(&mut self, changes: &[((u64, u64), Seen)]) {
        for ((host, _), seen) in changes {
            if seen.value().is_none() {
                continue;
            }
            let n = self.written.entry(*host).or_insert(0);
            *n += 1;
            if *n >= self.bound {
                self.written.remove(host);
                self.full.push(*host);
            }
        }
    }
}

/// What one sweep changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Forgotten {
    /// Lines deleted: none of their clusters or pages is left, or past [`SITE_LINES`]; a
    /// host's line taken from fewer than three of its publishers now, and its note when
    /// none holds it.
    pub deleted: u64,
    /// Lines whose clusters changed (furniture that went back to "seen in"), and notes whose
    /// publishers did.
    pub rewritten: u64,
}

impl Forgotten {
    /// Count what [`super::sites::Sites::recheck_promotions`] changed.
    fn add_rechecked(&mut self, (deleted, rewritten): (u64, u64)) {
        self.deleted += deleted;
        self.rewritten += rewritten;
    }
}

impl Maintainer<'_> {
    /// Note removed record `rec`'s site for the next sweep ([`Fpdb::sync`]): its host's and,
    /// when its URL names a publisher, that publisher's ([`crate::text::sites`]). A record
    /// does not keep the publisher an HTML page named: that site is swept by `compact`.
    pub(super) fn note_removed(&self, rec: &DocRecord) {
        if !(self.opts.furniture && self.opts.site_knowledge) {
            return;
        }
        let Some(url) = rec.url.as_deref() else {
            return;
        };
        let mut forget = self.forget.lock().expect("lock");
        forget.extend(crate::text::cites::host_key(url));
        forget.extend(crate::text::sites::site_key(url, None));
    }

    /// Commit, then reorganize the store's files for fast lookups (worth it after a bulk load;
    /// RocksDB also does this in the background over time), after sweeping every host's lines
    /// ([`Maintainer::forget_all`]).
    pub fn compact(&self) -> Result<()> {
        self.sync()?;
        if self.forget_all()? != Forgotten::default() {
            self.sync()?;
        }
        self.store
            .maintenance()
            .map_or(Ok(()), crate::store::Maintenance::compact)
    }

    /// Sweep every host's lines, each bounded to `SITE_LINES` (before `compact`).
    pub fn forget_all(&self) -> Result<Forgotten> {
        let mut out = Forgotten::default();
        if !(self.opts.furniture && self.opts.site_knowledge) || self.store.read_only() {
            return Ok(out);
        }
        let mut from = 0u64;
        let mut swept = Vec::new();
        loop {
            // The next host with lines.
            let mut next = None;
            let (start, _) = schema::furniture_range(from);
            self.store
                .scan(Cf::Furniture, &start, &[0xff; 17], &mut |k, _| {
                    next = Some(schema::decode_furniture_host(k));
                    false
                })?;
            let Some(h) = next.transpose()? else {
                break;
            };
            let (start, end) = schema::furniture_range(h);
            self.sweep(&start, &end, SITE_LINES, &mut out)?;
            swept.push(h);
            match h.checked_add(1) {
                Some(n) => from = n,
                None => break,
            }
        }
        // After every site is swept: a publisher's line may have gone with its pages.
        for h in swept {
            let (start, end) = schema::furniture_range(h);
            out.add_rechecked(
                self.finder()
                    .sites()
                    .recheck_promotions(&start, &end, None)?,
            );
        }
        Ok(out)
    }
}

impl Fpdb {
    /// Sweep the hosts noted by removals since the last sweep.
    /// Sweep the hosts noted by removals since the last sweep, and bound those that grew by
    /// the bound ([`Grown`]).
    pub(super) fn forget_removed(&self) -> Result<Forgotten> {
        let mut hosts = std::mem::take(&mut *self.forget.lock().expect("lock"));
        hosts.sort_unstable();
        hosts.dedup();
        let (mut full, bound) = {
            let mut g = self.grown.lock().expect("lock");
            (std::mem::take(&mut g.full), g.bound)
        };
        full.sort_unstable();
        full.dedup();
        full.retain(|h| hosts.binary_search(h).is_err());
        let mut out = Forgotten::default();
        for &h in &hosts {
            let (start, end) = schema::furniture_range(h);
            self.sweep(&start, &end, bound, &mut out)?;
        }
        // After every site is swept: a publisher's line may have gone with its pages (only
        // the swept sites can have lost lines).
        for &h in &hosts {
            let (start, end) = schema::furniture_range(h);
            let sites = self.finder().sites();
            out.add_rechecked(sites.recheck_promotions(&start, &end, Some(&hosts))?);
        }
        for h in full {
            let (start, end) = schema::furniture_range(h);
            bound_site(&self.store, (&start, &end), bound, &mut out)?;
        }
        Ok(out)
    }

    /// Sweep the lines in `[start, end)` (one host's): drop the clusters and pages no longer
    /// kept, delete a line left with none, and keep at most `bound` lines (dropping lines seen
    /// in one cluster, in key order, beyond it).
    fn sweep(&self, start: &[u8], end: &[u8], bound: usize, out: &mut Forgotten) -> Result<()> {
        let entries = site_lines(&self.store, start, end)?;
        let mut kept_ids: HashMap<u64, Option<u64>> = HashMap::default();
        let mut batch = Batch::new();
        let mut over = entries.len().saturating_sub(bound);
        for (key, value) in entries {
            // A shared host's note of its publishers' furniture names sites: kept.
            if super::publishers::is_promotion(&key) {
                continue;
            }
            let ids = schema::decode_furniture(&key, &value)?;
            // Furniture written before `site_knowledge` names nothing to withdraw.
            if ids.is_empty() {
                continue;
            }
            let furniture = ids.last() == Some(&FURNITURE_MARK);
            let mut now: Vec<u64> = Vec::with_capacity(ids.len());
            for &id in ids.iter().filter(|&&id| id != FURNITURE_MARK) {
                let kept = match kept_ids.get(&id) {
                    Some(&k) => k,
                    None => {
                        let k = self.kept_id(id)?;
                        kept_ids.insert(id, k);
                        k
                    }
                };
                if let Some(k) = kept.filter(|k| !now.contains(k)) {
                    now.push(k);
                }
            }
            let seen = if now.is_empty() || (over > 0 && now.len() == 1) {
                None
            } else if furniture && now.len() >= FURNITURE_CLUSTERS {
                Some(Seen::Made(now))
            } else {
                Some(Seen::In(now))
            };
            match seen.and_then(|s| s.value()) {
                None => {
                    batch.delete(Cf::Furniture, key);
                    out.deleted += 1;
                    over = over.saturating_sub(1);
                }
                Some(v) if v != value => {
                    batch.put(Cf::Furniture, key, v);
                    out.rewritten += 1;
                }
                Some(_) => {}
            }
            if batch.len() >= SWEEP_BATCH {
                self.store.write(std::mem::take(&mut batch))?;
            }
        }
        self.store.write(batch)
    }

    /// What a cluster or page a line was seen in is now: a cluster's root while it holds a
    /// document, a page (counted by itself) while its record is kept; None when gone.
    fn kept_id(&self, id: u64) -> Result<Option<u64>> {
        if id & OWN_PAGE != 0 {
            let seq = own_page_seq(id);
            let kept = self.store.get(Cf::Docs, &schema::u64_key(seq))?.is_some();
            return Ok(kept.then_some(id));
        }
        Ok(self.records().current_cluster(id)?.map(|(root, _)| root))
    }
}

/// The `furniture` entries in `[start, end)` (one host's), in key order.
fn site_lines(store: &dyn Store, start: &[u8], end: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut entries = Vec::new();
    store.scan(Cf::Furniture, start, end, &mut |k, v| {
        entries.push((k.to_vec(), v.to_vec()));
        true
    })?;
    Ok(entries)
}

/// Keep at most `bound` lines in `[start, end)` (one host's) by deleting lines seen in
/// one cluster or page, in key order, beyond it; nothing else changes (what removals
/// withdraw is `Fpdb::sweep`'s).
fn bound_site(
    store: &dyn Store,
    (start, end): (&[u8], &[u8]),
    bound: usize,
    out: &mut Forgotten,
) -> Result<()> {
    let entries = site_lines(store, start, end)?;
    let mut over = entries.len().saturating_sub(bound);
    let mut batch = Batch::new();
    for (key, value) in entries {
        if over == 0 {
            break;
        }
        if super::publishers::is_promotion(&key) {
            continue;
        }
        let ids = schema::decode_furniture(&key, &value)?;
        if ids.len() == 1 && ids[0] != FURNITURE_MARK {
            batch.delete(Cf::Furniture, key);
            out.deleted += 1;
            over -= 1;
            if batch.len() >= SWEEP_BATCH {
                store.write(std::mem::take(&mut batch))?;
            }
        }
    }
    store.write(batch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Document, IngestResult, OnExisting};

    /// A site whose pages are removed is bounded at the next sync, as `compact` bounds every
    /// site: a store kept with `--retention` and never compacted does not grow without end.
    #[test]
    fn a_removal_sweep_bounds_its_site_to_site_lines() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let mut cluster_of = |id: &str, text: &str| match db
            .ingest_document(&Document::new(id, text), OnExisting::Skip)
            .unwrap()
        {
            IngestResult::Added { outcome, .. } => outcome.similar_id.unwrap(),
            other => panic!("{other:?}"),
        };
        let a = cluster_of(
            "a",
            "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。",
        );
        let b = cluster_of(
            "b",
            "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木。",
        );
        assert_ne!(a, b);
        let host = 0x00ab_cdef_0000_0000;
        let one = Seen::In(vec![a]).value().unwrap();
        let two = Seen::In(vec![a, b]).value().unwrap();
        let mut batch = Batch::new();
        // Lines seen in one cluster, then (later in key order) ten seen in two.
        for k in 0..(SITE_LINES + 100) as u64 {
            batch.put(
                Cf::Furniture,
                schema::furniture_key(host, k).to_vec(),
                one.clone(),
            );
        }
        for k in 0..10u64 {
            let key = schema::furniture_key(host, (1 << 40) + k);
            batch.put(Cf::Furniture, key.to_vec(), two.clone());
        }
        db.store.write(batch).unwrap();
        let lines = |db: &Fpdb| {
            let (start, end) = schema::furniture_range(host);
            let mut n = (0, 0);
            db.store
                .scan(Cf::Furniture, &start, &end, &mut |_, v| {
                    if v == two.as_slice() {
                        n.1 += 1;
                    } else {
                        n.0 += 1;
                    }
                    true
                })
                .unwrap();
            n
        };
        db.forget.lock().unwrap().push(host);
        let out = db.forget_removed().unwrap();
        assert_eq!(out.deleted, 110);
        // The lines seen in two clusters are kept; those in one fill the rest of the bound.
        assert_eq!(lines(&db), (SITE_LINES - 10, 10));
    }

    /// A site that only grows is bounded at the sync after its pages wrote the bound's worth
    /// of lines (here 100, [`SITE_LINES`] in a store): its lines seen in one cluster beyond the
    /// bound are dropped; a site that wrote fewer is left as it is.
    #[test]
    fn a_site_that_only_grows_is_bounded_at_the_next_sync() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        db.grown.lock().unwrap().bound = 100;
        let mut line = crate::engine::test_lines::lines(12345);
        let url = |i: usize| format!("https://grows.example.com/a/{i}");
        let mut page = |db: &mut Fpdb, i: usize| {
            let text: Vec<String> = (0..20).map(|_| line()).collect();
            let mut doc = Document::new(format!("p{i}"), text.join("\n"));
            doc.url = Some(url(i));
            db.ingest_document(&doc, OnExisting::Skip).unwrap();
        };
        let host = crate::text::cites::host_key(&url(0)).unwrap();
        let lines = |db: &Fpdb| {
            let (start, end) = schema::furniture_range(host);
            let mut n = 0;
            db.store
                .scan(Cf::Furniture, &start, &end, &mut |_, _| {
                    n += 1;
                    true
                })
                .unwrap();
            n
        };
        for i in 0..30 {
            page(&mut db, i);
        }
        assert_eq!(lines(&db), 600, "every line of the pages is written");
        db.sync().unwrap();
        assert_eq!(lines(&db), 100, "bounded at the sync");
        for i in 30..33 {
            page(&mut db, i);
        }
        db.sync().unwrap();
        assert_eq!(lines(&db), 160, "60 lines written since: not bounded again");
    }
}
