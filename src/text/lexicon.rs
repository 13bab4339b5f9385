//! jieba's dictionary and IDF table as one FST built ahead of time (`tools/src/bin/gen_lexicon.rs`),
//! read in place from the binary: the IDF of a word without building jieba-rs's 270,000-entry
//! table, and a segmenter for one text holding only the dictionary words that occur in it
//! instead of the whole 349,000-word dictionary (what a one-document `fpdb query` used to
//! spend nearly all its time on; figures: docs/performance.md).
//!
//! Restricted to the words of a text, with jieba's total frequency kept (a padding word
//! carries the rest of it), jieba's `cut` of that text is the same: its DAG only ever holds
//! words of the text, and every route's probability uses only their frequencies and the total.
//! The tests check both against jieba-rs on real text.

use std::sync::OnceLock;

use fst::raw::{Fst, Output};
use jieba_rs::Jieba;

static FST: &[u8] = include_bytes!("lexicon/jieba.fst");
static VALUES: &[u8] = include_bytes!("lexicon/idf.values");

/// Bits of a value holding the IDF index (+1; 0: not in the IDF table).
const IDF_BITS: u32 = 12;

/// A word no normalized text contains (noncharacters), carrying the part of jieba's total
/// frequency that the words of the text do not.
const PAD: &str = "\u{FDD0}\u{FDD1}\u{FDD2}";

struct Lexicon {
    fst: Fst<&'static [u8]>,
    values: Vec<f64>,
    total: u64,
    median: f64,
}

fn lexicon() -> &'static Lexicon {
    static LEX: OnceLock<Lexicon> = OnceLock::new();
    LEX.get_or_init(|| {
        let fst = Fst::new(FST).expect("the embedded lexicon is a valid FST");
        let values: Vec<f64> = VALUES
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let head = fst.get(b"").expect("the lexicon holds the totals").value();
        let (total, median) = split(head);
        Lexicon {
            total: total.expect("total"),
            median: values[median.expect("median")],
            values,
            fst,
        }
    })
}

/// (dictionary frequency, IDF index) of a value.
fn split(v: u64) -> (Option<u64>, Option<usize>) {
    let freq = (v >> IDF_BITS).checked_sub(1);
    let idf = ((v & ((1 << IDF_BITS) - 1)) as usize).checked_sub(1);
    (freq, idf)
}

static JIEBA: std::sync::OnceLock<jieba_rs::Jieba> = std::sync::OnceLock::new();

/// jieba with its whole dictionary (built once per process: a quarter of a second).
pub(super) fn jieba() -> &'static jieba_rs::Jieba {
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

/// jieba with its whole dictionary, if built yet.
pub(super) fn built_jieba() -> Option<&'static jieba_rs::Jieba> {
    JIEBA.get()
}

/// Build jieba's whole dictionary now (a quarter of a second), so that no later text waits
/// for it: for long-running processes such as `fpdb serve`.
pub fn warm_up() {
    jieba();
}

/// jieba's built-in IDF of a word (its table's median when the word is not listed), as its
/// TF-IDF extractor weighs a one-word text.
pub(super) fn idf(word: &str) -> f64 {
    let lex = lexicon();
    lex.fst
        .get(word.as_bytes())
        .and_then(|o| split(o.value()).1)
        .map_or(lex.median, |i| lex.values[i])
}

/// A jieba segmenter holding the dictionary words that occur in `text` (with their
/// frequencies) and jieba's total frequency: its `cut(text, false)` equals the full
/// dictionary's. None when the text holds the padding word.
pub(super) fn restricted(text: &str) -> Option<Jieba> {
    if text.contains(PAD) {
        return None;
    }
    let lex = lexicon();
    let mut words: Vec<(&str, u64)> = Vec::new();
    let mut ends = Vec::new();
    for (start, _) in text.char_indices() {
        word_ends(&lex.fst, text, start, &mut ends);
        words.extend(ends.iter().map(|&(end, freq)| (&text[start..end], freq)));
    }
    words.sort_unstable();
    words.dedup();
    let mut jieba = Jieba::empty();
    let mut sum = 0u64;
    for &(w, freq) in &words {
        jieba.add_word(w, Some(freq as usize), None);
        sum += freq;
    }
    jieba.add_word(PAD, Some(lex.total.checked_sub(sum)? as usize), None);
    Some(jieba)
}

