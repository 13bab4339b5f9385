//! Real pages of the extraction benchmark (`../shared/data/extraction`) with their article
//! located, and the edits the page dev sets make to them: another article in a page's place
//! (`page_set`, `site_set`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;

use dom_query::Document;

/// A page of the benchmark with its article located.
pub struct Page {
    /// The benchmark's key of the page.
    pub key: String,
    /// Its URL.
    pub url: String,
    /// Its HTML, decoded.
    pub html: String,
    /// Its article, as people marked it: paragraphs, whitespace normalized.
    pub body: Vec<String>,
}

pub fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `<p>` elements of `dom` holding the article `body` (normalized), as their indices among
/// all `<p>`s.
pub fn article_paragraphs(dom: &Document, body: &str) -> Vec<usize> {
    dom.select("p")
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            let t = norm(&p.text());
            t.chars().count() >= 40 && body.contains(&t)
        })
        .map(|(i, _)| i)
        .collect()
}

/// `page`'s HTML with its article replaced by `paragraphs` (escaped, one `<p>` each).
pub fn with_article(page: &Page, paragraphs: &[String], extra: &str) -> String {
    let dom = Document::from(page.html.as_str());
    let body = norm(&page.body.join("\n"));
    let at = article_paragraphs(&dom, &body);
    let ps: Vec<_> = dom.select("p").iter().collect();
    let mut new = String::new();
    for p in paragraphs {
        let _ = write!(new, "<p>{}</p>", escape(p));
    }
    new.push_str(extra);
    // Both are found on the whole page before anything is removed: a `<p>` whose inner
    // element went first would no longer read as part of the body.
    let otherwise = written_otherwise(&ps, &body, &at);
    let rest = at
        .first()
        .and_then(|&i| ps[i].nodes().first())
        .map(|keep| remnants(&dom, &body, keep))
        .unwrap_or_default();
    for e in rest {
        e.remove_from_parent();
    }
    for (n, &i) in at.iter().enumerate() {
        if n == 0 {
            ps[i].replace_with_html(new.as_str());
        } else {
            ps[i].remove();
        }
    }
    for i in otherwise {
        ps[i].remove();
    }
    dom.html().to_string()
}

/// A text's letters and digits in lower case.
fn key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The `<p>`s of the article `body` (normalized) that [`article_paragraphs`] does not find
/// because the body people marked writes them with other spaces or quotation marks than the
/// page (`“ Wild Rose ”` for `“Wild Rose”`): 40 characters or more whose letters and digits are
/// in the body's. Left beside a new article they would be the old one's, not the site's
/// furniture. Not a place for the new article: the first paragraph found as written is (a
/// teaser of the article above its container can match this way).
fn written_otherwise(ps: &[dom_query::Selection<'_>], body: &str, at: &[usize]) -> Vec<usize> {
    let body = key(body);
    (0..ps.len())
        .filter(|i| !at.contains(i))
        .filter(|&i| {
            let t = ps[i].text();
            norm(&t).chars().count() >= 40 && body.contains(&key(&t))
        })
        .collect()
}

/// What is left of the page's article besides its `<p>`s (headings, list items, tables,
/// quotations, embedded posts): every element whose text (10 characters or more) is part of
/// the article `body`, and whose parent's is not, except `keep` (the `<p>` the new article
/// takes the place of) and the elements around it. Without this, two pages made from one
/// template would share the rest of its old article, which is not the site's furniture.
/// "Part of" compares letters and digits, as [`written_otherwise`] does: a list item broken by
/// `<br>` reads without the space the marked body has there.
fn remnants<'a>(
    dom: &'a Document,
    body: &str,
    keep: &dom_query::NodeRef<'a>,
) -> Vec<dom_query::NodeRef<'a>> {
    let mut around: std::collections::HashSet<dom_query::NodeId> =
        keep.ancestors(None).iter().map(|n| n.id).collect();
    around.insert(keep.id);
    let body = key(body);
    let contained = |n: &dom_query::NodeRef<'_>| {
        let t = n.text();
        let k = key(&t);
        norm(&t).chars().count() >= 10 && !k.is_empty() && body.contains(&k)
    };
    dom.select("body *")
        .nodes()
        .iter()
        .filter(|n| !around.contains(&n.id) && contained(n))
        .filter(|n| {
            n.parent()
                .is_none_or(|p| around.contains(&p.id) || !contained(&p))
        })
        .cloned()
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The first 200–700 characters of `body`'s text, ended at a sentence end where one falls in
/// that range.
pub fn short(body: &[String], want: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0;
    for p in body {
        if n >= want {
            break;
        }
        let left = want - n;
        if p.chars().count() <= left + 100 {
            n += p.chars().count();
            out.push(p.clone());
        } else {
            let cut: String = p.chars().take(left).collect();
            let end = cut
                .rfind(['.', '!', '?', '。', '！', '？'])
                .map_or(cut.len(), |i| i + 1);
            out.push(cut[..end].to_string());
            n += left;
        }
    }
    out
}

