//! HTML -> title, meta description and keywords, publication time, source links, and the main
//! text ([`super::main_text`]: readability's paragraphs that trafilatura confirms), and the
//! visible text's other lines, which count toward the site's furniture ([`Page::around`]). A
//! page where neither finds a main text gives its visible text.
//!
//! A page nested too deep (or too wide and deep) for that to finish in bounded time is
//! flattened first and gives its visible text only (`html_bound`): nesting costs the parser
//! quadratic and readability more than cubic time.

use dom_query::Document as Dom;

/// What is kept of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// `<title>` (or `og:title`).
    pub title: Option<String>,
    /// `<meta name="description">`.
    pub description: Option<String>,
    /// `<meta name="keywords">`.
    pub keywords: Option<String>,
    /// Main text, one paragraph per line.
    pub text: String,
    /// The publication time the page states, as written: `article:published_time` (or
    /// another publication-date meta), else a JSON-LD `datePublished`, else the first
    /// `<time datetime>`.
    pub published: Option<String>,
    /// Absolute links the page gives as its source: a link whose text, or whose parent's
    /// text, says so (来源, 原文, source, via, …); at most 16.
    pub cites: Vec<String>,
    /// The visible text's lines that are not the main text's ([`Document::around`]).
    ///
    /// [`Document::around`]: crate::engine::Document::around
    pub around: String,
    /// The account that published the page on its host, as the page shows it: a WeChat
    /// article's account name (`#js_name`, `.profile_nickname`), else the user space of an
    /// author link (`rel="author"` to `/@name` or `/~name`). See [`crate::text::sites`].
    pub publisher: Option<String>,
}

fn clean(s: &str) -> Option<String> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// The visible text of the body as [`visible_text`] reads it, without removing the head
/// (readability reads the parse next).
fn body_text(dom: &Dom) -> String {
    let body = dom.select("body");
    let text = if body.exists() {
        body.select("script, style, noscript, template, svg")
            .remove();
        body.formatted_text()
    } else {
        dom.select("script, style, noscript, template, svg")
            .remove();
        dom.formatted_text()
    };
    trimmed_lines(&text)
}

/// The account a page shows as its publisher ([`Page::publisher`]).
fn publisher(dom: &Dom) -> Option<String> {
    let shown = dom.select("#js_name, .profile_nickname");
    if let Some(name) = clean(&shown.first().text()) {
        return Some(name.chars().take(200).collect());
    }
    dom.select("link[rel~=\"author\" i][href], a[rel~=\"author\" i][href]")
        .iter()
        .filter_map(|a| a.attr("href"))
        .find_map(|href| crate::text::sites::url_publisher(&href).map(str::to_string))
}

/// The trimmed, non-empty lines of `text`.
pub(super) fn trimmed_lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Visible text of the body: scripts, styles and navigation chrome removed, block elements on
/// their own lines.
fn visible_text(dom: &Dom) -> String {
    dom.select("head").remove();
    body_text(dom)
}

/// `<title>` (or `og:title`), `<meta name="description">` and `<meta name="keywords">`.
fn head_fields(dom: &Dom) -> (Option<String>, Option<String>, Option<String>) {
    let meta = |name: &str| {
        dom.select(&format!(
            "meta[name=\"{name}\" i], meta[property=\"og:{name}\" i]"
        ))
        .iter()
        .find_map(|m| m.attr("content").and_then(|c| clean(&c)))
    };
    let title = clean(&dom.select("title").text()).or_else(|| meta("title"));
    (title, meta("description"), meta("keywords"))
}

/// The publication time a page states, as written (see [`Page::published`]).
fn published(dom: &Dom) -> Option<String> {
    let meta = dom
        .select(
            "meta[property=\"article:published_time\" i], meta[name=\"article:published_time\" i], \
             meta[itemprop=\"datePublished\" i], meta[name=\"pubdate\" i], \
             meta[name=\"publishdate\" i], meta[name=\"publish_date\" i]",
        )
        .iter()
        .find_map(|m| m.attr("content").and_then(|c| clean(&c)));
    meta.or_else(|| {
        dom.select("script[type=\"application/ld+json\" i]")
            .iter()
            .find_map(|s| {
                serde_json::from_str(&s.text())
                    .ok()
                    .and_then(|v| date_published(&v, 0))
            })
    })
    .or_else(|| {
        dom.select("time[datetime]")
            .iter()
            .find_map(|t| t.attr("datetime").and_then(|c| clean(&c)))
    })
}

