//! `nshash`: hashes of the n longest distinct sentences of a document.
//!
//! Rules (see docs/decisions.md for why):
//! - sentences come from [`crate::text::sentences::split`] on normalized text, and are keyed by
//!   their letters and digits only;
//! - a sentence counts when its key has at least `min_sentence_chars` characters, so short
//!   boilerplate ("谢谢阅读。") never links documents;
//! - duplicates inside a document count once; ties in length keep the earlier sentence;
//! - a document with no qualifying sentence is keyed by its whole text (letters and digits), so
//!   short documents match only exact copies instead of collapsing into one cluster; one with
//!   no letter or digit at all (emoji, punctuation) by its whole text without spaces (since
//!   format 3; older stores hold no hash for such documents).

use md5::{Digest, Md5};

use super::similarity::{CUT_PLACE, HEADING_PLACE};
use crate::hash::fingerprint64;
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

/// Under `headings`, a page's headings are at most this many lines (a headline, a byline, a
/// dateline or a weather box before the first sentence); more such lines are a list, not
/// headings.
pub const HEADINGS_MOST: usize = 3;

/// How many of a page's first distinct qualifying sentences are its headings (stores with
/// `headings`): the `lead` sentences before its first one that ends at a full stop (`.`, `!`,
/// `?`, `;`) rather than at its line's end, when there is such a sentence (`closed`), when they are
/// at most [`HEADINGS_MOST`] and no more than the `total - lead` sentences from it on. Zero
/// otherwise: a text of lines alone (a list, a poem) has no headings.
pub fn heading_count(lead: usize, closed: bool, total: usize) -> usize {
    if closed && lead <= HEADINGS_MOST && 2 * lead <= total {
        lead
    } else {
        0
    }
}

/// Every qualifying sentence key of a document, distinct, in text order with its length, and
/// how many of the first are headings when `headings` (the store's rule, for a page).
fn qualifying(
    normalized: &str,
    opts: &Options,
    headings: bool,
) -> (Vec<(usize, usize, String)>, usize, bool) {
    let mut seen = foldhash::HashSet::default();
    let mut cands: Vec<(usize, usize, String)> = Vec::new();
    let (mut lead, mut closed, mut last_cut) = (0, false, false);
    for (pos, (s, line_end)) in sentences::split_ends(normalized).enumerate() {
        let (k, n) = sentences::key(s);
        if n >= opts.min_sentence_chars && seen.insert(k.clone()) {
            cands.push((n, pos, k));
            last_cut = line_end;
            if !closed {
                if line_end {
                    lead += 1;
                } else {
                    closed = true;
                }
            }
        }
    }
    if cands.is_empty() {
        let (k, n) = sentences::key(normalized);
        if n > 0 {
            cands.push((n, 0, k));
        } else {
            // No letter or digit at all (emoji, punctuation): the whole text without spaces,
            // so exact copies still link.
            let k: String = normalized.chars().filter(|c| !c.is_whitespace()).collect();
            let n = k.chars().count();
            if n > 0 {
                cands.push((n, 0, k));
            }
        }
        return (cands, 0, false);
    }
    let heads = if headings {
        heading_count(lead, closed, cands.len())
    } else {
        0
    };
    (cands, heads, last_cut)
}

/// The byte offset in `normalized` where a page's headings ([`heading_count`], as
/// [`nshash_sketch_and_order`] tells them apart with `headings`) end: 0 when it has none. Reads
/// the text only until its headings are known (a few sentences).
pub fn headings_end(normalized: &str, opts: &Options) -> usize {
    let mut seen = foldhash::HashSet::default();
    let (mut lead_ends, mut closed, mut total) = (Vec::new(), false, 0usize);
    for (s, line_end) in sentences::split_ends(normalized) {
        let (k, n) = sentences::key(s);
        if n < opts.min_sentence_chars || !seen.insert(k) {
            continue;
        }
        total += 1;
        if !closed {
            if line_end {
                // `s` is a slice of `normalized`.
                lead_ends.push(s.as_ptr() as usize - normalized.as_ptr() as usize + s.len());
                if lead_ends.len() > HEADINGS_MOST {
                    return 0;
                }
            } else {
                closed = true;
            }
        }
        if closed && total >= 2 * lead_ends.len() {
            break;
        }
    }
    match heading_count(lead_ends.len(), closed, total) {
        0 => 0,
        heads => lead_ends[heads - 1],
    }
}

