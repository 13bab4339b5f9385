//! Teasers (`teasers`, format 11): a page showing the first part of an article, with the same
//! site furniture around it, joins the article's cluster; a short article of its own in the
//! same template, the article's end (a window) and a quotation from its middle do not,
//! and without the rule the teaser is missed. Teasers on pages (`page_teasers`, format 14):
//! the teaser may hold a few lines of its own. Excerpts (`excerpts`, format 19): an article's
//! first sentences, whatever their share of it.

use crate::common;

use common::{Rng, ORDERS};
use fpdb::{Document, Settings};

/// A page of the site: its furniture (a header line before the body, two after it) around
/// `body`.
fn page(id: &str, furniture: &[String], body: &[String]) -> Document {
    let mut lines = vec![furniture[0].clone()];
    lines.extend(body.iter().cloned());
    lines.extend(furniture[1..].iter().cloned());
    Document::new(id, lines.join("\n"))
}

use common::clusters_in_order as clusters;

/// `n` lines of one sentence each.
fn one_line_sentences(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, 1)).collect()
}

#[test]
fn a_teaser_joins_its_article_and_nothing_else_of_the_page_does() {
    let mut rng = Rng(0x7ea5_e125_0000_0011);
    let rounds = 16;
    let mut missed_without = 0;
    for round in 0..rounds {
        // Furniture lines of one sentence each.
        let furniture: Vec<String> = (0..3).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let n = 10 + rng.index(5);
        let body = common::paragraphs(&mut rng, n);
        let half = body.len() * 2 / 5;
        let article = page("article", &furniture, &body);
        // The first two fifths of the article and a short link line.
        let mut head = body[..half].to_vec();
        head.push("Read more".to_string());
        let teaser = page("teaser", &furniture, &head);
        // A short article of its own in the same template.
        let other = page("other", &furniture, &common::paragraphs(&mut rng, 2));
        // The article's last two fifths, and a quotation from its middle, alone.
        let later = Document::new("later", body[body.len() - half..].join("\n"));
        let quote = Document::new("quote", body[1..half + 1].join("\n"));
        let docs = [&article, &teaser, &other, &later, &quote];
        let c = clusters(Settings::default(), &docs);
        assert_eq!(c["article"], c["teaser"], "round {round}: {c:?}");
        for id in ["other", "later", "quote"] {
            assert_ne!(c["article"], c[id], "round {round}: {id} {c:?}");
        }
        let without = clusters(
            Settings {
                teasers: Some(false),
                ..Default::default()
            },
            &docs,
        );
        missed_without += usize::from(without["article"] != without["teaser"]);
    }
    // The rule is what finds them: two fifths of the article share under the 60%
    // verification asks.
    assert!(
        missed_without >= rounds / 2,
        "without the rule {missed_without} of {rounds} teasers were missed"
    );
}

/// Teasers on pages (`page_teasers`, format 14): a teaser page with a video box before the part
/// of the article it shows and a "continue reading" sentence after it, of an article page with
/// a standfirst, joins the article; a short article of its own in the template, and a
/// quotation from the article's middle with two lines of its own, do not; with the strict rule
/// the teaser is missed.
#[test]
fn a_teaser_with_lines_of_its_own_joins_its_article_under_page_teasers() {
    let mut rng = Rng(0x7ea5_e125_0000_0014);
    let (rounds, mut missed_strict) = (12, 0);
    for round in 0..rounds {
        let furniture: Vec<String> = (0..3).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        // Paragraphs of two sentences: the teaser's half shares just under 60% with the page.
        let n = 16 + rng.index(7);
        let body: Vec<String> = (0..n).map(|_| common::synthetic_doc(&mut rng, 2)).collect();
        let standfirst = vec![common::synthetic_doc(&mut rng, 1)];
        let article = page("article", &furniture, &[standfirst, body.clone()].concat());
        let own = |rng: &mut Rng| vec![common::synthetic_doc(rng, 1)];
        let (video, more) = (own(&mut rng), own(&mut rng));
        let shown = [video, body[..n / 2].to_vec(), more].concat();
        let teaser = page("teaser", &furniture, &shown);
        let other = page("other", &furniture, &common::paragraphs(&mut rng, 2));
        let quote = Document::new(
            "quote",
            [own(&mut rng), body[3..3 + n / 2].to_vec(), own(&mut rng)]
                .concat()
                .join("\n"),
        );
        let docs = [&article, &teaser, &other, &quote];
        let c = clusters(Settings::default(), &docs);
        assert_eq!(c["article"], c["teaser"], "round {round}: {c:?}");
        for id in ["other", "quote"] {
            assert_ne!(c["article"], c[id], "round {round}: {id} {c:?}");
        }
        let strict = clusters(
            Settings {
                page_teasers: Some(false),
                ..Default::default()
            },
            &docs,
        );
        missed_strict += usize::from(strict["article"] != strict["teaser"]);
    }
    // The rule is what finds them: the strict one misses a teaser with lines of its own.
    assert!(
        missed_strict >= rounds * 3 / 4,
        "the strict rule missed {missed_strict} of {rounds} teasers"
    );
}