/// The first `datePublished` of a JSON-LD value (an object, a list of them, a `@graph`),
/// looked for up to four levels down.
fn date_published(v: &serde_json::Value, depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    match v {
        serde_json::Value::Object(o) => o
            .get("datePublished")
            .and_then(serde_json::Value::as_str)
            .and_then(clean)
            // Year 1 is the zero time of Go and .NET: what a CMS writes for "no date" (5 of
            // the 181 real pages of the extraction benchmark).
            .filter(|t| !t.starts_with("0001-"))
            .or_else(|| o.values().find_map(|x| date_published(x, depth + 1))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| date_published(x, depth + 1)),
        _ => None,
    }
}

/// The page's source links (see [`Page::cites`]).
fn source_links(dom: &Dom) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in dom.select("a[href]").iter() {
        let Some(href) = a.attr("href") else { continue };
        let href = href.trim();
        if !(href.starts_with("http://") || href.starts_with("https://")) {
            continue;
        }
        let says = crate::text::cites::names_a_source(&a.text()) || {
            let t = a.parent().text();
            t.chars().count() <= 200 && crate::text::cites::names_a_source(&t)
        };
        if says && !out.iter().any(|u| u == href) && out.len() < 16 {
            out.push(href.to_string());
        }
    }
    out
}

/// A page's head fields and visible text, without readability.
fn extract_visible(html: &str) -> Page {
    let dom = Dom::from(html);
    let (title, description, keywords) = head_fields(&dom);
    let published = published(&dom);
    let cites = source_links(&dom);
    let publisher = publisher(&dom);
    Page {
        title,
        description,
        keywords,
        text: visible_text(&dom),
        published,
        cites,
        around: String::new(),
        publisher,
    }
}

