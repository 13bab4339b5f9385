//! `nshash`: hashes of the n longest distinct sentences of a document.
//!
//! Rules (see ARCHITECTURE.md for why):
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

use crate::hash::fingerprint64;
use crate::options::{Options, SentenceHash};
use crate::text::{ideograph, ideograph_at, sentences};

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
    let mut seen = foldhash::HashSet::default();
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
        } else {
            // No letter or digit at all (emoji, punctuation): the whole text without spaces,
            // so exact copies still link.
            let k: String = normalized.chars().filter(|c| !c.is_whitespace()).collect();
            let n = k.chars().count();
            if n > 0 {
                cands.push((n, 0, k));
            }
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
    let (top, sketch, _) = nshash_sketch_and_order(normalized, opts);
    (top, sketch)
}

/// [`nshash_and_sketch`] with the sketch's order ([`sketch_of`]).
pub fn nshash_sketch_and_order(normalized: &str, opts: &Options) -> (Vec<u64>, Vec<u32>, Vec<u8>) {
    let cands = qualifying(normalized, opts);
    let hashes: Vec<u64> = cands
        .iter()
        .map(|c| hash_key(&c.2, opts.nshash_hash))
        .collect();
    let (sketch, order) = sketch_of(&hashes);
    let top = top_of(cands, opts)
        .iter()
        .map(|k| hash_key(k, opts.nshash_hash))
        .collect();
    (top, sketch, order)
}

/// A document's sentence sketch (the low 32 bits of its distinct sentence hashes, sorted, at
/// most [`SKETCH_MAX`]) from the hashes in text order, and, parallel to it, where each sentence
/// sits: its rank in the text scaled to 0..=255 ([`shape`] reads it).
pub fn sketch_of(hashes: &[u64]) -> (Vec<u32>, Vec<u8>) {
    let n = hashes.len().max(1);
    let mut v: Vec<(u32, u8)> = hashes
        .iter()
        .enumerate()
        .map(|(i, &h)| (h as u32, (i * 256 / n) as u8))
        .collect();
    v.sort_unstable();
    v.dedup_by_key(|e| e.0);
    v.truncate(SKETCH_MAX);
    v.into_iter().unzip()
}

/// Everything nshash and verification take from a normalized text, computed in one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The nshash fingerprint (see [`nshash_and_sketch`]).
    pub top: Vec<u64>,
    /// The sentence sketch (see [`nshash_and_sketch`]).
    pub sketch: Vec<u32>,
    /// Where each sentence of the sketch sits (see [`sketch_of`]).
    pub order: Vec<u8>,
    /// The shingle sketch of a store with `reflow` (see [`shingles`] with `all`).
    pub shingles: Vec<u32>,
    /// Characters of the text.
    pub chars: u64,
    /// MinHash band keys (see [`bands`]; empty when the store has none).
    pub bands: Vec<u64>,
}

