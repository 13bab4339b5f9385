//! What a page teaches the store of its site (stores with `furniture`), and how removing
//! pages withdraws it. Each page placed in a cluster updates the standing of its lines in the
//! `furniture` family ([`Sites::seen_lines`]; what the family says and how a page is read with
//! it: `furniture.rs`); a batch's pages learn together ([`batch_furniture`]). In stores with
//! `site_knowledge` a line that is most of a page's main text, or that a member of the page's
//! cluster on another host holds, is never made furniture ([`Sites::keep_main_text`]); each
//! furniture line keeps the clusters and pages that made it so, and removing documents
//! withdraws what they taught (`forget.rs`).

use foldhash::HashMap;

use super::furniture::{
    own_page, same_page, PageLines, Seen, SeenInBatch, Stored, FURNITURE_CLUSTERS,
    FURNITURE_SENTENCE, NEW_TEXT_CHARS, OWN_PAGE,
};
use super::sites::Sites;
use super::Document;
use crate::error::Result;
use crate::store::schema::{self, DocRecord};
use crate::store::{Batch, Cf};
use crate::text::lines::line_key;

/// How many members of a page's cluster are read for a line about to become furniture
/// (stores with `site_knowledge`: [`Sites::keep_main_text`]).
const HELD_MEMBERS: usize = 16;

