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
//! - `keywords-con`: the same terms in weight order ("Con").
//! - `keywords-check`, `keywords-con-check`: Sort and Con with the literature's weight check:
//!   a shared key makes a candidate only when the weights of the shared terms agree,
//!   Σ(wᵢ−wⱼ)² / (Σwᵢ² + Σwⱼ²) < a ([`weight_distance`]; the weights are kept with the
//!   document, [`keyword_weights`]).
//! - `keywords-pct` (keyword percentage): the most frequent `pct`% of the terms, their number
//!   rounded down to a multiple of `interval`, sorted by the term descending, MD5. One key.
//! - `des`: MD5 of the meta description, else of the first 512 bytes of the text. One key.
//! - `punct`: the context of every `，。！？` (two letters or characters each side) as one
//!   string, cut into 3 parts, each hashed; candidates share all 3.
//! - `punct-title`: the same 3 parts (weight 1) and the title's hash (weight 1.5, [`punct_title`]);
//!   candidates share a weight of at least 3 (the title and 2 parts, or the 3 parts).
//! - `two-stage` (two-stage content fingerprint): a coarse key of a few core words of the title,
//!   meta keywords and description (else of the text), combined with each of the largest
//!   paragraphs' hashes (small paragraphs merged, [`two_stage`]); candidates share at least `m`,
//!   so paragraphs are compared only among documents with the same coarse key.
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
        KeyAlgo::Keywords { check: None, .. } => 0xA2,
        KeyAlgo::Segments { .. } => 0xA3,
        KeyAlgo::KeywordsCon { check: None, .. } => 0xA4,
        KeyAlgo::Punct => 0xA5,
        KeyAlgo::KeywordsPct { .. } => 0xA6,
        KeyAlgo::Des => 0xA7,
        KeyAlgo::Keywords { check: Some(_), .. } => 0xA8,
        KeyAlgo::KeywordsCon { check: Some(_), .. } => 0xA9,
        KeyAlgo::PunctTitle => 0xAA,
        KeyAlgo::TwoStage { .. } => 0xAC,
    }
}

/// The tag of `punct-title`'s title key (its parts carry [`algo_tag`]).
pub const TITLE_TAG: u8 = 0xAB;

/// Whether `key` is one of `algo`'s keys.
pub fn owns(algo: &KeyAlgo, key: u64) -> bool {
    let t = tag(key);
    t == algo_tag(algo) || (matches!(algo, KeyAlgo::PunctTitle) && t == TITLE_TAG)
}

/// What sharing `key` counts toward `algo`'s threshold ([`KeyAlgo::need`]): 1.5 for the title
/// key of `punct-title`, else 1.
pub fn weight(key: u64) -> f64 {
    if tag(key) == TITLE_TAG {
        1.5
    } else {
        1.0
    }
}

/// The algorithm tag of a key.
pub fn tag(key: u64) -> u8 {
    (key >> 56) as u8
}

fn tagged(tag: u8, h: u64) -> u64 {
    u64::from(tag) << 56 | (h & ((1 << 56) - 1))
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
        let c = u64::from(c);
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

/// The `n` heaviest terms by TF-IDF (frequency over the document's term count × IDF), heaviest
/// first (ties by the term).
fn heaviest(stats: &[TermStat], n: u32) -> Vec<(&str, f64)> {
    let total: u32 = stats.iter().map(|t| t.1).sum();
    let mut terms: Vec<(&str, f64)> = stats
        .iter()
        .map(|t| (t.0.as_str(), f64::from(t.1) * t.2 / f64::from(total.max(1))))
        .collect();
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    terms.truncate(n as usize);
    terms
}

/// The keyword ("Sort") key: the `n` heaviest TF-IDF terms, sorted, MD5; with `con`, in
/// weight order instead ("Con"). Tagged `tag` (the algorithm's, [`algo_tag`]).
pub fn keywords(stats: &[TermStat], n: u32, con: bool, tag: u8) -> Option<u64> {
    if stats.is_empty() {
        return None;
    }
    let mut terms = heaviest(stats, n);
    if !con {
        terms.sort_by(|a, b| a.0.cmp(b.0));
    }
    let joined: Vec<&str> = terms.iter().map(|t| t.0).collect();
    Some(md5_key(tag, joined.join("\u{1}").as_bytes()))
}

/// The weights of the `n` heaviest terms, in the order of the terms (so two documents with the
/// same keyword key, Sort or Con, list the weights of the same terms in the same order).
pub fn keyword_weights(stats: &[TermStat], n: u32) -> Vec<f32> {
    let mut terms = heaviest(stats, n);
    terms.sort_by(|a, b| a.0.cmp(b.0));
    terms.iter().map(|t| t.1 as f32).collect()
}

/// The literature's weight check of two documents with the same keyword key:
/// Σ(wᵢ−wⱼ)² / (Σwᵢ² + Σwⱼ²), 0 for equal weights, at most 1 (weights are positive); 1 when the
/// lists differ in length or are empty (not the same terms).
pub fn weight_distance(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 1.0;
    }
    let (mut d, mut s) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        d += (x - y) * (x - y);
        s += x * x + y * y;
    }
    if s == 0.0 {
        return 0.0;
    }
    d / s
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
    punct_parts(prepared, 0xA5)
}

