//! Word segmentation (jieba-rs) with TF-IDF weights from jieba's built-in IDF table.
//! The segmenter and the IDF table are built once per process (~0.2 s) and shared by all
//! threads.

use std::sync::OnceLock;

use jieba_rs::{Jieba, KeywordExtract, TfIdf};

fn engines() -> &'static (Jieba, TfIdf) {
    static ENGINES: OnceLock<(Jieba, TfIdf)> = OnceLock::new();
    ENGINES.get_or_init(|| (Jieba::new(), TfIdf::default()))
}

/// Every term of `text` (stop words and one-character terms removed by jieba's TF-IDF
/// extractor) with its TF-IDF weight.
pub fn weighted_terms(text: &str) -> Vec<(String, f64)> {
    let (jieba, tfidf) = engines();
    tfidf
        .extract_keywords(jieba, text, usize::MAX, Vec::new())
        .into_iter()
        .map(|k| (k.keyword, k.weight))
        .collect()
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
}
