//! The site a page belongs to, as what a store learns of sites is kept by (a site's furniture
//! and template lines: `engine/furniture.rs`): its host, or on a host shared by many
//! publishers, the publisher the page names on it.
//!
//! A host is not a site where many authors publish on it (mp.weixin.qq.com, medium.com,
//! toutiao): there each account's footer is that account's, and an article that several
//! accounts repost is no template at all. Which hosts are shared is found from the pages
//! themselves, not from a list of hosts: a page that names its publisher (its URL's user space
//! or account parameter, or the account an HTML page shows; [`url_publisher`],
//! `Document::publisher`) is that publisher's page; a page that names none is its host's.
//!
//! A site's key keeps its host's key in its high 32 bits ([`same_host`]): a page's site is
//! told from another host's by its key alone.

use super::cites::host_key;

/// The low bits of a site's key that name its publisher on its host.
const PUBLISHER_BITS: u32 = 32;

/// Most characters of a publisher's name that count.
const MAX_PUBLISHER_CHARS: usize = 200;

/// The publisher a URL names on its host: the first path segment of a user space
/// (`/@name/…`, `/~name/…`) or an account parameter (`__biz=`, the account of a WeChat
/// article). None for a URL that names none.
pub fn url_publisher(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = before_query.split('#').next().unwrap_or("");
    let first = path.split('/').nth(1).unwrap_or("");
    if first.len() > 1 && (first.starts_with('@') || first.starts_with('~')) {
        return Some(first);
    }
    query
        .split('#')
        .next()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("__biz="))
        .filter(|v| !v.is_empty())
}

/// The key of the site of a page at `url` whose publisher is `publisher` (else the one its URL
/// names, [`url_publisher`]): its host's key ([`host_key`]) for a page that names none, else
/// the host's high bits and the publisher's. None for a string that is not a URL.
pub fn site_key(url: &str, publisher: Option<&str>) -> Option<u64> {
    let host = host_key(url)?;
    let name = publisher
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .or_else(|| url_publisher(url));
    Some(name.map_or(host, |p| {
        let p: String = p.chars().take(MAX_PUBLISHER_CHARS).collect();
        let ours = crate::hash::fingerprint64(p.to_lowercase().as_bytes());
        (host & !low_mask()) | (ours & low_mask())
    }))
}

/// Whether site `site` ([`site_key`]) is on the host of key `host` ([`host_key`]).
pub fn same_host(site: u64, host: u64) -> bool {
    site & !low_mask() == host & !low_mask()
}

fn low_mask() -> u64 {
    (1 << PUBLISHER_BITS) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_spaces_and_account_parameters_name_a_publisher() {
        for (url, p) in [
            ("https://medium.com/@alice/a-post-1f2e", Some("@alice")),
            ("http://example.edu/~bob/notes.html", Some("~bob")),
            (
                "https://mp.weixin.qq.com/s?__biz=MzA5NjQ2&mid=2650&idx=1#rd",
                Some("MzA5NjQ2"),
            ),
            ("https://mp.weixin.qq.com/s/a0Xb", None),
            ("https://news.example/2024/05/a.html", None),
            ("https://news.example/@", None),
            ("https://news.example/a?x=1&__biz=", None),
        ] {
            assert_eq!(url_publisher(url), p, "{url}");
        }
    }

    #[test]
    fn a_publishers_site_is_on_its_host_and_apart_from_the_others() {
        let host = host_key("https://mp.weixin.qq.com/s/x").unwrap();
        let a = site_key("https://mp.weixin.qq.com/s?__biz=A&mid=1", None).unwrap();
        let a2 = site_key("https://mp.weixin.qq.com/s?__biz=A&mid=2", None).unwrap();
        let b = site_key("https://mp.weixin.qq.com/s/x", Some("账号B")).unwrap();
        let plain = site_key("https://mp.weixin.qq.com/s/y", Some("  ")).unwrap();
        assert_eq!(a, a2);
        assert_ne!(a, b);
        assert_eq!(plain, host);
        for s in [a, b, plain] {
            assert!(same_host(s, host));
        }
        let other = host_key("https://news.example/a").unwrap();
        assert!(!same_host(a, other));
        // The page's own publisher comes before its URL's.
        assert_eq!(
            site_key("https://mp.weixin.qq.com/s?__biz=A", Some("账号B")),
            Some(b)
        );
    }
}
