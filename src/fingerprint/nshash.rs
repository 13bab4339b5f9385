//! `nshash`: hashes of the n longest distinct sentences of a document.
//!
//! Rules (see ARCHITECTURE.md for why):
//! - sentences come from [`crate::text::sentences::split`] on normalized text, and are keyed by
//!   their letters and digits only;
//! - a sentence counts when its key has at least `min_sentence_chars` characters, so short
//!   boilerplate ("谢谢阅读。") never links documents;
//! - duplicates inside a document count once; ties in length keep the earlier sentence;
//! - a document with no qualifying sentence is keyed by its whole text (letters and digits), so
//!   short documents match only exact copies instead of collapsing into one cluster.

use md5::{Digest, Md5};

use super::farmhash::fingerprint64;
use crate::options::{Options, SentenceHash};
use crate::text::sentences;

/// Hash one sentence key with the store's sentence hash.
pub fn hash_key(key: &str, kind: SentenceHash) -> u64 {
    match kind {
        SentenceHash::Farmhash => fingerprint64(key.as_bytes()),
        SentenceHash::Md5 => {
            let d = Md5::digest(key.as_bytes());
            u64::from_be_bytes(d[..8].try_into().expect("md5 is 16 bytes"))
        }
    }
}

/// Most sentence hashes kept in a document's sketch (the smallest hash values, a consistent
/// sample, when a document has more).
pub const SKETCH_MAX: usize = 512;

/// Every qualifying sentence key of a document, distinct, in text order with its length.
fn qualifying(normalized: &str, opts: &Options) -> Vec<(usize, usize, String)> {
    let mut seen = std::collections::HashSet::new();
    let mut cands: Vec<(usize, usize, String)> = Vec::new();
    for (pos, s) in sentences::split(normalized).enumerate() {
        let (k, n) = sentences::key(s);
        if n >= opts.min_sentence_chars && seen.insert(k.clone()) {
            cands.push((n, pos, k));
        }
    }
    if cands.is_empty() {
        let (k, n) = sentences::key(normalized);
        if n > 0 {
            cands.push((n, 0, k));
        }
    }
    cands
}

/// The keys (letters and digits) of the n longest distinct qualifying sentences, longest first.
pub fn top_sentence_keys(normalized: &str, opts: &Options) -> Vec<String> {
    top_of(qualifying(normalized, opts), opts)
}

fn top_of(mut cands: Vec<(usize, usize, String)>, opts: &Options) -> Vec<String> {
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    cands.truncate(opts.nshash_n);
    cands.into_iter().map(|c| c.2).collect()
}

/// The nshash fingerprint (hashes of [`top_sentence_keys`]) and the document's sentence
/// sketch (32-bit hashes of every qualifying sentence, sorted, at most [`SKETCH_MAX`]).
pub fn nshash_and_sketch(normalized: &str, opts: &Options) -> (Vec<u64>, Vec<u32>) {
    let cands = qualifying(normalized, opts);
    let mut sketch: Vec<u32> = cands
        .iter()
        .map(|c| hash_key(&c.2, opts.nshash_hash) as u32)
        .collect();
    sketch.sort_unstable();
    sketch.dedup();
    sketch.truncate(SKETCH_MAX);
    let top = top_of(cands, opts)
        .iter()
        .map(|k| hash_key(k, opts.nshash_hash))
        .collect();
    (top, sketch)
}

/// Documents with at most this many qualifying sentences also get a character-shingle sketch:
/// their sentence overlap is too coarse (one edited character halves a two-sentence overlap).
pub const SHORT_SENTENCES: usize = 3;

/// Shingle sketch size (bottom-k of 32-bit hashes).
pub const SHINGLES_K: usize = 32;

/// Bottom-[`SHINGLES_K`] sketch of the character 4-grams of the letters and digits of a short
/// document (empty when the text has more than [`SHORT_SENTENCES`] qualifying sentences).
pub fn shingles(normalized: &str, sentences: usize) -> Vec<u32> {
    if sentences > SHORT_SENTENCES {
        return Vec::new();
    }
    let chars: Vec<char> = normalized.chars().filter(|c| c.is_alphanumeric()).collect();
    let mut buf = String::new();
    let mut out: Vec<u32> = chars
        .windows(4.min(chars.len().max(1)))
        .map(|w| {
            buf.clear();
            buf.extend(w);
            fingerprint64(buf.as_bytes()) as u32
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out.truncate(SHINGLES_K);
    out
}

/// Jaccard resemblance estimated from two bottom-k sketches: the share of the union's k
/// smallest hashes found in both. 0 when either is empty.
pub fn resemblance(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let k = a.len().max(b.len()).min(SHINGLES_K);
    let (mut i, mut j, mut seen, mut both) = (0, 0, 0, 0);
    while seen < k && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), Some(_)) | (None, Some(_)) => j += 1,
            (Some(_), None) => i += 1,
            (None, None) => break,
        }
        seen += 1;
    }
    both as f64 / seen.max(1) as f64
}

/// The nshash fingerprint: hashes of [`top_sentence_keys`].
pub fn nshash(normalized: &str, opts: &Options) -> Vec<u64> {
    nshash_and_sketch(normalized, opts).0
}

