//! A labeled dev set of short articles inside page templates, and of excerpts of long ones.
//!
//! `short_set BENCH_DIR DEV_DIR OUT_DIR [HALF] [SEED]` writes `OUT_DIR/corpus.jsonl` (`{"id",
//! "url", "html"}`), `OUT_DIR/pairs.tsv` (`id_a id_b label kind`), `OUT_DIR/articles.tsv` (`id
//! article`, for `fpdb eval --articles`), and, to score the kept text of each page with the
//! extraction benchmark's scorer, `OUT_DIR/html/<id>.html` and `OUT_DIR/ground-truth.json`
//! (`scripts/short_pages.sh` runs it all).
//!
//! Short articles (2–6 sentences, 150–700 characters): the openings of the real articles of
//! the extraction benchmark (`BENCH_DIR`, English), posts of `DEV_DIR/en_20news` of that size
//! (their headers left out), and single articles of the laws of `DEV_DIR/../zh_laws.jsonl`
//! (Chinese; one per law, none sharing a fifth of its 8-character shingles with another).
//! HALF (0 or 1, default 0) keeps the articles whose crc32 parity is HALF: tune on one, check on
//! the other. Long articles (the benchmark's whole bodies of 4 paragraphs or more) are shown
//! whole and in excerpts.
//!
//! The sites: four real pages of the benchmark (their article replaced, `with_article`), and
//! sites of three layouts of our own, each with its own name, navigation and footer: a legacy
//! table layout (the article in a `<td>` between navigation tables, `<br>`-separated, with
//! "email this story / printer friendly / reprints / discuss N" links, related headlines and a
//! "most read" list around it), a modern one (`<article>`, a sidebar of most-read headlines
//! and a newsletter box, a related block with a line of each), and a Chinese portal (导航,
//! 相关新闻, 热点排行, 责任编辑). Every page's most-read and related headlines are titles of
//! other articles of the set, chosen anew for each page, as a site's are.
//!
//! | kind | label | pair |
//! |---|---|---|
//! | `short_copy_other_site` | 1 | the page, and its article on another site of its language (1 in 2) |
//! | `short_repost_same_site` | 1 | the page, and the page on another day, other headlines around it (1 in 4) |
//! | `short_other_article_same_site` | 0 | the page, and the page of the article put before it on the site |
//! | `excerpt` | 1 | a long article's page, and its first 2–4 sentences with "Read more »" on another site |
//! | `lede_quoted` | 0 | a long article's page, and a short article that opens with its first 2 sentences and goes on with 3 or more of its own |

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use fpdb_tools::crc32;
use fpdb_tools::layouts::{date, own_sites, Article, Layout, Shown, Site};
use fpdb_tools::pages::{host, load, short, shuffle, write_set, Page, Rng, SetPage};

/// A page of the set.
struct Out {
    id: String,
    url: String,
    html: String,
    /// The article it shows (for `--articles`) and its text (for the extraction scorer).
    article: String,
    text: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(bench), Some(dev), Some(out)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: short_set BENCH_DIR DEV_DIR OUT_DIR [HALF] [SEED]");
        std::process::exit(2);
    };
    let half: u32 = args.get(4).map_or(0, |s| s.parse().expect("HALF"));
    let seed: u64 = args.get(5).map_or(17, |s| s.parse().expect("SEED"));
    let mut rng = Rng(seed.max(1) + u64::from(half));
    let (pages, _) = load(bench);
    let in_half = |key: &str| crc32(key) % 2 == half;

    let (templates, shorts, longs, quoters) = pools(&pages, dev, &in_half, &mut rng);
    let mut sites = own_sites();
    for t in &templates {
        sites.push(Site {
            host: host(&t.url),
            name: host(&t.url),
            layout: Layout::Real(t),
            zh: false,
        });
    }
    let titles: Vec<(String, bool)> = shorts
        .iter()
        .chain(&longs)
        .map(|a| (a.title.clone(), a.zh))
        .collect();
    let mut g = Gen {
        rng,
        titles,
        corpus: Vec::new(),
        pairs: String::from("id_a\tid_b\tlabel\tkind\n"),
    };
    g.short_pages(&sites, &shorts);
    g.long_pages(&sites, &longs, &quoters);
    write(out, &g.corpus, &g.pairs, &mut g.rng);
    eprintln!(
        "{} pages: {} short articles ({} Chinese), {} long on {} sites",
        g.corpus.len(),
        shorts.len(),
        shorts.iter().filter(|a| a.zh).count(),
        longs.len(),
        sites.len()
    );
}