/// The lines of `visible` that are not lines of `main` ([`Page::around`]).
fn around(visible: &str, main: &str) -> String {
    let main: std::collections::HashSet<&str> = main.lines().collect();
    visible
        .lines()
        .filter(|l| !main.contains(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Extract a page.
pub fn extract(html: &str) -> Page {
    if !super::html_bound::shape(html).within_bounds() {
        return extract_visible(&super::html_bound::flattened(html));
    }
    let dom = Dom::from(html);
    let (title, description, keywords) = head_fields(&dom);
    let published = published(&dom);
    let cites = source_links(&dom);
    let publisher = publisher(&dom);
    // The body's visible text first: readability changes the parse it reads (what this
    // removes, readability removes too). Its lines around the main text count toward the
    // site's furniture; a page with no main text (neither extractor finds one: a list of
    // links, a form) gives it as its text: there is nothing else to compare it by.
    let visible = body_text(&dom);
    let main = super::main_text::main_text(html, dom);
    let (text, around) = if main.is_empty() {
        (visible, String::new())
    } else {
        let around = around(&visible, &main);
        (main, around)
    };
    Page {
        title,
        description,
        keywords,
        text,
        published,
        cites,
        around,
        publisher,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// Tag soup: no panic, and no line is both main text and around it.
        #[test]
        fn garbage_pages_keep_the_lines_around_apart_from_the_main_text(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("<p>".to_string()),
                    proptest::strategy::Just("</p>".to_string()),
                    proptest::strategy::Just("<figure><figcaption>".to_string()),
                    proptest::strategy::Just("<nav>".to_string()),
                    proptest::strategy::Just("<script>".to_string()),
                    proptest::strategy::Just("<body>".to_string()),
                    "[a-z<>/!\"' =.-]{0,12}",
                    "\\PC{0,16}",
                ],
                0..200,
            ),
        ) {
            let p = extract(&parts.concat());
            let main: std::collections::HashSet<&str> = p.text.lines().collect();
            proptest::prop_assert!(p.around.lines().all(|l| !main.contains(l)));
        }
    }

    #[test]
    fn a_json_ld_date_published_dates_the_page_before_a_time_element() {
        let page = |head: &str| {
            format!(
                "<html><head>{head}</head><body><time datetime=\"2024-09-09\">9月9日</time>\
                 <p>第一段正文内容。</p></body></html>"
            )
        };
        let ld = r#"<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebPage"},{"@type":"NewsArticle","datePublished":"2024-03-01T08:00:00+08:00"}]}</script>"#;
        assert_eq!(
            extract(&page(ld)).published.as_deref(),
            Some("2024-03-01T08:00:00+08:00")
        );
        // Not JSON, a zero time, or no date in it: the time element.
        let zero = r#"<script type="application/ld+json">{"datePublished":"0001-01-01T00:00:00Z"}</script>"#;
        assert_eq!(
            extract(&page(zero)).published.as_deref(),
            Some("2024-09-09")
        );
        let bad = r#"<script type="application/ld+json">{not json</script>"#;
        assert_eq!(extract(&page(bad)).published.as_deref(), Some("2024-09-09"));
        // A meta comes first.
        let meta = format!(r#"<meta property="article:published_time" content="2024-01-01">{ld}"#);
        assert_eq!(
            extract(&page(&meta)).published.as_deref(),
            Some("2024-01-01")
        );
    }

    #[test]
    fn title_meta_and_main_text() {
        let html = r#"<html><head><title> 新闻标题 </title>
            <meta name="description" content="一段摘要"><meta name="Keywords" content="法律,条例">
            <script>var x = "不要这个";</script><style>p{}</style></head>
            <body><nav>首页 | 新闻</nav><p>第一段正文内容。</p><p>第二段正文内容。</p></body></html>"#;
        let p = extract(html);
        assert_eq!(p.title.as_deref(), Some("新闻标题"));
        assert_eq!(p.description.as_deref(), Some("一段摘要"));
        assert_eq!(p.keywords.as_deref(), Some("法律,条例"));
        assert!(
            p.text.contains("第一段正文内容") && p.text.contains("第二段正文内容"),
            "{}",
            p.text
        );
        assert!(!p.text.contains("不要这个"));
    }

    #[test]
    fn a_page_names_its_publishing_account() {
        let body = "<p>第一段正文内容。</p><p>第二段正文内容。</p>";
        let wechat = format!(
            "<html><body><div id=meta><a id=\"js_name\"> 财经 观察 </a>\
             <strong class=profile_nickname>别的名字</strong></div>{body}</body></html>"
        );
        assert_eq!(extract(&wechat).publisher.as_deref(), Some("财经 观察"));
        let medium = format!(
            "<html><head><link rel=\"author\" href=\"/about\"></head><body>\
             <a rel=\"noopener Author\" href=\"https://medium.com/@alice?s=1\">Alice</a>{body}</body></html>"
        );
        assert_eq!(extract(&medium).publisher.as_deref(), Some("@alice"));
        let news = format!("<html><body><p class=byline>By Bob</p>{body}</body></html>");
        assert_eq!(extract(&news).publisher, None);
    }

    #[test]
    fn the_visible_text_around_the_main_text_is_kept_apart() {
        let para = |i: usize| {
            format!(
                "<p>Paragraph {i} of the article tells the story at length, with the details \
                 a reader wants and a quote from the people who were there that day.</p>"
            )
        };
        let body: String = (0..6).map(para).collect();
        let html = format!(
            "<html><head><title>T</title><script>var hidden = 1;</script></head><body>\
             <nav><a href=/>Home</a> <a href=/world>World news and analysis</a></nav>\
             <article><h1>The headline</h1>{body}</article>\
             <aside><p>Regan is a southeastern Connecticut native now living nearby.</p></aside>\
             </body></html>"
        );
        let p = extract(&html);
        assert!(p.text.contains("Paragraph 5 of the article"), "{}", p.text);
        assert!(!p.text.contains("Regan"), "{}", p.text);
        assert!(p.around.contains("Regan is a southeastern"), "{}", p.around);
        assert!(p.around.contains("World news and analysis"), "{}", p.around);
        assert!(!p.around.contains("Paragraph 2"), "{}", p.around);
        assert!(!p.around.contains("hidden"), "{}", p.around);
    }

    #[test]
    fn many_short_paragraphs_keep_all_visible_text() {
        let mut html = String::from("<html><body>");
        for i in 0..40 {
            html.push_str(&format!("<div>第{i}条 短段落。</div>"));
        }
        html.push_str("</body></html>");
        let p = extract(&html);
        assert!(
            p.text.contains("第0条") && p.text.contains("第39条"),
            "{}",
            p.text
        );
    }
}
