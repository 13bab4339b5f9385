//! Word segmentation (jieba-rs `cut`, HMM off) with TF-IDF weights from jieba's built-in IDF
//! table. The segmenter and the IDF table are built once per process (~0.2 s) and shared by all
//! threads.
//!
//! jieba-rs keeps its IDF table private and its keyword extractor also POS-tags every word
//! (2-3x the cost of `cut`). So words come from `cut`, and each distinct word's IDF is asked of
//! the extractor once (a one-word text has weight = idf) and cached per thread. The result is
//! the extractor's own weighting (same words, stop words and minimum length), checked by a test
//! against `extract_keywords` on whole documents.

use foldhash::{HashMap, HashMapExt};
use std::cell::RefCell;
use std::sync::OnceLock;

use jieba_rs::{Jieba, KeywordExtract, TfIdf};

fn engines() -> &'static (Jieba, TfIdf) {
    static ENGINES: OnceLock<(Jieba, TfIdf)> = OnceLock::new();
    ENGINES.get_or_init(|| (Jieba::new(), TfIdf::default()))
}

/// Cached words per thread before the cache is cleared (bounds memory on open vocabularies).
const IDF_CACHE_MAX: usize = 1 << 20;

thread_local! {
    // foldhash: these maps are hit once per token, where SipHash cost as much as segmenting.
    static IDF: RefCell<HashMap<String, Option<f64>>> = RefCell::new(HashMap::new());
}

/// IDF of a word, or None for stop words and words shorter than two characters.
fn idf(word: &str) -> Option<f64> {
    if let Some(v) = IDF.with(|c| c.borrow().get(word).copied()) {
        return v;
    }
    let (jieba, tfidf) = engines();
    let v = tfidf
        .extract_keywords(jieba, word, 1, Vec::new())
        .first()
        .filter(|k| k.keyword == word)
        .map(|k| k.weight);
    IDF.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= IDF_CACHE_MAX {
            c.clear();
        }
        c.insert(word.to_string(), v);
    });
    v
}

/// Every term of `text` (stop words and one-character terms removed, as jieba's TF-IDF
/// extractor does) with its TF-IDF weight (term frequency x IDF / number of kept terms),
/// sorted by term.
pub fn weighted_terms(text: &str) -> Vec<(String, f64)> {
    let (jieba, _) = engines();
    let mut tf: HashMap<&str, (u32, f64)> = HashMap::new();
    let mut total = 0u64;
    for tok in jieba.cut(text, false) {
        if let Some(e) = tf.get_mut(tok.word) {
            e.0 += 1;
            total += 1;
        } else if let Some(w) = idf(tok.word) {
            tf.insert(tok.word, (1, w));
            total += 1;
        }
    }
    let total = total.max(1) as f64;
    let mut terms: Vec<(String, f64)> = tf
        .into_iter()
        .map(|(w, (n, idf))| (w.to_string(), n as f64 * idf / total))
        .collect();
    // Deterministic order (the map's is random): same text, same output.
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_terms_get_positive_weights() {
        let terms = weighted_terms("北京烤鸭真好吃，北京烤鸭是北京的名菜");
        assert!(terms.iter().any(|(t, _)| t == "北京烤鸭"));
        assert!(terms.iter().all(|(_, w)| *w > 0.0));
    }

    /// Oracle: the same terms and weights as jieba's own TF-IDF extractor.
    #[test]
    fn equals_jieba_extract_keywords() {
        let (jieba, tfidf) = engines();
        for text in [
            "今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。后天纽约的天气不好，昨天纽约的天气也不好，北京烤鸭真好吃",
            "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，推进廉政建设，健全行政监督制度，制定本条例。",
            "the quick brown fox jumps over the lazy dog; the dog sleeps. 2024年GDP增长5.2%",
        ] {
            let text = crate::text::normalize(text);
            let mut ours = weighted_terms(&text);
            let mut theirs: Vec<(String, f64)> = tfidf
                .extract_keywords(jieba, &text, usize::MAX, Vec::new())
                .into_iter()
                .map(|k| (k.keyword, k.weight))
                .collect();
            ours.sort_by(|a, b| a.0.cmp(&b.0));
            theirs.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(ours.len(), theirs.len(), "{text}: {ours:?} vs {theirs:?}");
            for ((a, wa), (b, wb)) in ours.iter().zip(&theirs) {
                assert_eq!(a, b);
                assert!((wa - wb).abs() < 1e-9, "{a}: {wa} vs {wb}");
            }
        }
    }
}
