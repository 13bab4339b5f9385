//! Why two texts match or not: the sentences nshash keeps from each and the ones they share,
//! the similarity that verifies candidates (sentence overlap, shingle resemblance), the simhash
//! distance, the MinHash bands they share, and the weighted terms found in one text only. Two
//! documents are linked when (nshash_match or simhash_match or minhash_match) and verified.
//!
//! Stored documents (whose texts are not kept) are compared on their stored fingerprints:
//! [`compare`] gives the same decision signals without sentences and terms.

use std::collections::HashMap;

use serde::Serialize;

use crate::fingerprint::{nshash, simhash, similarity, Fingerprinter, Fingerprints};
use crate::options::Options;
use crate::Document;

/// The decision signals of two fingerprinted documents under a store's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// nshash hashes (of the kept sentences) present in both.
    pub shared_nshash: usize,
    /// Whether nshash alone would link them (shared >= min_shared, capped by A's and B's counts).
    pub nshash_match: bool,
    /// Sentence overlap (shared over the larger document's sentences).
    pub overlap: f64,
    /// Character-shingle resemblance (estimated Jaccard of 4-grams), when both have a shingle
    /// sketch (short texts; every text in stores with `reflow`).
    pub resemblance: Option<f64>,
    /// The similarity candidates are verified on (see [`similarity::similarity`]).
    pub similarity: f64,
    /// The resemblance that verifies this pair on shingles alone
    /// ([`Options::resemblance_floor`] of the larger document's length).
    pub resemblance_floor: f64,
    /// Whether the similarity passes the store's verification threshold.
    pub verified: bool,
    /// Simhash of A (hex).
    pub simhash_a: Option<String>,
    /// Simhash of B (hex).
    pub simhash_b: Option<String>,
    /// Hamming distance.
    pub distance: Option<u32>,
    /// Whether simhash alone would link them (distance <= k).
    pub simhash_match: bool,
    /// MinHash band keys present in both (0 when the store has no minhash).
    pub shared_bands: usize,
    /// Whether minhash alone would make them candidates (one shared band).
    pub minhash_match: bool,
    /// Per exact-key algorithm of the store: (name, keys shared, whether it makes them
    /// candidates).
    pub key_matches: Vec<(&'static str, usize, bool)>,
    /// The keyword weight check's distance of A and B (stores with keywords-check or
    /// keywords-con-check; see `fingerprint::keys::weight_distance`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_distance: Option<f64>,
    /// Where their shared sentences sit (stores with `link_shape`, documents sharing a
    /// sentence): `copy`, `window` or `ends only` ([`similarity::Shape`]); with tight clusters a
    /// verified copy-shaped link joins through any member, a window-shaped one is not strong
    /// by similarity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<&'static str>,
    /// A strong link under tight clusters (a copy of a member: similarity of 85% or more and
    /// not two windows, or a resemblance or shape of a copy), which joins a cluster whatever
    /// its first document, and is never one through a host's lines only.
    pub strong: bool,
    /// How many of A's and of B's sentences are their pages' headings (stores with
    /// `headings`: the lines above a page's first sentence, which a shape leaves out).
    pub headings: [usize; 2],
    /// Verified only as a teaser and its article ([`crate::fingerprint::similarity::teaser`]):
    /// the similarity is the verification threshold, raised from under it.
    pub teaser: bool,
    /// Verified only as an excerpt and its article ([`crate::fingerprint::similarity::excerpt`],
    /// stores with `excerpts`): the smaller holds the larger's first sentences. The
    /// similarity is the verification threshold, raised from under it.
    pub excerpt: bool,
    /// Verified as an excerpt only because the smaller's last sentence, cut short, is not
    /// counted as its own (stores with `cut_excerpts`).
    pub excerpt_cut: bool,
    /// Why the pair is not an excerpt and its article, when it is not verified otherwise
    /// (stores with `excerpts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_excerpt: Option<&'static str>,
    /// Verified on the resemblance of the same characters in another order
    /// ([`crate::Options::reordered_lines`]), which the length would not count otherwise.
    pub reordered: bool,
    /// Their figures compared (stores with `template_figures`, both documents with figures):
    /// a template instance is never verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}

/// Two documents' figures compared ([`crate::fingerprint::figures`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Figures of the document with fewer (in the compared part of the sketches).
    pub compared: usize,
    /// Of those, the ones the other has too.
    pub shared: usize,
    /// Of those, the ones the other lacks.
    pub differ: usize,
    /// Differing figures per 1,000 characters of the shorter document.
    pub differ_per_1000_chars: f64,
    /// Whether the pair is two reports filled into one template (not verified).
    pub template_instance: bool,
}