/// Sentence overlap of two documents from their sketches: shared sentences over the sentences
/// of the larger one (so a short text quoted inside a long reply is not a near-duplicate of it,
/// while a copy with a paragraph added, dropped or cut keeps most of its sentences). Sketches
/// are bottom-k samples: both are cut at the smaller of their largest values when either is
/// full, which keeps the estimate fair for documents over [`SKETCH_MAX`] sentences. 0 when
/// either is empty.
pub fn overlap(a: &[u32], b: &[u32]) -> f64 {
    let (Some(&ma), Some(&mb)) = (a.last(), b.last()) else {
        return 0.0;
    };
    let cut = if a.len() < SKETCH_MAX && b.len() < SKETCH_MAX {
        u32::MAX
    } else {
        ma.min(mb)
    };
    let (mut i, mut j, mut na, mut nb, mut both) = (0, 0, 0usize, 0usize, 0usize);
    while i < a.len() && a[i] <= cut || j < b.len() && b[j] <= cut {
        let x = a.get(i).copied().filter(|&v| v <= cut);
        let y = b.get(j).copied().filter(|&v| v <= cut);
        match (x, y) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                na += 1;
                nb += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                na += 1;
                i += 1;
            }
            (Some(_), Some(_)) | (None, Some(_)) => {
                nb += 1;
                j += 1;
            }
            (Some(_), None) => {
                na += 1;
                i += 1;
            }
            (None, None) => break,
        }
    }
    let large = na.max(nb);
    if large == 0 {
        0.0
    } else {
        both as f64 / large as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

    fn opts(n: usize) -> Options {
        Options {
            nshash_n: n,
            ..Options::default()
        }
    }

    #[test]
    fn takes_the_n_longest_distinct_sentences() {
        let t = normalize("短句。这是一个比较长的句子用来测试。这是最长的一个句子用来测试排序规则。这是一个比较长的句子用来测试。");
        let keys = top_sentence_keys(&t, &opts(5));
        assert_eq!(
            keys,
            [
                "这是最长的一个句子用来测试排序规则",
                "这是一个比较长的句子用来测试"
            ]
        );
    }

    #[test]
    fn short_texts_are_keyed_by_their_whole_content() {
        let a = nshash(&normalize("好的。"), &opts(5));
        let b = nshash(&normalize("谢谢。"), &opts(5));
        assert_eq!(a.len(), 1);
        assert_ne!(a, b);
        assert!(nshash(&normalize("。。。 ！"), &opts(5)).is_empty());
    }

    #[test]
    fn punctuation_and_width_do_not_change_hashes() {
        let o = opts(5);
        let a = nshash(
            &normalize("中华人民共和国宪法是国家的根本法，具有最高的法律效力。"),
            &o,
        );
        let b = nshash(
            &normalize("中华人民共和国宪法是国家的根本法,具有最高的法律效力."),
            &o,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn overlap_is_shared_over_the_larger_set() {
        assert_eq!(overlap(&[1, 2, 3, 4], &[2, 3]), 0.5);
        assert_eq!(overlap(&[1, 2, 3, 4], &[3, 4, 5, 6]), 0.5);
        assert_eq!(overlap(&[1, 2, 3], &[1, 2, 3]), 1.0);
        assert_eq!(overlap(&[], &[1]), 0.0);
        // Large sketches are compared below the smaller maximum only.
        let a: Vec<u32> = (0..SKETCH_MAX as u32).map(|x| x * 2).collect();
        let b: Vec<u32> = (0..SKETCH_MAX as u32).collect();
        assert!((overlap(&a, &b) - 0.5).abs() < 0.01, "{}", overlap(&a, &b));
    }

    #[test]
    fn shingle_resemblance_survives_one_edited_character() {
        let a = normalize(
            "国务院办公厅关于加强政府网站信息内容建设的意见。各省人民政府都要认真贯彻执行。",
        );
        let b = normalize(
            "国务院办公厅关于加强政府网站信息内容建没的意见。各省人民政府都要认真贯彻执行。",
        );
        let c =
            normalize("今天纽约的天气真好啊京华大酒店的张尧经理吃了一只北京烤鸭。后天的天气不好。");
        let (sa, sb, sc) = (shingles(&a, 2), shingles(&b, 2), shingles(&c, 2));
        assert!(resemblance(&sa, &sb) > 0.7, "{}", resemblance(&sa, &sb));
        assert!(resemblance(&sa, &sc) < 0.1, "{}", resemblance(&sa, &sc));
        assert_eq!(resemblance(&sa, &sa), 1.0);
        assert!(shingles(&a, 4).is_empty(), "long documents get no shingles");
    }

    #[test]
    fn md5_and_farmhash_differ_but_are_deterministic() {
        assert_ne!(
            hash_key("abc", SentenceHash::Md5),
            hash_key("abc", SentenceHash::Farmhash)
        );
        // md5("abc") = 900150983cd24fb0...
        assert_eq!(hash_key("abc", SentenceHash::Md5), 0x900150983cd24fb0);
    }
}
