//! Why two texts match or not: the sentences nshash keeps from each and the ones they share,
//! the sentence overlap that verifies candidates, the simhash distance, and the weighted terms
//! found in one text only. Two documents are linked when (nshash_match or simhash_match) and
//! verified.

use std::collections::HashMap;

use serde::Serialize;

use crate::fingerprint::{nshash, simhash, Fingerprinter};
use crate::text;

/// The explanation of one pair of texts under a store's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Sentence keys nshash keeps for A (longest first).
    pub sentences_a: Vec<String>,
    /// Sentence keys nshash keeps for B.
    pub sentences_b: Vec<String>,
    /// Kept sentences present in both.
    pub shared_sentences: Vec<String>,
    /// Whether nshash alone would link them (shared >= min_shared, capped by A's and B's counts).
    pub nshash_match: bool,
    /// Sentence overlap (shared over the larger document's sentences).
    pub overlap: f64,
    /// Character-shingle resemblance (estimated Jaccard of 4-grams), when both texts have a
    /// shingle sketch (short texts; every text in stores with `reflow`).
    pub resemblance: Option<f64>,
    /// The similarity candidates are verified on (see [`nshash::similarity`]).
    pub similarity: f64,
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
    /// Heaviest simhash features (terms, or character 3-grams) of A missing from B.
    pub terms_only_a: Vec<(String, f64)>,
    /// Heaviest terms of B missing from A.
    pub terms_only_b: Vec<(String, f64)>,
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

/// Explain the pair (`a`, `b`) under a store's settings.
pub fn explain(a: &str, b: &str, fp: &Fingerprinter) -> Explanation {
    let opts = fp.options();
    let (na, nb) = (text::prepare(a, opts), text::prepare(b, opts));
    let (sa, sb) = (
        nshash::top_sentence_keys(&na, opts),
        nshash::top_sentence_keys(&nb, opts),
    );
    let shared: Vec<String> = sa.iter().filter(|s| sb.contains(s)).cloned().collect();
    let need = opts.nshash_min_shared.min(sa.len()).min(sb.len()).max(1);
    let (ta, tb) = (fp.simhash_features(&na), fp.simhash_features(&nb));
    let (ha, hb) = (simhash::simhash(&ta), simhash::simhash(&tb));
    // Same as the store computes them (reflow joins Chinese lines before segmenting).
    let distance = ha.zip(hb).map(|(x, y)| simhash::hamming(x, y));
    let (fa, fb) = (fp.fingerprint(a), fp.fingerprint(b));
    let overlap = nshash::overlap(&fa.sketch, &fb.sketch);
    let similarity = nshash::similarity(&fa.sketch, &fa.shingles, &fb.sketch, &fb.shingles);
    Explanation {
        nshash_match: shared.len() >= need,
        overlap,
        resemblance: (!fa.shingles.is_empty() && !fb.shingles.is_empty())
            .then(|| nshash::resemblance(&fa.shingles, &fb.shingles)),
        similarity,
        verified: similarity * 100.0 >= opts.verify_overlap_pct as f64,
        sentences_a: sa,
        sentences_b: sb,
        shared_sentences: shared,
        simhash_a: ha.map(|h| format!("{h:016x}")),
        simhash_b: hb.map(|h| format!("{h:016x}")),
        simhash_match: distance.is_some_and(|d| d <= opts.simhash_k),
        distance,
        terms_only_a: only_in(&ta, &tb, 10),
        terms_only_b: only_in(&tb, &ta, 10),
    }
}