/// Whether a document's headings ([`heading_count`]) are told apart from its sentences: a page
/// (a document with a URL, whose lines are its blocks) of a store with `headings`. A text
/// without a URL may be hard-wrapped, every line of it ending at the line's end.
pub fn tells_headings_apart(opts: &Options, page: bool) -> bool {
    page && opts.headings
}

/// Whether a document's last sentence is marked when cut short ([`sketch_of`]'s `cut`): a page
/// of a store with `cut_excerpts` (`Some`), of whatever it ends with (`last_cut`); `None` in a
/// store without it. A text without a URL may be hard-wrapped, every line of it ending at the
/// line's end: its last sentence is never marked.
pub fn cut_apart(opts: &Options, page: bool, last_cut: bool) -> Option<bool> {
    opts.cut_excerpts.then_some(page && last_cut)
}

/// The keys (letters and digits) of the n longest distinct qualifying sentences, longest first,
/// and, in stores with `excerpts`, the first one after them when it is not among them (on a
/// `page` of a store with `headings`, the first after its headings): an excerpt shows its
/// article's first sentences, seldom its longest, and is found by them.
pub fn top_sentence_keys(normalized: &str, opts: &Options, page: bool) -> Vec<String> {
    let (cands, heads, _) = qualifying(normalized, opts, tells_headings_apart(opts, page));
    top_of(cands, opts, heads)
}

fn top_of(mut cands: Vec<(usize, usize, String)>, opts: &Options, heads: usize) -> Vec<String> {
    keep_top(&mut cands, opts, heads, |c| c.0);
    cands.into_iter().map(|c| c.2).collect()
}

/// The sentences nshash keys a document by, from its distinct qualifying sentences in text
/// order (`len` gives each one's length; the first `heads` are headings): the `nshash_n`
/// longest, longest first (the earlier of two equally long first), and, in stores with
/// `excerpts`, the opening sentence (the first after the headings) after them when it is not
/// among them. The one rule for [`top_sentence_keys`] and [`super::scan::scan`].
pub(super) fn keep_top<T: Clone + PartialEq>(
    cands: &mut Vec<T>,
    opts: &Options,
    heads: usize,
    len: impl Fn(&T) -> usize,
) {
    let first = (opts.excerpts && cands.len() > opts.nshash_n).then(|| cands[heads].clone());
    // A stable sort: equally long sentences stay in text order.
    cands.sort_by_key(|c| std::cmp::Reverse(len(c)));
    cands.truncate(opts.nshash_n);
    if let Some(first) = first {
        if !cands.contains(&first) {
            cands.push(first);
        }
    }
}

/// The nshash fingerprint (hashes of [`top_sentence_keys`]) and the document's sentence
/// sketch (32-bit hashes of every qualifying sentence, sorted, at most [`SKETCH_MAX`]), of a
/// text that is no page.
pub fn nshash_and_sketch(normalized: &str, opts: &Options) -> (Vec<u64>, Vec<u32>) {
    let (top, sketch, _) = nshash_sketch_and_order(normalized, opts, false);
    (top, sketch)
}

