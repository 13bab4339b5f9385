//! Fingerprints of one document, computed from its text alone (no store access), so that they
//! can be computed on all cores before the sequential store step.

pub mod figures;
pub mod keys;
pub mod minhash;
pub mod nshash;
pub mod scan;
pub mod simhash;
pub mod similarity;
mod verify;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::hash::fingerprint64;
use crate::options::{IdfSource, KeyAlgo, Options, SimhashFeatures};
use crate::text::{self, IdfTable, TermWeights};
pub use verify::{
    excerpt_by_cut, figure_check, similarity, similarity_parts, verified_as_excerpt,
    verified_as_reordered, verified_as_teaser, Sketches,
};

/// Every fingerprint of one document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprints {
    /// Sentence hashes (empty when nshash is off or the text has no letters/digits).
    pub nshash: Vec<u64>,
    /// 64-bit simhash (`None` when simhash is off or the text has no terms).
    pub simhash: Option<u64>,
    /// 32-bit hashes of every qualifying sentence, sorted (see [`similarity::overlap`]); used
    /// to verify candidates from either algorithm.
    pub sketch: Vec<u32>,
    /// Where each sentence of the sketch sits in the text ([`nshash::sketch_of`]; empty
    /// unless the store has `link_shape`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<u8>,
    /// The high halves of the sentence hashes of `sketch`, parallel to it
    /// ([`nshash::sentence_highs`]; a page's, in stores with `late_keys`).
    pub highs: Vec<u32>,
    /// Character-shingle sketch of short documents (see [`minhash::shingles`]).
    pub shingles: Vec<u32>,
    /// Characters of normalized text.
    pub chars: u64,
    /// MinHash band keys (empty when the store has no minhash).
    #[serde(default)]
    pub bands: Vec<u64>,
    /// Keys of the exact-key algorithms ([`keys`]; empty when the store has none).
    #[serde(default)]
    pub keys: Vec<u64>,
    /// Weights of the heaviest terms, for the weight check of `keywords-check` and
    /// `keywords-con-check` ([`keys::keyword_weights`]; empty without them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_weights: Vec<f32>,
    /// Hashes of the document's distinct figures ([`figures::figures`]; empty unless the
    /// store has `template_figures`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<u32>,
    /// The key of the document's URL ([`text::cites::url_key`]; stores with `originals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_key: Option<u64>,
    /// Keys of the URLs it cites (its source lines and source links, at most
    /// [`text::cites::MAX_CITES`], sorted; stores with `originals`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cites: Vec<u64>,
    /// The host of the document's URL ([`text::cites::host`]), hashed: a citation between two
    /// pages of one host does not count, and a stored page's template counts only against a
    /// page of another host (stores with `originals` or `site_templates`; never serialized).
    #[serde(skip)]
    pub host_key: Option<u64>,
    /// The sentence sketch of the lines left out of the page as its site's furniture
    /// (stores with `furniture`; never serialized): a page of the same site fingerprinted
    /// before they were known to be furniture holds them, and is compared without them.
    #[serde(skip)]
    pub furniture: Vec<u32>,
    /// The postings and simhash of the whole page, when lines were left out of it as its
    /// site's furniture (never serialized): looked up as well as the page's own.
    #[serde(skip)]
    pub whole: Option<Box<Fingerprints>>,
    /// The keys of the lines left out of the page as its site's furniture
    /// ([`crate::text::lines::line_key`], sorted; empty: read whole; never serialized).
    #[serde(skip)]
    pub left_out: Vec<u64>,
    /// The page's host ([`text::cites::host_key`]) and the sentence sketch of its lines that
    /// the host showed on an earlier page and that are not its furniture yet (stores with
    /// `furniture`; sorted; never serialized): compared with a page of another host, those
    /// the other page lacks are not counted (`engine/compared.rs`, `as_compared`); stores
    /// with `site_templates` keep them in the page's record (its `template`).
    #[serde(skip)]
    pub host_seen: Option<(u64, Vec<u32>)>,
}

/// What a document carries besides its text, for the algorithms that read it (`des`,
/// `punct-title`, `two-stage`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Meta<'a> {
    /// Title.
    pub title: Option<&'a str>,
    /// Meta description.
    pub description: Option<&'a str>,
    /// Meta keywords.
    pub keywords: Option<&'a str>,
    /// Its URL.
    pub url: Option<&'a str>,
    /// The URLs its page links to as its source (its text's source lines are read too).
    pub cites: &'a [String],
}

impl Fingerprints {
    /// The host a page is compared by: its lines' ([`Fingerprints::host_seen`]), else its
    /// URL's ([`Fingerprints::host_key`]); None for a text without a URL.
    pub fn compared_host(&self) -> Option<u64> {
        self.host_seen.as_ref().map(|(h, _)| *h).or(self.host_key)
    }