/// The pools of a half: four real templates of distinct hosts, the short articles, the long
/// ones, and the short ones kept for the openings quoted (`lede_quoted`).
fn pools<'p>(
    pages: &'p [Page],
    dev: &str,
    in_half: &dyn Fn(&str) -> bool,
    rng: &mut Rng,
) -> (Vec<&'p Page>, Vec<Article>, Vec<Article>, Vec<Article>) {
    // Four real templates of distinct hosts; the other pages give articles.
    let mut templates: Vec<&Page> = Vec::new();
    let mut longs: Vec<Article> = Vec::new();
    let mut shorts: Vec<Article> = Vec::new();
    for p in pages {
        if templates.len() < 4 && templates.iter().all(|t| host(&t.url) != host(&p.url)) {
            templates.push(p);
            continue;
        }
        if !in_half(&p.key) {
            continue;
        }
        let title = title_of(&p.body[0]);
        if p.body.len() >= 4 && rng.below(2) == 0 {
            longs.push(Article {
                key: p.key[..12].to_string(),
                title,
                paragraphs: p.body.clone(),
                zh: false,
            });
        } else {
            let body = ended(short(&p.body, 150 + rng.below(550)));
            if is_short(&body) {
                shorts.push(Article {
                    key: p.key[..12].to_string(),
                    title,
                    paragraphs: body,
                    zh: false,
                });
            }
        }
    }
    shorts.extend(news_posts(dev, in_half, 100));
    shorts.extend(law_articles(dev, in_half, 90));
    // Every eighth English short article is kept for the openings quoted (`lede_quoted`): its
    // text is on no page of its own.
    let mut quoters = Vec::new();
    let mut n = 0;
    shorts.retain(|a| {
        n += 1;
        let keep = a.zh || n % 8 != 0;
        if !keep {
            quoters.push(a.clone());
        }
        keep
    });
    (templates, shorts, longs, quoters)
}

/// The set being made.
struct Gen {
    rng: Rng,
    /// Every article's title and language: the headlines around a page.
    titles: Vec<(String, bool)>,
    corpus: Vec<Out>,
    pairs: String,
}