/// [`nshash_and_sketch`] with the sketch's order ([`sketch_of`]); on a `page` of a store with
/// `headings`, its headings ([`heading_count`]) are placed apart, where a link's shape does
/// not read them: a headline or a byline is not a sentence of its article's text, and an
/// excerpt of the article shows its first sentence after them.
pub fn nshash_sketch_and_order(
    normalized: &str,
    opts: &Options,
    page: bool,
) -> (Vec<u64>, Vec<u32>, Vec<u8>) {
    let (cands, heads, last_cut) = qualifying(normalized, opts, tells_headings_apart(opts, page));
    let hashes: Vec<u64> = cands
        .iter()
        .map(|c| hash_key(&c.2, opts.nshash_hash))
        .collect();
    let cut = cut_apart(opts, page, last_cut);
    let (sketch, order) = sketch_of(&hashes, heads, opts.headings, cut);
    let top = top_of(cands, opts, heads)
        .iter()
        .map(|k| hash_key(k, opts.nshash_hash))
        .collect();
    (top, sketch, order)
}

/// A document's sentence sketch (the low 32 bits of its distinct sentence hashes, sorted, at
/// most [`SKETCH_MAX`]) from the hashes in text order, and, parallel to it, where each sentence
/// sits: its rank in the text scaled to 0..=255 ([`super::similarity::shape`] reads it). In a
/// store with `headings` (`headings` true), the first `heads` are a page's headings, placed at
/// [`HEADING_PLACE`], and no other sentence of such a store takes that place. `cut`: `None`
/// in a store without `cut_excerpts`; else whether the last sentence is cut short (ends at its
/// line's end, on a page: [`cut_apart`]), placed at [`CUT_PLACE`], which no other sentence of
/// such a store takes.
pub fn sketch_of(
    hashes: &[u64],
    heads: usize,
    headings: bool,
    cut: Option<bool>,
) -> (Vec<u32>, Vec<u8>) {
    let n = hashes.len().max(1);
    let last = usize::from(match (cut, headings) {
        (Some(_), _) => CUT_PLACE - 1,
        (None, true) => HEADING_PLACE - 1,
        (None, false) => u8::MAX,
    });
    let cut_at = (cut == Some(true) && hashes.len() > heads).then(|| hashes.len() - 1);
    let mut v: Vec<(u32, u8)> = hashes
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let place = if i < heads {
                HEADING_PLACE
            } else if Some(i) == cut_at {
                CUT_PLACE
            } else {
                (i * 256 / n).min(last) as u8
            };
            (h as u32, place)
        })
        .collect();
    v.sort_unstable();
    v.dedup_by_key(|e| e.0);
    v.truncate(SKETCH_MAX);
    v.into_iter().unzip()
}

/// Whether a document keeps the high halves of its sentence hashes ([`highs_of`]): a page of
/// a store with `late_keys` (and nshash, whose keys they are).
pub fn keeps_highs(opts: &Options, page: bool) -> bool {
    page && opts.late_keys && opts.nshash
}

/// The high 32 bits of the sentence hash of each entry of `sketch` (the low 32 bits of
/// `hashes`, a text's qualifying sentences' in text order: [`sketch_of`]), parallel to it:
/// with the sketch, the hashes a page can be posted under (`late_keys`). Where two sentences
/// share their low half, the first in the text's.
pub fn highs_of(hashes: &[u64], sketch: &[u32]) -> Vec<u32> {
    let mut high: foldhash::HashMap<u32, u32> = foldhash::HashMap::default();
    for &h in hashes {
        high.entry(h as u32).or_insert((h >> 32) as u32);
    }
    sketch
        .iter()
        .map(|lo| high.get(lo).copied().unwrap_or(0))
        .collect()
}

/// [`highs_of`] the qualifying sentences of `normalized` (the plain path; [`super::scan::scan`]
/// has their hashes already).
pub fn sentence_highs(normalized: &str, opts: &Options, sketch: &[u32]) -> Vec<u32> {
    let (cands, _, _) = qualifying(normalized, opts, false);
    let hashes: Vec<u64> = cands
        .iter()
        .map(|c| hash_key(&c.2, opts.nshash_hash))
        .collect();
    highs_of(&hashes, sketch)
}

