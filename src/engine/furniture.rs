//! A site's furniture (stores with `furniture`): the lines a host repeats on pages of different
//! articles (navigation, "most read" headlines, tickers, paywall and newsletter notices) are
//! left out of its pages' fingerprints, so that two articles of one site are not matched on
//! their template and one article is matched across sites on its own text.
//!
//! The store counts each line of each host's pages ([`crate::text::lines::line_key`]), in
//! their main text and around it (an HTML page's other visible lines, [`Document::around`]:
//! the extractors leave a site's blocks out of some of its pages and take them in on others),
//! in the `furniture` family: the clusters it was seen in, then "furniture" once a page of a third
//! cluster of the same host holds it ([`FURNITURE_CLUSTERS`]). A page that brings text new to
//! its host counts by itself, not by its cluster, for the lines its cluster already holds
//! ([`NEW_TEXT_CHARS`]): a site's first articles, put in one cluster by the furniture they
//! share, still make it furniture. A page is fingerprinted without the lines that are
//! furniture when it is ingested, as the store stands after every document before it (in a
//! batch, as a one-at-a-time ingest would see it: the lines the batch's earlier documents made
//! furniture count). So a site's first pages are fingerprinted with its furniture, which is
//! known from the site's third article on; what that costs is measured in docs/accuracy.md
//! ("A site's furniture", "Sites"). What a page changes of its lines, and the rules that keep
//! an article from becoming a host's furniture (stores with `site_knowledge`), are in
//! `learn.rs`; in those stores removing the pages that made a line furniture withdraws it
//! (`forget.rs`), where in older stores a line once furniture stays so.

use foldhash::HashMap;

use super::searcher::Searcher;
use super::sites::Sites;
use super::Document;
use crate::error::Result;
use crate::fingerprint::Fingerprints;
use crate::store::schema;
use crate::store::{Cf, Store};
use crate::text::lines::{line_key, line_keys, without_lines};

/// In how many clusters of a host a line must be seen to be its furniture.
pub const FURNITURE_CLUSTERS: usize = 3;

/// A page whose lines new to its host hold this many letters and digits or more counts for
/// its lines by itself, not by its cluster: it shows an article of its own, even where its
/// site's furniture, not yet known, has put it in the cluster of another article.
pub const NEW_TEXT_CHARS: u32 = 100;

/// The bit that marks a page counted by itself ([`NEW_TEXT_CHARS`]; its URL, hashed) among
/// the cluster ids a line was seen in; cluster ids are sequence numbers far below it.
pub(super) const OWN_PAGE: u64 = 1 << 63;

/// Stores with `site_knowledge`: a page counted by itself is [`OWN_PAGE`], the top
/// [`PAGE_URL_BITS`] of its URL's hash (one page is one URL, whatever its versions), then its
/// seq in the low [`PAGE_SEQ_BITS`] (so that removing it withdraws what it taught:
/// `forget.rs`).
const PAGE_URL_BITS: u32 = 24;
const PAGE_SEQ_BITS: u32 = 63 - PAGE_URL_BITS;

/// Stores with `site_knowledge`: the last id of a furniture line's value, after the ids of
/// the clusters and pages that made it furniture (older stores write furniture as no ids).
pub(super) const FURNITURE_MARK: u64 = u64::MAX;

/// Stores with `site_knowledge`: how many of a page's first lines name their longest sentence
/// among its nshash keys while its site's furniture is not known ([`Sites::post_by_lines`]).
const LINE_KEYS: usize = 8;

/// Stores with `site_knowledge`: the high bits of the `furniture` keys that name a sentence
/// of a site's furniture (the sentence's 32-bit hash in the low bits) in place of a line, so
/// that a page of the site stored before its furniture was known is compared without it
/// ([`Sites::checked`]). A line key with these high bits (one in 2^32) is read as such.
pub(super) const FURNITURE_SENTENCE: u64 = 0x5e17_f00d << 32;

