//! Exact-key algorithms from the Chinese web-dedup literature, as one mechanism: each gives a
//! document a few 64-bit keys, indexed like sentence hashes (postings in `nshash`), and two
//! documents are candidates when they share at least a number of keys of one algorithm.
//!
//! - `imatch` (I-Match, Chowdhury et al. 2002): the document's distinct terms whose IDF is in
//!   its top `keep_pct`% (the most common terms dropped), sorted by IDF descending (ties by
//!   term), hashed with AP hash (the one the Chinese literature chose among ELF/RS/JS/PJW/BKDR/
//!   SDBM/DJB/AP; 64-bit here, so collisions stay negligible at 10^8 documents). One key.
//! - `keywords` (the "Sort" keyword fingerprint): the `n` terms of highest TF-IDF weight,
//!   sorted, MD5. One key.
//! - `keywords-con`: the same terms in weight order ("Con"). (The literature's weight check
//!   and "Des" key are not built.)
//! - `keywords-pct` (keyword percentage): the most frequent `pct`% of the terms, their number
//!   rounded down to a multiple of `interval`, sorted by the term descending, MD5. One key.
//! - `des`: MD5 of the meta description, else of the first 512 bytes of the text. One key.
//! - `punct`: the context of every `，。！？` (two letters or characters each side) as one
//!   string, cut into 3 parts, each hashed; candidates share all 3.
//! - `segments`: the letters and digits cut into `n` equal segments, each hashed; candidates
//!   share at least `m` of them.
//!
//! A key carries its algorithm in its top byte ([`tag`]), so one posting list serves all.

use md5::{Digest, Md5};

use super::fingerprint64;
use crate::options::KeyAlgo;
use crate::text::sentences::is_word_char;

/// The top byte of every key of `algo`.
pub fn algo_tag(algo: &KeyAlgo) -> u8 {
    match algo {
        KeyAlgo::Imatch { .. } => 0xA1,
        KeyAlgo::Keywords { .. } => 0xA2,
        KeyAlgo::Segments { .. } => 0xA3,
        KeyAlgo::KeywordsCon { .. } => 0xA4,
        KeyAlgo::Punct => 0xA5,
        KeyAlgo::KeywordsPct { .. } => 0xA6,
        KeyAlgo::Des => 0xA7,
    }
}

/// The algorithm tag of a key.
pub fn tag(key: u64) -> u8 {
    (key >> 56) as u8
}

fn tagged(tag: u8, h: u64) -> u64 {
    (tag as u64) << 56 | (h & ((1 << 56) - 1))
}

/// The first 8 bytes of the MD5 of `bytes`, tagged.
fn md5_key(tag: u8, bytes: &[u8]) -> u64 {
    let d = Md5::digest(bytes);
    tagged(
        tag,
        u64::from_be_bytes(d[..8].try_into().expect("16 bytes")),
    )
}

/// Arash Partow's AP hash, on 64 bits.
pub fn ap_hash64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    for (i, &c) in bytes.iter().enumerate() {
        let c = c as u64;
        if i & 1 == 0 {
            h ^= (h << 7) ^ c.wrapping_mul(h >> 3);
        } else {
            h ^= !((h << 11).wrapping_add(c ^ (h >> 5)));
        }
    }
    h
}

/// A term of a document: (term, frequency, IDF).
pub type TermStat = (String, u32, f64);

/// The I-Match key: terms in the top `keep_pct`% by IDF, by IDF descending.
pub fn imatch(stats: &[TermStat], keep_pct: u32) -> Option<u64> {
    if stats.is_empty() {
        return None;
    }
    let mut terms: Vec<&TermStat> = stats.iter().collect();
    terms.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let keep = (terms.len() * keep_pct as usize).div_ceil(100).max(1);
    let joined: Vec<&str> = terms[..keep].iter().map(|t| t.0.as_str()).collect();
    Some(tagged(0xA1, ap_hash64(joined.join("\u{1}").as_bytes())))
}

/// The keyword ("Sort") key: the `n` heaviest TF-IDF terms, sorted, MD5; with `con`, in
/// weight order instead ("Con").
pub fn keywords(stats: &[TermStat], n: u32, con: bool) -> Option<u64> {
    if stats.is_empty() {
        return None;
    }
    let total: u32 = stats.iter().map(|t| t.1).sum();
    let mut terms: Vec<(&str, f64)> = stats
        .iter()
        .map(|t| (t.0.as_str(), t.1 as f64 * t.2 / total.max(1) as f64))
        .collect();
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    terms.truncate(n as usize);
    if !con {
        terms.sort_by(|a, b| a.0.cmp(b.0));
    }
    let joined: Vec<&str> = terms.iter().map(|t| t.0).collect();
    Some(md5_key(
        if con { 0xA4 } else { 0xA2 },
        joined.join("\u{1}").as_bytes(),
    ))
}

