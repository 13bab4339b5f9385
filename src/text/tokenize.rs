//! Word segmentation (jieba-rs `cut`, HMM off) with TF-IDF weights, for simhash.
//!
//! A term is a word of at least two characters that is not a stop word ([`Stopwords`]). Its
//! weight is term frequency x IDF / number of kept terms, as jieba's TF-IDF keyword extractor
//! computes it. The IDF comes from jieba's built-in table (default) or from an [`IdfTable`]
//! learned from a corpus ([`IdfTable::learn`]); a word missing from the table gets the table's
//! median IDF (jieba's rule).
//!
//! jieba-rs keeps its IDF table private and its keyword extractor also POS-tags every word
//! (2-3x the cost of `cut`). So words come from `cut`, and each distinct word's built-in IDF is
//! read from the same table embedded as an FST ([`super::lexicon`]) and cached per thread.
//! With jieba's stop words this is exactly the extractor's own weighting, checked by a test
//! against `extract_keywords` on whole documents. The first few texts of a process are cut
//! with a dictionary restricted to their words (the same result, without building the whole
//! dictionary): a one-document query never builds it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use foldhash::{HashMap, HashMapExt, HashSet};
use jieba_rs::Jieba;

use super::idf::IdfTable;
use super::lexicon;

use crate::options::{Segmenter, Stopwords};

/// Texts a process segments with a dictionary restricted to each text's words before it builds
/// the whole dictionary (a one-document query never does; a large ingest soon does).
static RESTRICTED_LEFT: AtomicUsize = AtomicUsize::new(16);

/// Texts longer than this always use the whole dictionary.
const RESTRICTED_MAX_BYTES: usize = 256 << 10;

/// `jieba().cut(text, false)`, without building the whole dictionary for the first few texts
/// of a process (the same words: see [`lexicon::restricted`]).
fn cut(text: &str) -> Vec<&str> {
    let words = |j: &Jieba| j.cut(text, false).into_iter().map(|t| t.word).collect();
    if let Some(j) = lexicon::built_jieba() {
        return words(j);
    }
    if text.len() <= RESTRICTED_MAX_BYTES
        && RESTRICTED_LEFT
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    {
        if let Some(j) = lexicon::restricted(text) {
            return words(&j);
        }
    }
    words(lexicon::jieba())
}

fn stopword_set(kind: Stopwords) -> Option<&'static HashSet<String>> {
    static JIEBA_SET: OnceLock<HashSet<String>> = OnceLock::new();
    static ISO_SET: OnceLock<HashSet<String>> = OnceLock::new();
    match kind {
        Stopwords::None => None,
        Stopwords::Jieba => {
            Some(JIEBA_SET.get_or_init(|| jieba_rs::DEFAULT_STOP_WORDS.iter().cloned().collect()))
        }
        Stopwords::Iso => Some(ISO_SET.get_or_init(|| {
            ["zh", "en"]
                .iter()
                .flat_map(|l| stop_words::get(l).iter())
                .map(|w| crate::text::normalize(w))
                .collect()
        })),
    }
}

/// `char::is_uppercase`, without the table lookup for ASCII and ideographs.
#[inline]
fn has_case_upper(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_uppercase()
    } else if crate::text::is_plain_ideograph(c) {
        false
    } else {
        c.is_uppercase()
    }
}

/// Cached words per thread before the cache is cleared (bounds memory on open vocabularies).
const IDF_CACHE_MAX: usize = 1 << 20;

/// A word of up to 23 bytes held in place (its length in the last byte): a cache key hashed
/// and compared as three machine words, with no pointer to follow to the word's bytes. Most
/// words are (a Chinese word of seven characters is 21 bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShortWord([u64; 3]);

impl ShortWord {
    fn new(word: &str) -> Option<ShortWord> {
        let b = word.as_bytes();
        if b.len() > 23 {
            return None;
        }
        let mut k = [0u8; 24];
        k[..b.len()].copy_from_slice(b);
        k[23] = b.len() as u8;
        let w = |i: usize| u64::from_le_bytes(k[i..i + 8].try_into().expect("8 bytes"));
        Some(ShortWord([w(0), w(8), w(16)]))
    }
}

impl std::hash::Hash for ShortWord {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for w in self.0 {
            state.write_u64(w);
        }
    }
}

/// The per-thread cache of built-in IDFs: short words in place, longer ones as strings.
#[derive(Default)]
struct IdfCache {
    short: HashMap<ShortWord, Option<f64>>,
    long: HashMap<String, Option<f64>>,
}

