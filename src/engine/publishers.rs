//! A shared host's publishers (stores with `site_knowledge`): each publisher a page names is a
//! site of its own (`text/sites.rs`), which learns its furniture from its own pages, and its
//! host's furniture applies to its pages too. A line becomes the host's furniture, from its
//! publishers' pages, once [`PROMOTED_SITES`] publishers' sites have made it theirs: a notice
//! every account of a platform repeats (a disclaimer, a follow-us block) then stays out of a
//! new account's first pages, where two of them would otherwise match on it, while one
//! account's footer, or an article one account quotes in three posts, is that account's
//! furniture only, and an article reposted by many accounts is no site's (each shows it in one
//! cluster of its own).
//!
//! Each line a publisher's site makes furniture is noted under its host, beside the line
//! ([`promotion_line`]): the sites that made it so, read as the store and the batch's earlier
//! documents left it. A line is promoted only when three of the sites a note names still hold
//! it as their furniture, and when pages are removed the sweep of their host
//! ([`Sites::recheck_promotions`]) keeps in each note of a promoted line the sites that still
//! do: a line left with fewer than three is no longer its host's furniture, and a note left
//! with none is deleted. A note of a line not promoted keeps only the low bits of its key: it
//! is checked again when a third site comes, and the sweep keeps the sites that still hold a
//! furniture line of those bits.

use super::furniture::{PageLines, Seen, SeenInBatch, FURNITURE_MARK};
use super::sites::Sites;
use crate::error::Result;
use crate::store::schema;
use crate::store::{Batch, Cf, Store};
use foldhash::HashMap;

/// How many publishers' sites must have made a line their furniture for it to be their
/// host's.
pub(super) const PROMOTED_SITES: usize = 3;

/// The high bits of a promotion note's line key; its low bits are the line's (two lines of
/// one host alike in them, one in 2^32, share a note).
const PROMOTION: u64 = 0x9e37_79b9 << 32;

/// The line key of the note of which publishers' sites made line `k` their furniture.
fn promotion_line(k: u64) -> u64 {
    PROMOTION | (k & 0xffff_ffff)
}

/// Whether `key` (of the `furniture` family) is a promotion note, which `forget.rs` leaves
/// alone: it names sites, not clusters or pages.
pub(super) fn is_promotion(key: &[u8]) -> bool {
    key.len() == 16 && key[8..12] == (PROMOTION >> 32).to_be_bytes()[4..]
}