/// A page counted by itself: the URL of `url_hash` at `seq` (stores with `site_knowledge`).
pub(super) fn own_page(url_hash: u64, seq: u64) -> u64 {
    OWN_PAGE | ((url_hash >> (64 - PAGE_URL_BITS)) << PAGE_SEQ_BITS) | (seq & page_seq_mask())
}

fn page_seq_mask() -> u64 {
    (1 << PAGE_SEQ_BITS) - 1
}

/// The seq of a page counted by itself ([`own_page`]).
pub(super) fn own_page_seq(id: u64) -> u64 {
    id & page_seq_mask()
}

/// Whether two ids a line was seen in name one page: equal, or two versions of one URL.
pub(super) fn same_page(a: u64, b: u64, by_url: bool) -> bool {
    a == b
        || (by_url
            && a & b & OWN_PAGE != 0
            && (a & !OWN_PAGE) >> PAGE_SEQ_BITS == (b & !OWN_PAGE) >> PAGE_SEQ_BITS)
}

/// What the store says of one line of a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen {
    /// Never seen on the host's pages.
    New,
    /// Seen on pages of these clusters only (fewer than [`FURNITURE_CLUSTERS`]; the ids they
    /// had when it was seen).
    In(Vec<u64>),
    /// Seen in [`FURNITURE_CLUSTERS`] clusters of the host: furniture.
    Furniture,
    /// Made furniture now by the clusters and pages named (stores with `site_knowledge`: kept,
    /// so that removing them withdraws it).
    Made(Vec<u64>),
    /// Not furniture in the store, but shown by [`FURNITURE_CLUSTERS`] pages of the host in the
    /// page's own batch, each with text of its own (`batch_furniture`): furniture for every
    /// page of the batch, and stored as furniture with the first of them decided. Holds the
    /// clusters and pages the store had seen it in before the batch (what [`Seen::In`] said),
    /// whose pages are looked up again after the batch (`late_links`: `writer/late.rs`).
    Batch(Vec<u64>),
}

impl Seen {
    pub(super) fn value(&self) -> Option<Vec<u8>> {
        match self {
            Seen::New => None,
            Seen::In(c) => Some(c.iter().flat_map(|c| c.to_be_bytes()).collect()),
            Seen::Made(c) => Some(
                c.iter()
                    .chain([&FURNITURE_MARK])
                    .flat_map(|c| c.to_be_bytes())
                    .collect(),
            ),
            Seen::Furniture | Seen::Batch(_) => Some(Vec::new()),
        }
    }
}

/// The lines of one page and what the store said of each.
#[derive(Debug, Clone)]
pub(super) struct PageLines {
    /// Its site's key: its host's, or its publisher's on its host ([`crate::text::sites`]).
    pub(super) host: u64,
    /// Its host's key: `host` itself, or for a publisher's page the host whose furniture
    /// applies to it too (`publishers.rs`).
    pub(super) on_host: u64,
    /// Its URL, hashed: the page's own number when it counts by itself ([`NEW_TEXT_CHARS`]),
    /// with [`OWN_PAGE`] set (and its seq, in stores with `site_knowledge`: [`own_page`]).
    pub(super) page: u64,
    /// (line key, what the store says, the line's letters and digits), by key.
    pub(super) lines: Vec<(u64, Seen, u32)>,
    /// Stores with `site_knowledge`: lines that would be most of the page's main text are
    /// not made furniture by it (`learn.rs`).
    pub(super) main_text_kept: bool,
}

/// The keys [`PageLines`] are read by: the site's (its host's, or in stores with
/// `site_knowledge` its publisher's on a shared host: [`crate::text::sites`]), the page's own
/// number, and each line's with its letters and digits.
struct PageKeys {
    host: u64,
    on_host: u64,
    page: u64,
    lines: Vec<(u64, u32)>,
}

/// A stored document's URL and sentence sketch, by seq (a batch reads its own documents in
/// place).
pub(super) type Stored<'a> = dyn FnMut(u64) -> Result<(Option<String>, Vec<u32>)> + 'a;

