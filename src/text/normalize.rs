//! Text normalization applied before any fingerprint: NFKC (full-width -> half-width), Chinese
//! punctuation folded onto its ASCII twin, lower case, whitespace collapsed. Newlines (and tabs,
//! which stand for line breaks in many dumps) become one `\n`: they end sentences. The function is idempotent: `normalize(normalize(s)) == normalize(s)`.

use unicode_normalization::UnicodeNormalization;

use super::variant::{is_traditional, is_traditional_cp};

pub use crate::options::NORMALIZE_VERSION;

/// Fold punctuation that NFKC leaves alone onto the ASCII character it stands for.
fn fold_punct(c: char) -> char {
    match c {
        '。' | '｡' | '．' => '.',
        '、' | '﹑' | '，' => ',',
        '“' | '”' | '„' | '‟' | '«' | '»' | '「' | '」' | '『' | '』' => '"',
        '‘' | '’' | '‚' | '‛' => '\'',
        '《' | '〈' | '【' | '〔' | '〖' | '［' => '[',
        '》' | '〉' | '】' | '〕' | '〗' | '］' => ']',
        '—' | '–' | '―' | '－' | '‐' | '‑' | '‒' => '-',
        '·' | '・' | '•' => '.',
        _ => c,
    }
}

/// Builds normalized text from NFKC characters: folding, case, whitespace.
struct Folder {
    out: String,
    /// Pending whitespace: 0 = none, 1 = space, 2 = newline.
    pending: u8,
    /// Whether `out` holds a character [`super::variant::is_traditional`] (noted as it is
    /// written, so that the check costs no pass of its own).
    traditional: bool,
}

impl Folder {
    #[inline]
    fn push(&mut self, c: char) {
        // Tabs separate lines in many dumps (tab-joined mail and forum posts).
        if matches!(c, '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}') {
            self.pending = 2;
            return;
        }
        if c.is_whitespace() || c.is_control() || c == '\u{200b}' || c == '\u{feff}' {
            self.pending = self.pending.max(1);
            return;
        }
        if self.pending > 0 && !self.out.is_empty() {
            self.out.push(if self.pending == 2 { '\n' } else { ' ' });
        }
        self.pending = 0;
        // Ideographs (most of Chinese text) have no case and fold to themselves.
        if is_plain_ideograph(c) {
            self.traditional |= is_traditional(c);
            self.out.push(c);
            return;
        }
        let c = fold_punct(c);
        if c.is_uppercase() {
            for l in c.to_lowercase() {
                self.traditional |= is_traditional(l);
                self.out.push(l);
            }
        } else {
            self.traditional |= is_traditional(c);
            self.out.push(c);
        }
    }
}

