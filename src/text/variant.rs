//! Traditional -> simplified Chinese conversion (OpenCC `t2s` rules, via the pure-Rust
//! ferrous-opencc), so a page reposted in traditional characters fingerprints like the original.
//!
//! Converting costs about a third of the ingest rate, and most Chinese text is simplified
//! already. So a text is converted only when it holds a character that the `t2s` rules change
//! on its own (a bitmap built once per process from the converter itself); other texts are
//! returned as they are. Tested equal to converting every text on the sample corpus.

use std::borrow::Cow;
use std::sync::OnceLock;

use ferrous_opencc::{config::BuiltinConfig, OpenCC};

fn converter() -> Option<&'static OpenCC> {
    static T2S: OnceLock<Option<OpenCC>> = OnceLock::new();
    T2S.get_or_init(|| OpenCC::from_config(BuiltinConfig::T2s).ok())
        .as_ref()
}

/// Code points below this are covered by the bitmap (CJK ideographs and extension A, the
/// compatibility ideographs); others are converted when present at all.
const BITMAP_END: u32 = 0x1_0000;

/// One bit per code point below [`BITMAP_END`] (bit `cp % 8` of byte `cp / 8`): set when
/// `t2s` changes the character alone. Generated from the converter and kept in the source, so
/// a process pays nothing to know whether a text needs converting (building it took tens of
/// milliseconds per process, most of a cold `fpdb query`); `bitmap_is_the_converters` checks
/// it against the converter (`FPDB_WRITE_T2S_BITMAP=1 cargo test bitmap_is` rewrites it).
static TRADITIONAL: &[u8; (BITMAP_END / 8) as usize] = include_bytes!("t2s_bitmap.bin");

/// [`TRADITIONAL`] computed from the converter.
#[cfg(test)]
fn computed_bitmap() -> Vec<u8> {
    let mut bits = vec![0u8; (BITMAP_END / 8) as usize];
    let c = converter().expect("the t2s converter builds");
    let ranges = [
        0x2E80..0x2FE0,
        0x3400..0x4DC0,
        0x4E00..0xA000,
        0xF900..0xFB00,
    ];
    let mut buf = String::new();
    for cp in ranges.into_iter().flatten() {
        let Some(ch) = char::from_u32(cp) else {
            continue;
        };
        buf.clear();
        buf.push(ch);
        if c.convert(&buf) != buf {
            bits[(cp / 8) as usize] |= 1 << (cp % 8);
        }
    }
    bits
}

/// Whether `text` holds a character that `t2s` would change.
/// Whether the converter may change `c` (a traditional character; any character of the
/// supplementary planes, extension B and later, which are rare: the converter decides).
#[inline]
pub fn is_traditional(c: char) -> bool {
    is_traditional_cp(c as u32)
}

/// [`is_traditional`] of a code point.
#[inline]
pub fn is_traditional_cp(cp: u32) -> bool {
    if cp < 0x2E80 {
        false
    } else if cp < BITMAP_END {
        TRADITIONAL[(cp / 8) as usize] >> (cp % 8) & 1 == 1
    } else {
        true
    }
}

fn has_traditional(text: &str) -> bool {
    text.chars().any(is_traditional)
}

/// `text` converted to simplified characters, whether or not it holds a traditional one
/// (`None` if the converter could not be built). [`to_simplified`] checks first.
pub fn convert(text: &str) -> Option<String> {
    converter().map(|c| c.convert(text))
}

/// `text` in simplified characters (unchanged if it holds no traditional character, or if the
/// converter could not be built).
pub fn to_simplified(text: &str) -> Cow<'_, str> {
    if !has_traditional(text) {
        return Cow::Borrowed(text);
    }
    match converter() {
        Some(c) => Cow::Owned(c.convert(text)),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_is_the_converters() {
        let computed = computed_bitmap();
        if std::env::var_os("FPDB_WRITE_T2S_BITMAP").is_some() {
            std::fs::write(
                concat!(env!("CARGO_MANIFEST_DIR"), "/src/text/t2s_bitmap.bin"),
                &computed,
            )
            .unwrap();
        }
        assert!(computed.iter().any(|&b| b != 0));
        assert!(
            computed == TRADITIONAL[..],
            "src/text/t2s_bitmap.bin is not what the t2s converter gives: rewrite it with FPDB_WRITE_T2S_BITMAP=1 cargo test bitmap_is"
        );
    }

    #[test]
    fn traditional_becomes_simplified() {
        assert_eq!(to_simplified("中華人民共和國憲法"), "中华人民共和国宪法");
        assert_eq!(to_simplified("已经是简体"), "已经是简体");
        assert!(matches!(to_simplified("已经是简体"), Cow::Borrowed(_)));
        assert!(has_traditional("憲") && !has_traditional("宪法 abc"));
    }

    /// Oracle: skipping texts without a traditional character gives what converting every
    /// text gives, on every document of the sample corpus and on traditional text.
    #[test]
    fn skipping_equals_converting_everything() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl");
        let c = converter().expect("t2s converter");
        let mut texts: Vec<String> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                crate::text::normalize(v["text"].as_str().unwrap())
            })
            .collect();
        texts.push("著作權法第一條：為保護著作人著作權益，調和社會公共利益，特制定本法。".into());
        for t in &texts {
            assert_eq!(to_simplified(t), c.convert(t), "{}", &t[..t.len().min(60)]);
        }
    }
}