impl Sites<'_> {
    /// Whether line `k` (or a furniture line's sentence: [`super::furniture`]'s
    /// `FURNITURE_SENTENCE`) is the furniture of site `site` in the store.
    pub(super) fn is_furniture(&self, site: u64, k: u64) -> Result<bool> {
        Ok(self.standing(site, k)? == Some(true))
    }

    /// What the store says of line (or sentence) `k` of site `site`: None when it is not
    /// there, `Some(true)` for furniture, `Some(false)` for a line seen in two clusters or
    /// pages or more (its site's template, not yet furniture); a line seen in one only is
    /// None too.
    pub(super) fn standing(&self, site: u64, k: u64) -> Result<Option<bool>> {
        self.standing_in(site, k, &SeenInBatch::default())
    }

    /// [`Sites::standing`], where `written` (what a batch's earlier documents wrote) comes
    /// before the store.
    pub(super) fn standing_in(
        &self,
        site: u64,
        k: u64,
        written: &SeenInBatch,
    ) -> Result<Option<bool>> {
        match written.get(&(site, k)) {
            Some(Seen::Furniture | Seen::Made(_) | Seen::Batch(_)) => return Ok(Some(true)),
            Some(Seen::In(ids)) => return Ok((ids.len() >= 2).then_some(false)),
            Some(Seen::New) | None => {}
        }
        let key = schema::furniture_key(site, k);
        Ok(match self.store.get(Cf::Furniture, &key)? {
            None => None,
            Some(v) => {
                let ids = schema::decode_furniture(&key, &v)?;
                if ids.is_empty() || ids.last() == Some(&FURNITURE_MARK) {
                    Some(true)
                } else {
                    (ids.len() >= 2).then_some(false)
                }
            }
        })
    }

    /// A publisher's page (`lines`, its changes `out`; `written`: what the batch's earlier
    /// documents wrote): for each line its site makes furniture now, note the site under the
    /// host, and make the line the host's furniture once [`PROMOTED_SITES`] sites have.
    pub(super) fn promote(
        &self,
        lines: &PageLines,
        written: &SeenInBatch,
        out: &mut Vec<((u64, u64), Seen)>,
    ) -> Result<()> {
        if lines.host == lines.on_host {
            return Ok(());
        }
        let made: Vec<u64> = out
            .iter()
            .filter(|((site, _), s)| *site == lines.host && matches!(s, Seen::Made(_)))
            .map(|&((_, k), _)| k)
            .collect();
        for k in made {
            let note = (lines.on_host, promotion_line(k));
            let mut sites = match written.get(&note) {
                Some(Seen::In(sites)) => sites.clone(),
                _ => {
                    let key = schema::furniture_key(note.0, note.1);
                    match self.store.get(Cf::Furniture, &key)? {
                        Some(v) => schema::decode_furniture(&key, &v)?,
                        None => Vec::new(),
                    }
                }
            };
            if sites.contains(&lines.host) {
                continue;
            }
            if sites.len() + 1 >= PROMOTED_SITES {
                // The sites named before: only those that still hold the line count (their
                // pages may have been removed since).
                let mut still = Vec::with_capacity(sites.len() + 1);
                for site in sites {
                    let holds = match written.get(&(site, k)) {
                        Some(s) => matches!(s, Seen::Made(_) | Seen::Furniture | Seen::Batch(_)),
                        None => self.is_furniture(site, k)?,
                    };
                    if holds {
                        still.push(site);
                    }
                }
                sites = still;
            }
            sites.push(lines.host);
            if sites.len() >= PROMOTED_SITES {
                out.push(((lines.on_host, k), Seen::Furniture));
            }
            out.push((note, Seen::In(sites)));
        }
        Ok(())
    }

    /// Stores with `site_knowledge`, after a sweep of removed pages' sites: each note in
    /// `[start, end)` (one host's) keeps the sites that still hold its line as their
    /// furniture. A line its host took from its publishers and left with fewer than
    /// [`PROMOTED_SITES`] is no longer the host's furniture; the note of a line not promoted
    /// keeps only the low bits of its key, so a site still holds it while it holds a
    /// furniture line of those bits (each named site's lines read once; with `swept`, the
    /// sorted sites the sweep went over, a site not among them has lost no line and is kept
    /// unread); a note left with none is deleted. Returns the entries deleted and rewritten.
    pub(super) fn recheck_promotions(
        &self,
        start: &[u8],
        end: &[u8],
        swept: Option<&[u64]>,
    ) -> Result<(u64, u64)> {
        let mut promoted: HashMap<u32, Vec<u8>> = HashMap::default();
        let mut notes = Vec::new();
        self.store
            .scan(Cf::Furniture, start, end, &mut |key, value| {
                if is_promotion(key) {
                    notes.push((key.to_vec(), value.to_vec()));
                } else if value.is_empty() && key.len() == 16 {
                    // A host line stored without clusters: taken from its publishers (a key
                    // of another length is the sweep's to report).
                    promoted.insert(low_bits(key), key.to_vec());
                }
                true
            })?;
        let (mut deleted, mut rewritten) = (0, 0);
        let mut held: HashMap<u64, foldhash::HashSet<u32>> = HashMap::default();
        let mut batch = Batch::new();
        for (key, value) in notes {
            let sites = schema::decode_furniture(&key, &value)?;
            let mut still = Vec::with_capacity(sites.len());
            match promoted.get(&low_bits(&key)) {
                Some(line_key) => {
                    let k = u64::from_be_bytes(line_key[8..16].try_into().expect("a 16-byte key"));
                    for &site in &sites {
                        if self.is_furniture(site, k)? {
                            still.push(site);
                        }
                    }
                    if still.len() < PROMOTED_SITES {
                        batch.delete(Cf::Furniture, line_key.clone());
                        deleted += 1;
                    }
                }
                None => {
                    for &site in &sites {
                        if swept.is_some_and(|s| s.binary_search(&site).is_err()) {
                            still.push(site);
                            continue;
                        }
                        if let std::collections::hash_map::Entry::Vacant(e) = held.entry(site) {
                            e.insert(self.furniture_low_bits(site)?);
                        }
                        if held[&site].contains(&low_bits(&key)) {
                            still.push(site);
                        }
                    }
                }
            }
            if still.is_empty() {
                batch.delete(Cf::Furniture, key);
                deleted += 1;
            } else if still != sites {
                batch.put(
                    Cf::Furniture,
                    key,
                    Seen::In(still).value().expect("sites named"),
                );
                rewritten += 1;
            }
        }
        self.store.write(batch)?;
        Ok((deleted, rewritten))
    }

    /// The low bits of the keys of site `site`'s furniture lines (what a promotion note keeps
    /// of its line).
    fn furniture_low_bits(&self, site: u64) -> Result<foldhash::HashSet<u32>> {
        let (start, end) = schema::furniture_range(site);
        let mut out = foldhash::HashSet::default();
        self.store
            .scan(Cf::Furniture, &start, &end, &mut |key, value| {
                let furniture = value.is_empty() || value.ends_with(&FURNITURE_MARK.to_be_bytes());
                if key.len() == 16 && furniture && !is_promotion(key) {
                    out.insert(low_bits(key));
                }
                true
            })?;
        Ok(out)
    }
}

