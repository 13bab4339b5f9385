//! The one pass over a normalized text that every ingested document gets: the nshash
//! fingerprint and sentence sketch ([`super::nshash`]), the shingle sketch and MinHash band
//! keys ([`super::minhash`]) and the character count, with nothing allocated per sentence or
//! per character. Equal to the separate functions (`scan_equals_the_separate_passes`).

use super::minhash::{gram_hash, gram_hashes, Bins, BottomK, GRAM_CHUNK, SHINGLES_K_ALL};
use super::nshash::{
    cut_apart, hash_key, heading_count, highs_of, keep_top, keeps_highs, nshash_sketch_and_order,
    sentence_highs, sketch_of, tells_headings_apart,
};
use crate::options::Options;
use crate::text::{ideograph, ideograph_at, sentences};

/// Everything nshash and verification take from a normalized text, computed in one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The nshash fingerprint (see [`super::nshash::nshash_and_sketch`]).
    pub top: Vec<u64>,
    /// The sentence sketch (see [`super::nshash::nshash_and_sketch`]).
    pub sketch: Vec<u32>,
    /// Where each sentence of the sketch sits (see [`sketch_of`]).
    pub order: Vec<u8>,
    /// The high halves of the sketch's sentence hashes, on a page that keeps them
    /// ([`super::nshash::keeps_highs`], [`super::nshash::highs_of`]); else empty.
    pub highs: Vec<u32>,
    /// The shingle sketch of a store with `reflow` (see [`super::minhash::shingles`] with `all`).
    pub shingles: Vec<u32>,
    /// Characters of the text.
    pub chars: u64,
    /// MinHash band keys (see [`super::minhash::bands`]; empty when the store has none).
    pub bands: Vec<u64>,
}

