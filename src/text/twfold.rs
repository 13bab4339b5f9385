//! The Taiwan-vocabulary fold of stores made with `tw_phrases`: a mainland word and the Taiwan
//! word OpenCC writes for it (软件 / 軟體, 程序 / 程式, 对象 / 物件) are written as one word, so a
//! page converted with `s2twp` (script *and* vocabulary) fingerprints like its original.
//!
//! OpenCC's own reverse conversion (`tw2sp`) is a mapping, not a fold: it turns a Taiwan 程序
//! into a mainland 进程 and a Taiwan 程式 into 程序, so a mainland 程序 and its Taiwan copy
//! 程式 still differ after it. Here each pair of `TWPhrases` / `TWPhrasesRev` joins one class
//! (`tools/src/bin/gen_tw_fold.rs` builds `tw_fold.tsv`), and every member of a class is replaced
//! by the class's one representative (its word most frequent in mainland text), in every
//! text, mainland and Taiwan alike, leftmost-longest as OpenCC matches. The text is already
//! prepared (normalized, simplified), so the table is too.
//!
//! The matcher looks at each pair of consecutive characters: a bitmap of hashed pairs that
//! start a member answers almost always "no" (1 position in 40 of a law text passes, 1 in
//! 1,000 of random text), and only then are the members starting with that pair compared,
//! longest first. The few one-character members (矽 / 硅: element names) have a bitmap of
//! their own, and ASCII that starts no member is passed over a byte at a time. It is faster
//! than `aho-corasick`'s leftmost-longest DFA (the oracle of the tests) on Chinese text
//! (docs/performance.md, "Store settings").

use std::borrow::Cow;
use std::sync::OnceLock;

use foldhash::{HashMap, HashMapExt};

static TABLE: &str = include_str!("tw_fold.tsv");

/// A member after its first two characters, and what replaces the whole member (`None`:
/// itself, a longer word that keeps a shorter member inside it from matching, as 方程式 keeps
/// 程式).
type Tail = (&'static str, Option<&'static str>);

/// Bits of the pair bitmap's index: 8 KiB, which stays in the L1 cache (1,000 pairs: 1.5%
/// of the positions that start none pass it).
const PAIR_BITS: u32 = 16;

struct Fold {
    /// Bit [`pair_slot`] set for the first two characters of every member.
    pairs: Vec<u64>,
    /// Members by their first two characters ([`pair_at`]), longest first.
    by_pair: HashMap<u64, Vec<Tail>>,
    /// Bit `cp` set for the code point of every one-character member that changes, below
    /// U+10000 (those above are compared at every four-byte character, which are rare).
    single_cps: Vec<u64>,
    /// One-character members that change, and what replaces them.
    singles: Vec<(&'static str, &'static str)>,
    /// Whether a member starts with this ASCII byte (a few do: `sql注入`, `u盘`).
    ascii_starts: [bool; 128],
}

/// `(member, representative)` of every line of the table.
fn entries() -> impl Iterator<Item = (&'static str, &'static str)> {
    TABLE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            l.split_once('\t')
                .expect("tw_fold.tsv: member<TAB>representative")
        })
}

/// Length of the UTF-8 sequence that `lead` starts.
#[inline]
fn utf8_len(lead: u8) -> usize {
    match lead {
        0..0xC0 => 1,
        0xC0..0xE0 => 2,
        0xE0..0xF0 => 3,
        _ => 4,
    }
}

/// The first two characters at byte `i` of `b` (valid UTF-8) as one number (their bytes,
/// little-endian; at most 8) and their length in bytes, or `None` at the last character.
#[inline]
fn pair_at(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let l1 = utf8_len(b[i]);
    if i + l1 >= b.len() {
        return None;
    }
    let n = l1 + utf8_len(b[i + l1]);
    let key = if i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if n == 8 {
            w
        } else {
            w & ((1u64 << (8 * n)) - 1)
        }
    } else {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&b[i..i + n]);
        u64::from_le_bytes(w)
    };
    Some((key, n))
}