/// `explain` says when a pair is verified as a teaser, and not for a quotation.
#[test]
fn explain_names_a_teaser() {
    let mut rng = Rng(0x7ea5_e125_0000_0012);
    let body = common::paragraphs(&mut rng, 8);
    let fp = fpdb::fingerprint::Fingerprinter::new(fpdb::Options::default(), None).unwrap();
    let e = fpdb::explain::explain(
        &Document::new("a", body.join("\n")),
        &Document::new("t", body[..4].join("\n")),
        &fp,
    );
    assert!(e.comparison.verified && e.comparison.teaser, "{e:?}");
    let quote = fpdb::explain::explain(
        &Document::new("a", body.join("\n")),
        &Document::new("q", body[2..6].join("\n")),
        &fp,
    );
    assert!(!quote.comparison.teaser, "{quote:?}");
}

/// Excerpts (`excerpts`, format 19): an article's first sentences in a run, two or more, with
/// at most one of their own, join the article whatever their share of it (here a tenth or
/// less), ingested before or after it; a quotation of the opening followed by text of its
/// own, a quotation from the middle, and the opening with sentences skipped do not; without
/// the rule the excerpt is missed.
#[test]
fn an_excerpt_joins_its_article_whatever_its_share_and_a_quoted_opening_does_not() {
    let mut rng = Rng(0x7ea5_e125_0000_0019);
    let (rounds, mut missed_without) = (12, 0);
    for round in 0..rounds {
        // Sentences one per line: an article of 30.
        let body: Vec<String> = (0..30)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        let article = Document::new("article", body.join("\n"));
        let k = 2 + round % 3;
        let mut shown = body[..k].to_vec();
        shown.push("Read more".into());
        let excerpt = Document::new("excerpt", shown.join("\n"));
        let own: Vec<String> = (0..3).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let quoted = Document::new("quoted", [&body[..2], &own[..]].concat().join("\n"));
        let middle = Document::new("middle", body[10..13].join("\n"));
        let skipped = Document::new("skipped", [&body[..2], &body[4..7]].concat().join("\n"));
        let others = [&quoted, &middle, &skipped];
        for excerpt_first in [false, true] {
            let mut docs = vec![&article, &excerpt];
            if excerpt_first {
                docs.reverse();
            }
            docs.extend(others);
            let c = clusters(Settings::default(), &docs);
            assert_eq!(c["article"], c["excerpt"], "round {round}: {c:?}");
            for id in ["quoted", "middle", "skipped"] {
                assert_ne!(c["article"], c[id], "round {round}: {id} {c:?}");
            }
        }
        let off = Settings {
            excerpts: Some(false),
            ..Default::default()
        };
        let c = clusters(off, &[&article, &excerpt]);
        missed_without += usize::from(c["article"] != c["excerpt"]);
    }
    assert!(missed_without >= rounds / 2, "{missed_without} of {rounds}");
}

