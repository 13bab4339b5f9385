//! A labeled dev set of crawled pages, made from real pages: the articles of the extraction
//! benchmark (`../shared/data/extraction`) moved between the real templates of its sites.
//!
//! `page_set BENCH_DIR OUT_DIR [SEED]` writes `OUT_DIR/corpus.jsonl` (`{"id", "url", "html"}`)
//! and `OUT_DIR/pairs.tsv` (`id_a id_b label kind`), the format of `../shared/data/dev`.
//!
//! A page's article is found by its people-marked body (`ground-truth.json`): its `<p>`
//! elements whose text is part of that body. Another article is put in its place by replacing
//! those paragraphs (the first becomes the new body's paragraphs, the others go), so the page
//! keeps all its furniture: navigation, "most read", related headlines, footers, paywall
//! notices, dates. Pages whose body is not in at least three such paragraphs are left out.
//! Kinds of pair (`short_` ones: bodies cut to 200–700 characters at a sentence end, since
//! short articles are the ones whose furniture outweighs them):
//!
//! | kind | label | pair |
//! |---|---|---|
//! | `other_article_same_site` | 0 | a page, and its template holding another article |
//! | `short_other_article_same_site` | 0 | one template holding two different short articles |
//! | `same_article_other_site` | 1 | a page, and another site's template holding its article |
//! | `short_same_article_other_site` | 1 | a short article in two sites' templates |
//! | `repost_other_day` | 1 | a page, and the page with every date a year and a month on and one paragraph left out |
//! | `teaser` | 1 | a page, and its template holding the first half of its article and a "Read more" link |

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;

use dom_query::Document;

