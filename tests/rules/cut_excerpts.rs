//! Cut excerpts (`cut_excerpts`): an excerpt of an article's page that holds its first two
//! sentences and is cut short in the third (no sentence end) joins the article, in either
//! order; a page quoting the same two sentences with a whole one of its own does not. Without
//! the rule the cut excerpt is missed (its fragment counted as its own sentence, which two
//! shared sentences do not allow), and a text without a URL is never marked (hard-wrapped
//! lines end at the line's end).

use crate::common;

use common::Rng;
use fpdb::{Document, Settings};

/// A document of `lines` at `url` (a page), or without one (a text).
fn doc(id: &str, url: Option<&str>, lines: &[String]) -> Document {
    let mut d = Document::new(id, lines.join("\n"));
    d.url = url.map(str::to_string);
    d
}

use common::clusters_in_order as clusters;

fn joined(settings: Settings, a: &Document, b: &Document) -> [bool; 2] {
    [[a, b], [b, a]].map(|docs| {
        let c = clusters(settings.clone(), &docs);
        c[&a.id] == c[&b.id]
    })
}

#[test]
fn a_cut_excerpt_joins_its_article_and_a_quoted_opening_does_not() {
    let mut rng = Rng(0xc07e_8ce2_0000_0019);
    let off = Settings {
        cut_excerpts: Some(false),
        ..Default::default()
    };
    for round in 0..8 {
        let body: Vec<String> = (0..8).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let article = doc("article", Some("https://news.example/story"), &body);
        // The first two sentences and the third cut after ten characters, mid-sentence.
        let third: String = body[2].chars().take(10).collect();
        let shown = [body[0].clone(), body[1].clone(), third];
        let excerpt = doc("excerpt", Some("https://other.example/brief"), &shown);
        // The same two sentences and a whole one of its own: a quotation with a comment.
        let own = common::synthetic_doc(&mut rng, 1);
        let quoted = [body[0].clone(), body[1].clone(), own];
        let quote = doc("quote", Some("https://blog.example/post"), &quoted);
        assert_eq!(
            joined(Settings::default(), &article, &excerpt),
            [true, true],
            "round {round}"
        );
        assert_eq!(
            joined(Settings::default(), &article, &quote),
            [false, false],
            "round {round}"
        );
        // The rule is what joins them.
        assert_eq!(
            joined(off.clone(), &article, &excerpt),
            [false, false],
            "round {round}"
        );
        // A text's last line is not marked: the same texts without URLs stay apart.
        let text = |d: &Document| {
            doc(
                &d.id,
                None,
                &d.text.lines().map(str::to_string).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            joined(Settings::default(), &text(&article), &text(&excerpt)),
            [false, false],
            "round {round}"
        );
    }
}

/// `explain` says the cut sentence was not counted as the excerpt's own.
#[test]
fn explain_says_a_cut_sentence_is_not_the_excerpts_own() {
    let mut rng = Rng(0xc07e_8ce2_0000_0020);
    let body: Vec<String> = (0..8).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
    let third: String = body[2].chars().take(10).collect();
    let shown = [body[0].as_str(), body[1].as_str(), third.as_str()].join("\n");
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("pages.jsonl");
    common::write_jsonl(
        &corpus,
        &[
            serde_json::json!({"id": "article", "url": "https://news.example/story", "text": body.join("\n")}),
            serde_json::json!({"id": "excerpt", "url": "https://other.example/brief",
                "text": shown}),
        ],
    );
    let o = common::run(
        dir.path(),
        &[
            "explain",
            "--corpus",
            corpus.to_str().unwrap(),
            "article",
            "excerpt",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("its last sentence, cut short"), "{out}");
}

/// A site's other three pages (`s0`–`s2` on other.example), each with lines of its own
/// (`own`) and `template`'s: its template's lines in three clusters are its furniture.
pub(crate) fn site_pages(
    rng: &mut Rng,
    template: &[String],
    own: impl Fn(&mut Rng) -> Vec<String>,
) -> Vec<Document> {
    (0..3)
        .map(|i| {
            let text = [own(rng), template.to_vec()].concat().join("\n");
            crate::site_knowledge::page(
                &format!("s{i}"),
                &format!("https://other.example/s{i}"),
                &text,
            )
        })
        .collect()
}

/// The batches of an article, its excerpt in its site's template and the site's other
/// pages: the article first (with the excerpt, then the site), or last (the excerpt, the
/// site, then the article); with whether the article is first.
pub(crate) fn article_orders(
    article: &Document,
    excerpt: &Document,
    site: &[Document],
) -> [(bool, Vec<Vec<Document>>); 2] {
    [
        (
            true,
            vec![vec![article.clone(), excerpt.clone()], site.to_vec()],
        ),
        (
            false,
            vec![vec![excerpt.clone()], site.to_vec(), vec![article.clone()]],
        ),
    ]
}

/// An excerpt cut short where its site's template begins (the cut sentence followed by the
/// template's lines, so not its page's last and not marked at its ingest), stored before its
/// site's template was known, joins its article once the site's other pages make the
/// template furniture: a stored page's last sentence before lines left out of it is taken as
/// cut there. The article before the excerpt and after it, in batches and one at a time.
/// Without the rule (the record's sentence counted as the excerpt's own) it stays apart.
#[test]
fn an_excerpt_cut_where_its_template_begins_joins_its_article_once_the_template_is_known() {
    use crate::site_knowledge::page;
    let mut rng = Rng(0xc07e_8ce2_0000_0021);
    let lines = |rng: &mut Rng, n: usize, k: usize| -> Vec<String> {
        (0..n).map(|_| common::synthetic_doc(rng, k)).collect()
    };
    for round in 0..6 {
        let body = lines(&mut rng, 8, 1);
        let template = lines(&mut rng, 3, 2);
        let third: String = body[2].chars().take(10).collect();
        let shown = [
            vec![body[0].clone(), body[1].clone(), third],
            template.clone(),
        ]
        .concat();
        let excerpt = page("excerpt", "https://other.example/brief", &shown.join("\n"));
        let site = site_pages(&mut rng, &template, |rng| lines(rng, 2, 4));
        let article = page("article", "https://news.example/story", &body.join("\n"));
        for (article_first, batches) in article_orders(&article, &excerpt, &site) {
            for in_batches in [true, false] {
                let c = common::clusters_after(Settings::default(), &batches, in_batches);
                let at = format!(
                    "round {round}, article first: {article_first}, in batches: {in_batches}"
                );
                assert_eq!(c["excerpt"], c["article"], "{at}");
                common::assert_site_pages_apart(&c, "article", &at);
            }
        }
    }
}