/// The low 32 bits of a `furniture` key's line: what a promotion note keeps of its line.
fn low_bits(key: &[u8]) -> u32 {
    u32::from_be_bytes(key[12..16].try_into().expect("a 16-byte key"))
}

#[cfg(test)]
mod tests {
    use super::is_promotion;
    use crate::engine::furniture::{SeenInBatch, FURNITURE_SENTENCE};
    use crate::engine::{Document, Fpdb, OnExisting};
    use crate::error::Error;
    use crate::store::{schema, Batch, Cf, Store};

    /// A damaged entry of a site's template or furniture sentences (a value that is no list
    /// of ids) is reported as a corrupt `furniture` entry with its key, not read as a
    /// standing, when a stored page is checked again.
    #[test]
    fn a_damaged_sentence_entry_is_reported_as_corrupt() {
        let db = Fpdb::builder().open_in_memory().unwrap();
        let (site, k) = (0x00ab_cdef_0000_0000, FURNITURE_SENTENCE | 7);
        let mut batch = Batch::new();
        batch.put(
            Cf::Furniture,
            schema::furniture_key(site, k).to_vec(),
            vec![1, 2, 3, 4, 5],
        );
        db.store.write(batch).unwrap();
        let sites = db.finder().sites();
        let read = sites.standing_in(site, k, &SeenInBatch::default());
        assert!(
            matches!(
                read,
                Err(Error::Corruption {
                    cf: "furniture",
                    ..
                })
            ),
            "{read:?}"
        );
        assert!(sites.is_furniture(site, k).is_err());
    }

    /// A line two accounts of a shared host made their furniture is noted under the host, not
    /// promoted (that takes three); removing one account's pages leaves the other in the note
    /// at the next sync, and removing both deletes it.
    #[test]
    fn a_note_of_a_line_not_promoted_goes_with_its_sites_pages() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let mut line = crate::engine::test_lines::lines(99);
        let block = format!("{}{}{}", line(), line(), line());
        let url = |acct: &str, i: usize| format!("https://mp.weixin.qq.com/s?__biz={acct}&mid={i}");
        let mut ids = Vec::new();
        for acct in ["X", "Y"] {
            for i in 0..3 {
                let mut text: Vec<String> = (0..12).map(|_| line()).collect();
                text.push(block.clone());
                let id = format!("{acct}{i}");
                let mut doc = Document::new(&id, text.join("\n"));
                doc.url = Some(url(acct, i));
                db.ingest_document(&doc, OnExisting::Skip).unwrap();
                ids.push(id);
            }
        }
        db.sync().unwrap();
        let host = crate::text::cites::host_key(&url("X", 0)).unwrap();
        let notes = |db: &Fpdb| {
            let (start, end) = schema::furniture_range(host);
            let mut sites = Vec::new();
            db.store
                .scan(Cf::Furniture, &start, &end, &mut |k, v| {
                    if is_promotion(k) {
                        sites.push(v.len() / 8);
                    }
                    true
                })
                .unwrap();
            sites
        };
        assert!(
            notes(&db).contains(&2),
            "two accounts noted: {:?}",
            notes(&db)
        );
        for id in &ids[..3] {
            assert!(db.maintenance().remove(id).unwrap());
        }
        db.sync().unwrap();
        let left = notes(&db);
        assert!(
            !left.contains(&2) && left.contains(&1),
            "one account left: {left:?}"
        );
        for id in &ids[3..] {
            assert!(db.maintenance().remove(id).unwrap());
        }
        db.sync().unwrap();
        assert_eq!(notes(&db), Vec::<usize>::new(), "no account left");
    }
}
