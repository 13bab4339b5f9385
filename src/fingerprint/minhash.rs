//! Character 4-gram fingerprints: the bottom-k shingle sketch that verifies short and
//! re-wrapped documents ([`shingles`]) and the MinHash band keys that find candidates by
//! resemblance ([`bands`]), with the gram hash they share ([`gram_hash`], frozen) and its
//! vector loop.

use crate::hash::fingerprint64;
use crate::text::sentences;

/// 4-grams hashed per call of [`gram_hashes`] (a buffer on the stack).
pub(super) const GRAM_CHUNK: usize = 512;

/// The hash ([`gram_mix`], as [`gram_hash`] of four characters) of every 4-gram of `chars`
/// into `out` (`chars.len() - 3` of them). Each is independent of the others, so the loop is
/// compiled a second time for CPUs with wider vector instructions (AVX-512 or AVX2, chosen at
/// run time): the same arithmetic on several grams at once, the same values.
pub(super) fn gram_hashes(chars: &[u32], out: &mut [u32]) {
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
    gram_hashes_portable(chars, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn gram_hashes_avx512(chars: &[u32], out: &mut [u32]) {
    gram_hashes_portable(chars, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn gram_hashes_avx2(chars: &[u32], out: &mut [u32]) {
    gram_hashes_portable(chars, out);
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
            u64::from(a[i]) | u64::from(b[i]) << 21 | u64::from(c[i]) << 42,
            u64::from(d[i]) | 4 << 21,
        );
    }
}

/// The `k` smallest distinct values of a stream, sorted. Values under the current `k`-th
/// smallest are buffered and the buffer is cut back to `k` when it fills: a value costs one
/// comparison and, rarely, a push (an insertion into a sorted list per value costs a binary
/// search and a move, and about a third of a document's grams are among its smallest so far).
/// A cut selects the `k` smallest in linear time and sorts only those; the buffer holds `4k`,
/// so a text of a few hundred grams is cut once or twice.
pub(super) struct BottomK {
    buf: Vec<u32>,
    pub(super) k: usize,
    /// Values at or above it cannot be among the `k` smallest (`u64::MAX`: fewer than `k`).
    limit: u64,
}

impl BottomK {
    pub(super) fn new(k: usize) -> BottomK {
        BottomK {
            buf: Vec::with_capacity(4 * k),
            k,
            limit: u64::MAX,
        }
    }

    #[inline]
    pub(super) fn add(&mut self, h: u32) {
        if u64::from(h) < self.limit {
            self.buf.push(h);
            if self.buf.len() >= 4 * self.k {
                self.cut();
            }
        }
    }

    pub(super) fn cut(&mut self) {
        let k = self.k;
        if self.buf.len() > k && k > 0 {
            self.buf.select_nth_unstable(k - 1);
            let low = &mut self.buf[..k];
            low.sort_unstable();
            // The k smallest with repeats are the k smallest distinct values when none repeats.
            if low.windows(2).all(|w| w[0] != w[1]) {
                self.limit = u64::from(low[k - 1]);
                self.buf.truncate(k);
                return;
            }
        }
        self.buf.sort_unstable();
        self.buf.dedup();
        self.buf.truncate(k);
        if self.buf.len() == k && k > 0 {
            self.limit = u64::from(self.buf[k - 1]);
        }
    }

    /// Whether nothing was added yet.
    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty() && self.limit == u64::MAX
    }

    /// Cut back to the `k` smallest now; whether there are `k` (distinct) of them.
    pub(super) fn settle(&mut self) -> bool {
        self.cut();
        self.limit != u64::MAX
    }

    /// Forget every value.
    pub(super) fn clear(&mut self) {
        self.buf.clear();
        self.limit = u64::MAX;
    }

    pub(super) fn finish(mut self) -> Vec<u32> {
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
/// [`super::similarity::LONG_RESEMBLANCE`], where 32 samples misjudge by 0.08 (one standard
/// deviation).
pub const SHINGLES_K_ALL: usize = 64;

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
pub(super) struct Bins {
    /// Each bin's smallest hash; `EMPTY` while no gram fell in it.
    pub(super) min: Vec<u64>,
    rows: usize,
    any: bool,
}

const EMPTY: u64 = u64::MAX;

impl Bins {
    pub(super) fn new(bands: usize, rows: usize) -> Bins {
        Bins {
            min: vec![EMPTY; bands * rows],
            rows,
            any: false,
        }
    }

    #[inline]
    pub(super) fn add(&mut self, h: u32) {
        if self.min.is_empty() {
            return;
        }
        let bin = ((u64::from(h) * self.min.len() as u64) >> 32) as usize;
        // A bin's values share their high bits: its minimum is the smallest hash in it.
        let m = &mut self.min[bin];
        *m = (*m).min(u64::from(h));
        self.any = true;
    }

    /// The band keys (empty when no gram was added).
    pub(super) fn keys(self) -> Vec<u64> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

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
}
