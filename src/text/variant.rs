//! Optional traditional -> simplified Chinese conversion (OpenCC `t2s` rules, via the pure-Rust
//! ferrous-opencc), so a page reposted in traditional characters fingerprints like the original.
//! The converter is built once per process.

use std::sync::OnceLock;

use ferrous_opencc::{config::BuiltinConfig, OpenCC};

fn converter() -> Option<&'static OpenCC> {
    static T2S: OnceLock<Option<OpenCC>> = OnceLock::new();
    T2S.get_or_init(|| OpenCC::from_config(BuiltinConfig::T2s).ok())
        .as_ref()
}

/// `text` in simplified characters (unchanged if the converter could not be built).
pub fn to_simplified(text: &str) -> String {
    match converter() {
        Some(c) => c.convert(text),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traditional_becomes_simplified() {
        assert_eq!(to_simplified("中華人民共和國憲法"), "中华人民共和国宪法");
        assert_eq!(to_simplified("已经是简体"), "已经是简体");
    }
}