/// The bit of `key` in [`Fold::pairs`].
#[inline]
fn pair_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAIR_BITS)) as usize
}

fn fold() -> &'static Fold {
    static FOLD: OnceLock<Fold> = OnceLock::new();
    FOLD.get_or_init(|| {
        let mut f = Fold {
            pairs: vec![0; (1 << PAIR_BITS) / 64],
            by_pair: HashMap::new(),
            single_cps: vec![0; 0x1_0000 / 64],
            singles: Vec::new(),
            ascii_starts: [false; 128],
        };
        for (member, rep) in entries() {
            if let Some(&b0) = member.as_bytes().first().filter(|b| b.is_ascii()) {
                f.ascii_starts[b0 as usize] = true;
            }
            let Some((key, n)) = pair_at(member.as_bytes(), 0) else {
                // One character: only a change matters (a character matching itself does
                // not stop a longer member elsewhere).
                if member != rep {
                    let cp = member.chars().next().expect("one character") as usize;
                    assert!(cp >= 0x800, "one-character members are ideographs");
                    if cp < 0x1_0000 {
                        f.single_cps[cp / 64] |= 1 << (cp % 64);
                    }
                    f.singles.push((member, rep));
                }
                continue;
            };
            let slot = pair_slot(key);
            f.pairs[slot / 64] |= 1 << (slot % 64);
            let to = (member != rep).then_some(rep);
            f.by_pair.entry(key).or_default().push((&member[n..], to));
        }
        for tails in f.by_pair.values_mut() {
            tails.sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        }
        f
    })
}

