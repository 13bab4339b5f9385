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

/// The keys (letters and digits) of the n longest distinct qualifying sentences, longest first.
pub fn top_sentence_keys(normalized: &str, opts: &Options) -> Vec<String> {
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
        return if n > 0 { vec![k] } else { Vec::new() };
    }
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    cands.truncate(opts.nshash_n);
    cands.into_iter().map(|c| c.2).collect()
}

/// The nshash fingerprint: hashes of [`top_sentence_keys`].
pub fn nshash(normalized: &str, opts: &Options) -> Vec<u64> {
    top_sentence_keys(normalized, opts)
        .iter()
        .map(|k| hash_key(k, opts.nshash_hash))
        .collect()
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
    fn md5_and_farmhash_differ_but_are_deterministic() {
        assert_ne!(
            hash_key("abc", SentenceHash::Md5),
            hash_key("abc", SentenceHash::Farmhash)
        );
        // md5("abc") = 900150983cd24fb0...
        assert_eq!(hash_key("abc", SentenceHash::Md5), 0x900150983cd24fb0);
    }
}