impl Gen {
    /// The pages of the short articles, their copies and reposts.
    fn short_pages(&mut self, sites: &[Site<'_>], shorts: &[Article]) {
        let g = self;
        let mut order: Vec<usize> = (0..shorts.len()).collect();
        shuffle(&mut order, &mut g.rng);
        let mut last_on: Vec<Option<String>> = vec![None; sites.len()];
        for &i in &order {
            let a = &shorts[i];
            let mine: Vec<usize> = (0..sites.len()).filter(|&s| sites[s].zh == a.zh).collect();
            let s = mine[g.rng.below(mine.len())];
            let id = format!("s{s}-{}", a.key);
            g.page(&sites[s], &id, "news", a, &a.paragraphs, 0, "");
            if let Some(prev) = &last_on[s] {
                let _ = writeln!(g.pairs, "{prev}\t{id}\t0\tshort_other_article_same_site");
            }
            last_on[s] = Some(id.clone());
            if g.rng.below(2) == 0 {
                let o = mine[(mine.iter().position(|&x| x == s).unwrap()
                    + 1
                    + g.rng.below(mine.len() - 1))
                    % mine.len()];
                let c = format!("s{o}-{}-copy", a.key);
                g.page(&sites[o], &c, "copy", a, &a.paragraphs, 0, "");
                let _ = writeln!(g.pairs, "{id}\t{c}\t1\tshort_copy_other_site");
            }
            if g.rng.below(4) == 0 {
                let c = format!("{id}-later");
                g.page(&sites[s], &c, "later", a, &a.paragraphs, 400, "");
                let _ = writeln!(g.pairs, "{id}\t{c}\t1\tshort_repost_same_site");
            }
        }
    }

    /// The pages of the long articles, their excerpts, and the short articles quoting them.
    fn long_pages(&mut self, sites: &[Site<'_>], longs: &[Article], quoters: &[Article]) {
        let g = self;
        let en: Vec<usize> = (0..sites.len()).filter(|&s| !sites[s].zh).collect();
        for (n, a) in longs.iter().enumerate() {
            let s = en[g.rng.below(en.len())];
            let o = en[(en.iter().position(|&x| x == s).unwrap() + 1 + g.rng.below(en.len() - 1))
                % en.len()];
            let id = format!("s{s}-{}", a.key);
            g.page(&sites[s], &id, "news", a, &a.paragraphs, 0, "");
            let sentences = sentences(&a.paragraphs.join(" "));
            if n % 3 == 2 {
                // A short article of its own that opens with the long one's first two sentences.
                let Some(own) = quoters.get(n / 3) else {
                    continue;
                };
                let own_sentences = sentences_of(&own.paragraphs);
                if own_sentences.len() < 3 || sentences.len() < 2 {
                    continue;
                }
                let quoted = Article {
                    key: format!("{}-quotes-{}", own.key, a.key),
                    title: own.title.clone(),
                    paragraphs: vec![sentences[..2].join(" "), own_sentences.join(" ")],
                    zh: false,
                };
                let c = format!("s{o}-{}", quoted.key);
                g.page(&sites[o], &c, "opinion", &quoted, &quoted.paragraphs, 0, "");
                let _ = writeln!(g.pairs, "{id}\t{c}\t0\tlede_quoted");
            } else {
                let k = 2 + g.rng.below(3);
                let shown = opening(&a.paragraphs, k);
                if sentences_of(&shown).len() < 2 {
                    continue;
                }
                let c = format!("s{o}-{}-excerpt", a.key);
                let url = format!("https://{}/news/{}", sites[s].host, a.key);
                let more = format!("<p><a href=\"{url}\">Read more »</a></p>");
                g.page(&sites[o], &c, "excerpt", a, &shown, 0, &more);
                let _ = writeln!(g.pairs, "{id}\t{c}\t1\texcerpt");
            }
        }
    }

    /// Add the page `id` of `site` showing `paragraphs` of article `a` (with `extra` HTML after
    /// them), dated `day` days on.
    #[allow(clippy::too_many_arguments)]
    fn page(
        &mut self,
        site: &Site<'_>,
        id: &str,
        path: &str,
        a: &Article,
        paragraphs: &[String],
        day: usize,
        extra: &str,
    ) {
        let url = format!("https://{}/{path}/{}", site.host, a.key);
        let heads = |rng: &mut Rng, n: usize| -> Vec<String> {
            let mine: Vec<&String> = self
                .titles
                .iter()
                .filter(|(t, zh)| *zh == site.zh && *t != a.title)
                .map(|(t, _)| t)
                .collect();
            (0..n)
                .map(|_| mine[rng.below(mine.len())].clone())
                .collect()
        };
        let most = heads(&mut self.rng, 6);
        let related = heads(&mut self.rng, 4);
        let date = date(self.rng.below(300) + day, site.zh);
        let shown = Shown {
            title: &a.title,
            paragraphs,
            extra,
            date: &date,
            most: &most,
            related: &related,
        };
        let html = site.page(&shown, &mut self.rng);
        let text = paragraphs.join("\n");
        self.corpus.push(Out {
            id: id.to_string(),
            url,
            html,
            article: a.key.clone(),
            text,
        });
    }
}

/// A title from an article's first paragraph: its first 4–9 words (16 characters in Chinese).
fn title_of(first: &str) -> String {
    if first
        .chars()
        .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    {
        return first.chars().take(16).collect();
    }
    let words: Vec<&str> = first.split_whitespace().take(9).collect();
    let t = words.join(" ");
    t.trim_end_matches([',', '.', ';', ':']).to_string()
}

/// The sentences of `text`, each with its end mark.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        let end = matches!(c, '。' | '！' | '？')
            || (matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()));
        if end && cur.trim().chars().count() >= 20 {
            out.push(cur.trim().to_string());
            cur.clear();
        }
    }
    if cur.trim().chars().count() >= 20 {
        out.push(cur.trim().to_string());
    }
    out
}

fn sentences_of(paragraphs: &[String]) -> Vec<String> {
    paragraphs.iter().flat_map(|p| sentences(p)).collect()
}

/// The first `k` sentences of `paragraphs`, in their paragraphs.
fn opening(paragraphs: &[String], k: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0;
    for p in paragraphs {
        let s = sentences(p);
        if n + s.len() <= k {
            n += s.len();
            out.push(p.clone());
        } else {
            out.push(s[..k - n].join(" "));
            break;
        }
        if n == k {
            break;
        }
    }
    out
}

/// `paragraphs` up to the last sentence end: a cut that fell inside a sentence leaves it out.
fn ended(mut paragraphs: Vec<String>) -> Vec<String> {
    while let Some(last) = paragraphs.pop() {
        let end = last
            .char_indices()
            .rev()
            .find(|(_, c)| matches!(c, '.' | '!' | '?' | '。' | '！' | '？'));
        if let Some((i, c)) = end {
            let kept = last[..i + c.len_utf8()].trim().to_string();
            if kept.chars().count() >= 20 {
                paragraphs.push(kept);
                break;
            }
        }
    }
    paragraphs
}

/// 2–6 sentences and 150–700 characters.
fn is_short(paragraphs: &[String]) -> bool {
    let n = sentences_of(paragraphs).len();
    let chars: usize = paragraphs.iter().map(|p| p.chars().count()).sum();
    (2..=6).contains(&n) && (150..=700).contains(&chars)
}