/// [`nshash_and_sketch`], [`shingles`] (`all`) and the character count of `normalized` in
/// one pass over its characters: sentence keys are hashed from one reused buffer as their
/// sentence ends, 4-grams roll over the letters and digits, nothing is allocated per sentence
/// or per character. Sentences are told apart by their 64-bit hash (the value the store keeps:
/// two sentences with one hash are one posting anyway). Equal to the separate functions
/// (`scan_equals_the_separate_passes` checks it on random text).
pub fn scan(normalized: &str, opts: &Options) -> Scan {
    let bytes = normalized.as_bytes();
    let kind = opts.nshash_hash;
    let min = opts.min_sentence_chars;
    // (key length, hash) of each distinct qualifying sentence, in text order.
    let mut cands: Vec<(usize, u64)> = Vec::new();
    let mut seen = foldhash::HashSet::default();
    let mut key = String::with_capacity(256);
    let (mut n, mut blank) = (0usize, true);
    let mut end_sentence = |key: &mut String, n: usize, blank: bool| {
        if !blank && n >= min {
            let h = hash_key(key, kind);
            if seen.insert(h) {
                cands.push((n, h));
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
            end_sentence(&mut key, n, blank);
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
    end_sentence(&mut key, n, blank);
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
        let (top, sketch, order) = nshash_sketch_and_order(normalized, opts);
        return Scan {
            top,
            sketch,
            order,
            shingles: grams,
            chars,
            bands,
        };
    }
    let hashes: Vec<u64> = cands.iter().map(|c| c.1).collect();
    let (sketch, order) = sketch_of(&hashes);
    // Longest first; a stable sort keeps the earlier of equally long sentences first.
    cands.sort_by(|a, b| b.0.cmp(&a.0));
    cands.truncate(opts.nshash_n);
    Scan {
        top: cands.into_iter().map(|c| c.1).collect(),
        sketch,
        order,
        shingles: grams,
        chars,
        bands,
    }
}

/// Code points of letters and digits whose 4-grams [`scan`] hashes at a time.
const GRAM_SLICE: usize = 4096;

/// 4-grams hashed per call of [`gram_hashes`] (a buffer on the stack).
const GRAM_CHUNK: usize = 512;

/// Hash every 4-gram of `word_chars` into `grams` and `bins`, and keep its last 3 code points
/// (the start of the next slice's first gram).
fn hash_grams(word_chars: &mut Vec<u32>, grams: &mut BottomK, bins: &mut Bins) {
    let minhash = !bins.min.is_empty();
    // The first grams of a document (nothing kept yet) and many of them: hashes are uniform,
    // so only those under a bound that about 2k of them pass are offered to the bottom-k
    // (one comparison each, instead of a buffer filled and cut every 3k grams). Exact: when
    // fewer than k distinct values pass, the grams are offered again without the bound.
    let n = word_chars.len().saturating_sub(3);
    let bound = (grams.k > 0 && grams.is_empty() && n > 4 * grams.k)
        .then(|| ((2 * grams.k as u64) << 32) / n as u64)
        .unwrap_or(u64::MAX);
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

/// The hash ([`gram_mix`], as [`gram_hash`] of four characters) of every 4-gram of `chars`
/// into `out` (`chars.len() - 3` of them). Each is independent of the others, so the loop is
/// compiled a second time for CPUs with wider vector instructions (AVX-512 or AVX2, chosen at
/// run time): the same arithmetic on several grams at once, the same values.
fn gram_hashes(chars: &[u32], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            // SAFETY: the CPU has the features the function is compiled for (checked above).
            return unsafe { gram_hashes_avx512(chars, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above.
            return unsafe { gram_hashes_avx2(chars, out) };
        }
    }
    gram_hashes_portable(chars, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn gram_hashes_avx512(chars: &[u32], out: &mut [u32]) {
    gram_hashes_portable(chars, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn gram_hashes_avx2(chars: &[u32], out: &mut [u32]) {
    gram_hashes_portable(chars, out)
}

#[inline(always)]
fn gram_hashes_portable(chars: &[u32], out: &mut [u32]) {
    let n = out.len();
    let (a, b, c, d) = (
        &chars[..n],
        &chars[1..n + 1],
        &chars[2..n + 2],
        &chars[3..n + 3],
    );
    for i in 0..n {
        out[i] = gram_mix(
            a[i] as u64 | (b[i] as u64) << 21 | (c[i] as u64) << 42,
            d[i] as u64 | 4 << 21,
        );
    }
}

/// The `k` smallest distinct values of a stream, sorted. Values under the current `k`-th
/// smallest are buffered and the buffer is cut back to `k` when it fills: a value costs one
/// comparison and, rarely, a push (an insertion into a sorted list per value costs a binary
/// search and a move, and about a third of a document's grams are among its smallest so far).
/// A cut selects the `k` smallest in linear time and sorts only those; the buffer holds `4k`,
/// so a text of a few hundred grams is cut once or twice.
struct BottomK {
    buf: Vec<u32>,
    k: usize,
    /// Values at or above it cannot be among the `k` smallest (`u64::MAX`: fewer than `k`).
    limit: u64,
}

impl BottomK {
    fn new(k: usize) -> BottomK {
        BottomK {
            buf: Vec::with_capacity(4 * k),
            k,
            limit: u64::MAX,
        }
    }

    #[inline]
    fn add(&mut self, h: u32) {
        if (h as u64) < self.limit {
            self.buf.push(h);
            if self.buf.len() >= 4 * self.k {
                self.cut();
            }
        }
    }

    fn cut(&mut self) {
        let k = self.k;
        if self.buf.len() > k && k > 0 {
            self.buf.select_nth_unstable(k - 1);
            let low = &mut self.buf[..k];
            low.sort_unstable();
            // The k smallest with repeats are the k smallest distinct values when none repeats.
            if low.windows(2).all(|w| w[0] != w[1]) {
                self.limit = low[k - 1] as u64;
                self.buf.truncate(k);
                return;
            }
        }
        self.buf.sort_unstable();
        self.buf.dedup();
        self.buf.truncate(k);
        if self.buf.len() == k && k > 0 {
            self.limit = self.buf[k - 1] as u64;
        }
    }

    /// Whether nothing was added yet.
    fn is_empty(&self) -> bool {
        self.buf.is_empty() && self.limit == u64::MAX
    }

    /// Cut back to the `k` smallest now; whether there are `k` (distinct) of them.
    fn settle(&mut self) -> bool {
        self.cut();
        self.limit != u64::MAX
    }

    /// Forget every value.
    fn clear(&mut self) {
        self.buf.clear();
        self.limit = u64::MAX;
    }

    fn finish(mut self) -> Vec<u32> {
        self.cut();
        self.buf
    }
}

/// Documents with at most this many qualifying sentences are "short": their sentence overlap
/// is too coarse (one edited character halves a two-sentence overlap), so they always get a
/// character-shingle sketch and are verified by the better of overlap and resemblance.
pub const SHORT_SENTENCES: usize = 3;

/// Shingle sketch size (bottom-k of 32-bit hashes) of stores without `reflow`.
pub const SHINGLES_K: usize = 32;

/// Shingle sketch size of stores with `reflow`: long documents are accepted on it at
/// [`LONG_RESEMBLANCE`], where 32 samples misjudge by 0.08 (one standard deviation).
pub const SHINGLES_K_ALL: usize = 64;

pub use crate::options::LONG_RESEMBLANCE;

/// Bottom-[`SHINGLES_K`] sketch of the character 4-grams of the letters and digits of a
/// document: of every document when `all` (stores with `reflow`), else only of short ones
/// (more than [`SHORT_SENTENCES`] qualifying `sentences`: empty).
///
/// The 4-gram hash differs between the two modes and is part of the store format: without
/// `all` it is FarmHash Fingerprint64 of the UTF-8 bytes (the first stores); with `all` it is
/// [`gram_hash`] of the code points, several times cheaper, as every document pays for it.
pub fn shingles(normalized: &str, sentences: usize, all: bool) -> Vec<u32> {
    if sentences > SHORT_SENTENCES && !all {
        return Vec::new();
    }
    let chars: Vec<char> = normalized
        .chars()
        .filter(|&c| sentences::is_word_char(c))
        .collect();
    let k = if all { SHINGLES_K_ALL } else { SHINGLES_K };
    let mut bottom = BottomK::new(k);
    let mut buf = [0u8; 16];
    for w in chars.windows(4.min(chars.len().max(1))) {
        let h = if all {
            gram_hash(w)
        } else {
            let mut len = 0;
            for c in w {
                len += c.encode_utf8(&mut buf[len..]).len();
            }
            fingerprint64(&buf[..len]) as u32
        };
        bottom.add(h);
    }
    bottom.finish()
}

/// MinHash band keys of the character 4-grams of the letters and digits of `normalized` (the
/// grams of [`shingles`] with `all`; a text of 1–3 of them is one gram): `bands` keys, each
/// the hash of `rows` minima. The minima come from one-permutation hashing (each gram's one
/// hash picks its bin and is its value; Li, Owen & Zhang 2012), empty bins filled from the
/// next full one (rotation densification; Shrivastava & Li 2014), so a document costs one
/// hash per gram whatever the number of bins. Two documents whose gram sets have Jaccard `J`
/// share at least one key with probability about `1 - (1 - J^rows)^bands`. Empty when
/// `bands` is 0 or the text has no letter or digit. Frozen: stored keys depend on it.
pub fn bands(normalized: &str, bands: usize, rows: usize) -> Vec<u64> {
    let mut bins = Bins::new(bands, rows);
    let chars: Vec<char> = normalized
        .chars()
        .filter(|&c| sentences::is_word_char(c))
        .collect();
    for w in chars.windows(4.min(chars.len().max(1))) {
        bins.add(gram_hash(w));
    }
    bins.keys()
}

/// One-permutation MinHash bins (see [`bands`]).
struct Bins {
    /// Each bin's smallest hash; `EMPTY` while no gram fell in it.
    min: Vec<u64>,
    rows: usize,
    any: bool,
}

const EMPTY: u64 = u64::MAX;

impl Bins {
    fn new(bands: usize, rows: usize) -> Bins {
        Bins {
            min: vec![EMPTY; bands * rows],
            rows,
            any: false,
        }
    }

    #[inline]
    fn add(&mut self, h: u32) {
        if self.min.is_empty() {
            return;
        }
        let bin = ((h as u64 * self.min.len() as u64) >> 32) as usize;
        // A bin's values share their high bits: its minimum is the smallest hash in it.
        let m = &mut self.min[bin];
        *m = (*m).min(h as u64);
        self.any = true;
    }

    /// The band keys (empty when no gram was added).
    fn keys(self) -> Vec<u64> {
        if !self.any {
            return Vec::new();
        }
        // A bin no gram fell in takes the value of the next bin that has one, mixed with the
        // distance, so that two documents fill it alike when they agree on that bin.
        let n = self.min.len();
        let filled: Vec<u64> = (0..n)
            .map(|j| {
                let mut d = 0;
                while self.min[(j + d) % n] == EMPTY {
                    d += 1;
                }
                match d {
                    0 => self.min[j],
                    _ => fmix64(self.min[(j + d) % n] ^ (d as u64) << 40),
                }
            })
            .collect();
        filled
            .chunks(self.rows)
            .enumerate()
            .map(|(band, rows)| {
                let mut x = 0x6d69_6e68_6173_6800 ^ band as u64;
                for &v in rows {
                    x = fmix64(x ^ v).rotate_left(23);
                }
                fmix64(x)
            })
            .collect()
    }
}

/// MurmurHash3's 64-bit finalizer: every input bit affects every output bit.
#[inline]
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ x >> 33
}

/// 32-bit hash of up to four code points (21 bits each), frozen: stored sketches depend on it.
#[inline]
pub fn gram_hash(w: &[char]) -> u32 {
    let c = |i: usize| w.get(i).map_or(0, |&c| c as u64);
    gram_mix(
        c(0) | c(1) << 21 | c(2) << 42,
        c(3) | (w.len() as u64) << 21,
    )
}

/// [`gram_hash`] of the packed code points: `head` = the first three, `tail` = the fourth and
/// the length.
#[inline(always)]
fn gram_mix(head: u64, tail: u64) -> u32 {
    fmix64(fmix64(head) ^ tail.wrapping_mul(0x9e37_79b9_7f4a_7c15)) as u32
}

/// The similarity a candidate is verified on: the sentence [`overlap`]; for short documents
/// the better of it and the shingle [`resemblance`]; for longer ones the resemblance too when
/// it reaches `long` (a store's [`crate::Options::resemblance_floor`]: [`LONG_RESEMBLANCE`] in
/// stores made before the setting).
pub fn similarity(
    a_sketch: &[u32],
    a_shingles: &[u32],
    b_sketch: &[u32],
    b_shingles: &[u32],
    long: f64,
) -> f64 {
    similarity_parts(a_sketch, a_shingles, b_sketch, b_shingles, long).0
}

/// [`similarity`], with the sentence overlap and the shingle resemblance it was made of (the
/// resemblance 0 when either has no shingle sketch).
pub fn similarity_parts(
    a_sketch: &[u32],
    a_shingles: &[u32],
    b_sketch: &[u32],
    b_shingles: &[u32],
    long: f64,
) -> (f64, f64, f64) {
    let overlap = overlap(a_sketch, b_sketch);
    if a_shingles.is_empty() || b_shingles.is_empty() {
        return (overlap, overlap, 0.0);
    }
    let r = resemblance(a_shingles, b_shingles);
    let short = a_sketch.len().max(b_sketch.len()) <= SHORT_SENTENCES;
    let s = if short || r >= long {
        overlap.max(r)
    } else {
        overlap
    };
    (s, overlap, r)
}

/// Jaccard resemblance estimated from two bottom-k sketches: the share of the union's k
/// smallest hashes found in both. 0 when either is empty.
pub fn resemblance(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    // Both sketches come from one store, so have one size; a shorter one is a short text.
    let k = a.len().max(b.len());
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
    let (mut na, mut nb, mut both) = (0usize, 0usize, 0usize);
    compared(a, b, |step| match step {
        Step::Both(..) => {
            both += 1;
            na += 1;
            nb += 1;
        }
        Step::OnlyA(_) => na += 1,
        Step::OnlyB(_) => nb += 1,
    });
    let large = na.max(nb);
    if large == 0 {
        0.0
    } else {
        both as f64 / large as f64
    }
}

/// One entry of two sketches walked in hash order by [`compared`], by index.
enum Step {
    /// In both (index in A, index in B).
    Both(usize, usize),
    /// In A only.
    OnlyA(usize),
    /// In B only.
    OnlyB(usize),
}

/// Walk the entries two sketches are compared on, in hash order: all of both, or, when
/// either is full ([`SKETCH_MAX`]), those up to the smaller of their largest values (which
/// keeps the comparison fair for documents with more sentences than a sketch holds). Nothing
/// when either is empty.
fn compared(a: &[u32], b: &[u32], mut f: impl FnMut(Step)) {
    let (Some(&ma), Some(&mb)) = (a.last(), b.last()) else {
        return;
    };
    let cut = if a.len() < SKETCH_MAX && b.len() < SKETCH_MAX {
        u32::MAX
    } else {
        ma.min(mb)
    };
    let (mut i, mut j) = (0, 0);
    loop {
        let x = a.get(i).copied().filter(|&v| v <= cut);
        let y = b.get(j).copied().filter(|&v| v <= cut);
        match (x, y) {
            (Some(x), Some(y)) if x == y => {
                f(Step::Both(i, j));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                f(Step::OnlyA(i));
                i += 1;
            }
            (Some(_), None) => {
                f(Step::OnlyA(i));
                i += 1;
            }
            (_, Some(_)) => {
                f(Step::OnlyB(j));
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// Where the sentences two documents share sit in each of them, from their sentence sketches
/// and orders ([`sketch_of`]): what tells a copy of a document from a window overlapping it.
/// Two windows of one longer text each have their own sentences at one end, at opposite ends:
/// one before the shared run, the other after it. A copy has own sentences where it was
/// edited or added to (inside), and at its ends only at the same end as the original's (a
/// new title for the first paragraph) or on one side only (a title or an ad added).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// A's own sentences (of those compared, as [`overlap`] compares them).
    pub a: Ends,
    /// B's own sentences.
    pub b: Ends,
    /// Sentences in both.
    pub shared: usize,
}

/// Where one document's own sentences (those the other lacks) sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ends {
    /// Before its first shared sentence.
    pub head: usize,
    /// Between its first and last shared sentences.
    pub inner: usize,
    /// After its last shared sentence.
    pub tail: usize,
}

impl Ends {
    /// All its own sentences.
    pub fn total(&self) -> usize {
        self.head + self.inner + self.tail
    }
}

impl Shape {
    /// Two overlapping windows: one document has own sentences before the shared ones and
    /// the other after them.
    pub fn window(&self) -> bool {
        let (a, b) = (&self.a, &self.b);
        (a.head > 0 && b.tail > 0) || (a.tail > 0 && b.head > 0)
    }

    /// Shaped as a copy: not two windows, and different inside the shared run (a sentence
    /// edited, a paragraph inserted), which windows of one text are not. Documents that
    /// differ only at their ends are not taken as copies: a copy with a part cut and a
    /// window whose far end holds no sentence long enough to count look alike.
    pub fn copy(&self) -> bool {
        !self.window() && self.a.inner + self.b.inner > 0
    }

    /// `copy`, `window` or `ends only` (neither: they differ only at their ends).
    pub fn name(&self) -> &'static str {
        if self.copy() {
            "copy"
        } else if self.window() {
            "window"
        } else {
            "ends only"
        }
    }
}

/// The [`Shape`] of two documents' shared sentences; `None` when either lacks an order (a
/// record of an older store) or they share no sentence.
pub fn shape(a: &[u32], a_order: &[u8], b: &[u32], b_order: &[u8]) -> Option<Shape> {
    if a.len() != a_order.len() || b.len() != b_order.len() {
        return None;
    }
    // (place, shared) of each compared sentence.
    let (mut pa, mut pb) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
    let mut shared = 0;
    compared(a, b, |step| match step {
        Step::Both(i, j) => {
            pa.push((a_order[i], true));
            pb.push((b_order[j], true));
            shared += 1;
        }
        Step::OnlyA(i) => pa.push((a_order[i], false)),
        Step::OnlyB(j) => pb.push((b_order[j], false)),
    });
    (shared > 0).then(|| Shape {
        a: ends(&mut pa),
        b: ends(&mut pb),
        shared,
    })
}

/// [`Ends`] of one document's (place, shared) sentences.
fn ends(v: &mut [(u8, bool)]) -> Ends {
    // At one place (over 256 sentences), own sentences count as before the shared ones.
    v.sort_unstable();
    let first = v.iter().position(|p| p.1).unwrap_or(v.len());
    let last = v.iter().rposition(|p| p.1).map_or(0, |l| l + 1);
    let own = |s: &[(u8, bool)]| s.iter().filter(|p| !p.1).count();
    Ends {
        head: first,
        inner: own(&v[first..last.max(first)]),
        tail: v.len() - last.max(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

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
    fn separate_passes(text: &str, o: &Options) -> Scan {
        let (top, sketch, order) = nshash_sketch_and_order(text, o);
        Scan {
            top,
            order,
            shingles: shingles(text, sketch.len(), true),
            sketch,
            chars: text.chars().count() as u64,
            bands: bands(text, o.minhash_bands as usize, o.minhash_rows as usize),
        }
    }

    proptest::proptest! {
        /// The 4-gram hashes of the vector loop (AVX-512 or AVX2 where the CPU has them) are
        /// [`gram_hash`]'s, for every length (the vector loop's tails included) and for code
        /// points up to the top of Unicode.
        #[test]
        fn gram_hashes_equal_gram_hash(
            cps in proptest::collection::vec(0u32..=0x10ffff, 3..200),
        ) {
            let chars: Vec<char> = cps
                .iter()
                .map(|&c| char::from_u32(c).unwrap_or('\u{fffd}'))
                .collect();
            let cps: Vec<u32> = chars.iter().map(|&c| c as u32).collect();
            let mut fast = vec![0u32; cps.len() - 3];
            gram_hashes(&cps, &mut fast);
            let mut portable = vec![0u32; cps.len() - 3];
            gram_hashes_portable(&cps, &mut portable);
            let expected: Vec<u32> = chars.windows(4).map(gram_hash).collect();
            proptest::prop_assert_eq!(&fast, &expected);
            proptest::prop_assert_eq!(&portable, &expected);
            // Each compiled version the CPU can run, not only the one chosen.
            #[cfg(target_arch = "x86_64")]
            {
                let mut v = vec![0u32; cps.len() - 3];
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked).
                    unsafe { gram_hashes_avx2(&cps, &mut v) };
                    proptest::prop_assert_eq!(&v, &expected);
                }
                if std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU has the features (checked).
                    unsafe { gram_hashes_avx512(&cps, &mut v) };
                    proptest::prop_assert_eq!(&v, &expected);
                }
            }
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
        ) {
            let text: String = parts.concat();
            let o = Options {
                nshash_n: n,
                min_sentence_chars: min,
                nshash_hash: if md5 { SentenceHash::Md5 } else { SentenceHash::Farmhash },
                ..Options::default()
            };
            proptest::prop_assert_eq!(scan(&text, &o), separate_passes(&text, &o));
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
            proptest::prop_assert_eq!(scan(&text, &o), separate_passes(&text, &o));
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
            proptest::prop_assert_eq!(scan(&text, &o), separate_passes(&text, &o));
        }

        /// The buffered bottom-k against sorting every value: duplicates, runs longer than the
        /// buffer, u32::MAX.
        #[test]
        fn bottom_k_equals_sorting_every_value(
            values in proptest::collection::vec(
                proptest::prop_oneof![0u32..40, proptest::prelude::Just(u32::MAX), proptest::num::u32::ANY],
                0..400,
            ),
            k in 1usize..20,
        ) {
            let mut b = BottomK::new(k);
            for &v in &values {
                b.add(v);
            }
            let mut want = values.clone();
            want.sort_unstable();
            want.dedup();
            want.truncate(k);
            proptest::prop_assert_eq!(b.finish(), want);
        }
    }

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

    /// The shape of two texts given as sentence ids in text order.
    fn shape_of(a: &[u64], b: &[u64]) -> Shape {
        // Spread the ids over the hash space, so sketch order is not text order.
        let h = |v: &[u64]| -> Vec<u64> {
            v.iter()
                .map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect()
        };
        let ((sa, oa), (sb, ob)) = (sketch_of(&h(a)), sketch_of(&h(b)));
        shape(&sa, &oa, &sb, &ob).expect("they share a sentence")
    }

    #[test]
    fn windows_and_copies_have_their_shapes() {
        let e = |head, inner, tail| Ends { head, inner, tail };
        let a: Vec<u64> = (1..=10).collect();
        let later: Vec<u64> = (4..=13).collect();
        // Two windows of one text: a's own sentences before the shared run, b's after it.
        let w = shape_of(&a, &later);
        assert_eq!((w.a, w.b, w.shared), (e(3, 0, 0), e(0, 0, 3), 7));
        assert!(w.window() && !w.copy());
        assert!(shape_of(&later, &a).window());
        // Edited inside the shared run on top of that (windows of edited copies): still
        // windows.
        let edited = shape_of(&a, &[4, 5, 66, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!((edited.a, edited.b), (e(3, 1, 0), e(0, 1, 3)));
        assert!(edited.window());
        // A window whose far end is a new title (a copy of the later window, retitled).
        assert!(shape_of(&a, &[100, 4, 5, 6, 7, 8, 9, 10, 11, 12]).window());
        // A copy with a new title, an ad and one sentence edited.
        let c = shape_of(&a, &[100, 1, 2, 3, 200, 4, 5, 6, 77, 8, 9, 10]);
        assert_eq!((c.a, c.b, c.shared), (e(0, 1, 0), e(1, 2, 0), 9));
        assert!(c.copy() && !c.window());
        // A title and an ad on one side only: the original is contained, and still a copy.
        let c = shape_of(&a, &[100, 1, 2, 3, 4, 200, 5, 6, 7, 8, 9, 10]);
        assert_eq!((c.a, c.b), (e(0, 0, 0), e(1, 1, 0)));
        assert!(c.copy());
        // The first paragraph (two sentences) replaced by a title, the last sentence edited
        // with an ad after it, one sentence edited inside: own sentences at both ends of
        // both, which two windows of one text can have too (a window's first sentence cut
        // at the window's edge): taken as windows, the safe side.
        let c = shape_of(&a, &[100, 3, 4, 55, 6, 7, 8, 9, 1000, 200]);
        assert_eq!((c.a, c.b), (e(2, 1, 1), e(1, 1, 2)));
        assert!(c.window() && !c.copy());
        // Differences at the ends only (a cut copy, or a window whose far end has no
        // sentence long enough to count): not taken as a copy.
        let cut = shape_of(&a, &(3..=10).collect::<Vec<_>>());
        assert_eq!((cut.a, cut.b), (e(2, 0, 0), e(0, 0, 0)));
        assert!(!cut.window() && !cut.copy());
        let retitled_cut = shape_of(&a, &[100, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(!retitled_cut.window() && !retitled_cut.copy());
        // Nothing shared, or no order (an older record): no shape.
        let ((sa, oa), (sb, ob)) = (sketch_of(&[1, 2]), sketch_of(&[3, 4]));
        assert!(shape(&sa, &oa, &sb, &ob).is_none());
        assert!(shape(&sa, &[], &sa, &oa).is_none());
    }

    proptest::proptest! {
        /// The shape of two documents does not depend on which is looked up or on the hash
        /// values, and counts what `overlap` counts.
        #[test]
        fn shape_is_symmetric_and_counts_what_overlap_counts(
            a in proptest::collection::hash_set(0u64..40, 1..30),
            b in proptest::collection::hash_set(0u64..40, 1..30),
            salt in proptest::num::u64::ANY,
        ) {
            // Text order: the sets' iteration order, shuffled by the salt.
            let order = |s: &std::collections::HashSet<u64>| {
                let mut v: Vec<u64> = s.iter().copied().collect();
                v.sort_by_key(|x| (x ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                v
            };
            let (ta, tb) = (order(&a), order(&b));
            let hash = |v: &[u64], k: u64| -> Vec<u64> {
                v.iter().map(|x| (x ^ k).wrapping_mul(0xD6E8_FEB8_6659_FD93)).collect()
            };
            for k in [1, salt | 1] {
                let ((sa, oa), (sb, ob)) = (sketch_of(&hash(&ta, k)), sketch_of(&hash(&tb, k)));
                let (ab, ba) = (shape(&sa, &oa, &sb, &ob), shape(&sb, &ob, &sa, &oa));
                let both = a.intersection(&b).count();
                proptest::prop_assert_eq!(ab.is_none(), both == 0);
                if let (Some(ab), Some(ba)) = (ab, ba) {
                    proptest::prop_assert_eq!(ab.shared, both);
                    proptest::prop_assert_eq!(ab.a.total(), a.len() - both);
                    proptest::prop_assert_eq!(ab.b.total(), b.len() - both);
                    proptest::prop_assert_eq!((ab.a, ab.b), (ba.b, ba.a));
                    proptest::prop_assert_eq!(ab.window(), ba.window());
                    proptest::prop_assert_eq!(ab.copy(), ba.copy());
                    proptest::prop_assert!(!(ab.window() && ab.copy()));
                    let o = overlap(&sa, &sb);
                    proptest::prop_assert!((o - both as f64 / a.len().max(b.len()) as f64).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn sketch_of_keeps_each_sentence_where_it_sits() {
        let (sketch, order) = sketch_of(&[30, 10, 20, 10 | 1 << 40]);
        // Sorted by hash; the low 32 bits collide for the last, which keeps the first place.
        assert_eq!(sketch, [10, 20, 30]);
        assert_eq!(order, [64, 128, 0]);
        let many: Vec<u64> = (0..2000).collect();
        let (sketch, order) = sketch_of(&many);
        assert_eq!(sketch.len(), SKETCH_MAX);
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "text order of sorted ids"
        );
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

    const GOLDEN: [u32; 5] = [
        3_058_524_370,
        2_074_322_932,
        3_909_017_403,
        0,
        1_239_610_164,
    ];

    /// Frozen values: stores with `reflow` hold sketches made with these hashes.
    #[test]
    fn gram_hash_is_frozen() {
        let h = |s: &str| gram_hash(&s.chars().collect::<Vec<_>>());
        assert_eq!(
            [h("中华人民"), h("abcd"), h("ab"), h(""), h("éè12")],
            [GOLDEN[0], GOLDEN[1], GOLDEN[2], GOLDEN[3], GOLDEN[4]]
        );
        assert_ne!(h("abcd"), h("abce"));
        assert_ne!(h("ab"), h("ab\0"), "length is part of the hash");
    }

    #[test]
    fn one_pass_bottom_k_equals_sorting_every_hash() {
        fn slow(t: &str, all: bool) -> Vec<u32> {
            let chars: Vec<char> = t.chars().filter(|c| c.is_alphanumeric()).collect();
            let mut v: Vec<u32> = chars
                .windows(4.min(chars.len().max(1)))
                .map(|w| {
                    if all {
                        gram_hash(w)
                    } else {
                        fingerprint64(w.iter().collect::<String>().as_bytes()) as u32
                    }
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v.truncate(if all { SHINGLES_K_ALL } else { SHINGLES_K });
            v
        }
        let pool: Vec<char> = "中华人民共和国abcdeé12 ,.\n".chars().collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in 0..300 {
            let t: String = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    pool[(x % pool.len() as u64) as usize]
                })
                .collect();
            assert_eq!(shingles(&t, 0, false), slow(&t, false), "{t:?}");
            assert_eq!(shingles(&t, 9, true), slow(&t, true), "{t:?}");
        }
    }

    /// Re-wrapped lines change every sentence of a long document but not its shingles; a
    /// revised text shares sentences and shingles only in part.
    #[test]
    fn long_documents_are_verified_on_shingles_only_when_nearly_equal() {
        let opts = Options::default();
        let para = "In article 1993 a friend writes that the radar detector works fine on the highway \
                    and the police never noticed it at all. He also says that the battery lasts for \
                    months and that the unit was cheap. Nobody else in the group has tried one yet, \
                    so we will see how it goes next week. The weather was good and the roads were \
                    empty, which helped a lot with the test drive. ";
        let text = para.repeat(3);
        let wrap = |w: usize| {
            let words: Vec<&str> = text.split(' ').collect();
            words
                .chunks(w)
                .map(|c| c.join(" "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (a, b) = (normalize(&wrap(7)), normalize(&wrap(11)));
        let sig = |t: &str| {
            let (_, sk) = nshash_and_sketch(t, &opts);
            let sh = shingles(t, sk.len(), true);
            (sk, sh)
        };
        let ((ka, ha), (kb, hb)) = (sig(&a), sig(&b));
        assert!(ka.len() > SHORT_SENTENCES);
        assert!(overlap(&ka, &kb) < 0.5, "{}", overlap(&ka, &kb));
        assert!(similarity(&ka, &ha, &kb, &hb, LONG_RESEMBLANCE) >= LONG_RESEMBLANCE);
        assert!(
            similarity(&ka, &[], &kb, &[], LONG_RESEMBLANCE) < 0.5,
            "without shingles: sentences only"
        );
        // A revision: two of the five sentences rewritten.
        let other = normalize(
            &text
                .replace(
                    "He also says that the battery lasts for months and that the unit was cheap.",
                    "Later on the thread moved to a long argument about speed limits in Ohio.",
                )
                .replace(
                    "Nobody else in the group has tried one yet, so we will see how it goes next week.",
                    "Two readers replied with their own stories of tickets they got last spring.",
                ),
        );
        let (ko, ho) = sig(&other);
        let r = resemblance(&ha, &ho);
        assert!(r < LONG_RESEMBLANCE, "{r}");
        assert_eq!(
            similarity(&ka, &ha, &ko, &ho, LONG_RESEMBLANCE),
            overlap(&ka, &ko)
        );
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
        let (sa, sb, sc) = (
            shingles(&a, 2, false),
            shingles(&b, 2, false),
            shingles(&c, 2, false),
        );
        assert!(resemblance(&sa, &sb) > 0.7, "{}", resemblance(&sa, &sb));
        assert!(resemblance(&sa, &sc) < 0.1, "{}", resemblance(&sa, &sc));
        assert_eq!(resemblance(&sa, &sa), 1.0);
        assert!(
            shingles(&a, 4, false).is_empty(),
            "long documents get no shingles"
        );
        let (la, lb) = (shingles(&a, 4, true), shingles(&b, 4, true));
        assert!(la.len() > SHINGLES_K, "unless every document gets them");
        assert!(resemblance(&la, &lb) > 0.7, "{}", resemblance(&la, &lb));
    }

    #[test]
    fn band_keys_are_frozen() {
        // Stored keys depend on them: a change here needs a new format.
        let t = normalize("国务院办公厅关于加强政府网站信息内容建设的意见。Hello world 2024.");
        assert_eq!(
            bands(&t, 3, 2),
            [
                18353035558118236077,
                18098949747254872723,
                16367699789727436342
            ]
        );
        // Two letters: one gram, every bin filled from it.
        assert_eq!(
            bands("ab", 2, 2),
            [12270412421420479720, 8117974895059907451]
        );
        assert!(bands("", 2, 2).is_empty());
        assert!(bands(&t, 0, 4).is_empty());
        // One changed character keeps most bands; another text shares none.
        let u = normalize("国务院办公厅关于加强政府网站信息内容建没的意见。Hello world 2024.");
        let v = normalize("今天纽约的天气真好啊京华大酒店的张尧经理吃了一只北京烤鸭。");
        let (a, b, c) = (bands(&t, 16, 2), bands(&u, 16, 2), bands(&v, 16, 2));
        let shared = |x: &[u64], y: &[u64]| x.iter().zip(y).filter(|(p, q)| p == q).count();
        assert!(shared(&a, &b) >= 8, "{}", shared(&a, &b));
        assert_eq!(shared(&a, &c), 0);
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
