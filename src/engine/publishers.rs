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
//! documents left it. A note is kept when pages are removed, and a line its host took is
//! furniture for good, as in stores before `site_knowledge`.

use super::furniture::{PageLines, Seen, SeenInBatch, FURNITURE_MARK};
use super::sites::Sites;
use crate::error::Result;
use crate::store::schema;
use crate::store::{Cf, Store};

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
        let key = schema::furniture_key(site, k);
        Ok(match self.store.get(Cf::Furniture, &key)? {
            None => false,
            Some(v) => {
                let ids = schema::decode_furniture(&key, &v)?;
                ids.is_empty() || ids.last() == Some(&FURNITURE_MARK)
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
            sites.push(lines.host);
            if sites.len() >= PROMOTED_SITES {
                out.push(((lines.on_host, k), Seen::Furniture));
            }
            out.push((note, Seen::In(sites)));
        }
        Ok(())
    }
}
