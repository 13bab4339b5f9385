//! jieba's dictionary and IDF table as one FST built ahead of time (`examples/gen_lexicon.rs`),
//! read in place from the binary: the IDF of a word without building jieba-rs's 270,000-entry
//! table, and a segmenter for one text holding only the dictionary words that occur in it
//! (about a millisecond) instead of the whole 349,000-word dictionary (a quarter of a second
//! and 60 MiB: what a one-document `fpdb query` used to spend nearly all its time on).
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
    let fst = &lex.fst;
    let bytes = text.as_bytes();
    let mut words: Vec<(&str, u64)> = Vec::new();
    for (start, _) in text.char_indices() {
        let mut node = fst.root();
        let mut out = Output::zero();
        for (i, &b) in bytes[start..].iter().enumerate() {
            let Some(t) = node.find_input(b).map(|k| node.transition(k)) else {
                break;
            };
            out = out.cat(t.out);
            node = fst.node(t.addr);
            if node.is_final() {
                if let (Some(freq), _) = split(out.cat(node.final_output()).value()) {
                    // Keys are whole UTF-8 strings: a final state ends on a char boundary.
                    words.push((&text[start..start + i + 1], freq));
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_equal_jiebas() {
        // jieba-rs shows its dictionary size and total frequency only through Debug.
        let full = format!("{:?}", super::super::tokenize::jieba());
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
            "src/text/lexicon is not jieba-rs's dictionary: rerun examples/gen_lexicon.rs"
        );
    }
}