/// `text` with every member of a class replaced by its representative (unchanged, borrowed,
/// when none needs replacing).
pub fn fold_tw(text: &str) -> Cow<'_, str> {
    let f = fold();
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    // Bytes of `text` before this are in `out` (when it exists).
    let mut copied = 0;
    let mut i = 0;
    let marked = |key: u64| {
        let slot = pair_slot(key);
        f.pairs[slot / 64] >> (slot % 64) & 1 == 1
    };
    // Whether the character at `i` (three or four bytes long) may be a one-character member.
    let single = |i: usize, len: usize| {
        if len == 4 {
            return true;
        }
        let cp = (b[i] as usize & 0x0F) << 12
            | (b[i + 1] as usize & 0x3F) << 6
            | (b[i + 2] as usize & 0x3F);
        f.single_cps[cp / 64] >> (cp % 64) & 1 == 1
    };
    while i < b.len() {
        // ASCII that starts no member (English text, digits, punctuation).
        if b[i] < 0x80 && !f.ascii_starts[b[i] as usize] {
            i += 1;
            continue;
        }
        // Two three-byte characters (most pairs of a Chinese text) that start no member: the
        // same test as below without its branches on lengths.
        if i + 8 <= b.len() && b[i] & 0xF0 == 0xE0 && b[i + 3] & 0xF0 == 0xE0 {
            let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if !marked(w & 0xFFFF_FFFF_FFFF) && !single(i, 3) {
                i += 3;
                continue;
            }
        }
        let len = utf8_len(b[i]);
        // The longest member starting here: two characters or more, else one.
        let mut hit = None;
        if let Some((key, n)) = pair_at(b, i) {
            if marked(key) {
                let rest = &text[i + n..];
                hit = f
                    .by_pair
                    .get(&key)
                    .and_then(|tails| tails.iter().find(|(tail, _)| rest.starts_with(tail)))
                    .map(|&(tail, to)| (i + n + tail.len(), to));
            }
        }
        if hit.is_none() && len > 2 && single(i, len) {
            let here = &text[i..i + len];
            hit = f
                .singles
                .iter()
                .find(|(m, _)| *m == here)
                .map(|&(_, rep)| (i + len, Some(rep)));
        }
        let Some((end, to)) = hit else {
            i += len;
            continue;
        };
        if let Some(rep) = to {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..i]);
            o.push_str(rep);
            copied = end;
        }
        i = end;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};
    use ferrous_opencc::{config::BuiltinConfig, OpenCC};
    use proptest::prelude::*;

    fn prepared(s: &str) -> String {
        super::super::prepare(s, &crate::Options::default())
    }

    /// The same fold by a general leftmost-longest automaton.
    fn oracle(text: &str) -> String {
        static AC: OnceLock<(AhoCorasick, Vec<&'static str>)> = OnceLock::new();
        let (ac, reps) = AC.get_or_init(|| {
            let (members, reps): (Vec<&str>, Vec<&str>) = entries().unzip();
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&members)
                .unwrap();
            (ac, reps)
        });
        ac.replace_all(text, reps)
    }

    #[test]
    fn taiwan_words_fold_onto_their_mainland_ones() {
        assert_eq!(fold_tw("这个软件的程序"), "这个软件的程序");
        assert_eq!(fold_tw("这个软体的程式"), "这个软件的程序");
        assert_eq!(fold_tw("面向对象"), fold_tw("面向物件"));
        // A longer word keeps the member inside it.
        assert_eq!(fold_tw("解方程式"), "解方程式");
        // Text holding no member is returned as it is.
        assert!(matches!(fold_tw("中华人民共和国宪法"), Cow::Borrowed(_)));
        assert!(matches!(fold_tw("plain english"), Cow::Borrowed(_)));
        assert!(matches!(fold_tw(""), Cow::Borrowed(_)));
    }

    #[test]
    fn representatives_fold_to_themselves() {
        for (m, r) in entries() {
            assert_eq!(fold_tw(r), r, "representative {r} of {m}");
        }
    }

    proptest! {
        /// Equal to a general leftmost-longest automaton on text made of members, pieces of
        /// members and other characters.
        #[test]
        fn equals_the_automaton(parts in prop::collection::vec((0usize..2000, 0usize..4, "[a-z ,\\n中文了的é😀𠀀]{0,3}"), 0..30)) {
            let members: Vec<&str> = entries().map(|(m, _)| m).collect();
            let mut text = String::new();
            for (k, cut, other) in parts {
                let m = members[k % members.len()];
                // A whole member, or one cut short / started late.
                let chars: Vec<char> = m.chars().collect();
                match cut {
                    0 | 1 => text.push_str(m),
                    2 => text.extend(&chars[..chars.len() - 1]),
                    _ => text.extend(&chars[1..]),
                }
                text.push_str(&other);
            }
            let (got, want) = (fold_tw(&text).into_owned(), oracle(&text));
            prop_assert_eq!(got, want);
        }
    }

    /// The property the fold is for, with OpenCC as the oracle: a mainland text and its
    /// `s2twp` conversion, both prepared as a store prepares text, fold to the same text.
    #[test]
    fn s2twp_copies_fold_like_their_originals() {
        let s2twp = OpenCC::from_config(BuiltinConfig::S2twp).unwrap();
        let mut checked = 0;
        let mut differ = Vec::new();
        for (m, _) in entries() {
            // Each word inside a sentence, so segmentation sees context as in real text.
            let original = prepared(&format!("根据本法的规定,{m}应当予以公布。"));
            let copy = prepared(&s2twp.convert(&original));
            checked += 1;
            if fold_tw(&original) != fold_tw(&copy) {
                differ.push(format!("{original} / {copy}"));
            }
        }
        // A few differ: members that are Taiwan words already (程序导向), which s2twp changes
        // again, and words OpenCC cuts differently in a sentence (13 of 1,039 when written).
        assert!(
            differ.len() * 50 < checked,
            "{} of {checked} differ: {:?}",
            differ.len(),
            &differ[..differ.len().min(20)]
        );
    }
}
