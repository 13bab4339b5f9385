//! The pages: `fpdb report`'s self-contained file and serve's page at `/`. HTML, CSS and
//! JavaScript are compiled into the binary (nothing is fetched from a CDN); one script
//! (`render.js`) draws the report in both.

use fpdb::report::Report;

/// The stylesheet of both pages.
pub(super) const STYLE_CSS: &str = include_str!("style.css");
/// The report's drawing (figures, histogram, days, hosts, largest clusters).
pub(super) const RENDER_JS: &str = include_str!("render.js");
/// Serve's page.
pub(super) const INDEX_HTML: &str = include_str!("index.html");
/// Serve's page script (live figures, the paste box, the cluster browser).
pub(super) const PAGE_JS: &str = include_str!("page.js");
/// The report file's template.
const REPORT_HTML: &str = include_str!("report.html");

/// `report` as one self-contained HTML file, titled with `store`.
pub(super) fn report_page(store: &str, report: &Report) -> String {
    let data = script_json(&serde_json::to_string(report).expect("a report serializes"));
    fill(REPORT_HTML, &|name| match name {
        "CSS" => Some(STYLE_CSS.to_string()),
        "JS" => Some(RENDER_JS.to_string()),
        "STORE" => Some(html_text(store)),
        "DATA" => Some(data.clone()),
        _ => None,
    })
}

/// `template` with each `{{NAME}}` replaced by `value(NAME)`, in one pass (a value is never
/// read again for markers: a store named `{{DATA}}` stays its name).
fn fill(template: &str, value: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after
            .find("}}")
            .and_then(|end| Some((end, value(&after[..end])?)))
        {
            Some((end, v)) => {
                out.push_str(&v);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// JSON that can sit inside `<script>`: every `<` escaped (`\u003c`), so no `</script>` or
/// `<!--` in a title or URL ends or changes the script element.
fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// Text as HTML character data.
fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_filled_once_and_unknown_ones_stay() {
        let got = fill("<t>{{A}}</t>{{B}}{{X}}{{", &|n| match n {
            "A" => Some("{{B}}".into()),
            "B" => Some("b".into()),
            _ => None,
        });
        assert_eq!(got, "<t>{{B}}</t>b{{X}}{{");
    }

    #[test]
    fn data_cannot_close_the_script_element() {
        let s = script_json(r#"{"title":"</script><script>alert(1)</script><!--"}"#);
        assert!(!s.contains('<'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["title"], "</script><script>alert(1)</script><!--");
        assert_eq!(
            html_text("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