/// Copies of an article's opening on two sites join the article in every order they come in:
/// an article after both joins their cluster, as each would have joined the article had it
/// come first; a page quoting the opening with text of its own never shares the article's
/// cluster, in any order (an opening after both joins the older, not both).
#[test]
fn copies_of_an_opening_join_their_article_in_any_order_and_a_quoting_page_never_does() {
    let mut rng = Rng(0x7ea5_e125_0000_001c);
    for round in 0..6 {
        let body = one_line_sentences(&mut rng, 24);
        let k = 2 + round % 3;
        let article = Document::new("article", body.join("\n"));
        let opening = |more: &str| [&body[..k], &[more.to_string()][..]].concat().join("\n");
        let one = Document::new("one", opening("Read more"));
        let two = Document::new("two", opening("More"));
        // A page quoting the opening with text of its own: the opening is its excerpt too, and
        // under a third of it (no teaser).
        let own: Vec<String> = (0..12)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        let quoted = Document::new("quoted", [&body[..k], &own[..]].concat().join("\n"));
        for order in ORDERS {
            let three = [&one, &two, &article];
            let docs: Vec<&Document> = order.iter().map(|&i| three[i]).collect();
            let c = clusters(Settings::default(), &docs);
            assert!(
                c["one"] == c["article"] && c["two"] == c["article"],
                "round {round}, order {order:?}: {c:?}"
            );
            // Nor, in any order, a page quoting the opening with text of its own: an opening
            // that comes after both joins one of them, not both.
            let three = [&one, &quoted, &article];
            let docs: Vec<&Document> = order.iter().map(|&i| three[i]).collect();
            let c = clusters(Settings::default(), &docs);
            assert_ne!(
                c["quoted"], c["article"],
                "round {round}, order {order:?}: {c:?}"
            );
        }
    }
}

/// `explain` names an excerpt, and says which condition a quoted opening fails.
#[test]
fn explain_names_an_excerpt_and_why_a_quoted_opening_is_not_one() {
    let mut rng = Rng(0x7ea5_e125_0000_001a);
    let body: Vec<String> = (0..20)
        .map(|_| common::synthetic_doc(&mut rng, 1))
        .collect();
    let own: Vec<String> = (0..3).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lines: &[String]| {
        std::fs::write(dir.path().join(name), lines.join("\n")).unwrap();
    };
    write("article.txt", &body);
    write("excerpt.txt", &body[..3]);
    write("quoted.txt", &[&body[..2], &own[..]].concat());
    let o = common::run(dir.path(), &["explain", "article.txt", "excerpt.txt"]);
    let out = common::stdout(&o);
    assert_eq!(common::code(&o), 0, "{out}");
    assert!(
        out.contains("excerpt: the smaller holds the larger's first sentences"),
        "{out}"
    );
    let o = common::run(
        dir.path(),
        &["explain", "article.txt", "quoted.txt", "--json"],
    );
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(common::code(&o), 1, "{v}");
    assert_eq!(v["excerpt"], false, "{v}");
    assert!(
        v["not_excerpt"]
            .as_str()
            .is_some_and(|w| w.contains("sentences of its own")),
        "{v}"
    );
}

