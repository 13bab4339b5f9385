//! Pages as `explain` compares them with a store (`Searcher`): without their sites'
//! furniture, without the template lines ingest leaves out of a page or of a stored page, and
//! whether a link holds through a host's own lines only. What ingest does by sentence
//! (`furniture.rs`, `compared.rs`, `checked.rs`), done here on the pages' text, so that
//! `explain` shows the lines left out.

use super::furniture::{own_page, page_host, PageLines, Seen, OWN_PAGE};
use super::searcher::Searcher;
use super::sites::Sites;
use super::Document;
use crate::error::Result;
use crate::text::lines::{line_key, line_keys, without_lines};

/// Members of a stored page's cluster read to tell whether it alone of its host is in it.
const TAUGHT_ALONE_MEMBERS: usize = 64;

impl Searcher<'_> {
    /// `doc` as the store fingerprints it: without the lines of its page that are its site's
    /// furniture as the store stands (what `explain` compares), and how many distinct lines
    /// were left out. `doc` whole in stores without `furniture`, for a page without a URL host,
    /// or when what is left would be too short ([`without_lines`]).
    pub fn without_furniture(&self, doc: &Document) -> Result<(Document, usize)> {
        let mut out = doc.clone();
        let Some(lines) = self.sites().page_lines(doc)? else {
            return Ok((out, 0));
        };
        let furniture = lines.furniture();
        if furniture.is_empty() {
            return Ok((out, 0));
        }
        match without_lines(&doc.text, &|k| furniture.binary_search(&k).is_ok()) {
            Some(kept) => {
                // Only the page's own text counts: its lines around the main text are never
                // fingerprinted.
                let in_text = line_keys(&doc.text)
                    .iter()
                    .filter(|(k, _)| furniture.binary_search(k).is_ok())
                    .count();
                out.text = kept;
                Ok((out, in_text))
            }
            None => Ok((out, 0)),
        }
    }

    /// Page `b` as the store compares it, when it is ingested, with a stored page `a` of
    /// another host, or of its own in stores with `same_site_templates` (what `explain`
    /// compares): without the lines its host showed on an earlier page and that are not
    /// furniture yet, where `a` does not hold them, unless that leaves out more than half of
    /// its sentences; and how many lines were left out. Ingest does the same by sentence
    /// ([`crate::fingerprint::Fingerprints::host_seen`]). `b` whole for two pages of one host
    /// in other stores, a page without a URL host, or in stores without `furniture`. When `b`
    /// is stored, what it alone taught is not what its host showed before it.
    pub fn without_template_of(&self, b: &Document, a: &Document) -> Result<(Document, usize)> {
        let out = b.clone();
        let one_host = page_host(a) == page_host(b);
        if page_host(a).is_none() || (one_host && !self.opts.same_site_templates) {
            return Ok((out, 0));
        }
        let Some(lines) = self.sites().page_lines(b)? else {
            return Ok((out, 0));
        };
        let seen = lines.seen_before(&self.taught_alone(b, &lines)?);
        let in_a: Vec<u64> = line_keys(&a.text).into_iter().map(|(k, _)| k).collect();
        Ok(self.sites().with_lines_kept(out, |l| {
            line_key(l).is_none_or(|k| seen.binary_search(&k).is_err() || in_a.contains(&k))
        }))
    }

    /// Whether page `b` (`b_kept` as [`Searcher::without_template_of`] compares it with `a`)
    /// links to stored page `a` of its own host through lines its host showed before only,
    /// each of the two holding a sentence of its own, as ingest tells it in stores with
    /// `host_lines_join_one` (such a link never merges two clusters). Whether the link is
    /// strong (such a link is not) is the caller's to tell. False for pages of two hosts and
    /// in other stores.
    pub fn through_host_lines(
        &self,
        b: &Document,
        b_kept: &Document,
        a: &Document,
    ) -> Result<bool> {
        let on = self.opts.site_knowledge && self.opts.host_lines_join_one;
        if !on || page_host(a).is_none() || page_host(a) != page_host(b) {
            return Ok(false);
        }
        let Some(lines) = self.sites().page_lines(b)? else {
            return Ok(false);
        };
        let seen = lines.seen_before(&self.taught_alone(b, &lines)?);
        let seen = self.sites().sentences_of_lines(&b.text, &seen);
        let mine = self
            .fingerprinter
            .fingerprint_with(&b_kept.text, b_kept.meta());
        let theirs = self.fingerprinter.fingerprint_with(&a.text, a.meta());
        Ok(super::checked::through_host_lines(
            mine.sketches(),
            &seen,
            theirs.sketches(),
        ))
    }

    /// The ids stored page `b`'s lines were counted by that only `b` stands for: its own page's
    /// ([`own_page`]), and its cluster's at its ingest when no other page of its host is in that
    /// cluster (of at most [`TAUGHT_ALONE_MEMBERS`] members); empty when `b` is not stored. Its
    /// host did not show those lines before it.
    fn taught_alone(&self, b: &Document, lines: &PageLines) -> Result<Vec<u64>> {
        let Some(seq) = self.records().seq_of(&b.id)? else {
            return Ok(Vec::new());
        };
        let mut ids = vec![if self.opts.site_knowledge {
            own_page(lines.page, seq)
        } else {
            OWN_PAGE | lines.page
        }];
        let at_ingest = self.records().doc(seq)?.similar_id;
        if let Some((root, _)) = self.records().current_cluster(at_ingest)? {
            let members = self
                .records()
                .members_first(root, TAUGHT_ALONE_MEMBERS + 1)?;
            let mut alone = members.len() <= TAUGHT_ALONE_MEMBERS;
            for m in members.into_iter().filter(|&m| m != seq) {
                if !alone {
                    break;
                }
                let url = self.records().doc(m)?.url;
                alone = url.as_deref().and_then(crate::text::cites::host_key) != page_host(b);
            }
            if alone {
                ids.push(at_ingest);
            }
        }
        Ok(ids)
    }

    /// Stored page `a` as a page `b` of another host, ingested after it, is compared with it
    /// (what `explain` compares; stores with `site_templates`): without its lines whose
    /// sentences are all of the template its record keeps
    /// ([`crate::store::schema::DocRecord::template`]), or (stores with `later_templates`)
    /// that its site has shown in two clusters or more since, and none in `b`, unless that
    /// leaves out more than half of its sentences; and how many lines were left out. Ingest
    /// does the same by sentence (the second only for a page that does not verify otherwise).
    /// `a` whole when it is not stored (by its id), has no such line, or the two pages are of
    /// one host.
    pub fn without_stored_template(&self, a: &Document, b: &Document) -> Result<(Document, usize)> {
        let out = a.clone();
        if !self.opts.site_templates || page_host(a).is_none() || page_host(a) == page_host(b) {
            return Ok((out, 0));
        }
        let Some(seq) = self.records().seq_of(&a.id)? else {
            return Ok((out, 0));
        };
        let template = self.records().doc(seq)?.template;
        // Lines its site has shown in two clusters or more since it was stored.
        let shown: Vec<u64> = match self.sites().page_lines(a)? {
            Some(lines) if self.opts.later_templates => lines
                .lines
                .iter()
                .filter(|(_, s, _)| matches!(s, Seen::In(c) if c.len() >= 2))
                .map(|&(k, _, _)| k)
                .collect(),
            _ => Vec::new(),
        };
        if template.is_empty() && shown.is_empty() {
            return Ok((out, 0));
        }
        let theirs = self.fingerprinter.sentence_sketch(&b.text);
        Ok(self.sites().with_lines_kept(out, |l| {
            let s = self.fingerprinter.sentence_sketch(l);
            let later = line_key(l).is_some_and(|k| shown.binary_search(&k).is_ok());
            s.is_empty()
                || s.iter().any(|h| theirs.binary_search(h).is_ok())
                || !(later || s.iter().all(|h| template.binary_search(h).is_ok()))
        }))
    }
}

impl Sites<'_> {
    /// `doc` with only its lines that `keep`, and how many it left out; `doc` whole (0) when
    /// that is none, or more than half of its sentences (the bound of both template rules).
    fn with_lines_kept(&self, mut doc: Document, keep: impl Fn(&str) -> bool) -> (Document, usize) {
        let all: Vec<&str> = doc.text.lines().collect();
        let kept: Vec<&str> = all.iter().copied().filter(|l| keep(l)).collect();
        let left_out = all.len() - kept.len();
        if left_out == 0 {
            return (doc, 0);
        }
        let kept = kept.join("\n");
        let sentences = |t: &str| self.fingerprinter.sentence_sketch(t).len();
        if 2 * sentences(&kept) < sentences(&doc.text) {
            return (doc, 0);
        }
        doc.text = kept;
        (doc, left_out)
    }
}