/// A line's new standing, by (host, line): what a batch's documents wrote, read by the
/// documents after them in the batch.
pub(super) type SeenInBatch = HashMap<(u64, u64), Seen>;

impl PageLines {
    /// The keys of its lines that are furniture, sorted.
    pub(super) fn furniture(&self) -> Vec<u64> {
        self.lines
            .iter()
            .filter(|(_, s, _)| matches!(s, Seen::Furniture | Seen::Batch(_) | Seen::Made(_)))
            .map(|&(k, _, _)| k)
            .collect()
    }

    /// Whether the lines `picked` (by key and standing) hold more than half of the letters
    /// and digits of the page's main text (its lines around it count none).
    pub(super) fn mostly(&self, picked: impl Fn(u64, &Seen) -> bool) -> bool {
        let (mut all, mut these) = (0u64, 0u64);
        for (k, s, n) in &self.lines {
            all += u64::from(*n);
            if picked(*k, s) {
                these += u64::from(*n);
            }
        }
        2 * these > all
    }

    /// The keys of its lines its host showed before and that are not furniture, sorted: seen
    /// by a cluster or page other than those of `except`.
    pub(super) fn seen_before(&self, except: &[u64]) -> Vec<u64> {
        self.lines
            .iter()
            .filter(|(_, s, _)| matches!(s, Seen::In(c) if c.iter().any(|id| !except.contains(id))))
            .map(|&(k, _, _)| k)
            .collect()
    }

    /// What `written` (a batch's earlier documents) says of these lines, over what the store
    /// said before the batch. A line that is furniture, or furniture of the batch
    /// ([`Seen::Batch`]), stays so: what the batch before wrote of it (when this batch was
    /// looked up before that one was committed) is what the store would have said, and the
    /// batch marks it whatever the store says.
    pub(super) fn update(&mut self, written: &SeenInBatch) {
        if written.is_empty() {
            return;
        }
        for (k, s, _) in &mut self.lines {
            if let Seen::Batch(was) = s {
                // The clusters the batch before showed it in count among those it had been
                // seen in (`late_links`).
                if let Some(Seen::In(cs)) = written.get(&(self.host, *k)) {
                    for c in cs {
                        if !was.contains(c) {
                            was.push(*c);
                        }
                    }
                }
                continue;
            }
            if matches!(s, Seen::Furniture) {
                continue;
            }
            if let Some(w) = written.get(&(self.host, *k)) {
                s.clone_from(w);
            }
            // A publisher's page: its host's furniture is its own too (`publishers.rs`).
            let on_host = (self.on_host != self.host)
                .then(|| written.get(&(self.on_host, *k)))
                .flatten();
            if on_host.is_some_and(|w| matches!(w, Seen::Furniture | Seen::Made(_))) {
                *s = Seen::Furniture;
            }
        }
    }
}

impl Searcher<'_> {
    /// `fps` (`Fpdb::fingerprint_document` of `doc`) without the lines of the page that are
    /// its site's furniture as the store stands: what a query compares (an ingest leaves them
    /// out itself). `fps` as they are in stores without `furniture`.
    pub fn furnish(&self, doc: &Document, fps: Fingerprints) -> Result<Fingerprints> {
        Ok(match self.sites().page_lines(doc)? {
            Some(lines) => self.sites().furnished(doc, fps, &lines),
            None => fps,
        })
    }
}