thread_local! {
    // foldhash: these maps are hit once per token, where SipHash cost as much as segmenting.
    // Keys in place: a cache of a large vocabulary misses the processor's caches, and a
    // key's own allocation was a second miss on every hit (a fifth of the segmenting's cost
    // went to this lookup).
    static IDF: RefCell<IdfCache> = RefCell::new(IdfCache::default());
}

/// jieba's built-in IDF of a word, or None for words shorter than two characters.
fn builtin(word: &str) -> Option<f64> {
    let short = ShortWord::new(word);
    let cached = IDF.with(|c| {
        let c = c.borrow();
        match short {
            Some(k) => c.short.get(&k).copied(),
            None => c.long.get(word).copied(),
        }
    });
    if let Some(v) = cached {
        return v;
    }
    let v = word.chars().nth(1).is_some().then(|| lexicon::idf(word));
    IDF.with(|c| {
        let mut c = c.borrow_mut();
        if c.short.len() + c.long.len() >= IDF_CACHE_MAX {
            c.short.clear();
            c.long.clear();
        }
        match short {
            Some(k) => c.short.insert(k, v),
            None => c.long.insert(word.to_string(), v),
        };
    });
    v
}

/// How simhash terms are filtered and weighted.
#[derive(Debug, Clone, Default)]
pub struct TermWeights {
    /// Stop words dropped.
    pub stopwords: Stopwords,
    /// IDF table; `None`: jieba's built-in one.
    pub idf: Option<Arc<IdfTable>>,
    /// How text is cut into words.
    pub segmenter: Segmenter,
}

impl TermWeights {
    /// The IDF of `word` when it is a term (two characters or more, not a stop word).
    fn term_idf(&self, word: &str, stop: Option<&HashSet<String>>) -> Option<f64> {
        if let Some(s) = stop {
            // jieba's rule: a word is also stopped when its lowercase form is listed.
            if s.contains(word)
                || word.chars().any(has_case_upper) && s.contains(&word.to_lowercase())
            {
                return None;
            }
        }
        match &self.idf {
            None => builtin(word),
            Some(t) => word.chars().nth(1).is_some().then(|| t.get(word)),
        }
    }

    /// Every term of `text` with its TF-IDF weight, sorted by term.
    pub fn weighted_terms(&self, text: &str) -> Vec<(String, f64)> {
        weigh(&self.term_stats(text))
            .into_iter()
            .map(|(w, x)| (w.to_string(), x))
            .collect()
    }

    /// Every term of `text` with its frequency and IDF, sorted by term.
    pub fn term_stats(&self, text: &str) -> Vec<(String, u32, f64)> {
        let mut terms: Vec<(String, u32, f64)> = self
            .term_stats_unordered(text)
            .into_iter()
            .map(|(w, n, idf)| (w.to_string(), n, idf))
            .collect();
        // Deterministic order (the map's is random): same text, same output.
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        terms
    }

    /// [`TermWeights::term_stats`] borrowed from `text`, in no particular order: for what does
    /// not depend on the order (simhash's integer votes), without a copy of each term and
    /// the sort.
    pub fn term_stats_unordered<'a>(&self, text: &'a str) -> Vec<(&'a str, u32, f64)> {
        let stop = stopword_set(self.stopwords);
        let mut tf: HashMap<&str, (u32, f64)> = HashMap::new();
        // A long text is cut a piece at a time: jieba's routes, word lists and character
        // classes of a whole 10 MB text took 300 MB.
        let words = super::pieces::pieces(text, super::pieces::PIECE_BYTES).flat_map(|piece| {
            match self.segmenter {
                Segmenter::Jieba => cut(piece),
                Segmenter::Fmm => lexicon::max_match(piece, false),
                Segmenter::Bmm => lexicon::max_match(piece, true),
            }
        });
        for word in words {
            // A term has two characters or more (checked first: most tokens of Chinese text
            // are single characters, and each cost three hash lookups to be dropped).
            if word.chars().nth(1).is_none() {
                continue;
            }
            // One hash per token; a word that is no term is kept with a count of 0, so that
            // its next occurrences are not looked up in the stop words and the IDFs again.
            tf.entry(word)
                .and_modify(|e| e.0 += u32::from(e.0 > 0))
                .or_insert_with(|| self.term_idf(word, stop).map_or((0, 0.0), |w| (1, w)));
        }
        tf.into_iter()
            .filter(|&(_, (n, _))| n > 0)
            .map(|(w, (n, idf))| (w, n, idf))
            .collect()
    }
}