/// The nshash fingerprint: hashes of [`top_sentence_keys`].
pub fn nshash(normalized: &str, opts: &Options) -> Vec<u64> {
    nshash_and_sketch(normalized, opts).0
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
        let keys = top_sentence_keys(&t, &opts(5), false);
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
        // Without letters or digits, the whole text (spaces aside) is the key.
        let p = nshash(&normalize("。。。 ！"), &opts(5));
        assert_eq!(p.len(), 1);
        assert_eq!(p, nshash(&normalize("。。。！"), &opts(5)));
        assert_ne!(p, nshash(&normalize("😀😃"), &opts(5)));
        assert!(nshash(&normalize("  \n"), &opts(5)).is_empty());
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
    fn sketch_of_keeps_each_sentence_where_it_sits() {
        let (sketch, order) = sketch_of(&[30, 10, 20, 10 | 1 << 40], 0, false, None);
        // Sorted by hash; the low 32 bits collide for the last, which keeps the first place.
        assert_eq!(sketch, [10, 20, 30]);
        assert_eq!(order, [64, 128, 0]);
        // A page's heading sits at HEADING_PLACE; in a store with `headings` no other
        // sentence does, even the last of a long text.
        let (_, order) = sketch_of(&[7, 8, 9], 1, true, None);
        assert_eq!(order, [HEADING_PLACE, 85, 170]);
        let long: Vec<u64> = (0..300).collect();
        let (_, order) = sketch_of(&long, 0, true, None);
        assert_eq!(order.iter().max(), Some(&(HEADING_PLACE - 1)));
        assert_eq!(sketch_of(&long, 0, false, None).1.iter().max(), Some(&255));
        let many: Vec<u64> = (0..2000).collect();
        let (sketch, order) = sketch_of(&many, 0, false, None);
        assert_eq!(sketch.len(), SKETCH_MAX);
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "text order of sorted ids"
        );
    }

    #[test]
    fn headings_end_where_the_sketch_places_them_apart() {
        let o = Options::default();
        // A dateline, then the text: one heading, whose figures end before the text.
        let t = normalize("2018年10月12日 0条评论 来源综合报道\n这是正文的第一个句子而且很长。这是正文的第二个句子也很长。");
        let end = headings_end(&t, &o);
        assert!(t[..end].ends_with("来源综合报道"), "{}", &t[..end]);
        let (_, _, order) = nshash_sketch_and_order(&t, &o, true);
        assert_eq!(order.iter().filter(|&&p| p == HEADING_PLACE).count(), 1);
        // No heading: a text whose first sentence ends at a full stop, or whose lines are
        // more than its sentences after them (a list), or more than HEADINGS_MOST.
        assert_eq!(
            headings_end(
                &normalize("这是正文的第一个句子而且很长。第二行没有句号结尾的句子"),
                &o
            ),
            0
        );
        let list = normalize("第一行是列表里的一项内容\n第二行是列表里的一项内容\n第三行是列表里的一项内容\n这是正文的第一个句子而且很长。");
        assert_eq!(headings_end(&list, &o), 0);
    }

    proptest::proptest! {
        /// Read only until its headings are known, `headings_end` finds as many as the
        /// sketch places apart, whatever the lines.
        #[test]
        fn headings_end_counts_the_sketchs_headings(
            lines in proptest::collection::vec(("[一二三四五六七八九十年月日条评论]{4,16}", proptest::bool::ANY), 0..10),
        ) {
            let o = Options::default();
            let text: Vec<String> = lines
                .iter()
                .map(|(l, stop)| if *stop { format!("{l}。") } else { l.clone() })
                .collect();
            let t = normalize(&text.join("\n"));
            let end = headings_end(&t, &o);
            let (_, _, order) = nshash_sketch_and_order(&t, &o, true);
            let placed = order.iter().filter(|&&p| p == HEADING_PLACE).count();
            let mut seen = std::collections::HashSet::new();
            let before = sentences::split(&t[..end])
                .map(sentences::key)
                .filter(|(k, n)| *n >= o.min_sentence_chars && seen.insert(k.clone()))
                .count();
            proptest::prop_assert_eq!(before, placed);
        }
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