/// A page of the benchmark with its article located.
struct Page {
    key: String,
    url: String,
    html: String,
    body: Vec<String>,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `<p>` elements of `dom` holding the article `body` (normalized), as their indices among
/// all `<p>`s.
fn article_paragraphs(dom: &Document, body: &str) -> Vec<usize> {
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
fn with_article(page: &Page, paragraphs: &[String], extra: &str) -> String {
    let dom = Document::from(page.html.as_str());
    let body = norm(&page.body.join("\n"));
    let at = article_paragraphs(&dom, &body);
    let ps: Vec<_> = dom.select("p").iter().collect();
    let mut new = String::new();
    for p in paragraphs {
        let _ = write!(new, "<p>{}</p>", escape(p));
    }
    new.push_str(extra);
    if let Some(keep) = at.first().and_then(|&i| ps[i].nodes().first()) {
        for e in remnants(&dom, &body, keep) {
            e.remove_from_parent();
        }
    }
    for (n, &i) in at.iter().enumerate() {
        if n == 0 {
            ps[i].replace_with_html(new.as_str());
        } else {
            ps[i].remove();
        }
    }
    dom.html().to_string()
}

/// What is left of the page's article besides its `<p>`s (headings, list items, tables,
/// quotations, embedded posts): every element whose text (10 characters or more) is part of
/// the article `body`, and whose parent's is not, except `keep` (the `<p>` the new article
/// takes the place of) and the elements around it. Without this, two pages made from one
/// template would share the rest of its old article, which is not the site's furniture.
fn remnants<'a>(
    dom: &'a Document,
    body: &str,
    keep: &dom_query::NodeRef<'a>,
) -> Vec<dom_query::NodeRef<'a>> {
    let mut around: std::collections::HashSet<dom_query::NodeId> =
        keep.ancestors(None).iter().map(|n| n.id).collect();
    around.insert(keep.id);
    let contained = |n: &dom_query::NodeRef<'_>| {
        let t = norm(&n.text());
        t.chars().count() >= 10 && body.contains(&t)
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
fn short(body: &[String], want: usize) -> Vec<String> {
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
fn later(html: &str) -> String {
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

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The benchmark's pages whose article is in 3 or more `<p>`s, and how many pages it has.
fn load(bench: &str) -> (Vec<Page>, usize) {
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

#[expect(
    clippy::too_many_lines,
    reason = "the pairs of each kind, built in one pass over the pages, read top to bottom"
)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(bench), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: page_set BENCH_DIR OUT_DIR [SEED]");
        std::process::exit(2);
    };
    let seed: u64 = args.get(3).map_or(7, |s| s.parse().expect("SEED"));
    let (pages, total) = load(bench);
    eprintln!(
        "{} of {} pages have their article in 3 or more paragraphs",
        pages.len(),
        total
    );
    let mut rng = Rng(seed.max(1));
    let mut corpus: Vec<serde_json::Value> = Vec::new();
    let mut pairs = String::from("id_a\tid_b\tlabel\tkind\n");
    let add = |id: String, url: &str, html: String, corpus: &mut Vec<serde_json::Value>| {
        corpus.push(serde_json::json!({"id": id, "url": url, "html": html}));
        id
    };
    let n = pages.len();
    for (i, p) in pages.iter().enumerate() {
        let orig = add(p.key.clone(), &p.url, p.html.clone(), &mut corpus);
        let other = |rng: &mut Rng| (i + 1 + rng.below(n - 1)) % n;
        let host = |u: &str| u.split('/').nth(2).unwrap_or_default().to_string();
        match i % 3 {
            0 => {
                // Another article in this page's template.
                let q = &pages[other(&mut rng)];
                let id = add(
                    format!("{}-other", p.key),
                    &format!("{}?other", p.url),
                    with_article(p, &q.body, ""),
                    &mut corpus,
                );
                let _ = writeln!(pairs, "{orig}\t{id}\t0\tother_article_same_site");
                // This article in another site's template.
                let u = &pages[other(&mut rng)];
                let id = add(
                    format!("{}-at-{}", p.key, &u.key[..8]),
                    &format!("https://{}/copy/{}", host(&u.url), &p.key[..8]),
                    with_article(u, &p.body, ""),
                    &mut corpus,
                );
                let _ = writeln!(pairs, "{orig}\t{id}\t1\tsame_article_other_site");
            }
            1 => {
                // Two short articles in one template; one short article in two templates.
                let (q, r) = (&pages[other(&mut rng)], &pages[other(&mut rng)]);
                let want = 200 + rng.below(500);
                let a = add(
                    format!("{}-short-a", p.key),
                    &format!("{}?a", p.url),
                    with_article(p, &short(&q.body, want), ""),
                    &mut corpus,
                );
                let b = add(
                    format!("{}-short-b", p.key),
                    &format!("{}?b", p.url),
                    with_article(p, &short(&r.body, want), ""),
                    &mut corpus,
                );
                if q.key != r.key {
                    let _ = writeln!(pairs, "{a}\t{b}\t0\tshort_other_article_same_site");
                }
                let u = &pages[other(&mut rng)];
                let c = add(
                    format!("{}-short-at-{}", p.key, &u.key[..8]),
                    &format!("https://{}/copy/{}", host(&u.url), &q.key[..8]),
                    with_article(u, &short(&q.body, want), ""),
                    &mut corpus,
                );
                if host(&u.url) != host(&p.url) {
                    let _ = writeln!(pairs, "{a}\t{c}\t1\tshort_same_article_other_site");
                }
            }
            _ => {
                // A repost on another day; a teaser.
                let mut body = p.body.clone();
                if body.len() > 3 {
                    body.remove(1 + rng.below(body.len() - 2));
                }
                let repost = Page {
                    key: p.key.clone(),
                    url: p.url.clone(),
                    html: p.html.clone(),
                    body: p.body.clone(),
                };
                let id = add(
                    format!("{}-later", p.key),
                    &format!("{}?later", p.url),
                    later(&with_article(&repost, &body, "")),
                    &mut corpus,
                );
                let _ = writeln!(pairs, "{orig}\t{id}\t1\trepost_other_day");
                let half = p.body.len().div_ceil(2);
                let id = add(
                    format!("{}-teaser", p.key),
                    &format!("{}?teaser", p.url),
                    with_article(
                        p,
                        &p.body[..half],
                        &format!("<p><a href=\"{}\">Read more</a></p>", p.url),
                    ),
                    &mut corpus,
                );
                let _ = writeln!(pairs, "{orig}\t{id}\t1\tteaser");
            }
        }
    }
    std::fs::create_dir_all(out).expect("OUT_DIR");
    let mut lines = String::new();
    for c in &corpus {
        lines.push_str(&serde_json::to_string(c).expect("json"));
        lines.push('\n');
    }
    std::fs::write(format!("{out}/corpus.jsonl"), lines).expect("corpus.jsonl");
    std::fs::write(format!("{out}/pairs.tsv"), pairs).expect("pairs.tsv");
    eprintln!("{} documents", corpus.len());
}