/// [`super::nshash::nshash_and_sketch`], [`super::minhash::shingles`] (`all`) and the character count of `normalized` in
/// one pass over its characters: sentence keys are hashed from one reused buffer as their
/// sentence ends, 4-grams roll over the letters and digits, nothing is allocated per sentence
/// or per character. Sentences are told apart by their 64-bit hash (the value the store keeps:
/// two sentences with one hash are one posting anyway). `page`: a document with a URL, whose
/// headings a store with `headings` tells apart. Equal to the separate functions
/// (`scan_equals_the_separate_passes` checks it on random text).
#[expect(
    clippy::too_many_lines,
    reason = "the hot loop of every ingest: its state stays in locals (checked by the proptests against the separate passes)"
)]
pub fn scan(normalized: &str, opts: &Options, page: bool) -> Scan {
    let bytes = normalized.as_bytes();
    let kind = opts.nshash_hash;
    let min = opts.min_sentence_chars;
    // (key length, hash) of each distinct qualifying sentence, in text order.
    // Sized for a long article's sentences, so that the set is not grown (rehashed) three or
    // four times in every document.
    let mut cands: Vec<(usize, u64)> = Vec::with_capacity(SENTENCES_AHEAD);
    let mut seen = foldhash::HashSet::with_capacity_and_hasher(SENTENCES_AHEAD, Default::default());
    let mut key = String::with_capacity(256);
    let (mut n, mut blank) = (0usize, true);
    // Qualifying sentences that ended at their line's end before the first that ended at a
    // full stop, and whether one has (`heading_count`).
    let (mut lead, mut closed) = (0usize, false);
    // Whether the last qualifying sentence ended at its line's end (`cut_apart`).
    let mut last_cut = false;
    let mut end_sentence = |key: &mut String, n: usize, blank: bool, line_end: bool| {
        if !blank && n >= min {
            let h = hash_key(key, kind);
            if seen.insert(h) {
                cands.push((n, h));
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
        key.clear();
    };
    // The letters and digits, as code points: their 4-grams are hashed in a second, tight
    // loop (the hash's multiplications of successive grams then overlap), a slice of
    // GRAM_SLICE at a time, so a huge document needs no list of all its characters.
    let mut word_chars: Vec<u32> = Vec::with_capacity(GRAM_SLICE + 3);
    let mut grams = BottomK::new(SHINGLES_K_ALL);
    let mut bins = Bins::new(opts.minhash_bands as usize, opts.minhash_rows as usize);
    let (mut chars, mut words) = (0u64, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        // Runs of plain ideographs (most of a Chinese text; U+4E00..U+9FFF is three bytes
        // led by E4 B8..E9): letters that end no sentence, copied into the key as one slice.
        let run = i;
        while ideograph_at(bytes, i) {
            word_chars.push(ideograph(bytes, i));
            if word_chars.len() == GRAM_SLICE + 3 {
                hash_grams(&mut word_chars, &mut grams, &mut bins);
            }
            i += 3;
        }
        if i > run {
            let k = (i - run) / 3;
            key.push_str(&normalized[run..i]);
            (n, words, chars, blank) = (n + k, words + k, chars + k as u64, false);
            continue;
        }
        let c = normalized[i..].chars().next().expect("a char starts here");
        chars += 1;
        let ends = match c {
            '!' | '?' | ';' | '\n' => true,
            '.' => {
                let prev_digit = i > 0 && bytes[i - 1].is_ascii_digit();
                let next_digit = i + 1 < bytes.len() && bytes[i + 1].is_ascii_digit();
                !(prev_digit && next_digit)
            }
            _ => false,
        };
        i += c.len_utf8();
        if ends {
            end_sentence(&mut key, n, blank, c == '\n');
            (n, blank) = (0, true);
            continue;
        }
        if blank && !c.is_whitespace() {
            blank = false;
        }
        if sentences::is_word_char(c) {
            key.push(c);
            n += 1;
            word_chars.push(c as u32);
            words += 1;
            if word_chars.len() == GRAM_SLICE + 3 {
                hash_grams(&mut word_chars, &mut grams, &mut bins);
            }
        }
    }
    end_sentence(&mut key, n, blank, true);
    if words >= 4 {
        hash_grams(&mut word_chars, &mut grams, &mut bins);
    } else if words > 0 {
        // A text of 1-3 letters or digits in all is one gram.
        let w: Vec<char> = word_chars
            .iter()
            .filter_map(|&c| char::from_u32(c))
            .collect();
        let h = gram_hash(&w);
        grams.add(h);
        bins.add(h);
    }
    let grams = grams.finish();
    let bands = bins.keys();
    if cands.is_empty() {
        // No qualifying sentence: the whole text keys the document (rare; the plain path).
        let (top, sketch, order) = nshash_sketch_and_order(normalized, opts, page);
        let highs = if keeps_highs(opts, page) {
            sentence_highs(normalized, opts, &sketch)
        } else {
            Vec::new()
        };
        return Scan {
            top,
            sketch,
            order,
            highs,
            shingles: grams,
            chars,
            bands,
        };
    }
    let heads = if tells_headings_apart(opts, page) {
        heading_count(lead, closed, cands.len())
    } else {
        0
    };
    let hashes: Vec<u64> = cands.iter().map(|c| c.1).collect();
    let (sketch, order) = sketch_of(
        &hashes,
        heads,
        opts.headings,
        cut_apart(opts, page, last_cut),
    );
    let highs = if keeps_highs(opts, page) {
        highs_of(&hashes, &sketch)
    } else {
        Vec::new()
    };
    keep_top(&mut cands, opts, heads, |c| c.0);
    Scan {
        top: cands.into_iter().map(|c| c.1).collect(),
        sketch,
        order,
        highs,
        shingles: grams,
        chars,
        bands,
    }
}

/// Sentences [`scan`] makes room for before it reads a document.
const SENTENCES_AHEAD: usize = 64;

/// Code points of letters and digits whose 4-grams [`scan`] hashes at a time.
const GRAM_SLICE: usize = 4096;

/// Hash every 4-gram of `word_chars` into `grams` and `bins`, and keep its last 3 code points
/// (the start of the next slice's first gram).
fn hash_grams(word_chars: &mut Vec<u32>, grams: &mut BottomK, bins: &mut Bins) {
    let minhash = !bins.min.is_empty();
    // The first grams of a document (nothing kept yet) and many of them: hashes are uniform,
    // so only those under a bound that about 2k of them pass are offered to the bottom-k
    // (one comparison each, instead of a buffer filled and cut every 3k grams). Exact: when
    // fewer than k distinct values pass, the grams are offered again without the bound.
    let n = word_chars.len().saturating_sub(3);
    let bound = if grams.k > 0 && grams.is_empty() && n > 4 * grams.k {
        ((2 * grams.k as u64) << 32) / n as u64
    } else {
        u64::MAX
    };
    for_each_gram(word_chars, |h| {
        if u64::from(h) < bound {
            grams.add(h);
        }
        if minhash {
            bins.add(h);
        }
    });
    if bound != u64::MAX && !grams.settle() {
        grams.clear();
        for_each_gram(word_chars, |h| grams.add(h));
    }
    let keep = word_chars.len().saturating_sub(3);
    word_chars.drain(..keep);
}

/// `f` of the hash of every 4-gram of `word_chars`, in order.
#[inline(always)]
fn for_each_gram(word_chars: &[u32], mut f: impl FnMut(u32)) {
    let n = word_chars.len().saturating_sub(3);
    let mut buf = [0u32; GRAM_CHUNK];
    for start in (0..n).step_by(GRAM_CHUNK) {
        let m = (n - start).min(GRAM_CHUNK);
        gram_hashes(&word_chars[start..start + m + 3], &mut buf[..m]);
        buf[..m].iter().for_each(|&h| f(h));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::minhash::{bands, shingles};
    use crate::options::SentenceHash;

    /// `len` characters drawn from `pool` by a xorshift generator seeded with `seed`.
    fn random_text(pool: &[char], seed: u64, len: usize) -> String {
        let mut rng = seed | 1;
        (0..len)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                pool[(rng % pool.len() as u64) as usize]
            })
            .collect()
    }

    /// What [`scan`] computes in one pass, from the separate functions.
    fn separate_passes(text: &str, o: &Options, page: bool) -> Scan {
        let (top, sketch, order) = nshash_sketch_and_order(text, o, page);
        Scan {
            top,
            order,
            highs: if keeps_highs(o, page) {
                sentence_highs(text, o, &sketch)
            } else {
                Vec::new()
            },
            shingles: shingles(text, sketch.len(), true),
            sketch,
            chars: text.chars().count() as u64,
            bands: bands(text, o.minhash_bands as usize, o.minhash_rows as usize),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The one-pass scan against the separate functions it replaces, on text made of
        /// sentence ends, digits around dots, spaces, letters, ideographs and emoji.
        #[test]
        fn scan_equals_the_separate_passes(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "。", "！", ". ", ".", "3.5", "1.", ";", "?", "\n", " ", "\t", "a", "Bc", "7",
                "中", "华人民", "共和国宪法", "第一条", "😀", "，", "——", "ǅ", "\u{3000}",
                // Either side of the ideograph block the scan reads byte by byte.
                "\u{4dff}", "\u{4e00}", "\u{9fff}", "\u{a000}", "\u{3400}", "é",
            ]), 0..60),
            n in 1usize..7,
            min in 0usize..12,
            md5 in proptest::bool::ANY,
            page in proptest::bool::ANY,
        ) {
            let text: String = parts.concat();
            let o = Options {
                nshash_n: n,
                min_sentence_chars: min,
                nshash_hash: if md5 { SentenceHash::Md5 } else { SentenceHash::Farmhash },
                ..Options::default()
            };
            proptest::prop_assert_eq!(scan(&text, &o, page), separate_passes(&text, &o, page));
        }

        /// Texts longer than a slice of grams (several slices, a boundary anywhere).
        #[test]
        fn scan_equals_the_separate_passes_on_long_text(
            seed in proptest::num::u64::ANY,
            len in (GRAM_SLICE - 10)..(3 * GRAM_SLICE + 10),
        ) {
            let pool: Vec<char> = "中华人民共和国宪法第一条abc。\n".chars().collect();
            let text = random_text(&pool, seed, len);
            let o = Options::default();
            proptest::prop_assert_eq!(scan(&text, &o, true), separate_passes(&text, &o, true));
        }

        /// Long texts of few distinct grams (a handful of letters repeated), where fewer than
        /// k grams pass the first slice's bound and the slice is offered again without it.
        #[test]
        fn scan_equals_the_separate_passes_on_repetitive_text(
            seed in proptest::num::u64::ANY,
            letters in 1usize..6,
            len in 200usize..3000,
        ) {
            let pool: Vec<char> = "中华人民共和".chars().take(letters).collect();
            let text = random_text(&pool, seed, len);
            let o = Options::default();
            proptest::prop_assert_eq!(scan(&text, &o, true), separate_passes(&text, &o, true));
        }
    }
}