/// In one ingest batch (as `fpdb ingest` and `eval` decide), an excerpt first: the article
/// joins it, a page quoting the same opening with text of its own does not.
#[test]
fn in_one_batch_an_excerpt_does_not_chain_its_article_to_a_quoted_opening() {
    let mut rng = Rng(0x7ea5_e125_0000_001b);
    let body: Vec<String> = (0..30)
        .map(|_| common::synthetic_doc(&mut rng, 1))
        .collect();
    let own: Vec<String> = (0..3).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
    let dir = tempfile::tempdir().unwrap();
    let docs = [
        ("excerpt", body[..2].join("\n")),
        ("article", body.join("\n")),
        ("quoted", [&body[..2], &own[..]].concat().join("\n")),
    ];
    let lines: Vec<serde_json::Value> = docs
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}))
        .collect();
    common::write_jsonl(&dir.path().join("in.jsonl"), &lines);
    let o = common::run(dir.path(), &["ingest", "--db", "db", "in.jsonl", "-q"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let named = common::named(dir.path(), "db");
    assert_eq!(named["article"].as_deref(), Some("excerpt"), "{named:?}");
    assert_eq!(named["quoted"], None, "{named:?}");
    // The article first: the excerpt's result line and a query of it name it an excerpt.
    common::write_jsonl(
        &dir.path().join("in2.jsonl"),
        &[lines[1].clone(), lines[0].clone()],
    );
    let o = common::run(
        dir.path(),
        &[
            "ingest",
            "--db",
            "db2",
            "in2.jsonl",
            "-q",
            "-o",
            "out.jsonl",
        ],
    );
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let results = common::json_lines(&out);
    assert_eq!(results[1]["excerpt_of"], "article", "{out}");
    assert_eq!(results[1]["matches"][0]["excerpt"], true, "{out}");
    assert!(results[0].get("excerpt_of").is_none(), "{out}");
    std::fs::write(dir.path().join("e.txt"), &docs[0].1).unwrap();
    let o = common::run(
        dir.path(),
        &["query", "--db", "db2", "--file", "e.txt", "--json"],
    );
    let v: serde_json::Value = serde_json::from_str(common::stdout(&o).trim()).unwrap();
    assert_eq!(v["excerpt_of"], "article", "{v}");
    // The export names it too, as the result line did (the relation is stored), and drops
    // it once the article is deleted.
    let o = common::run(dir.path(), &["export", "--db", "db2"]);
    let exported = common::json_lines(&common::stdout(&o));
    assert_eq!(exported[1]["id"], "excerpt", "{exported:?}");
    assert_eq!(exported[1]["excerpt_of"], results[1]["excerpt_of"]);
    assert_eq!(exported[1]["matches"][0]["excerpt"], true, "{exported:?}");
    assert!(exported[0].get("excerpt_of").is_none(), "{exported:?}");
    // And the stored document (`GET /v1/documents/{id}`, `explain` of stored ids).
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .open(dir.path().join("db2"))
        .unwrap();
    let stored = |id: &str| {
        db.searcher()
            .stored_document(id)
            .unwrap()
            .unwrap()
            .excerpt_of
    };
    assert_eq!(stored("excerpt").as_deref(), Some("article"));
    assert_eq!(stored("article"), None);
    drop(db);
    let o = common::run(dir.path(), &["delete", "--db", "db2", "article"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = common::run(dir.path(), &["export", "--db", "db2"]);
    let exported = common::json_lines(&common::stdout(&o));
    assert!(exported[0].get("excerpt_of").is_none(), "{exported:?}");
}

/// Tight clusters ask a document linked weakly (a window of the article) to verify against
/// its cluster's first document too. When that first document is the article's excerpt or
/// teaser, stored before the article, the article stands for it: a window of the article
/// then joins whichever came first (without the rule it joins only when the article came
/// first). Two chained windows of a text still stay apart, whoever came first.
#[test]
fn an_excerpt_stored_first_does_not_keep_the_articles_windows_out() {
    let mut rng = Rng(0x7ea5_e125_0000_0020);
    let rounds = 8;
    let mut apart_with_rule_off = 0;
    for round in 0..rounds {
        let body: Vec<String> = (0..12)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        let own: Vec<String> = (0..2).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let article = Document::new("article", body.join("\n"));
        let mut shown = body[..2].to_vec();
        shown.push("Read more".into());
        let excerpt = Document::new("excerpt", shown.join("\n"));
        // The article without its opening, with two sentences of its own at the end: a
        // window of it (its own sentences follow the shared run, the article's precede it).
        let window = Document::new("window", [&body[2..], &own[..]].concat().join("\n"));
        let docs = [&excerpt, &article, &window];
        let c = clusters(Settings::default(), &docs);
        assert_eq!(c["excerpt"], c["article"], "round {round}: {c:?}");
        assert_eq!(c["article"], c["window"], "round {round}: {c:?}");
        // In the article's own order too.
        let c = clusters(Settings::default(), &[&article, &excerpt, &window]);
        assert_eq!(c["article"], c["window"], "round {round}: {c:?}");
        // A teaser (the first five sentences) stored first: joined by its article with
        // `excerpts` off too (the teaser rule), but then the window is kept out.
        let mut shown = body[..5].to_vec();
        shown.push("Read more".into());
        let teaser = Document::new("teaser", shown.join("\n"));
        let docs = [&teaser, &article, &window];
        let c = clusters(Settings::default(), &docs);
        assert!(
            c["teaser"] == c["article"] && c["article"] == c["window"],
            "{c:?}"
        );
        let off = Settings {
            excerpts: Some(false),
            ..Default::default()
        };
        let c = clusters(off, &docs);
        assert_eq!(c["teaser"], c["article"], "round {round}: {c:?}");
        apart_with_rule_off += usize::from(c["article"] != c["window"]);
        // Chained windows: A, then C overlapping A's end, then B overlapping C's end only.
        let text: Vec<String> = (0..15)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        let a = Document::new("a", text[..9].join("\n"));
        let cw = Document::new("c", text[3..12].join("\n"));
        let b = Document::new("b", text[6..15].join("\n"));
        let c = clusters(Settings::default(), &[&a, &cw, &b]);
        assert_ne!(
            c["a"], c["b"],
            "round {round}: chained windows joined {c:?}"
        );
    }
    // Without the rule (stores without `excerpts`) the window is kept out: the rule matters.
    assert!(
        apart_with_rule_off >= rounds / 2,
        "{apart_with_rule_off} of {rounds}"
    );
}

/// A page's headings (`headings`): an article's page shows up to three lines above its first
/// sentence that end without a full stop (a headline, a byline, a dateline); a page of
/// another site showing the article's first sentences is its excerpt all the same, ingested
/// before or after it, and a page quoting from the article's second sentence on is not. Four
/// such lines are a list, not headings, and a text without a URL keeps its lines (either
/// misses the excerpt, as the rule switched off does).
#[test]
fn an_excerpt_joins_its_article_whatever_headings_its_page_shows() {
    let mut rng = Rng(0x7ea5_e125_0000_0020);
    let (rounds, mut missed_without) = (9, 0);
    let page = |id: &str, host: &str, lines: &[String]| Document {
        url: Some(format!("https://{host}/news/{id}")),
        ..Document::new(id, lines.join("\n"))
    };
    // A line of letters that ends without a full stop.
    let heading = |rng: &mut Rng| common::synthetic_doc(rng, 1).replace('。', "");
    for round in 0..rounds {
        let body: Vec<String> = (0..30)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        let headings: Vec<String> = (0..1 + round % 3).map(|_| heading(&mut rng)).collect();
        let article = page("article", "a.example", &[&headings[..], &body[..]].concat());
        let k = 2 + round % 3;
        let shown = [&body[..k], &["Read more".to_string()][..]].concat();
        let excerpt = page("excerpt", "b.example", &shown);
        let quote = page("quote", "c.example", &body[1..4]);
        for (one, two) in [(&article, &excerpt), (&excerpt, &article)] {
            let c = clusters(Settings::default(), &[one, two]);
            assert_eq!(c["article"], c["excerpt"], "round {round}: {c:?}");
        }
        for (one, two) in [(&article, &quote), (&quote, &article)] {
            let c = clusters(Settings::default(), &[one, two]);
            assert_ne!(c["article"], c["quote"], "round {round}: {c:?}");
        }
        let off = Settings {
            headings: Some(false),
            ..Default::default()
        };
        let c = clusters(off, &[&article, &excerpt]);
        missed_without += usize::from(c["article"] != c["excerpt"]);
        // Four lines above the first sentence: a list, not headings.
        let four: Vec<String> = (0..4).map(|_| heading(&mut rng)).collect();
        let listed = page("article", "a.example", &[&four[..], &body[..]].concat());
        let c = clusters(Settings::default(), &[&listed, &excerpt]);
        assert_ne!(c["article"], c["excerpt"], "round {round}: {c:?}");
        // No URL: the lines of a text may be a hard wrap's, and stay.
        let text = Document {
            url: None,
            ..article.clone()
        };
        let c = clusters(Settings::default(), &[&text, &excerpt]);
        assert_ne!(c["article"], c["excerpt"], "round {round}: {c:?}");
    }
    assert_eq!(missed_without, rounds, "the rule off misses every excerpt");
}

/// `explain` of pages (ids in a corpus with their URLs) counts each page's headings and names
/// the excerpt; the same texts without URLs have no headings and are no excerpt.
#[test]
fn explain_counts_a_pages_headings() {
    let mut rng = Rng(0x7ea5_e125_0000_0021);
    let body: Vec<String> = (0..20)
        .map(|_| common::synthetic_doc(&mut rng, 1))
        .collect();
    let headline = common::synthetic_doc(&mut rng, 1).replace('。', "");
    let byline = common::synthetic_doc(&mut rng, 1).replace('。', "");
    let article = [&[headline, byline][..], &body[..]].concat().join("\n");
    let excerpt = body[..3].join("\n");
    let dir = tempfile::tempdir().unwrap();
    let corpus = |name: &str, urls: bool| {
        let url = |id: &str| urls.then(|| format!("https://{id}.example/news/1"));
        common::write_jsonl(
            &dir.path().join(name),
            &[
                serde_json::json!({"id": "article", "text": article, "url": url("a")}),
                serde_json::json!({"id": "excerpt", "text": excerpt, "url": url("b")}),
            ],
        );
    };
    corpus("pages.jsonl", true);
    corpus("texts.jsonl", false);
    let explain = |name: &str| {
        let o = common::run(
            dir.path(),
            &["explain", "--corpus", name, "article", "excerpt", "--json"],
        );
        let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        (common::code(&o), v)
    };
    let (code, v) = explain("pages.jsonl");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["headings"], serde_json::json!([2, 0]), "{v}");
    assert_eq!(v["excerpt"], true, "{v}");
    let (code, v) = explain("texts.jsonl");
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["headings"], serde_json::json!([0, 0]), "{v}");
    assert_eq!(v["excerpt"], false, "{v}");
}

/// Copies of an opening, one of them edited in its first sentence (`excerpt_copies`): the
/// edited copy is no excerpt of the article (it lacks the article's first sentence) but a
/// strong copy of the other, and the article joins their cluster in every order, as it does
/// when it comes first. Without the rule an article that comes after both stays apart.
#[test]
fn an_article_joins_its_openings_cluster_when_the_others_are_copies_of_one() {
    let mut rng = Rng(0x7ea5_e125_0000_001d);
    let mut apart_without = 0;
    for round in 0..6 {
        let body = one_line_sentences(&mut rng, 24);
        let k = 4 + round % 3;
        let article = Document::new("article", body.join("\n"));
        let one = Document::new("one", [&body[..k], &["More".into()]].concat().join("\n"));
        // The first sentence edited: its last character before the full stop replaced.
        let mut first: Vec<char> = body[0].chars().collect();
        let at = first.len() - 2;
        first[at] = if first[at] == '的' { '了' } else { '的' };
        let mut lines = body[..k].to_vec();
        lines[0] = first.into_iter().collect();
        let edited = Document::new("edited", lines.join("\n"));
        for order in ORDERS {
            let three = [&one, &edited, &article];
            let docs: Vec<&Document> = order.iter().map(|&i| three[i]).collect();
            let c = clusters(Settings::default(), &docs);
            assert!(
                c["one"] == c["article"] && c["edited"] == c["article"],
                "round {round}, order {order:?}: {c:?}"
            );
            let without = Settings {
                excerpt_copies: Some(false),
                ..Default::default()
            };
            let c = clusters(without, &docs);
            apart_without += usize::from(c["one"] != c["article"] || c["edited"] != c["article"]);
        }
    }
    assert!(apart_without > 0, "the rule changed nothing here");
}