impl From<crate::fingerprint::figures::FigureCheck> for Figures {
    fn from(f: crate::fingerprint::figures::FigureCheck) -> Figures {
        Figures {
            compared: f.compared,
            shared: f.shared,
            differ: f.differ(),
            differ_per_1000_chars: f.differ() as f64 * 1000.0 / f.chars.max(1) as f64,
            template_instance: f.template(),
        }
    }
}

impl Comparison {
    /// Whether the store links the two: a candidate from either algorithm, verified.
    pub fn linked(&self) -> bool {
        (self.nshash_match
            || self.simhash_match
            || self.minhash_match
            || self.key_matches.iter().any(|k| k.2))
            && self.verified
    }
}

/// Compare two documents' fingerprints under `opts`.
pub fn compare(a: &Fingerprints, b: &Fingerprints, opts: &Options) -> Comparison {
    let shared = a.nshash.iter().filter(|h| b.nshash.contains(h)).count();
    let need = opts
        .nshash_min_shared
        .min(a.nshash.len())
        .min(b.nshash.len())
        .max(1);
    let overlap = similarity::overlap(&a.sketch, &b.sketch);
    let similarity = crate::fingerprint::similarity(opts, a.sketches(), b.sketches());
    let resemblance_floor = opts.resemblance_floor(a.chars.max(b.chars));
    let distance = a
        .simhash
        .zip(b.simhash)
        .map(|(x, y)| simhash::hamming(x, y));
    let shared_bands = a.bands.iter().filter(|h| b.bands.contains(h)).count();
    let key_matches = opts
        .key_algos
        .0
        .iter()
        .map(|algo| {
            use crate::fingerprint::keys;
            let of = |f: &Fingerprints| -> Vec<u64> {
                f.keys
                    .iter()
                    .copied()
                    .filter(|&k| keys::owns(algo, k))
                    .collect()
            };
            let (ka, kb) = (of(a), of(b));
            let shared: Vec<u64> = ka.iter().copied().filter(|k| kb.contains(k)).collect();
            // A as the document looked up, as the store decides.
            let weight = |v: &[u64]| v.iter().map(|&k| keys::weight(k)).sum::<f64>();
            let need = algo.need(weight(&ka));
            let checked = algo
                .weight_check()
                .is_none_or(|bar| keys::weight_distance(&a.key_weights, &b.key_weights) < bar);
            (
                algo.name(),
                shared.len(),
                !shared.is_empty() && weight(&shared) >= need && checked,
            )
        })
        .collect();
    let shaped = similarity::shape(&a.sketch, &a.order, &b.sketch, &b.order, opts.headings);
    let shape = shaped.map(|s| s.name());
    let (_, sentences, resemblance) =
        crate::fingerprint::similarity_parts(opts, a.sketches(), b.sketches());
    let strong = crate::engine::is_strong(opts, similarity, sentences, resemblance, shaped);
    let headings = |order: &[u8]| {
        order
            .iter()
            .filter(|&&p| opts.headings && p == similarity::HEADING_PLACE)
            .count()
    };
    let teaser = crate::fingerprint::verified_as_teaser(opts, a.sketches(), b.sketches());
    let excerpt = crate::fingerprint::verified_as_excerpt(opts, a.sketches(), b.sketches());
    let reordered = crate::fingerprint::verified_as_reordered(opts, a.sketches(), b.sketches());
    let figures =
        crate::fingerprint::figure_check(opts, a.sketches(), b.sketches()).map(Figures::from);
    Comparison {
        figures,
        shape,
        strong,
        headings: [headings(&a.order), headings(&b.order)],
        teaser,
        excerpt: excerpt.is_some_and(|e| e.is_ok()),
        excerpt_cut: crate::fingerprint::excerpt_by_cut(opts, a.sketches(), b.sketches()),
        not_excerpt: excerpt
            .and_then(Result::err)
            .map(crate::fingerprint::similarity::NotExcerpt::reason),
        reordered,
        shared_bands,
        key_matches,
        weight_distance: opts
            .key_algos
            .0
            .iter()
            .any(|a| a.weight_check().is_some())
            .then(|| crate::fingerprint::keys::weight_distance(&a.key_weights, &b.key_weights)),
        minhash_match: opts.minhash_bands > 0 && shared_bands > 0,
        shared_nshash: shared,
        nshash_match: opts.nshash && shared >= need,
        overlap,
        resemblance: (!a.shingles.is_empty() && !b.shingles.is_empty())
            .then(|| similarity::resemblance(&a.shingles, &b.shingles)),
        similarity,
        resemblance_floor,
        // As lookups compare (a teaser's similarity is this threshold exactly).
        verified: opts.verify_overlap_pct == 0 || similarity >= opts.verify_threshold(),
        simhash_a: a.simhash.map(|h| format!("{h:016x}")),
        simhash_b: b.simhash.map(|h| format!("{h:016x}")),
        distance,
        simhash_match: opts.simhash && distance.is_some_and(|d| d <= opts.simhash_k),
    }
}