/// Dates a year and a month on, in the forms the benchmark's pages write them.
pub fn later(html: &str) -> String {
    let months = [
        ("January", "February"),
        ("February", "March"),
        ("March", "April"),
        ("April", "May"),
        ("November", "December"),
        ("October", "November"),
        ("September", "October"),
    ];
    let mut s = html
        .replace("2019", "2020")
        .replace("2018", "2019")
        .replace("2017", "2018");
    for (a, b) in months {
        s = s.replace(a, b);
    }
    s
}

/// The generator the page sets were first made with (xorshift), kept so that they stay the same.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Shuffle `v` (Fisher–Yates with `rng`).
pub fn shuffle(v: &mut [usize], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
}

/// A page of a generated set: its id, URL, HTML and the article it shows.
pub struct SetPage {
    pub id: String,
    pub url: String,
    pub html: String,
    pub article: String,
}

/// Write a page set to `out`: `corpus.jsonl` (`{"id", "url", "html"}`, the pages shuffled, as
/// a crawl meets them in no order of ours), `pairs.tsv` and `articles.tsv`. Returns the order
/// written (indices into `pages`).
pub fn write_set(out: &str, pages: &[SetPage], pairs: &str, rng: &mut Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pages.len()).collect();
    shuffle(&mut order, rng);
    std::fs::create_dir_all(out).expect("OUT_DIR");
    let (mut lines, mut shown) = (String::new(), String::from("id\tarticle\n"));
    for &i in &order {
        let c = &pages[i];
        let rec = serde_json::json!({"id": c.id, "url": c.url, "html": c.html});
        lines.push_str(&serde_json::to_string(&rec).expect("json"));
        lines.push('\n');
        let _ = writeln!(shown, "{}\t{}", c.id, c.article);
    }
    std::fs::write(format!("{out}/corpus.jsonl"), lines).expect("corpus.jsonl");
    std::fs::write(format!("{out}/pairs.tsv"), pairs).expect("pairs.tsv");
    std::fs::write(format!("{out}/articles.tsv"), shown).expect("articles.tsv");
    order
}

/// The benchmark's pages whose article is in 3 or more `<p>`s, and how many pages it has.
pub fn load(bench: &str) -> (Vec<Page>, usize) {
    let truth: BTreeMap<String, serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(format!("{bench}/ground-truth.json")).expect("ground-truth.json"),
    )
    .expect("ground truth");
    let mut pages = Vec::new();
    for (key, t) in &truth {
        let mut bytes = Vec::new();
        let path = format!("{bench}/html/{key}.html.gz");
        flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("page"))
            .read_to_end(&mut bytes)
            .expect("read page");
        let (html, _) = fpdb::reader::decode::decode(&bytes, None, true);
        let body: Vec<String> = t["articleBody"]
            .as_str()
            .unwrap_or_default()
            .lines()
            .map(norm)
            .filter(|l| !l.is_empty())
            .collect();
        let page = Page {
            key: key.clone(),
            url: t["url"].as_str().unwrap_or_default().to_string(),
            html,
            body,
        };
        let dom = Document::from(page.html.as_str());
        if article_paragraphs(&dom, &norm(&page.body.join("\n"))).len() >= 3 {
            pages.push(page);
        }
    }
    (pages, truth.len())
}

/// The host of a URL.
pub fn host(url: &str) -> String {
    url.split('/').nth(2).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_of_the_old_article_goes() {
        let page = Page {
            key: "k".into(),
            url: "https://example.com/a".into(),
            html: "<html><body><div id=\"story\">\
                   <p>The first paragraph of the old article, long enough to be found.</p>\
                   <p>The second paragraph of the old article, long enough to be found.</p>\
                   <p>He said “ Wild Rose ” was <em>easily the year’s best original song</em> \
                   of them all.</p>\
                   <ul><li>Elektronische Fallakte<br>Die eFA ist ärztlich geführt und \
                   moderiert.</li></ul></div>\
                   <div id=\"nav\">The site's own navigation stays where it is</div>\
                   </body></html>"
                .into(),
            body: [
                "The first paragraph of the old article, long enough to be found.",
                "The second paragraph of the old article, long enough to be found.",
                "He said “Wild Rose” was easily the year’s best original song of them all.",
                "Elektronische Fallakte",
                "Die eFA ist ärztlich geführt und moderiert.",
            ]
            .map(String::from)
            .to_vec(),
        };
        let html = with_article(
            &page,
            &["A new article takes the old one's place.".into()],
            "",
        );
        assert!(
            html.contains("A new article takes the old one's place."),
            "{html}"
        );
        assert!(
            html.contains("The site's own navigation stays where it is"),
            "{html}"
        );
        // A paragraph written with other spaces than the marked body, whose inner element
        // is part of the body too, and a list item broken by `<br>`.
        for old in [
            "old article",
            "Wild Rose",
            "of them all",
            "Die eFA",
            "Fallakte",
        ] {
            assert!(!html.contains(old), "{old} is left in {html}");
        }
    }
}