/// TF-IDF weights of [`TermWeights::term_stats`]: frequency x IDF / number of kept terms
/// (borrowing the terms: simhash needs no copy of them).
pub fn weigh<S: AsRef<str>>(stats: &[(S, u32, f64)]) -> Vec<(&str, f64)> {
    let total = stats.iter().map(|t| u64::from(t.1)).sum::<u64>().max(1) as f64;
    stats
        .iter()
        .map(|(w, n, idf)| (w.as_ref(), f64::from(*n) * idf / total))
        .collect()
}

/// [`TermWeights::weighted_terms`] with the defaults: jieba's stop words and IDF table.
pub fn weighted_terms(text: &str) -> Vec<(String, f64)> {
    TermWeights::default().weighted_terms(text)
}

#[cfg(test)]
mod tests {
    use super::lexicon::jieba;
    use super::*;
    use jieba_rs::{KeywordExtract, KeywordExtractConfig, TfIdf};
    use proptest::prelude::*;

    /// Texts of every kind: the sample laws, mixed Chinese and English, digits, symbols.
    fn texts() -> Vec<String> {
        let sample = include_str!("../../data/sample.jsonl");
        let mut v: Vec<String> = sample
            .lines()
            .map(|l| {
                let d: serde_json::Value = serde_json::from_str(l).unwrap();
                crate::text::normalize(d["text"].as_str().unwrap())
            })
            .collect();
        for t in [
            "今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。",
            "2024年GDP增长5.2%，iPhone 15 Pro在中国大陆售价7999元；C++与Rust语言之争。",
            "The quick brown fox jumps over the lazy dog. e-mail: a.b@example.com 3.14159",
            "長江大橋上的車輛川流不息，台灣的朋友說這裡的風景很美。",
            "一 二 三, 4S店 1号店 ＡＢＣ　全角空格 ① ② ③ ……  —— 《人民日报》「引号」",
        ] {
            v.push(crate::text::normalize(t));
        }
        v
    }

    /// The old way to the built-in IDF: jieba's extractor on a one-word text.
    fn extractor_idf(word: &str) -> Option<f64> {
        static TFIDF: OnceLock<TfIdf> = OnceLock::new();
        let t = TFIDF.get_or_init(|| {
            let mut t = TfIdf::default();
            *t.config_mut() = KeywordExtractConfig::builder()
                .set_stop_words(Default::default())
                .build();
            t
        });
        t.extract_keywords(jieba(), word, 1, Vec::new())
            .first()
            .filter(|k| k.keyword == word)
            .map(|k| k.weight)
    }

    /// The IDF cache answers what the table does, for words held in place (up to 23 bytes)
    /// and as strings alike, asked once and again, a word and its prefixes apart.
    #[test]
    fn the_idf_cache_answers_as_the_table_does() {
        let words = [
            "中华人民共和国", // 21 bytes, in the table
            "中华人民共和",
            "中华人民共和国万岁",      // 27 bytes: a string key
            "中华人民共和国万",        // 24 bytes
            "abcdefghijklmnopqrstuvw", // 23 bytes
            "abcdefghijklmnopqrstuvwx",
            "abcdefghijklmnopqrstuv",
            "经济",
            "经",
        ];
        for round in 0..2 {
            for w in words {
                let want = w.chars().nth(1).is_some().then(|| lexicon::idf(w));
                assert_eq!(builtin(w), want, "{w} (round {round})");
            }
        }
        assert_ne!(builtin("经济"), builtin("中华人民共和国"));
    }