/// Up to `max` posts of en_20news of a short article's size, their headers left out.
fn news_posts(dev: &str, in_half: &dyn Fn(&str) -> bool, max: usize) -> Vec<Article> {
    let text = std::fs::read_to_string(format!("{dev}/en_20news/corpus.jsonl")).expect("en_20news");
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let id = v["id"].as_str().unwrap_or_default();
        // The set's edited copies carry a suffix; only originals.
        if id.contains('#') || id.contains("edit") || !in_half(id) {
            continue;
        }
        let t = v["text"].as_str().unwrap_or_default().replace('\t', "\n");
        let Some((_, body)) = t.split_once("\n\n") else {
            continue;
        };
        // The signature after "--" is not the post's.
        let body = body.split("\n--").next().unwrap_or_default();
        let paragraphs: Vec<String> = body
            .split("\n\n")
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| {
                p.chars().count() >= 20
                    && !p.contains('@')
                    && !p.contains("==")
                    && !p.contains("isclaimer")
                    && !p.starts_with(['>', '-'])
            })
            .collect();
        if !is_short(&paragraphs) || !seen.insert(paragraphs[0].clone()) {
            continue;
        }
        out.push(Article {
            key: format!("n{:08x}", crc32(id)),
            title: title_of(&paragraphs[0]),
            paragraphs,
            zh: false,
        });
        if out.len() >= max {
            break;
        }
    }
    out
}

/// Up to `max` single articles (条) of the laws, one per law, of a short article's size, none
/// sharing a fifth of its 8-character shingles with one taken before.
fn law_articles(dev: &str, in_half: &dyn Fn(&str) -> bool, max: usize) -> Vec<Article> {
    let path = format!(
        "{}/zh_laws.jsonl",
        dev.trim_end_matches('/').trim_end_matches("dev")
    );
    let text = std::fs::read_to_string(&path).expect("zh_laws.jsonl");
    let mut out = Vec::new();
    let mut taken: Vec<HashSet<String>> = Vec::new();
    let mut laws = BTreeMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let title = v["title_key"].as_str().unwrap_or_default().to_string();
        if !in_half(&title) || laws.contains_key(&title) {
            continue;
        }
        let body = v["text"].as_str().unwrap_or_default();
        let Some(art) = body.lines().map(str::trim).find(|l| {
            l.starts_with('第')
                && l.contains('条')
                && l.find('条').is_some_and(|i| i < 18)
                && (150..=700).contains(&l.chars().count())
                && (2..=6).contains(&sentences(l).len())
        }) else {
            continue;
        };
        let shingles = shingles(art);
        if taken
            .iter()
            .any(|t| t.intersection(&shingles).count() * 5 > shingles.len())
        {
            continue;
        }
        taken.push(shingles);
        // Two paragraphs, split at the sentence end nearest the middle.
        let s = sentences(art);
        let mid = s.len().div_ceil(2);
        let paragraphs = vec![s[..mid].concat(), s[mid..].concat()];
        let paragraphs: Vec<String> = paragraphs.into_iter().filter(|p| !p.is_empty()).collect();
        laws.insert(title.clone(), ());
        out.push(Article {
            key: format!("z{:08x}", crc32(&title)),
            title: title.chars().take(16).collect(),
            paragraphs,
            zh: true,
        });
        if out.len() >= max {
            break;
        }
    }
    out
}

fn shingles(s: &str) -> HashSet<String> {
    let c: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    c.windows(8).map(|w| w.iter().collect()).collect()
}

/// Write the set to `out` (`write_set`), and each page's HTML and article text for the
/// extraction scorer.
fn write(out: &str, corpus: &[Out], pairs: &str, rng: &mut Rng) {
    let pages: Vec<SetPage> = corpus
        .iter()
        .map(|c| SetPage {
            id: c.id.clone(),
            url: c.url.clone(),
            html: c.html.clone(),
            article: c.article.clone(),
        })
        .collect();
    let order = write_set(out, &pages, pairs, rng);
    std::fs::create_dir_all(format!("{out}/html")).expect("OUT_DIR");
    let mut truth = serde_json::Map::new();
    for &i in &order {
        let c = &corpus[i];
        std::fs::write(format!("{out}/html/{}.html", c.id), &c.html).expect("page");
        truth.insert(
            c.id.clone(),
            serde_json::json!({"articleBody": c.text, "url": c.url}),
        );
    }
    std::fs::write(
        format!("{out}/ground-truth.json"),
        serde_json::to_string(&truth).expect("json"),
    )
    .expect("ground-truth.json");
}