/// The explanation of one pair of texts under a store's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Sentence keys nshash keeps for A (longest first).
    pub sentences_a: Vec<String>,
    /// Sentence keys nshash keeps for B.
    pub sentences_b: Vec<String>,
    /// Kept sentences present in both.
    pub shared_sentences: Vec<String>,
    /// The decision signals.
    #[serde(flatten)]
    pub comparison: Comparison,
    /// Heaviest simhash features (terms, or character 3-grams) of A missing from B.
    pub terms_only_a: Vec<(String, f64)>,
    /// Heaviest terms of B missing from A.
    pub terms_only_b: Vec<(String, f64)>,
}

/// One sentence of a looked-up text, with the stored documents that hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MarkedSentence {
    /// The sentence as fingerprinted (normalized: lower case, simplified characters).
    pub text: String,
    /// Whether it is long enough to count (shorter ones are never compared).
    pub counted: bool,
    /// Which of the compared documents hold it (indices into the sketches given).
    pub shared: Vec<usize>,
}

/// The sentences of `normalized` in text order, each marked with the documents of `sketches`
/// (their stored sentence sketches) that hold it: what `explain` marks as shared, for a text
/// against stored documents whose texts are not kept. A text with no sentence long enough is
/// one sentence, as nshash keys it. A stored document of more than
/// [`nshash::SKETCH_MAX`] sentences keeps a sample of them, so a sentence it shares outside
/// the sample is not marked.
pub fn marked_sentences(
    normalized: &str,
    opts: &Options,
    sketches: &[&[u32]],
) -> Vec<MarkedSentence> {
    let holders = |key: &str| -> Vec<usize> {
        let h = nshash::hash_key(key, opts.nshash_hash) as u32;
        sketches
            .iter()
            .enumerate()
            .filter(|(_, s)| s.binary_search(&h).is_ok())
            .map(|(i, _)| i)
            .collect()
    };
    let mut out: Vec<MarkedSentence> = crate::text::sentences::split(normalized)
        .filter_map(|s| {
            let (key, n) = crate::text::sentences::key(s);
            let text = s.trim();
            (!text.is_empty()).then(|| {
                let counted = n >= opts.min_sentence_chars;
                MarkedSentence {
                    text: text.to_string(),
                    counted,
                    shared: if counted { holders(&key) } else { Vec::new() },
                }
            })
        })
        .collect();
    if !out.iter().any(|m| m.counted) {
        let keys = nshash::top_sentence_keys(normalized, opts, false);
        if let Some(key) = keys.first() {
            out = vec![MarkedSentence {
                text: normalized.trim().to_string(),
                counted: true,
                shared: holders(key),
            }];
        }
    }
    out
}

/// [`marked_sentences`] of `original`'s prepared form (`normalized`), each shown as `original`
/// writes it (traditional characters, full-width letters, its own spacing) when the original
/// splits into as many sentences as the normalized text (it does unless normalization joined
/// wrapped lines or folded a phrase across a sentence end); else as normalized.
pub fn marked_original_sentences(
    original: &str,
    normalized: &str,
    opts: &Options,
    sketches: &[&[u32]],
) -> Vec<MarkedSentence> {
    let mut marked = marked_sentences(normalized, opts, sketches);
    let written: Vec<&str> = split_written(original).collect();
    if marked.len() == written.len() {
        for (m, w) in marked.iter_mut().zip(written) {
            m.text = w.to_string();
        }
    } else if marked.len() == 1 && marked[0].text == normalized.trim() {
        // The whole text as one sentence (none long enough to count alone).
        marked[0].text = original.trim().to_string();
    }
    marked
}

/// [`crate::text::sentences::split`] of text as written: the ends normalization turns into
/// the ASCII ones (`。！？；．` and their full-width kin) end a sentence here too.
fn split_written(text: &str) -> impl Iterator<Item = &str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let digit = |c: char| c.is_ascii_digit() || ('０'..='９').contains(&c);
    let mut start = 0usize;
    let mut k = 0usize;
    std::iter::from_fn(move || {
        while k < chars.len() {
            let (at, c) = chars[k];
            let end_here = match c {
                '!' | '?' | ';' | '\n' | '。' | '！' | '？' | '；' | '｡' => true,
                '.' | '．' => {
                    let prev = k > 0 && digit(chars[k - 1].1);
                    let next = k + 1 < chars.len() && digit(chars[k + 1].1);
                    !(prev && next)
                }
                _ => false,
            };
            k += 1;
            if end_here {
                let s = text[start..at].trim();
                start = at + c.len_utf8();
                if !s.is_empty() {
                    return Some(s);
                }
            }
        }
        if start < text.len() {
            let s = text[start..].trim();
            start = text.len();
            if !s.is_empty() {
                return Some(s);
            }
        }
        None
    })
}