impl Sites<'_> {
    /// The key of `doc`'s host, its own number ([`PageLines::page`]) and the keys of its
    /// lines, when the store counts them (None in stores without `furniture`, for a document
    /// without a URL host or without a line long enough).
    fn host_and_lines(&self, doc: &Document) -> Option<PageKeys> {
        let url = doc.url.as_deref().filter(|_| self.opts.furniture)?;
        // Stores with `site_knowledge` learn a shared host's pages per publisher.
        let on_host = crate::text::cites::host_key(url)?;
        let host = if self.opts.site_knowledge {
            crate::text::sites::site_key(url, doc.publisher.as_deref())?
        } else {
            on_host
        };
        let mut lines = line_keys(&doc.text);
        if !doc.around.is_empty() {
            // Lines around the main text count, but bring no text of the page's own.
            let mut around: Vec<(u64, u32)> = line_keys(&doc.around)
                .into_iter()
                .filter(|&(k, _)| lines.binary_search_by_key(&k, |&(k, _)| k).is_err())
                .map(|(k, _)| (k, 0))
                .collect();
            lines.append(&mut around);
            lines.sort_by_key(|&(k, _)| k);
        }
        let page = crate::hash::fingerprint64(url.as_bytes());
        (!lines.is_empty()).then_some(PageKeys {
            host,
            on_host,
            page,
            lines,
        })
    }

    /// The lines of `doc` and what the store says of each (None as
    /// [`Sites::host_and_lines`]).
    pub(super) fn page_lines(&self, doc: &Document) -> Result<Option<PageLines>> {
        let Some(PageKeys {
            host,
            on_host,
            page,
            lines: keys,
        }) = self.host_and_lines(doc)
        else {
            return Ok(None);
        };
        let mut lines = Vec::with_capacity(keys.len());
        for (k, chars) in keys {
            let key = schema::furniture_key(host, k);
            let seen = match self.store.get(Cf::Furniture, &key)? {
                None => Seen::New,
                Some(v) => match schema::decode_furniture(&key, &v)? {
                    c if c.is_empty() || c.last() == Some(&FURNITURE_MARK) => Seen::Furniture,
                    c => Seen::In(c),
                },
            };
            // A publisher's page: its host's furniture is its own too (`publishers.rs`).
            let hosts = host != on_host && seen != Seen::Furniture;
            let seen = if hosts && self.is_furniture(on_host, k)? {
                Seen::Furniture
            } else {
                seen
            };
            lines.push((k, seen, chars));
        }
        Ok(Some(PageLines {
            host,
            on_host,
            page,
            lines,
            main_text_kept: self.opts.site_knowledge,
        }))
    }

    /// The `furniture` keys [`Sites::page_lines`] reads for `doc` (for a remote store to read
    /// ahead).
    pub(super) fn page_line_keys(&self, doc: &Document) -> Vec<[u8; 16]> {
        self.host_and_lines(doc).map_or_else(Vec::new, |p| {
            let hosts: &[u64] = if p.host == p.on_host {
                &[p.host]
            } else {
                &[p.host, p.on_host]
            };
            p.lines
                .into_iter()
                .flat_map(|(k, _)| hosts.iter().map(move |&h| schema::furniture_key(h, k)))
                .collect()
        })
    }

    /// The fingerprints of `doc` without the lines `lines` says are furniture, from `fps`
    /// (fingerprinted again only when they left out other lines: [`Fingerprints::left_out`]),
    /// with the sentences of the lines its host showed before ([`Fingerprints::host_seen`]).
    pub(super) fn furnished(
        &self,
        doc: &Document,
        fps: Fingerprints,
        lines: &PageLines,
    ) -> Fingerprints {
        let mut fps = self.without_furniture_lines(doc, fps, lines);
        if self.opts.site_knowledge && lines.furniture().is_empty() {
            self.post_by_lines(doc, &mut fps);
        }
        let seen = lines.seen_before(&[]);
        // Sentence sketches are sorted (`fingerprint/nshash.rs` `sketch_of`).
        fps.host_seen = (!seen.is_empty()).then(|| {
            let sketch = self.sentences_of_lines(&doc.text, &seen);
            // Compared by host (`compared.rs`), whatever the site its lines were learned for.
            let host = doc.url.as_deref().and_then(crate::text::cites::host_key);
            (host.unwrap_or(lines.host), sketch)
        });
        fps
    }

    /// The sentence sketch of the lines of `text` whose keys `keys` (sorted) holds.
    pub(super) fn sentences_of_lines(&self, text: &str, keys: &[u64]) -> Vec<u32> {
        let shown: Vec<&str> = text
            .lines()
            .filter(|l| line_key(l).is_some_and(|k| keys.binary_search(&k).is_ok()))
            .collect();
        self.fingerprinter.sentence_sketch(&shown.join("\n"))
    }

    /// Stores with `site_knowledge`, a page none of whose lines is its site's furniture yet:
    /// its nshash keys also name the longest sentence of each of its first [`LINE_KEYS`]
    /// lines (those with a sentence long enough). Its longest sentences may be its site's
    /// template, not yet known as such: a copy on another site, fingerprinted without its own
    /// site's furniture, is keyed by the article's sentences and finds the page by them
    /// (the template's sentences are left out as they are compared: [`Sites::checked`]). The
    /// same keys for the same text while the site has no furniture, so an unchanged page
    /// sent again is known as such.
    fn post_by_lines(&self, doc: &Document, fps: &mut Fingerprints) {
        let min = self.opts.min_sentence_chars;
        let mut added = 0;
        for line in doc.text.lines() {
            if added == LINE_KEYS {
                break;
            }
            if line.chars().filter(|c| c.is_alphanumeric()).count() < min {
                continue;
            }
            // Its longest sentence's key, as the page's fingerprint hashes it.
            let prepared = self.fingerprinter.prepare(line);
            let top = crate::fingerprint::nshash::nshash(&prepared, self.opts);
            let Some(&k) = top.first() else {
                continue;
            };
            if !fps.nshash.contains(&k) {
                fps.nshash.push(k);
            }
            added += 1;
        }
    }

    fn without_furniture_lines(
        &self,
        doc: &Document,
        fps: Fingerprints,
        lines: &PageLines,
    ) -> Fingerprints {
        let furniture = lines.furniture();
        let kept = if furniture.is_empty() {
            None
        } else {
            without_lines(&doc.text, &|k| furniture.binary_search(&k).is_ok())
        };
        let left_out = if kept.is_some() {
            furniture
        } else {
            Vec::new()
        };
        if left_out == fps.left_out {
            return fps;
        }
        let whole_page = || self.fingerprinter.fingerprint_with(&doc.text, doc.meta());
        let Some(kept) = kept else {
            // Read whole (`fps` left lines out).
            return whole_page();
        };
        // What the whole page is posted under: looked up too, as a page of the site
        // fingerprinted before these lines were known to be furniture holds them.
        let whole = if fps.left_out.is_empty() {
            fps
        } else {
            fps.whole.map_or_else(whole_page, |w| *w)
        };
        let mut fps = self.fingerprinter.fingerprint_with(&kept, doc.meta());
        // Stores with `site_knowledge`: a page whose furniture is most of its main text keeps
        // its whole sketches, to be compared whole as well with a page of another host.
        let mostly =
            lines.main_text_kept && lines.mostly(|k, _| left_out.binary_search(&k).is_ok());
        let sketches = |w: Vec<u32>| if mostly { w } else { Vec::new() };
        fps.whole = Some(Box::new(Fingerprints {
            nshash: whole.nshash,
            simhash: whole.simhash,
            bands: whole.bands,
            keys: whole.keys,
            chars: whole.chars,
            sketch: sketches(whole.sketch),
            order: if mostly { whole.order } else { Vec::new() },
            shingles: sketches(whole.shingles),
            figures: sketches(whole.figures),
            ..Fingerprints::default()
        }));
        let lines_left_out: Vec<&str> = doc
            .text
            .lines()
            .filter(|l| line_key(l).is_some_and(|k| left_out.binary_search(&k).is_ok()))
            .collect();
        fps.furniture = self
            .fingerprinter
            .sentence_sketch(&lines_left_out.join("\n"));
        fps.left_out = left_out;
        fps
    }
}

/// The key of a page's URL host ([`crate::text::cites::host_key`]), if it has one.
pub(super) fn page_host(d: &Document) -> Option<u64> {
    d.url.as_deref().and_then(crate::text::cites::host_key)
}
