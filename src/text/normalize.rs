//! Text normalization applied before any fingerprint: NFKC (full-width -> half-width), Chinese
//! punctuation folded onto its ASCII twin, lower case, whitespace collapsed. Newlines (and tabs,
//! which stand for line breaks in many dumps) become one `\n`: they end sentences. The function is idempotent: `normalize(normalize(s)) == normalize(s)`.

use unicode_normalization::UnicodeNormalization;

/// Version of the normalization rules; part of the store format (changing the rules changes
/// every fingerprint).
pub const NORMALIZE_VERSION: u32 = 1;

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

/// Normalize `text` for fingerprinting. See the module docs for the rules.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Pending whitespace: 0 = none, 1 = space, 2 = newline.
    let mut pending = 0u8;
    for c in text.nfkc() {
        // Tabs separate lines in many dumps (tab-joined mail and forum posts).
        if matches!(c, '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}') {
            pending = 2;
            continue;
        }
        if c.is_whitespace() || c.is_control() || c == '\u{200b}' || c == '\u{feff}' {
            pending = pending.max(1);
            continue;
        }
        if pending > 0 && !out.is_empty() {
            out.push(if pending == 2 { '\n' } else { ' ' });
        }
        pending = 0;
        let c = fold_punct(c);
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
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
    fn whitespace_collapses_and_newlines_survive() {
        assert_eq!(normalize("  a  b\u{3000}c \r\n\n d\te  "), "a b c\nd\ne");
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