/// The keyword-percentage key: terms sorted by frequency (ties by the term, descending), the
/// first `pct`% of them kept, that number rounded down to a multiple of `interval` (at least
/// `interval`, at most all), those sorted by the term descending and hashed (MD5). Rounding
/// makes the key survive a few terms more or less.
pub fn keywords_pct(stats: &[TermStat], pct: u32, interval: u32) -> Option<u64> {
    if stats.is_empty() {
        return None;
    }
    let mut terms: Vec<(&str, u32)> = stats.iter().map(|t| (t.0.as_str(), t.1)).collect();
    terms.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(a.0)));
    let interval = interval.max(1) as usize;
    let share = terms.len() * pct as usize / 100;
    let keep = (share / interval * interval).max(interval).min(terms.len());
    let mut kept: Vec<&str> = terms[..keep].iter().map(|t| t.0).collect();
    kept.sort_by(|a, b| b.cmp(a));
    Some(md5_key(0xA6, kept.join("\u{1}").as_bytes()))
}

/// Bytes of text a description key covers when the document has no description.
pub const DES_BYTES: usize = 512;

/// The description key ("Des"): MD5 of `source` (a prepared description, or a prepared text
/// whose first [`DES_BYTES`] bytes, cut back to a character boundary, are used). None when it
/// is empty.
pub fn des(source: &str) -> Option<u64> {
    let mut end = source.len().min(DES_BYTES);
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let s = source[..end].trim();
    if s.is_empty() {
        return None;
    }
    Some(md5_key(0xA7, s.as_bytes()))
}