    /// Oracle: a dictionary restricted to a text's words cuts it as the whole one does, and
    /// the embedded IDF of every word equals the extractor's.
    #[test]
    fn restricted_dictionary_cuts_the_same() {
        for text in texts() {
            let full: Vec<&str> = jieba()
                .cut(&text, false)
                .into_iter()
                .map(|t| t.word)
                .collect();
            let r = lexicon::restricted(&text).expect("no padding word");
            let ours: Vec<&str> = r.cut(&text, false).into_iter().map(|t| t.word).collect();
            assert_eq!(ours, full, "{text}");
            for w in full {
                assert_eq!(
                    builtin(w).map(f64::to_bits),
                    extractor_idf(w).map(f64::to_bits),
                    "{w}"
                );
            }
        }
        // The median, for words the table does not list.
        assert!(extractor_idf("zzqxv").is_some());
        assert_eq!(builtin("zzqxv"), extractor_idf("zzqxv"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The same on random strings of common characters, punctuation and Latin letters.
        #[test]
        fn restricted_dictionary_cuts_random_text_the_same(
            text in "[的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理世车点克点aBc1 ，。！？、]{0,80}"
        ) {
            let text = crate::text::normalize(&text);
            let full: Vec<&str> = jieba().cut(&text, false).into_iter().map(|t| t.word).collect();
            let r = lexicon::restricted(&text).expect("no padding word");
            let ours: Vec<&str> = r.cut(&text, false).into_iter().map(|t| t.word).collect();
            prop_assert_eq!(ours, full);
        }
    }

    /// The unordered, borrowed terms are the sorted ones (simhash, which takes them unordered,
    /// does not depend on their order: `fingerprint::simhash`'s tests).
    #[test]
    fn unordered_terms_are_the_sorted_ones() {
        let w = TermWeights::default();
        for text in texts() {
            let mut unordered: Vec<(String, u32, f64)> = w
                .term_stats_unordered(&text)
                .into_iter()
                .map(|(t, n, idf)| (t.to_string(), n, idf))
                .collect();
            unordered.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(unordered, w.term_stats(&text), "{text}");
        }
    }

    #[test]
    fn chinese_terms_get_positive_weights() {
        let terms = weighted_terms("北京烤鸭真好吃，北京烤鸭是北京的名菜");
        assert!(terms.iter().any(|(t, _)| t == "北京烤鸭"));
        assert!(terms.iter().all(|(_, w)| *w > 0.0));
    }

    /// Oracle: the same terms and weights as jieba's own TF-IDF extractor.
    #[test]
    fn equals_jieba_extract_keywords() {
        let tfidf = TfIdf::default();
        for text in [
            "今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。后天纽约的天气不好，昨天纽约的天气也不好，北京烤鸭真好吃",
            "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，推进廉政建设，健全行政监督制度，制定本条例。",
            "the quick brown fox jumps over the lazy dog; the dog sleeps. 2024年GDP增长5.2%",
        ] {
            let text = crate::text::normalize(text);
            let mut ours = weighted_terms(&text);
            let mut theirs: Vec<(String, f64)> = tfidf
                .extract_keywords(jieba(), &text, usize::MAX, Vec::new())
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

    #[test]
    fn stop_lists_drop_what_they_list() {
        let text = crate::text::normalize("我们认为这个方案可以进行试点, and the plan is good");
        let terms = |s| {
            TermWeights {
                stopwords: s,
                idf: None,
                segmenter: Segmenter::Jieba,
            }
            .weighted_terms(&text)
            .into_iter()
            .map(|t| t.0)
            .collect::<Vec<_>>()
        };
        let (none, jieba, iso) = (
            terms(Stopwords::None),
            terms(Stopwords::Jieba),
            terms(Stopwords::Iso),
        );
        assert!(none.contains(&"the".to_string()) && none.contains(&"我们".to_string()));
        assert!(!jieba.contains(&"the".to_string()) && jieba.contains(&"我们".to_string()));
        assert!(!iso.contains(&"我们".to_string()) && iso.contains(&"方案".to_string()));
        assert!(iso.len() < jieba.len() && jieba.len() < none.len());
    }

    /// Oracle: a learned table's IDF is ln(n / df) counted by hand, and it survives its text form.
    #[test]
    fn learned_idf_counts_document_frequency() {
        let docs = ["北京烤鸭 北京烤鸭 天气", "天气 纽约", "纽约 天气 经理"];
        let t = IdfTable::learn(docs.iter().copied());
        assert_eq!(t.docs(), 3);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(t.get("天气"), 0.0));
        assert!(close(t.get("纽约"), (3f64 / 2.0).ln()));
        assert!(close(t.get("北京烤鸭"), 3f64.ln()));
        // Unknown words get the lower median of {0, ln 1.5, ln 3, ln 3}.
        assert!(close(t.get("没有"), (3f64 / 2.0).ln()));
        let back = IdfTable::parse(&t.to_text(), "t").unwrap();
        // A word may start with `#` in a jieba file; our tables never hold one.
        let hashed = IdfTable::parse("#c 2.5\n天气 1\n", "t").unwrap();
        assert_eq!(hashed.get("#c"), 2.5);
        let t2 = IdfTable::learn(["#include <stdio> 天气 #define"]);
        assert!(t2.to_text().lines().skip(2).all(|l| !l.starts_with('#')));
        assert_eq!(IdfTable::parse(&t2.to_text(), "t").unwrap(), t2);
        assert_eq!(back, t);
        assert_eq!(back.digest(), t.digest());
        let err = IdfTable::parse("天气 0.5\n纽约 x\n", "idf.txt").unwrap_err();
        assert!(
            err.to_string().contains("idf.txt") && err.to_string().contains('2'),
            "{err}"
        );
    }
}