/// The `punct-title` keys: the 3 parts of [`punct`] (tagged as the algorithm) and, when the
/// title has a letter or digit, the hash of its letters and digits ([`TITLE_TAG`]).
pub fn punct_title(prepared: &str, prepared_title: Option<&str>) -> Vec<u64> {
    let mut keys = punct_parts(prepared, algo_tag(&KeyAlgo::PunctTitle));
    if let Some(t) = prepared_title {
        let word: String = t.chars().filter(|&c| is_word_char(c)).collect();
        if !word.is_empty() {
            keys.push(tagged(TITLE_TAG, fingerprint64(word.as_bytes())));
        }
    }
    keys
}

fn punct_parts(prepared: &str, tag: u8) -> Vec<u64> {
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
            tagged(tag, fingerprint64(part.as_bytes()) ^ i as u64)
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Letters and digits a paragraph of [`two_stage`] has at least to stand alone: a run of
/// shorter ones is merged.
pub const MIN_PARAGRAPH_CHARS: usize = 50;

/// The two-stage content keys: the coarse key (the `words` heaviest terms of `coarse`, sorted;
/// none when it has no terms) combined with the hash of each of the `paras` largest
/// paragraphs of `prepared` (its lines' letters and digits; a run of lines shorter than
/// [`MIN_PARAGRAPH_CHARS`] between longer ones is merged into one, used only when there are
/// fewer than `paras` longer lines; largest first, ties by the key). Distinct.
pub fn two_stage(coarse: &[TermStat], words: u32, prepared: &str, paras: u32) -> Vec<u64> {
    let mut core: Vec<&str> = heaviest(coarse, words).into_iter().map(|t| t.0).collect();
    if core.is_empty() {
        return Vec::new();
    }
    core.sort_unstable();
    let core = core.join("\u{1}");
    // Paragraphs (lines) of at least MIN_PARAGRAPH_CHARS letters and digits stand alone; a
    // run of shorter ones between them is merged into one.
    let mut groups: Vec<(String, usize, bool)> = Vec::new();
    let (mut run, mut run_chars) = (String::new(), 0);
    for line in prepared.split('\n') {
        let word: String = line.chars().filter(|&c| is_word_char(c)).collect();
        let chars = word.chars().count();
        if chars >= MIN_PARAGRAPH_CHARS {
            if run_chars > 0 {
                groups.push((std::mem::take(&mut run), run_chars, true));
                run_chars = 0;
            }
            groups.push((word, chars, false));
        } else {
            run.push_str(&word);
            run_chars += chars;
        }
    }
    if run_chars > 0 {
        groups.push((run, run_chars, true));
    }
    // The largest whole paragraphs, then (when there are too few) the largest merged runs;
    // ties by hash, not by place: a shuffle keeps the same ones, where merged runs change.
    let mut hashed: Vec<(bool, usize, u64)> = groups
        .iter()
        .map(|(g, n, merged)| {
            let mut b = Vec::with_capacity(core.len() + 1 + g.len());
            b.extend_from_slice(core.as_bytes());
            b.push(0);
            b.extend_from_slice(g.as_bytes());
            (*merged, *n, fingerprint64(&b))
        })
        .collect();
    hashed.sort_unstable_by_key(|&(merged, n, h)| (merged, std::cmp::Reverse(n), h));
    hashed.truncate(paras as usize);
    let mut keys: Vec<u64> = hashed
        .into_iter()
        .map(|(_, _, h)| tagged(0xAC, h))
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
        assert_eq!(keywords(&a, 2, false, 0xA2), keywords(&b, 2, false, 0xA2));
        assert_ne!(keywords(&a, 3, false, 0xA2), keywords(&b, 3, false, 0xA2));
        // Con keeps the weight order: the same two terms, another key than Sort's.
        assert_eq!(keywords(&a, 2, true, 0xA4), keywords(&b, 2, true, 0xA4));
        assert_ne!(keywords(&a, 2, true, 0xA4), keywords(&a, 2, false, 0xA4));
        // The weights of the same terms, in the terms' order: 甲 0.5 × 5 = 2.5, 乙 0.4 × 5 = 2.
        assert_eq!(keyword_weights(&a, 2), vec![2.0, 2.5]);
        // b: 甲 5/10 × 5, 乙 4/10 × 5 too (丁 is not kept).
        assert_eq!(
            weight_distance(&keyword_weights(&a, 2), &keyword_weights(&b, 2)),
            0.0
        );
    }

    /// The check by hand: (1−2)² + (3−3)² over (1 + 9) + (4 + 9) = 1/23.
    #[test]
    fn weight_distance_is_the_literature_formula() {
        assert!((weight_distance(&[1.0, 3.0], &[2.0, 3.0]) - 1.0 / 23.0).abs() < 1e-12);
        assert_eq!(weight_distance(&[1.0, 3.0], &[1.0, 3.0]), 0.0);
        // Disjoint supports are as far as weights go.
        assert_eq!(weight_distance(&[1.0, 0.0], &[0.0, 1.0]), 1.0);
        assert_eq!(weight_distance(&[1.0], &[1.0, 2.0]), 1.0);
        assert_eq!(weight_distance(&[], &[]), 1.0);
    }

    #[test]
    fn punct_title_adds_the_title_at_its_own_tag() {
        let a = "第一条为了规范,制定本办法.第二条本办法适用于全国.第三条由国务院负责解释!";
        let with = punct_title(a, Some("# 政府督查 条例"));
        assert_eq!(with.len(), 4);
        assert_eq!(with.iter().filter(|&&k| tag(k) == TITLE_TAG).count(), 1);
        assert_eq!(with.iter().map(|&k| weight(k)).sum::<f64>(), 4.5);
        // Spacing and marks in the title do not count; no title, no title key.
        assert_eq!(with, punct_title(a, Some("政府督查条例")));
        assert_eq!(punct_title(a, None).len(), 3);
        assert_eq!(punct_title(a, Some(" ## ")).len(), 3);
        // Its parts are punct's parts, tagged as punct-title.
        let parts: Vec<u64> = punct(a).iter().map(|k| k & ((1 << 56) - 1)).collect();
        assert!(punct_title(a, None)
            .iter()
            .all(|k| parts.contains(&(k & ((1 << 56) - 1))) && owns(&KeyAlgo::PunctTitle, *k)));
    }

    #[test]
    fn two_stage_keys_need_the_coarse_key_and_a_paragraph() {
        let para = |c: char| c.to_string().repeat(60);
        let text = format!("{}\n{}\n短\n行\n{}", para('甲'), para('乙'), para('丙'));
        let core = stats(&[("政府", 1, 5.0), ("督查", 1, 6.0), ("的", 3, 0.1)]);
        let k = two_stage(&core, 2, &text, 2);
        assert_eq!(k.len(), 2);
        // Two of the three 60-character paragraphs (the short lines are one small paragraph),
        // whatever their order.
        let shuffled = format!("{}\n短\n{}\n行\n{}", para('丙'), para('乙'), para('甲'));
        assert_eq!(two_stage(&core, 2, &shuffled, 2), k);
        assert_eq!(two_stage(&core, 3, &text, 3).len(), 3);
        // A changed paragraph changes its key only.
        let edited = format!("{}\n{}\n{}", para('甲'), para('乙'), para('丁'));
        let all = two_stage(&core, 2, &text, 3);
        let k3 = two_stage(&core, 2, &edited, 3);
        assert_eq!(
            all.iter().filter(|x| k3.contains(x)).count(),
            2,
            "{all:?} {k3:?}"
        );
        // Another coarse key: nothing shared, whatever the paragraphs.
        let other = stats(&[("政府", 1, 5.0), ("网站", 1, 6.0)]);
        assert!(two_stage(&other, 2, &text, 2)
            .iter()
            .all(|x| !k.contains(x)));
        // The weight order of the core words does not matter, only which they are.
        let same = stats(&[("督查", 2, 6.0), ("政府", 2, 5.5)]);
        assert_eq!(two_stage(&same, 2, &text, 2), k);
        assert!(two_stage(&[], 2, &text, 2).is_empty());
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