    /// What verification compares.
    pub fn sketches(&self) -> Sketches<'_> {
        Sketches {
            sketch: &self.sketch,
            order: &self.order,
            shingles: &self.shingles,
            figures: &self.figures,
            chars: self.chars,
        }
    }

    /// Sentence hashes, band keys and exact-algorithm keys: what the store posts under this
    /// document.
    pub fn postings(&self) -> impl Iterator<Item = u64> + '_ {
        self.nshash
            .iter()
            .chain(&self.bands)
            .chain(&self.keys)
            .copied()
    }

    /// What a lookup of this document reads: its postings, and those of its whole page when
    /// lines were left out of it as furniture ([`Fingerprints::whole`]).
    pub fn lookup_postings(&self) -> impl Iterator<Item = u64> + '_ {
        self.postings()
            .chain(self.whole.iter().flat_map(|w| w.postings()))
    }

    /// The simhashes a lookup of this document reads: its own and its whole page's.
    pub fn lookup_simhashes(&self) -> impl Iterator<Item = u64> + '_ {
        self.simhash
            .into_iter()
            .chain(self.whole.as_ref().and_then(|w| w.simhash))
    }

    /// Whether it is a page's (a document with a URL, in a store that keeps URLs' or hosts'
    /// keys: `originals` or `site_templates`).
    pub fn is_page(&self) -> bool {
        self.url_key.is_some() || self.host_key.is_some()
    }

    /// Whether there is nothing to match this document on.
    pub fn is_empty(&self) -> bool {
        self.nshash.is_empty()
            && self.simhash.is_none()
            && self.bands.is_empty()
            && self.keys.is_empty()
    }
}

/// Character n-grams of the letters and digits of `text`, with their counts (sorted).
fn char_ngrams(text: &str, n: usize) -> Vec<(String, f64)> {
    let chars: Vec<char> = text
        .chars()
        .filter(|&c| text::sentences::is_word_char(c))
        .collect();
    let mut counts: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    for w in chars.windows(n) {
        *counts.entry(w.iter().collect()).or_default() += 1.0;
    }
    if counts.is_empty() && !chars.is_empty() {
        counts.insert(chars.iter().collect(), 1.0);
    }
    counts.into_iter().collect()
}

/// Computes fingerprints with a store's settings and the resources they name (a learned IDF
/// table). Cheap to clone (the table is shared); pure, so safe to use from many threads.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    opts: Options,
    weights: TermWeights,
}

