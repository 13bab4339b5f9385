//! A labeled dev set of crawled pages, made from real pages: the articles of the extraction
//! benchmark (`../shared/data/extraction`) moved between the real templates of its sites.
//!
//! `page_set BENCH_DIR OUT_DIR [SEED]` writes `OUT_DIR/corpus.jsonl` (`{"id", "url", "html"}`),
//! `OUT_DIR/pairs.tsv` (`id_a id_b label kind`), the format of `../shared/data/dev`, and
//! `OUT_DIR/articles.tsv` (`id article`: which article each page shows, whole or cut short,
//! for `fpdb eval --articles`, which judges every pair of pages in one cluster).
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

use std::fmt::Write as _;

use fpdb_tools::pages::{host, later, load, short, with_article, Page, Rng};

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
    let mut shown = String::from("id\tarticle\n");
    let mut add = |id: String, url: &str, html: String, article: &str, corpus: &mut Vec<_>| {
        corpus.push(serde_json::json!({"id": id, "url": url, "html": html}));
        let _ = writeln!(shown, "{id}\t{article}");
        id
    };
    let n = pages.len();
    for (i, p) in pages.iter().enumerate() {
        let orig = add(p.key.clone(), &p.url, p.html.clone(), &p.key, &mut corpus);
        let other = |rng: &mut Rng| (i + 1 + rng.below(n - 1)) % n;
        match i % 3 {
            0 => {
                // Another article in this page's template.
                let q = &pages[other(&mut rng)];
                let id = add(
                    format!("{}-other", p.key),
                    &format!("{}?other", p.url),
                    with_article(p, &q.body, ""),
                    &q.key,
                    &mut corpus,
                );
                let _ = writeln!(pairs, "{orig}\t{id}\t0\tother_article_same_site");
                // This article in another site's template.
                let u = &pages[other(&mut rng)];
                let id = add(
                    format!("{}-at-{}", p.key, &u.key[..8]),
                    &format!("https://{}/copy/{}", host(&u.url), &p.key[..8]),
                    with_article(u, &p.body, ""),
                    &p.key,
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
                    &q.key,
                    &mut corpus,
                );
                let b = add(
                    format!("{}-short-b", p.key),
                    &format!("{}?b", p.url),
                    with_article(p, &short(&r.body, want), ""),
                    &r.key,
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
                    &q.key,
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
                    &p.key,
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
                    &p.key,
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
    std::fs::write(format!("{out}/articles.tsv"), shown).expect("articles.tsv");
    eprintln!("{} documents", corpus.len());
}
