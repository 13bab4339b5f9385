//! Fingerprints of one document, computed from its text alone (no store access), so that they
//! can be computed on all cores before the sequential store step.

mod farmhash;
pub mod nshash;
pub mod simhash;

use serde::{Deserialize, Serialize};

pub use self::farmhash::fingerprint64;
use crate::options::{Options, SimhashFeatures};
use crate::text;

/// Every fingerprint of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprints {
    /// Sentence hashes (empty when nshash is off or the text has no letters/digits).
    pub nshash: Vec<u64>,
    /// 64-bit simhash (`None` when simhash is off or the text has no terms).
    pub simhash: Option<u64>,
    /// 32-bit hashes of every qualifying sentence, sorted (see [`nshash::overlap`]); used
    /// to verify candidates from either algorithm.
    pub sketch: Vec<u32>,
    /// Character-shingle sketch of short documents (see [`nshash::shingles`]).
    pub shingles: Vec<u32>,
    /// Characters of normalized text.
    pub chars: u64,
}

impl Fingerprints {
    /// Whether there is nothing to match this document on.
    pub fn is_empty(&self) -> bool {
        self.nshash.is_empty() && self.simhash.is_none()
    }
}

/// Character n-grams of the letters and digits of `text`, with their counts (sorted).
fn char_ngrams(text: &str, n: usize) -> Vec<(String, f64)> {
    let chars: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
    let mut counts: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    for w in chars.windows(n) {
        *counts.entry(w.iter().collect()).or_default() += 1.0;
    }
    if counts.is_empty() && !chars.is_empty() {
        counts.insert(chars.iter().collect(), 1.0);
    }
    counts.into_iter().collect()
}

/// Compute the fingerprints of `body` with the store's settings.
pub fn fingerprint(body: &str, opts: &Options) -> Fingerprints {
    let norm = text::prepare(body, opts);
    let (mut top, sketch) = nshash::nshash_and_sketch(&norm, opts);
    let shingles = nshash::shingles(&norm, sketch.len());
    if !opts.nshash {
        top.clear();
    }
    Fingerprints {
        nshash: top,
        simhash: if opts.simhash {
            match opts.simhash_features {
                SimhashFeatures::Words => simhash::simhash(&text::weighted_terms(&norm)),
                SimhashFeatures::Chars => simhash::simhash(&char_ngrams(&norm, 3)),
            }
        } else {
            None
        },
        sketch,
        shingles,
        chars: norm.chars().count() as u64,
    }
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