impl Fingerprinter {
    /// A fingerprinter for `opts`; `idf` must be the table `opts.simhash_idf` names (by
    /// digest), or `None` for jieba's built-in table.
    pub fn new(opts: Options, idf: Option<Arc<IdfTable>>) -> Result<Fingerprinter> {
        match (&opts.simhash_idf, &idf) {
            (IdfSource::Jieba, None) => {}
            (IdfSource::Table { digest, .. }, Some(t)) if *digest == t.digest() => {}
            (want, got) => {
                return Err(Error::InvalidOption(format!(
                    "IDF table mismatch: settings name {want}, given {}",
                    got.as_ref().map_or("jieba".to_string(), |t| t.digest())
                )))
            }
        }
        Ok(Fingerprinter {
            weights: TermWeights {
                stopwords: opts.simhash_stopwords,
                segmenter: opts.segmenter,
                idf,
            },
            opts,
        })
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// How simhash terms are filtered and weighted.
    pub fn weights(&self) -> &TermWeights {
        &self.weights
    }

    /// The text every fingerprint is computed from: [`text::prepare`]d (normalized, t2s), with
    /// `reflow` the line breaks between two Chinese characters removed (a wrapped sentence or
    /// word is whole again), and with `tw_phrases` Taiwan words folded onto mainland ones
    /// ([`text::fold_tw`]; after the lines are joined, so a wrapped word folds too).
    pub fn prepare(&self, body: &str) -> String {
        self.prepare_page(body, false)
    }

    /// [`Fingerprinter::prepare`] of a document that is a `page` (it has a URL): under
    /// `headings`, the lines of its headings ([`text::sentences::heading_lines_end`]) are not
    /// joined to its first sentence by `reflow`, whose joins are for a wrapped sentence.
    pub fn prepare_page(&self, body: &str, page: bool) -> String {
        let mut norm = text::prepare(body, &self.opts);
        if self.opts.reflow {
            let head = if nshash::tells_headings_apart(&self.opts, page) {
                text::sentences::heading_lines_end(&norm, nshash::HEADINGS_MOST)
            } else {
                0
            };
            if let std::borrow::Cow::Owned(joined) = text::join_cjk_lines(&norm[head..]) {
                norm = format!("{}{joined}", &norm[..head]);
            }
        }
        if self.opts.tw_phrases {
            if let std::borrow::Cow::Owned(folded) = text::fold_tw(&norm) {
                norm = folded;
            }
        }
        norm
    }

    /// The weighted features simhash hashes, of [`Fingerprinter::prepare`]d text, sorted.
    pub fn simhash_features(&self, prepared: &str) -> Vec<(String, f64)> {
        match self.opts.simhash_features {
            SimhashFeatures::Words => self.weights.weighted_terms(prepared),
            SimhashFeatures::Chars => char_ngrams(prepared, 3),
        }
    }

    /// Compute the fingerprints of `body` (a document without title, description or keywords).
    pub fn fingerprint(&self, body: &str) -> Fingerprints {
        self.fingerprint_prepared(&self.prepare(body))
    }

    /// [`Fingerprinter::fingerprint`] of a document with its title, meta description and
    /// keywords: the `des` key is then the description's instead of the text's start,
    /// `punct-title` has the title's key, `two-stage` its coarse key from them.
    pub fn fingerprint_with(&self, body: &str, meta: Meta<'_>) -> Fingerprints {
        self.fingerprint_prepared_with(&self.prepare_page(body, meta.url.is_some()), meta)
    }

    /// Compute the fingerprints of text already [`Fingerprinter::prepare`]d.
    pub fn fingerprint_prepared(&self, text: &str) -> Fingerprints {
        self.fingerprint_prepared_with(text, Meta::default())
    }

    /// [`Fingerprinter::fingerprint_with`] of text already [`Fingerprinter::prepare`]d.
    #[expect(
        clippy::too_many_lines,
        reason = "every fingerprint of a store's settings in one place, in the order they are stored"
    )]
    pub fn fingerprint_prepared_with(&self, text: &str, meta: Meta<'_>) -> Fingerprints {
        let opts = &self.opts;
        let page = meta.url.is_some();
        let (mut top, sketch, mut order, highs, shingles, chars, bands) = if opts.reflow {
            let s = scan::scan(text, opts, page);
            (
                s.top, s.sketch, s.order, s.highs, s.shingles, s.chars, s.bands,
            )
        } else {
            let (top, sketch, order) = nshash::nshash_sketch_and_order(text, opts, page);
            let shingles = minhash::shingles(text, sketch.len(), false);
            let bands = minhash::bands(
                text,
                opts.minhash_bands as usize,
                opts.minhash_rows as usize,
            );
            // Stores with `late_keys`: a page keeps the whole hashes of its sentences.
            let highs = if nshash::keeps_highs(opts, page) {
                nshash::sentence_highs(text, opts, &sketch)
            } else {
                Vec::new()
            };
            (
                top,
                sketch,
                order,
                highs,
                shingles,
                text.chars().count() as u64,
                bands,
            )
        };
        if !opts.link_shape {
            order.clear();
        }
        if !opts.nshash {
            top.clear();
        }
        let algos = &opts.key_algos.0;
        let needs_terms = algos.iter().any(|a| {
            !matches!(
                a,
                KeyAlgo::Segments { .. } | KeyAlgo::Punct | KeyAlgo::PunctTitle | KeyAlgo::Des
            )
        });
        let words = opts.simhash && opts.simhash_features == SimhashFeatures::Words;
        // Segment the text once for every algorithm that weighs words (sorted terms for the
        // key algorithms; simhash alone takes them as they come: its votes are integer sums).
        let stats = if needs_terms {
            self.weights.term_stats(text)
        } else {
            Vec::new()
        };
        let unordered = if words && !needs_terms {
            self.weights.term_stats_unordered(text)
        } else {
            Vec::new()
        };
        let prepared =
            |s: Option<&str>| s.map(|s| self.prepare(s)).filter(|s| !s.trim().is_empty());
        let mut key_list = Vec::new();
        let mut key_weights = Vec::new();
        for a in algos {
            let tag = keys::algo_tag(a);
            match *a {
                KeyAlgo::Imatch { keep_pct } => key_list.extend(keys::imatch(&stats, keep_pct)),
                KeyAlgo::Keywords { n, check } | KeyAlgo::KeywordsCon { n, check } => {
                    let con = matches!(a, KeyAlgo::KeywordsCon { .. });
                    key_list.extend(keys::keywords(&stats, n, con, tag));
                    if check.is_some() && key_weights.is_empty() {
                        key_weights = keys::keyword_weights(&stats, n);
                    }
                }
                KeyAlgo::KeywordsPct { pct, interval } => {
                    key_list.extend(keys::keywords_pct(&stats, pct, interval));
                }
                KeyAlgo::Punct => key_list.extend(keys::punct(text)),
                KeyAlgo::PunctTitle => {
                    key_list.extend(keys::punct_title(text, prepared(meta.title).as_deref()));
                }
                KeyAlgo::Des => key_list.extend(
                    prepared(meta.description)
                        .and_then(|d| keys::des(&d))
                        .or_else(|| keys::des(text)),
                ),
                KeyAlgo::TwoStage { words, paras, .. } => {
                    let parts: Vec<&str> = [meta.title, meta.keywords, meta.description]
                        .into_iter()
                        .flatten()
                        .collect();
                    let coarse = prepared(Some(&parts.join("\n")))
                        .map(|c| self.weights.term_stats(&c))
                        .filter(|s| !s.is_empty());
                    let coarse = coarse.as_deref().unwrap_or(&stats);
                    key_list.extend(keys::two_stage(coarse, words, text, paras));
                }
                KeyAlgo::Segments { n, .. } => key_list.extend(keys::segments(text, n)),
            }
        }
        let simhash = match (opts.simhash, words) {
            (false, _) => None,
            (true, true) if needs_terms => {
                simhash::simhash_of_at_least(&text::weigh(&stats), opts.simhash_min_terms)
            }
            (true, true) => {
                simhash::simhash_of_at_least(&text::weigh(&unordered), opts.simhash_min_terms)
            }
            (true, false) => {
                simhash::simhash_of_at_least(&self.simhash_features(text), opts.simhash_min_terms)
            }
        };
        let figures = if opts.template_figures {
            // Stores with `heading_figures`: a page's headings are not its text's figures.
            let from = if opts.heading_figures && nshash::tells_headings_apart(opts, page) {
                nshash::headings_end(text, opts)
            } else {
                0
            };
            figures::figures(&text[from..])
        } else {
            Vec::new()
        };
        let host_key = meta
            .url
            .filter(|_| opts.originals || opts.site_templates)
            .and_then(text::cites::host_key);
        let (url_key, cites) = if opts.originals {
            let mut cites: Vec<u64> = meta
                .cites
                .iter()
                .map(String::as_str)
                .chain(text::cites::cited_urls(text).iter().map(String::as_str))
                // A page citing its own site is no citation (a re-crawl of the copier, another
                // of its pages): kept out here, it cannot name an original later either.
                .filter(|u| host_key.is_none() || text::cites::host_key(u) != host_key)
                .map(text::cites::url_key)
                .collect();
            cites.sort_unstable();
            cites.dedup();
            cites.truncate(text::cites::MAX_CITES);
            (meta.url.map(text::cites::url_key), cites)
        } else {
            (None, Vec::new())
        };
        Fingerprints {
            figures,
            url_key,
            cites,
            host_key,
            nshash: top,
            simhash,
            sketch,
            order,
            highs,
            shingles,
            chars,
            bands,
            keys: key_list,
            key_weights,
            furniture: Vec::new(),
            whole: None,
            left_out: Vec::new(),
            host_seen: None,
        }
    }

    /// The sentence sketch of `body` alone, as [`Fingerprinter::fingerprint`] would make it.
    pub fn sentence_sketch(&self, body: &str) -> Vec<u32> {
        let text = self.prepare(body);
        if self.opts.reflow {
            scan::scan(&text, &self.opts, false).sketch
        } else {
            nshash::nshash_sketch_and_order(&text, &self.opts, false).1
        }
    }
}

/// Compute the fingerprints of `body` with `opts`, for settings that use jieba's built-in IDF
/// table (a store with a learned table: [`crate::Fpdb::fingerprinter`]).
///
/// # Panics
/// When `opts.simhash_idf` names a learned table.
pub fn fingerprint(body: &str, opts: &Options) -> Fingerprints {
    Fingerprinter::new(opts.clone(), None)
        .expect("fingerprint(): settings name a learned IDF table; use Fingerprinter")
        .fingerprint(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: simhash once summed term weights in hash-map order, so the same text could
    /// get fingerprints one bit apart from one run (or thread) to the next.
    #[test]
    fn same_text_same_fingerprints_across_threads() {
        let text = "In article <1993Apr15.214724.1> a friend writes: the radar detector works fine. \
                    北京烤鸭真好吃，北京烤鸭是北京的名菜。今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。";
        let opts = Options::default();
        let first = fingerprint(text, &opts);
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let o = opts.clone();
                std::thread::spawn(move || fingerprint(text, &o))
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), first);
        }
    }
}