fn only_in(x: &[(String, f64)], y: &[(String, f64)], n: usize) -> Vec<(String, f64)> {
    let ys: HashMap<&str, f64> = y.iter().map(|(t, w)| (t.as_str(), *w)).collect();
    let mut v: Vec<(String, f64)> = x
        .iter()
        .filter(|(t, _)| !ys.contains_key(t.as_str()))
        .cloned()
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.truncate(n);
    v
}

/// Explain the pair (`a`, `b`) under a store's settings (their texts, and titles,
/// descriptions and keywords for the algorithms that read them).
pub fn explain(a: &Document, b: &Document, fp: &Fingerprinter) -> Explanation {
    let opts = fp.options();
    // The text the store fingerprints (with reflow, Chinese lines joined first).
    let (na, nb) = (
        fp.prepare_page(&a.text, a.url.is_some()),
        fp.prepare_page(&b.text, b.url.is_some()),
    );
    let (sa, sb) = (
        nshash::top_sentence_keys(&na, opts, a.url.is_some()),
        nshash::top_sentence_keys(&nb, opts, b.url.is_some()),
    );
    let shared: Vec<String> = sa.iter().filter(|s| sb.contains(s)).cloned().collect();
    let (ta, tb) = (fp.simhash_features(&na), fp.simhash_features(&nb));
    Explanation {
        comparison: compare(
            &fp.fingerprint_prepared_with(&na, a.meta()),
            &fp.fingerprint_prepared_with(&nb, b.meta()),
            opts,
        ),
        sentences_a: sa,
        sentences_b: sb,
        shared_sentences: shared,
        terms_only_a: only_in(&ta, &tb, 10),
        terms_only_b: only_in(&tb, &ta, 10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_sentences_are_shown_as_written() {
        let opts = Options::default();
        let fp = Fingerprinter::new(opts.clone(), None).unwrap();
        let stored =
            fp.fingerprint("政务服务标准化规范化便利化工作全面推进。到2025年底全面实现一网通办。");
        // Traditional characters and full-width digits: normalized, they match; shown, they
        // are the query's.
        let written = "政務服務標準化規範化便利化工作全面推進！到２０２５年底全面實現一網通辦。";
        let marks =
            marked_original_sentences(written, &fp.prepare(written), &opts, &[&stored.sketch]);
        let shown: Vec<(&str, Vec<usize>)> = marks
            .iter()
            .map(|m| (m.text.as_str(), m.shared.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                ("政務服務標準化規範化便利化工作全面推進", vec![0]),
                ("到２０２５年底全面實現一網通辦", vec![0]),
            ]
        );
        // Wrapped lines joined by normalization: the sentences are shown normalized.
        let wrapped = "政務服務標準化規範化便利\n化工作全面推進。";
        let marks = marked_original_sentences(wrapped, &fp.prepare(wrapped), &opts, &[]);
        assert_eq!(marks.len(), 1);
        assert!(!marks[0].text.contains('\n'));
    }

    #[test]
    fn marked_sentences_name_the_documents_that_hold_each() {
        let opts = Options::default();
        let fp = Fingerprinter::new(opts.clone(), None).unwrap();
        let one = "国务院办公厅日前印发通知，要求各地加快推进政务服务标准化规范化便利化。";
        let two = "通知提出到二零二五年底政务服务事项全面实现一网通办，企业和群众办事更加方便。";
        let three = "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木。";
        let stored_a = fp.fingerprint(&format!("{one}\n{two}"));
        let stored_b = fp.fingerprint(&format!("{two}\n{three}"));
        let query = fp.prepare(&format!("{one}\n短句。\n{two}\n{three}"));
        let marks = marked_sentences(&query, &opts, &[&stored_a.sketch, &stored_b.sketch]);
        let got: Vec<(bool, Vec<usize>)> = marks
            .iter()
            .map(|m| (m.counted, m.shared.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (true, vec![0]),
                (false, vec![]),
                (true, vec![0, 1]),
                (true, vec![1])
            ]
        );
        assert!(marks[0].text.starts_with("国务院办公厅"));
        // No sentence long enough: the whole text is one, as nshash keys it.
        let short = fp.prepare("短句。又一句。");
        let stored = fp.fingerprint("短句。又一句。");
        let marks = marked_sentences(&short, &opts, &[&stored.sketch]);
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].shared, [0]);
    }
}
