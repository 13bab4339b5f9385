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

/// The URLs a text names after a source marker (a URL with a marker in the 120 bytes before
/// it), at most [`MAX_CITES`], in order, each once. Most texts name no URL: they cost one
/// search for `http`.
pub fn cited_urls(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let (mut from, mut last_end) = (0, 0);
    let finder = memchr::memmem::Finder::new("http");
    while let Some(i) = finder.find(&text.as_bytes()[from..]) {
        let at = from + i;
        from = at + 4;
        let Some(url) = first_url(&text[at..]).filter(|u| text[at..].starts_with(u.as_str()))
        else {
            continue;
        };
        // The marker stands on the URL's line, after the URL before it.
        let mut start = at.saturating_sub(120).max(last_end).min(at);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let start = text[start..at].rfind('\n').map_or(start, |n| start + n + 1);
        last_end = at + url.len();
        from = last_end;
        if names_a_source(&text[start..at]) && !out.contains(&url) && out.len() < MAX_CITES {
            out.push(url);
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
                    '"' | '\''
                        | '<'
                        | '>'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '）'
                        | '】'
                        | '」'
                        | '，'
                        | '。'
                        | ','
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

/// The site a URL is on, as reports group pages by: its host in lower case without `www.`,
/// userinfo or port (`https://www.News.example:8080/a` -> `news.example`). None for a string
/// that is not a URL (no `scheme://` and no dot in its first part).
pub fn host(url: &str) -> Option<String> {
    let u = url.trim();
    let rest = match u.split_once("://") {
        Some((scheme, rest))
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) =>
        {
            rest
        }
        _ => u,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let name = if authority.starts_with('[') {
        // An IPv6 literal keeps its brackets and drops only the port after them.
        authority
            .split_once(']')
            .map_or(authority, |(h, _)| h)
            .trim_start_matches('[')
    } else {
        authority.split(':').next().unwrap_or("")
    };
    let name = name.trim_end_matches('.').to_lowercase();
    let name = name
        .strip_prefix("www.")
        .map_or(name.clone(), str::to_string);
    // A DNS name has at most 253 characters: a longer "host" is no site (and would hold
    // kilobytes in each of a report's host counters).
    let plausible = !name.is_empty()
        && name.len() <= 253
        && (u.contains("://") || name.contains('.'))
        && !name.chars().any(|c| c.is_whitespace() || c.is_control());
    plausible.then_some(name)
}

/// The key of a URL's host ([`host`], hashed), which citations are compared by: a page does
/// not cite another page of its own site into being the source.
pub fn host_key(url: &str) -> Option<u64> {
    host(url).map(|h| crate::hash::fingerprint64(h.as_bytes()))
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
    fn hosts_drop_scheme_www_userinfo_port_and_case() {
        for (u, h) in [
            ("https://www.News.example:8080/a?b#c", Some("news.example")),
            ("http://user:pw@site.example./x", Some("site.example")),
            ("site.example/a", Some("site.example")),
            ("ftp://files.example", Some("files.example")),
            ("http://[2001:db8::1]:80/", Some("2001:db8::1")),
            ("http://localhost:3000/", Some("localhost")),
            ("news-1", None),
            ("", None),
            ("https:///nothing", None),
        ] {
            assert_eq!(host(u).as_deref(), h, "{u}");
        }
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

    proptest::proptest! {
        /// Any text (URLs inside URLs, markdown links, markers and multi-byte text around
        /// them) gives URLs that are in it, at most the bound, and never panics.
        #[test]
        fn any_text_gives_urls_it_holds(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "来源：", "source: ", "via ", "https://a.example/x", "http://b.example/y/",
                "[", "](", ")", "\n", " ", "中文", "http", "https:/", "。", "原文链接",
            ]), 0..40),
        ) {
            let text: String = parts.concat();
            let urls = cited_urls(&text);
            proptest::prop_assert!(urls.len() <= MAX_CITES);
            for u in &urls {
                proptest::prop_assert!(text.contains(u.as_str()), "{} in {:?}", u, text);
            }
        }
    }

    #[test]
    fn markdown_links_give_each_url_once() {
        let t = "该攻略出自\n[https://github.com/x/996.law](https://github.com/x/996.law)\n来源：[https://s.example/a](https://s.example/a)";
        assert_eq!(cited_urls(t), ["https://s.example/a"]);
    }
}