impl Sites<'_> {
    /// The changes a page of cluster `target` makes to the standing of its lines: a new line
    /// is seen in `target`; a line seen in another cluster (not `target` nor one of `merged`
    /// into it by this page) becomes furniture. Read before the page's cluster changes are
    /// written; a line whose cluster is gone (its pages removed) is seen anew.
    ///
    /// A page that brings [`NEW_TEXT_CHARS`] of text new to its host counts by itself, by its
    /// URL, for the lines its cluster already holds: otherwise a site whose first two
    /// articles were put in one cluster by the furniture they share would count that
    /// furniture in one cluster however many of its articles join it. A repost of an article
    /// on its site brings little new text and counts with its cluster; a page crawled again
    /// with a paragraph added counts once, by its URL, so an article updated many times does
    /// not make its own lines furniture.
    pub(super) fn seen_lines(
        &self,
        lines: &PageLines,
        (target, seq): (u64, u64),
        merged: &[u64],
        (doc, stored): (&Document, &mut Stored<'_>),
        written: &SeenInBatch,
    ) -> Result<Vec<((u64, u64), Seen)>> {
        let new_text: u32 = lines
            .lines
            .iter()
            .filter(|(_, s, _)| *s == Seen::New)
            .map(|&(_, _, n)| n)
            .sum();
        let own = new_text >= NEW_TEXT_CHARS;
        let by_url = self.opts.site_knowledge;
        let page = if by_url {
            own_page(lines.page, seq)
        } else {
            OWN_PAGE | lines.page
        };
        let mut roots: HashMap<u64, Option<u64>> = HashMap::default();
        let mut root = |c: u64| -> Result<Option<u64>> {
            if let Some(&r) = roots.get(&c) {
                return Ok(r);
            }
            let r = self.root_if_kept(c)?;
            roots.insert(c, r);
            Ok(r)
        };
        let mut out = Vec::new();
        for (k, seen, _) in &lines.lines {
            let now = match seen {
                Seen::Furniture | Seen::Made(_) => continue,
                Seen::Batch(_) if by_url => Seen::Made(vec![target]),
                Seen::Batch(_) => Seen::Furniture,
                Seen::New => Seen::In(vec![target]),
                Seen::In(cs) => {
                    // The clusters it was seen in as they are now: merged ones count once,
                    // and a cluster whose pages are all gone no more.
                    let mut now: Vec<u64> = Vec::with_capacity(cs.len() + 1);
                    for &c in cs {
                        if let Some(r) = root(c)? {
                            let r = if merged.contains(&r) { target } else { r };
                            if !now.contains(&r) {
                                now.push(r);
                            }
                        }
                    }
                    let me = if own && now.contains(&target) {
                        page
                    } else {
                        target
                    };
                    if let Some(was) = now.iter_mut().find(|c| same_page(**c, me, by_url)) {
                        // A page counts once, by its URL: its latest version is kept.
                        *was = me;
                    } else {
                        now.push(me);
                    }
                    if now.len() >= FURNITURE_CLUSTERS && by_url {
                        Seen::Made(now)
                    } else if now.len() >= FURNITURE_CLUSTERS {
                        Seen::Furniture
                    } else if now == *cs {
                        continue;
                    } else {
                        Seen::In(now)
                    }
                }
            };
            out.push(((lines.host, *k), now));
        }
        if by_url {
            self.keep_main_text(lines, target, (doc, stored), &mut out)?;
            self.furniture_sentences(lines.host, doc, &mut out);
            if self.opts.later_templates {
                self.template_sentences(lines.host, doc, &mut out)?;
            }
            self.promote(lines, written, &mut out)?;
        }
        Ok(out)
    }

    /// Stores with `site_knowledge`: for each line `out` makes furniture, its sentences, kept
    /// under the site as furniture made by the same clusters and pages
    /// ([`FURNITURE_SENTENCE`]), so that a page of the site stored before is compared without
    /// them ([`Sites::checked`]) and removing those pages withdraws them with the line.
    fn furniture_sentences(&self, site: u64, doc: &Document, out: &mut Vec<((u64, u64), Seen)>) {
        let made: HashMap<u64, Vec<u64>> = out
            .iter()
            .filter_map(|((_, k), s)| match s {
                Seen::Made(ids) => Some((*k, ids.clone())),
                _ => None,
            })
            .collect();
        let sentences = self.line_sentences(doc, &made);
        out.extend(
            sentences
                .into_iter()
                .map(|(k, ids)| ((site, k), Seen::Made(ids))),
        );
    }

    /// Stores with `later_templates`: for each line `out` shows seen in two clusters or pages
    /// or more (its site's template, not yet furniture), its sentences, kept under the site
    /// as seen in the same clusters and pages ([`FURNITURE_SENTENCE`] keys, whose furniture
    /// they are not), so that a page of the site stored before it showed them is compared
    /// as had it shown them before ([`Sites::checked`]); removing those pages withdraws them
    /// with the line (`forget.rs`). A sentence that is furniture stays so.
    fn template_sentences(
        &self,
        site: u64,
        doc: &Document,
        out: &mut Vec<((u64, u64), Seen)>,
    ) -> Result<()> {
        let shown: HashMap<u64, Vec<u64>> = out
            .iter()
            .filter_map(|((s, k), seen)| match seen {
                Seen::In(ids) if *s == site && ids.len() >= 2 => Some((*k, ids.clone())),
                _ => None,
            })
            .collect();
        let made: foldhash::HashSet<u64> = out
            .iter()
            .filter(|((s, _), seen)| *s == site && matches!(seen, Seen::Made(_)))
            .map(|&((_, k), _)| k)
            .collect();
        for (k, ids) in self.line_sentences(doc, &shown) {
            if !made.contains(&k) && !self.is_furniture(site, k)? {
                out.push(((site, k), Seen::In(ids)));
            }
        }
        Ok(())
    }

    /// The sentences ([`FURNITURE_SENTENCE`] keys) of the lines of `doc` (its main text and
    /// the lines around it) that `ids` names, each with the ids of the first such line that
    /// holds it, by key.
    fn line_sentences(&self, doc: &Document, ids: &HashMap<u64, Vec<u64>>) -> Vec<(u64, Vec<u64>)> {
        if ids.is_empty() {
            return Vec::new();
        }
        let mut sentences: HashMap<u64, Vec<u64>> = HashMap::default();
        for line in doc.text.lines().chain(doc.around.lines()) {
            let Some(ids) = line_key(line).and_then(|k| ids.get(&k)) else {
                continue;
            };
            for h in self.fingerprinter.sentence_sketch(line) {
                sentences
                    .entry(FURNITURE_SENTENCE | u64::from(h))
                    .or_insert_with(|| ids.clone());
            }
        }
        let mut sentences: Vec<_> = sentences.into_iter().collect();
        sentences.sort_unstable_by_key(|&(k, _)| k);
        sentences
    }

    /// [`Sites::seen_lines`] of a page a batch placed (`lines`: None for a page whose lines
    /// are not counted), the batch's documents (`records`, by seq through `index`) read in
    /// place.
    pub(super) fn seen_lines_in_batch(
        &self,
        lines: Option<&PageLines>,
        (target, seq, merged): (u64, u64, &[u64]),
        doc: &Document,
        (records, index): (&[(u64, DocRecord)], &HashMap<u64, usize>),
        written: &SeenInBatch,
    ) -> Result<Vec<((u64, u64), Seen)>> {
        let Some(lines) = lines else {
            return Ok(Vec::new());
        };
        let mut stored = |m: u64| -> Result<(Option<String>, Vec<u32>)> {
            if let Some(&i) = index.get(&m) {
                let r = &records[i].1;
                return Ok((r.url.clone(), r.sketch.clone()));
            }
            let r = self.records().doc(m)?;
            Ok((r.url, r.sketch))
        };
        self.seen_lines(lines, (target, seq), merged, (doc, &mut stored), written)
    }

    /// Stores with `site_knowledge`: the lines `out` would make furniture (from `lines`, of
    /// page `doc` placed in cluster `target`) are not made so, and this page does not count
    /// for them, when its cluster holds a page of another host and they hold the article
    /// that page shares: a line that member holds whole, or, with the page's furniture, most
    /// of the page's main text. So a repost on a shared host (mp.weixin.qq.com, toutiao,
    /// zhihu), found as a copy of its source, never makes the article the host's furniture,
    /// however many accounts repost it, each with a footer of its own; a new site's short
    /// articles, whose template is most of each page, still teach it (their cluster holds
    /// pages of their own host only).
    fn keep_main_text(
        &self,
        lines: &PageLines,
        target: u64,
        (doc, stored): (&Document, &mut Stored<'_>),
        out: &mut Vec<((u64, u64), Seen)>,
    ) -> Result<()> {
        let made: Vec<u64> = out
            .iter()
            .filter(|(_, s)| matches!(s, Seen::Made(_)))
            .map(|&((_, k), _)| k)
            .collect();
        if made.is_empty() {
            return Ok(());
        }
        let theirs = self.other_hosts_sketches(lines.host, target, stored)?;
        if theirs.is_empty() {
            return Ok(());
        }
        let is = |k: u64, s: &Seen| {
            matches!(s, Seen::Furniture | Seen::Batch(_) | Seen::Made(_)) || made.contains(&k)
        };
        if lines.mostly(is) {
            out.retain(|(_, s)| !matches!(s, Seen::Made(_)));
            return Ok(());
        }
        let mut held = Vec::new();
        for line in doc.text.lines() {
            let Some(k) = line_key(line).filter(|k| made.contains(k)) else {
                continue;
            };
            let mine = self.fingerprinter.sentence_sketch(line);
            let whole =
                |t: &Vec<u32>| !mine.is_empty() && mine.iter().all(|h| t.binary_search(h).is_ok());
            if theirs.iter().any(whole) {
                held.push(k);
            }
        }
        out.retain(|((_, k), s)| !(matches!(s, Seen::Made(_)) && held.contains(k)));
        Ok(())
    }

    /// The sentence sketches of the first [`HELD_MEMBERS`] members of cluster `target` whose
    /// URL is of another host than site `host`'s.
    fn other_hosts_sketches(
        &self,
        host: u64,
        target: u64,
        stored: &mut Stored<'_>,
    ) -> Result<Vec<Vec<u32>>> {
        let Some((root, _)) = self.records().current_cluster(target)? else {
            return Ok(Vec::new());
        };
        let mut theirs = Vec::new();
        for m in self.records().members_first(root, HELD_MEMBERS)? {
            let (url, sketch) = stored(m)?;
            let other = url
                .as_deref()
                .and_then(crate::text::cites::host_key)
                .is_some_and(|h| !crate::text::sites::same_host(host, h));
            if other {
                theirs.push(sketch);
            }
        }
        Ok(theirs)
    }

    /// The root of cluster `id`, None when its record is gone or its pages all are (an
    /// emptied cluster keeps its record, of size 0). A page counted by itself stays counted:
    /// it is known by its URL, which the store does not index.
    fn root_if_kept(&self, id: u64) -> Result<Option<u64>> {
        if id & OWN_PAGE != 0 {
            return Ok(Some(id));
        }
        Ok(self.records().current_cluster(id)?.map(|(root, _)| root))
    }
}

/// Mark as [`Seen::Batch`] the lines of `pages` (one batch's) that [`FURNITURE_CLUSTERS`]
/// pages of one host among them show, each with [`NEW_TEXT_CHARS`] of text that no other page
/// of its host in the batch shows: a site's furniture as its pages in the batch show it,
/// whatever their order and whatever the store has seen. A repost or a teaser of an article
/// brings no text of its own beside the article, so one article's pages count once at most,
/// like the pages of one cluster; pages of different articles each bring their own. In stores
/// with `site_knowledge` a line that pages of two hosts in the batch show is not marked.
pub(super) fn batch_furniture(pages: &mut [&mut PageLines]) {
    let mut shown: HashMap<(u64, u64), u32> = HashMap::default();
    for p in pages.iter() {
        for (k, _, _) in &p.lines {
            *shown.entry((p.host, *k)).or_default() += 1;
        }
    }
    let counting: Vec<bool> = pages
        .iter()
        .map(|p| {
            let own: u32 = p
                .lines
                .iter()
                .filter(|(k, _, _)| shown[&(p.host, *k)] == 1)
                .map(|&(_, _, n)| n)
                .sum();
            own >= NEW_TEXT_CHARS
        })
        .collect();
    let by_own = count_by_own(pages, &counting);
    if !by_own.values().any(|&n| n >= FURNITURE_CLUSTERS) {
        return;
    }
    // Stores with `site_knowledge`: a line pages of two hosts in the batch show is an
    // article's (a source and its reposts on a shared host), never a host's furniture.
    let mut hosts: HashMap<u64, (u64, bool)> = HashMap::default();
    if pages.iter().any(|p| p.main_text_kept) {
        for p in pages.iter() {
            for (k, _, _) in &p.lines {
                let e = hosts.entry(*k).or_insert((p.host, false));
                e.1 |= e.0 != p.host;
            }
        }
    }
    let by_own: HashMap<(u64, u64), usize> = by_own
        .into_iter()
        .filter(|((_, k), _)| !hosts.get(k).is_some_and(|&(_, two)| two))
        .collect();
    for p in pages.iter_mut() {
        let host = p.host;
        for (k, s, _) in &mut p.lines {
            if *s != Seen::Furniture
                && by_own
                    .get(&(host, *k))
                    .is_some_and(|&n| n >= FURNITURE_CLUSTERS)
            {
                let was = match s {
                    Seen::In(cs) => std::mem::take(cs),
                    _ => Vec::new(),
                };
                *s = Seen::Batch(was);
            }
        }
    }
}

/// How many of `pages` that are `counting` show each (host, line).
fn count_by_own(pages: &[&mut PageLines], counting: &[bool]) -> HashMap<(u64, u64), usize> {
    let mut by_own: HashMap<(u64, u64), usize> = HashMap::default();
    for (p, _) in pages.iter().zip(counting).filter(|(_, &c)| c) {
        for (k, _, _) in &p.lines {
            *by_own.entry((p.host, *k)).or_default() += 1;
        }
    }
    by_own
}

/// Put `changes` ([`Sites::seen_lines`]) into `batch`.
pub(super) fn put_seen(changes: &[((u64, u64), Seen)], batch: &mut Batch) {
    for ((host, k), seen) in changes {
        if let Some(v) = seen.value() {
            let (host, k) = (*host, *k);
            batch.put(Cf::Furniture, schema::furniture_key(host, k), v);
        }
    }
}