/// Whether `c` belongs to a block the dictionary segments (jieba's `RE_HAN_DEFAULT`: CJK
/// ideographs, ASCII letters and digits, `+#&._%-`); other characters are tokens of their own.
fn in_block(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}'
        | '\u{20000}'..='\u{2a6df}' | '\u{2a700}'..='\u{2b73f}' | '\u{2b740}'..='\u{2b81f}'
        | '\u{2b820}'..='\u{2ceaf}' | '\u{2f800}'..='\u{2fa1f}'
        | 'a'..='z' | 'A'..='Z' | '0'..='9' | '+' | '#' | '&' | '.' | '_' | '%' | '-')
}

/// Dictionary maximum matching, forward (`backward` false) or backward: the classic
/// segmenters next to jieba's most-probable route. Within a block (see [`in_block`]) the
/// longest dictionary word starting (forward) or ending (backward) at the current place is
/// taken; where none is longer than a run of ASCII letters and digits, the run is one token
/// (as jieba makes it); otherwise one character. Other characters are one token each.
pub(super) fn max_match(text: &str, backward: bool) -> Vec<&str> {
    let fst = &lexicon().fst;
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let len = if in_block(c) {
            rest.find(|c: char| !in_block(c)).unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        let (block, tail) = rest.split_at(len);
        if in_block(c) {
            segment_block(fst, block, backward, &mut out);
        } else {
            out.push(block);
        }
        rest = tail;
    }
    out
}

thread_local! {
    /// The FST state after each first character seen (None: no word starts with it): the
    /// root's transitions are the widest, and every position starts there.
    static FIRST: std::cell::RefCell<foldhash::HashMap<char, Option<(u64, u64)>>> =
        Default::default();
}

/// (byte offset of the end, frequency) of the dictionary words starting at `start` of `block`,
/// shortest first, into `ends` (cleared first).
fn word_ends(fst: &Fst<&[u8]>, block: &str, start: usize, ends: &mut Vec<(usize, u64)>) {
    ends.clear();
    let Some(first) = block[start..].chars().next() else {
        return;
    };
    let state = FIRST.with(|m| {
        *m.borrow_mut().entry(first).or_insert_with(|| {
            let mut node = fst.root();
            let mut out = Output::zero();
            let mut buf = [0u8; 4];
            for &b in first.encode_utf8(&mut buf).as_bytes() {
                let t = node.transition(node.find_input(b)?);
                out = out.cat(t.out);
                node = fst.node(t.addr);
            }
            Some((node.addr() as u64, out.value()))
        })
    });
    let Some((addr, out)) = state else {
        return;
    };
    let mut node = fst.node(addr as usize);
    let mut out = Output::new(out);
    let at = start + first.len_utf8();
    if node.is_final() {
        if let (Some(freq), _) = split(out.cat(node.final_output()).value()) {
            ends.push((at, freq));
        }
    }
    for (i, &b) in block.as_bytes()[at..].iter().enumerate() {
        let Some(t) = node.find_input(b).map(|k| node.transition(k)) else {
            break;
        };
        out = out.cat(t.out);
        node = fst.node(t.addr);
        if node.is_final() {
            if let (Some(freq), _) = split(out.cat(node.final_output()).value()) {
                // Keys are whole UTF-8 strings: a final state ends on a char boundary.
                ends.push((at + i + 1, freq));
            }
        }
    }
}

