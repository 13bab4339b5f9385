//! A labeled dev set of a few sites with many pages each, made from real pages: the templates
//! of a dozen pages of the extraction benchmark (`../shared/data/extraction`), each holding
//! the articles of the benchmark's other pages, shuffled as a crawl meets them.
//!
//! `site_set BENCH_DIR OUT_DIR [SEED] [SITES]` writes `OUT_DIR/corpus.jsonl` (`{"id", "url",
//! "html"}`), `OUT_DIR/pairs.tsv` (`id_a id_b label kind`) and `OUT_DIR/articles.tsv` (`id
//! article`: which article each page shows, for `fpdb eval --articles`, which judges every
//! pair of pages in one cluster). The pages set (`page_set`) gives each template two or three
//! articles; here each site has a dozen or more, so a site's furniture is learned from its
//! pages and the pairs of different articles of one site are many, as in a crawl.
//!
//! Each article (another page's body; half of them cut to 200–700 characters, as `page_set`
//! cuts its short ones) is put in one site's template. Then, each by chance:
//!
//! | kind | label | pair |
//! |---|---|---|
//! | `[short_]same_article_other_site` | 1 | the page, and the article in another site's template (1 in 3) |
//! | `[short_]repost_other_day` | 1 | the page, and the page with every date a year and a month on and one paragraph left out (1 in 4) |
//! | `teaser` | 1 | the page, and the first half of its article and a "Read more" link (1 in 4 long articles of 4 paragraphs or more) |
//! | `[short_]other_article_same_site` | 0 | the page, and the page of the article put before it on the same site |
//!
//! `short_` kinds are pairs whose article is a short one (for `other_article`, either).

use std::fmt::Write as _;

use fpdb_tools::pages::{
    host, later, load, short, shuffle, with_article, write_set, Page, Rng, SetPage as Out,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(bench), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: site_set BENCH_DIR OUT_DIR [SEED] [SITES]");
        std::process::exit(2);
    };
    let seed: u64 = args.get(3).map_or(11, |s| s.parse().expect("SEED"));
    let sites: usize = args.get(4).map_or(12, |s| s.parse().expect("SITES"));
    let (pages, _) = load(bench);
    let mut rng = Rng(seed.max(1));
    let (templates, articles) = choose(&pages, sites, &mut rng);
    assert!(templates.len() >= 2, "fewer than two sites in {bench}");
    let mut corpus: Vec<Out> = Vec::new();
    let mut pairs = String::from("id_a\tid_b\tlabel\tkind\n");
    let mut last_on: Vec<Option<(String, bool)>> = vec![None; templates.len()];
    for a in &articles {
        let akey = &a.key[..12];
        let is_short = rng.below(2) == 0;
        let body = if is_short {
            short(&a.body, 200 + rng.below(500))
        } else {
            a.body.clone()
        };
        let prefix = if is_short { "short_" } else { "" };
        let s = rng.below(templates.len());
        let t = templates[s];
        let id = format!("s{s}-{akey}");
        corpus.push(Out {
            id: id.clone(),
            url: format!("https://{}/news/{akey}", host(&t.url)),
            html: with_article(t, &body, ""),
            article: a.key.clone(),
        });
        if let Some((prev, prev_short)) = &last_on[s] {
            let p = if is_short || *prev_short {
                "short_"
            } else {
                ""
            };
            let _ = writeln!(pairs, "{prev}\t{id}\t0\t{p}other_article_same_site");
        }
        last_on[s] = Some((id.clone(), is_short));
        if rng.below(3) == 0 {
            let o = (s + 1 + rng.below(templates.len() - 1)) % templates.len();
            let u = templates[o];
            let c = format!("s{o}-{akey}-copy");
            corpus.push(Out {
                id: c.clone(),
                url: format!("https://{}/copy/{akey}", host(&u.url)),
                html: with_article(u, &body, ""),
                article: a.key.clone(),
            });
            let _ = writeln!(pairs, "{id}\t{c}\t1\t{prefix}same_article_other_site");
        }
        if rng.below(4) == 0 {
            let mut later_body = body.clone();
            if later_body.len() > 3 {
                later_body.remove(1 + rng.below(later_body.len() - 2));
            }
            let c = format!("{id}-later");
            corpus.push(Out {
                id: c.clone(),
                url: format!("https://{}/news/{akey}?later", host(&t.url)),
                html: later(&with_article(t, &later_body, "")),
                article: a.key.clone(),
            });
            let _ = writeln!(pairs, "{id}\t{c}\t1\t{prefix}repost_other_day");
        }
        if rng.below(4) == 0 && !is_short && body.len() >= 4 {
            let half = body.len().div_ceil(2);
            let c = format!("{id}-teaser");
            let url = format!("https://{}/news/{akey}", host(&t.url));
            corpus.push(Out {
                id: c.clone(),
                url: format!("{url}?teaser"),
                html: with_article(
                    t,
                    &body[..half],
                    &format!("<p><a href=\"{url}\">Read more</a></p>"),
                ),
                article: a.key.clone(),
            });
            let _ = writeln!(pairs, "{id}\t{c}\t1\tteaser");
        }
    }
    write_set(out, &corpus, &pairs, &mut rng);
    eprintln!(
        "{} pages of {} articles on {} sites",
        corpus.len(),
        articles.len(),
        templates.len()
    );
}

/// The templates (pages of `sites` distinct hosts, chosen at random) and the articles (the
/// other pages).
fn choose<'a>(pages: &'a [Page], sites: usize, rng: &mut Rng) -> (Vec<&'a Page>, Vec<&'a Page>) {
    let mut order: Vec<usize> = (0..pages.len()).collect();
    shuffle(&mut order, rng);
    let mut templates: Vec<&Page> = Vec::new();
    let mut articles: Vec<&Page> = Vec::new();
    for &i in &order {
        let p = &pages[i];
        if templates.len() < sites && templates.iter().all(|t| host(&t.url) != host(&p.url)) {
            templates.push(p);
        } else {
            articles.push(p);
        }
    }
    (templates, articles)
}