/// The punctuation-context keys: the two letters, digits or Chinese characters on each side
/// of every sentence or clause mark (`，。！？`, folded to `,.!?` by normalization) joined
/// into one string, cut into 3 equal parts, each hashed. None when the text has fewer than 3
/// marks.
pub fn punct(prepared: &str) -> Vec<u64> {
    let chars: Vec<char> = prepared.chars().collect();
    let mut ctx: Vec<char> = Vec::new();
    let mut marks = 0;
    for (i, &c) in chars.iter().enumerate() {
        if !matches!(c, ',' | '.' | '!' | '?') {
            continue;
        }
        let before: Vec<char> = chars[..i]
            .iter()
            .rev()
            .filter(|&&c| is_word_char(c))
            .take(2)
            .copied()
            .collect();
        let after = chars[i + 1..].iter().filter(|&&c| is_word_char(c)).take(2);
        ctx.extend(before.iter().rev());
        ctx.extend(after);
        marks += 1;
    }
    if marks < 3 || ctx.len() < 3 {
        return Vec::new();
    }
    let mut keys: Vec<u64> = (0..3)
        .map(|i| {
            let part: String = ctx[i * ctx.len() / 3..(i + 1) * ctx.len() / 3]
                .iter()
                .collect();
            tagged(0xA5, fingerprint64(part.as_bytes()) ^ i as u64)
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The segment keys: letters and digits cut into `n` equal parts (none when fewer than `n`
/// characters), each hashed; distinct.
pub fn segments(prepared: &str, n: u32) -> Vec<u64> {
    let chars: Vec<char> = prepared.chars().filter(|&c| is_word_char(c)).collect();
    let n = n as usize;
    if n == 0 || chars.len() < n {
        return Vec::new();
    }
    let mut keys: Vec<u64> = (0..n)
        .map(|i| {
            let part: String = chars[i * chars.len() / n..(i + 1) * chars.len() / n]
                .iter()
                .collect();
            tagged(0xA3, fingerprint64(part.as_bytes()))
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(words: &[(&str, u32, f64)]) -> Vec<TermStat> {
        words.iter().map(|w| (w.0.to_string(), w.1, w.2)).collect()
    }

    #[test]
    fn imatch_drops_the_most_common_terms() {
        let a = stats(&[
            ("政府", 3, 2.0),
            ("网站", 1, 9.0),
            ("信息", 2, 5.0),
            ("的", 9, 0.1),
        ]);
        // Top 70% of 4 terms by IDF = 3 (網站, 信息, 政府): the common word does not count.
        let b = stats(&[
            ("政府", 1, 2.0),
            ("网站", 5, 9.0),
            ("信息", 2, 5.0),
            ("的", 1, 0.2),
        ]);
        assert_eq!(imatch(&a, 70), imatch(&b, 70));
        let c = stats(&[("政府", 1, 2.0), ("网页", 5, 9.0), ("信息", 2, 5.0)]);
        assert_ne!(imatch(&a, 70), imatch(&c, 70));
        assert_eq!(imatch(&[], 70), None);
        assert_eq!(tag(imatch(&a, 70).unwrap()), 0xA1);
    }

    /// The rule by hand: 10 terms, 50% = 5, rounded down to a multiple of 4 = 4: the four
    /// most frequent (ties by the term, descending), sorted descending, MD5.
    #[test]
    fn keywords_pct_keeps_the_most_frequent_share() {
        let words = [
            ("甲", 9),
            ("乙", 7),
            ("丙", 7),
            ("丁", 5),
            ("戊", 5),
            ("己", 4),
            ("庚", 3),
            ("辛", 2),
            ("壬", 1),
            ("癸", 1),
        ];
        let a = stats(&words.map(|(w, n)| (w, n, 1.0)));
        // 乙 and 丙 tie at 7; 戊 > 丁 as strings, so 戊 comes first among the 5s.
        let mut kept = ["甲", "乙", "丙", "戊"];
        kept.sort_by(|a, b| b.cmp(a));
        let d = Md5::digest(kept.join("\u{1}").as_bytes());
        let want = tagged(0xA6, u64::from_be_bytes(d[..8].try_into().unwrap()));
        assert_eq!(keywords_pct(&a, 50, 4), Some(want));
        // Two rare terms more: 50% of 12 = 6 -> 4 again, the same key; IDF plays no part.
        let mut b = a.clone();
        b.push(("子".into(), 1, 9.0));
        b.push(("丑".into(), 1, 9.0));
        b[0].2 = 7.0;
        assert_eq!(keywords_pct(&b, 50, 4), Some(want));
        // A frequent term changed: another key.
        let mut c = a.clone();
        c[0].0 = "子".into();
        assert_ne!(keywords_pct(&c, 50, 4), Some(want));
        // At least one multiple, at most all the terms.
        assert_eq!(keywords_pct(&a[..3], 50, 4), keywords_pct(&a[..3], 100, 1));
        assert_eq!(keywords_pct(&[], 50, 4), None);
    }

    #[test]
    fn des_covers_the_first_512_bytes_on_a_char_boundary() {
        // 171 three-byte characters = 513 bytes: the 171st is cut off whole.
        let long = "中".repeat(171);
        assert_eq!(des(&long), des(&"中".repeat(170)));
        assert_ne!(des(&long), des(&"中".repeat(169)));
        // What follows the first 512 bytes does not count.
        assert_eq!(des(&format!("{long}尾巴")), des(&long));
        assert_eq!(des("  "), None);
        assert_eq!(tag(des("摘要").unwrap()), 0xA7);
    }

    #[test]
    fn keywords_keep_the_heaviest_terms_in_any_order() {
        let a = stats(&[("甲", 5, 5.0), ("乙", 4, 5.0), ("丙", 1, 0.5)]);
        let b = stats(&[("乙", 4, 5.0), ("甲", 5, 5.0), ("丁", 1, 0.4)]);
        assert_eq!(keywords(&a, 2, false), keywords(&b, 2, false));
        assert_ne!(keywords(&a, 3, false), keywords(&b, 3, false));
        // Con keeps the weight order: the same two terms, another key than Sort's.
        assert_eq!(keywords(&a, 2, true), keywords(&b, 2, true));
        assert_ne!(keywords(&a, 2, true), keywords(&a, 2, false));
    }

    #[test]
    fn punctuation_context_survives_edits_between_marks() {
        let a = "第一条为了规范,制定本办法.第二条本办法适用于全国.第三条由国务院负责解释!";
        let b = "第一条为了加强规范,制定本办法.第二条本办法通用于全国.第三条由国务院负责解释!";
        let c = "今天纽约的天气真好.京华大酒店的经理吃了一只烤鸭,后天的天气不好!";
        assert_eq!(punct(a).len(), 3);
        assert_eq!(punct(a), punct(b));
        assert!(punct(a).iter().all(|k| !punct(c).contains(k)));
        assert!(punct("没有标点的文字").is_empty());
    }

    #[test]
    fn segments_match_where_the_text_matches() {
        let a = "abcdefghijklmnopqrstuvwxyz0123456789";
        let b = "abcdefghijklmnopqrstuvwxyz012345678X";
        let (sa, sb) = (segments(a, 4), segments(b, 4));
        assert_eq!(sa.len(), 4);
        assert_eq!(sa.iter().filter(|k| sb.contains(k)).count(), 3);
        assert!(segments("abc", 4).is_empty());
    }

    #[test]
    fn ap_hash_is_frozen() {
        assert_eq!(ap_hash64(b""), 0xAAAA_AAAA_AAAA_AAAA);
        assert_ne!(ap_hash64(b"ab"), ap_hash64(b"ba"));
    }
}
