//! Citations a text makes: the URLs named on a source line ("来源：", "原文链接：", "转自",
//! "source:", "via"), and the keys URLs are compared by.

/// Most URLs of one document kept as its citations.
pub const MAX_CITES: usize = 16;

/// Words that introduce a source (searched in lower-case text).
const MARKERS: &[&str] = &[
    "来源",
    "原文",
    "出处",
    "转自",
    "转载自",
    "原载",
    "source",
    "via",
    "originally",
    "original",
];

/// Whether `s` (a link's text or what surrounds it) says it names a source.
pub fn names_a_source(s: &str) -> bool {
    let lower = s.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

/// The URLs a text names after a source marker (the first URL within 120 bytes of each
/// marker), at most [`MAX_CITES`], in order, each once.
pub fn cited_urls(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for m in MARKERS {
        for (at, _) in lower.match_indices(m) {
            let from = at + m.len();
            let window_end = (from + 120).min(lower.len());
            let Some(window) = lower.get(from..window_end).or_else(|| lower.get(from..)) else {
                continue;
            };
            if let Some(u) = first_url(window) {
                if !out.contains(&u) && out.len() < MAX_CITES {
                    out.push(u);
                }
            }
        }
    }
    out
}

/// The first `http://` or `https://` URL in `s`, up to a space, a quote or a closing bracket.
fn first_url(s: &str) -> Option<String> {
    let start = match (s.find("http://"), s.find("https://")) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    let url: String = s[start..]
        .chars()
        .take_while(|c| {
            !c.is_whitespace()
                && !matches!(
                    c,
                    '"' | '\'' | '<' | '>' | ')' | '）' | '】' | '」' | '，' | '。' | ','
                )
        })
        .collect();
    (url.len() > "https://".len()).then_some(url)
}

/// The key two URLs are compared by: scheme, `www.`, fragment, query-less trailing `/` and
/// case dropped, so `https://www.Site.example/a/` and `http://site.example/a` are one page.
pub fn url_key(url: &str) -> u64 {
    let u = url.trim().to_lowercase();
    let u = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .unwrap_or(&u);
    let u = u.strip_prefix("www.").unwrap_or(u);
    let u = u.split('#').next().unwrap_or(u);
    let u = u.trim_end_matches('/');
    crate::hash::fingerprint64(u.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_name_their_urls() {
        let t = "正文第一段。\n来源：https://news.example.cn/a/1.html\n原文链接: http://www.site.example/p?id=7）\n\
                 See also https://other.example/x (not a source). Source: <https://src.example/y>";
        assert_eq!(
            cited_urls(t),
            [
                "https://news.example.cn/a/1.html",
                "http://www.site.example/p?id=7",
                "https://src.example/y"
            ]
        );
        assert!(cited_urls("没有来源的文字。").is_empty());
    }

    #[test]
    fn urls_are_compared_without_scheme_www_fragment_or_case() {
        let k = url_key("http://site.example/a");
        for u in [
            "https://www.Site.example/a/",
            "HTTP://site.example/a#top",
            " site.example/a ",
        ] {
            assert_eq!(url_key(u), k, "{u}");
        }
        assert_ne!(url_key("http://site.example/b"), k);
    }
}