/// CJK Unified Ideographs (U+4E00..U+9FFF), most of Chinese text: NFKC leaves them alone and
/// they never compose with their neighbours (so text can be cut around them and normalized
/// piece by piece), they are letters, and they have no case.
#[inline]
pub fn is_plain_ideograph(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// Whether a plain ideograph (U+4E00..=U+9FFF: E4 B8 80 ..= E9 BF BF) starts at byte `i` of
/// valid UTF-8 (false past its end).
#[inline(always)]
pub fn ideograph_at(bytes: &[u8], i: usize) -> bool {
    match bytes.get(i) {
        Some(&b) => (0xe5..=0xe9).contains(&b) || b == 0xe4 && bytes[i + 1] >= 0xb8,
        None => false,
    }
}

/// The code point of the plain ideograph at byte `i` (where [`ideograph_at`] holds).
#[inline(always)]
pub fn ideograph(bytes: &[u8], i: usize) -> u32 {
    (u32::from(bytes[i]) & 0x0f) << 12
        | (u32::from(bytes[i + 1]) & 0x3f) << 6
        | u32::from(bytes[i + 2]) & 0x3f
}

/// NFKC of a character that NFKC maps to one character which composes with nothing around it
/// (ASCII, full-width ASCII, common CJK punctuation); None for any other: a run of such
/// characters is its own NFKC (`fast_nfkc_is_nfkc` checks every one and every pair).
#[inline]
fn fast_nfkc(c: char) -> Option<char> {
    match c {
        ' '..='~' | '\n' | '\r' | '\t' => Some(c),
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
        '、' | '。' | '《' | '》' | '「' | '」' | '『' | '』' | '【' | '】' | '“' | '”' | '‘'
        | '’' | '—' | '·' => Some(c),
        _ => None,
    }
}

/// Push the NFKC of `run` (no plain ideograph in it) into `f`.
fn fold_run(f: &mut Folder, run: &str) {
    if run.chars().all(|c| fast_nfkc(c).is_some()) {
        run.chars().filter_map(fast_nfkc).for_each(|c| f.push(c));
    } else {
        run.nfkc().for_each(|c| f.push(c));
    }
}

/// Bytes of the UTF-8 sequence led by `b` (1 for a continuation byte: never a lead in valid
/// UTF-8).
#[inline(always)]
fn utf8_len(b: u8) -> usize {
    match b {
        0..=0xbf => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Normalize `text` for fingerprinting. See the module docs for the rules.
pub fn normalize(text: &str) -> String {
    normalize_noting(text).0
}

/// [`normalize`], and whether the result holds a character the traditional -> simplified
/// converter may change ([`super::variant::is_traditional`]).
pub fn normalize_noting(text: &str) -> (String, bool) {
    let mut f = Folder {
        out: String::with_capacity(text.len()),
        pending: 0,
        traditional: false,
    };
    // Ideographs (most of a Chinese text) skip the NFKC machinery; the runs between them go
    // through it. Equal to NFKC of the whole text (tested against it).
    // A run of ideographs is read byte-wise and copied as one slice: its first character
    // settles any pending space, the rest append unchanged.
    let bytes = text.as_bytes();
    let mut run: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        if !ideograph_at(bytes, i) {
            if run.is_none() {
                run = Some(i);
            }
            i += utf8_len(bytes[i]);
            continue;
        }
        if let Some(s) = run.take() {
            fold_run(&mut f, &text[s..i]);
        }
        f.push(char::from_u32(ideograph(bytes, i)).expect("U+4E00..=U+9FFF"));
        let start = i + 3;
        i = start;
        while ideograph_at(bytes, i) {
            if !f.traditional {
                f.traditional = is_traditional_cp(ideograph(bytes, i));
            }
            i += 3;
        }
        f.out.push_str(&text[start..i]);
    }
    if let Some(s) = run {
        fold_run(&mut f, &text[s..]);
    }
    (f.out, f.traditional)
}

/// `normalized` without the line breaks that sit between two Chinese characters: a Chinese
/// sentence wrapped over two lines is one run of words again (for segmentation). Line breaks
/// next to anything else stay.
pub fn join_cjk_lines(normalized: &str) -> std::borrow::Cow<'_, str> {
    let soft = |i: usize| {
        let before = normalized[..i].chars().next_back();
        let after = normalized[i + 1..].chars().next();
        before.is_some_and(is_plain_ideograph) && after.is_some_and(is_plain_ideograph)
    };
    let mut breaks = normalized
        .match_indices('\n')
        .map(|(i, _)| i)
        .filter(|&i| soft(i))
        .peekable();
    if breaks.peek().is_none() {
        return std::borrow::Cow::Borrowed(normalized);
    }
    let mut out = String::with_capacity(normalized.len());
    let mut last = 0;
    for i in breaks {
        out.push_str(&normalized[last..i]);
        last = i + 1;
    }
    out.push_str(&normalized[last..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_and_chinese_punctuation_fold_to_ascii() {
        assert_eq!(normalize("ＡＢＣ１２３，你好。"), "abc123,你好.");
        assert_eq!(normalize("你好，世界。"), normalize("你好,世界."));
    }

    #[test]
    fn soft_line_breaks_inside_chinese_are_joined() {
        assert_eq!(
            join_cjk_lines("中华人\n民共和国\nabc\n中\n1"),
            "中华人民共和国\nabc\n中\n1"
        );
        assert!(matches!(
            join_cjk_lines("a\nb"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn whitespace_collapses_and_newlines_survive() {
        assert_eq!(normalize("  a  b\u{3000}c \r\n\n d\te  "), "a b c\nd\ne");
    }

    /// Oracle: the piecewise fast path equals folding NFKC of the whole text.
    #[test]
    fn equals_nfkc_of_the_whole_text() {
        fn slow(text: &str) -> String {
            let mut f = Folder {
                out: String::new(),
                pending: 0,
                traditional: false,
            };
            text.nfkc().for_each(|c| f.push(c));
            f.out
        }
        let mut rng = 0x9e37_79b9_u64;
        // Traditional characters (國, 華, 語, the compatibility ideograph U+F900 and an
        // extension B character) for the flag normalization notes.
        let pool: Vec<char> = "中华人民共和国國華語\u{f900}\u{20000}，。！？ＡＢＣａｂ１２ e\u{301}\u{301}\u{323}한글\u{1100}\u{1161}ｶﾞ\u{3099}ﬁⅫ\t\n 　、《》“”—·x7"
            .chars()
            .collect();
        for _ in 0..20000 {
            let mut s = String::new();
            for _ in 0..(rng % 40) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                s.push(pool[(rng % pool.len() as u64) as usize]);
            }
            let (fast, traditional) = normalize_noting(&s);
            assert_eq!(fast, slow(&s), "{s:?}");
            // The flag is what a pass over the result finds.
            assert_eq!(traditional, fast.chars().any(is_traditional), "{s:?}");
        }
    }

    /// Every character [`fast_nfkc`] takes, alone, before another one or before an
    /// ideograph, is normalized as NFKC does.
    #[test]
    fn fast_nfkc_is_nfkc() {
        let fast: Vec<char> = (0..0x10000u32)
            .filter_map(char::from_u32)
            .filter(|&c| fast_nfkc(c).is_some())
            .collect();
        assert!(fast.len() > 200, "{}", fast.len());
        let ours = |s: &str| {
            s.chars()
                .map(|c| fast_nfkc(c).unwrap_or(c))
                .collect::<String>()
        };
        for &a in &fast {
            for b in fast.iter().copied().chain(['中', '\u{9fff}']) {
                let s: String = [a, b].iter().collect();
                assert_eq!(ours(&s), s.nfkc().collect::<String>(), "{s:?}");
            }
        }
    }

    #[test]
    fn idempotent() {
        for s in [
            "Ｈｅｌｌｏ，　Ｗｏｒｌｄ！\n\n第二行。",
            "“引号”《书名》",
            "ﬁ ligature Ⅻ",
        ] {
            let once = normalize(s);
            assert_eq!(normalize(&once), once, "{s:?}");
        }
    }
}