/// [`max_match`] of one block.
fn segment_block<'a>(fst: &Fst<&[u8]>, block: &'a str, backward: bool, out: &mut Vec<&'a str>) {
    let bytes = block.as_bytes();
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let char_len = |i: usize| block[i..].chars().next().map_or(1, char::len_utf8);
    let mut ends = Vec::new();
    if !backward {
        let mut i = 0;
        while i < bytes.len() {
            word_ends(fst, block, i, &mut ends);
            let longest = ends.last().map_or(0, |e| e.0);
            let mut end = longest.max(i + char_len(i));
            if alnum(bytes[i]) {
                let run = bytes[i..].iter().take_while(|&&b| alnum(b)).count();
                if i + run > longest {
                    end = i + run;
                }
            }
            out.push(&block[i..end]);
            i = end;
        }
        return;
    }
    // The dictionary word with the earliest start ending at each byte offset.
    let mut earliest_to = vec![usize::MAX; bytes.len() + 1];
    for (start, _) in block.char_indices().rev() {
        word_ends(fst, block, start, &mut ends);
        for &(e, _) in &ends {
            earliest_to[e] = start;
        }
    }
    let first = out.len();
    let mut j = bytes.len();
    while j > 0 {
        let prev_char = block[..j].chars().next_back().map_or(1, char::len_utf8);
        let mut start = earliest_to[j].min(j - prev_char);
        if alnum(bytes[j - 1]) {
            let run = bytes[..j].iter().rev().take_while(|&&b| alnum(b)).count();
            if earliest_to[j] == usize::MAX || j - run < earliest_to[j] {
                start = j - run;
            }
        }
        out.push(&block[start..j]);
        j = start;
    }
    out[first..].reverse();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict_has(w: &str) -> bool {
        lexicon()
            .fst
            .get(w.as_bytes())
            .is_some_and(|o| split(o.value()).0.is_some())
    }

    /// Oracle: maximum matching by its textbook definition, with a dictionary membership test
    /// for every candidate length.
    fn textbook(block: &str, backward: bool) -> Vec<String> {
        let chars: Vec<char> = block.chars().collect();
        let word = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
        let alnum = |c: char| c.is_ascii_alphanumeric();
        let mut out = Vec::new();
        if !backward {
            let mut i = 0;
            while i < chars.len() {
                let dict = (i + 1..=chars.len()).rev().find(|&e| dict_has(&word(i, e)));
                let run = i + chars[i..].iter().take_while(|&&c| alnum(c)).count();
                let end = match dict {
                    Some(e) if e >= run => e,
                    _ if run > i => run,
                    Some(e) => e,
                    None => i + 1,
                };
                out.push(word(i, end));
                i = end;
            }
        } else {
            let mut j = chars.len();
            while j > 0 {
                let dict = (0..j).find(|&s| dict_has(&word(s, j)));
                let run = j - chars[..j].iter().rev().take_while(|&&c| alnum(c)).count();
                let start = match dict {
                    Some(s) if s <= run => s,
                    _ if run < j => run,
                    Some(s) => s,
                    None => j - 1,
                };
                out.push(word(start, j));
                j = start;
            }
            out.reverse();
        }
        out
    }

    #[test]
    fn max_match_is_the_textbook_one() {
        for text in [
            "研究生命的起源",
            "结婚的和尚未结婚的",
            "南京市长江大桥",
            "iphone15在中国大陆售价7999元",
            "4s店和1号店",
            "a中b",
            "",
        ] {
            for backward in [false, true] {
                let ours: Vec<&str> = max_match(text, backward);
                assert_eq!(ours, textbook(text, backward), "{text} backward={backward}");
            }
        }
        // The classic ambiguity: forward and backward disagree.
        assert_eq!(max_match("研究生命的起源", false)[0], "研究生");
        assert_eq!(max_match("研究生命的起源", true)[..2], ["研究", "生命"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn max_match_equals_the_textbook_one_on_random_blocks(
            text in "[的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理世车点克aBc19]{0,40}",
            backward in proptest::bool::ANY,
        ) {
            let ours: Vec<&str> = max_match(&text, backward);
            proptest::prop_assert_eq!(ours, textbook(&text, backward));
        }
    }

    #[test]
    fn totals_equal_jiebas() {
        // jieba-rs shows its dictionary size and total frequency only through Debug.
        let full = format!("{:?}", super::jieba());
        let lex = lexicon();
        let words = {
            use fst::Streamer;
            let map = fst::Map::new(FST).unwrap();
            let mut s = map.stream();
            let mut n = 0;
            while let Some((k, v)) = s.next() {
                n += usize::from(!k.is_empty() && split(v).0.is_some());
            }
            n
        };
        assert_eq!(
            full,
            format!(
                "Jieba {{ records_len: {words}, total_freq: {} }}",
                lex.total
            ),
            "src/text/lexicon is not jieba-rs's dictionary: rerun tools/src/bin/gen_lexicon.rs"
        );
    }
}
