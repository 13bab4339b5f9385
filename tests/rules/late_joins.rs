//! Late joins (`late_joins`): a page stored alone before its site's furniture was known is
//! looked up again once lines it holds become furniture, and joins the copy it then matches.
//! A short article in a site's template, stored before the site's other pages, shares 4 of
//! its 10 sentences with its own page on another site (not verified); the site's next three
//! pages make the template furniture. Ingested in batches (the page's batch before theirs, a
//! later copy in a third batch looked up while the second is decided) and one document at a
//! time: with the rule the page is in its article's cluster, without it alone.

use crate::common;
use crate::site_knowledge::page;

use common::Rng;
use fpdb::{Document, Fpdb, OnExisting, Settings};

fn store(on: bool) -> Fpdb {
    Fpdb::builder()
        .settings(Settings {
            late_links: Some(on),
            ..Default::default()
        })
        .open_in_memory()
        .unwrap()
}

/// `n` lines of `k` synthetic sentences each.
fn lines(rng: &mut Rng, n: usize, k: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, k)).collect()
}

/// The article's page elsewhere, the short copy in the template, the site's three other
/// pages (each with two paragraphs of its own), and a later copy of the article on a third
/// site, in three batches.
fn pages(rng: &mut Rng) -> [Vec<Document>; 3] {
    let template = lines(rng, 3, 2);
    let article = lines(rng, 4, 1);
    let own = page("a", "https://other.example/a", &article.join("\n"));
    // The template's lines first: the article's page holds the copy's last sentences, not
    // its opening (no excerpt link).
    let copy = [template.as_slice(), article.as_slice()]
        .concat()
        .join("\n");
    let copy = page("x", "https://news.example/x", &copy);
    let site: Vec<Document> = (0..3)
        .map(|i| {
            let text = [lines(rng, 2, 4), template.clone()].concat().join("\n");
            page(
                &format!("s{i}"),
                &format!("https://news.example/s{i}"),
                &text,
            )
        })
        .collect();
    let later = page("y", "https://third.example/y", &article.join("\n"));
    [vec![own, copy], site, vec![later]]
}

fn clusters(
    on: bool,
    batches: &[Vec<Document>],
    in_batches: bool,
) -> std::collections::BTreeMap<String, u64> {
    let mut db = store(on);
    if in_batches {
        let b: Vec<&[Document]> = batches.iter().map(Vec::as_slice).collect();
        common::ingest_ahead(&mut db, &b, OnExisting::Skip, &mut |_| true, &mut |_, _| {});
    } else {
        for d in batches.iter().flatten() {
            db.ingest_document(d, OnExisting::Skip).unwrap();
        }
    }
    common::clusters_by_id(&db)
}

#[test]
fn a_page_stored_before_its_sites_furniture_joins_its_copy_once_it_is_known() {
    let mut rng = Rng(0x1a7e_0000_0000_0019);
    let mut off_alone = 0;
    for round in 0..6 {
        let batches = pages(&mut rng);
        for in_batches in [true, false] {
            let at = format!("round {round}, in batches: {in_batches}");
            // The copy joins once the site's pages are stored, before any later copy comes.
            let c = clusters(true, &batches[..2], in_batches);
            assert_eq!(c["x"], c["a"], "{at}");
            // A later copy, looked up while the site's batch was decided, joins them.
            let c = clusters(true, &batches, in_batches);
            assert_eq!(c["x"], c["a"], "{at}");
            assert_eq!(c["y"], c["a"], "{at}");
            // The site's own pages stay apart: each other's only link is the template.
            common::assert_site_pages_apart(&c, "a", &at);
            assert_ne!(c["s0"], c["s1"], "{at}");
            assert_ne!(c["s1"], c["s2"], "{at}");
            // A later copy on another site finds it either way (`rechecked.rs`): without
            // one, only the late join does.
            let c = clusters(false, &batches[..2], in_batches);
            if c["x"] != c["a"] {
                off_alone += 1;
            }
        }
    }
    // Without the rule the copy stays alone.
    assert_eq!(
        off_alone, 12,
        "alone without the rule in {off_alone} of 12 runs"
    );
}

/// A page that, without its site's furniture, links two clusters (two overlapping windows of
/// the text it holds whole, 5 of its 8 sentences each) joins neither late: a late join never
/// merges clusters. Stored after the site's furniture was known, the page merges the two
/// (what an ingest decides), so it does link both.
#[test]
fn a_late_join_never_merges_two_clusters() {
    let mut rng = Rng(0x1a7e_0000_0000_0002);
    for round in 0..4 {
        let template = lines(&mut rng, 3, 2);
        let text = lines(&mut rng, 8, 1);
        let a = page("a", "https://other.example/a", &text[..5].join("\n"));
        let b = page("b", "https://third.example/b", &text[3..].join("\n"));
        let whole = [template.as_slice(), text.as_slice()].concat().join("\n");
        let x = page("x", "https://news.example/x", &whole);
        let site: Vec<Document> = (0..3)
            .map(|i| {
                let t = [lines(&mut rng, 2, 4), template.clone()]
                    .concat()
                    .join("\n");
                page(&format!("s{i}"), &format!("https://news.example/s{i}"), &t)
            })
            .collect();
        for in_batches in [true, false] {
            let at = format!("round {round}, in batches: {in_batches}");
            let batches = [vec![a.clone(), b.clone(), x.clone()], site.clone()];
            let c = clusters(true, &batches, in_batches);
            assert_ne!(c["a"], c["b"], "{at}");
            assert_ne!(c["x"], c["a"], "{at}");
            assert_ne!(c["x"], c["b"], "{at}");
            let batches = [site.clone(), vec![a.clone(), b.clone(), x.clone()]];
            let c = clusters(true, &batches, in_batches);
            assert_eq!(c["x"], c["a"], "{at}");
            assert_eq!(c["x"], c["b"], "{at}");
        }
    }
}

/// Short articles put in one template whose text is mostly the template's (12 of its 17
/// sentences) verify against each other through it before it is furniture and share a
/// cluster; once three of them have made the template furniture, the cluster is checked again
/// without it and split: each short article alone, and a repost of one of them on its site
/// still with it. In batches and one at a time; without the rule the template keeps them in
/// one cluster.
#[test]
fn short_articles_joined_through_a_template_are_parted_once_it_is_furniture() {
    let mut rng = Rng(0x1a7e_5911_0000_0003);
    for round in 0..4 {
        let template = lines(&mut rng, 3, 4);
        let in_template = |id: &str, own: &str| {
            let text = [own.to_string()]
                .iter()
                .chain(&template)
                .cloned()
                .collect::<Vec<_>>();
            page(id, &format!("https://news.example/{id}"), &text.join("\n"))
        };
        let own: Vec<String> = (0..4).map(|_| common::synthetic_doc(&mut rng, 5)).collect();
        let docs = [
            in_template("p0", &own[0]),
            in_template("p0-repost", &own[0]),
            in_template("p1", &own[1]),
            in_template("p2", &own[2]),
            in_template("p3", &own[3]),
        ];
        for in_batches in [true, false] {
            let at = format!("round {round}, in batches: {in_batches}");
            let batches = [docs[..3].to_vec(), docs[3..].to_vec()];
            let c = clusters(true, &batches, in_batches);
            assert_eq!(c["p0"], c["p0-repost"], "{at}: {c:?}");
            for (i, a) in ["p0", "p1", "p2", "p3"].iter().enumerate() {
                for b in &["p0", "p1", "p2", "p3"][i + 1..] {
                    assert_ne!(c[*a], c[*b], "{at}: {a} {b} {c:?}");
                }
            }
            let c = clusters(false, &batches, in_batches);
            assert_eq!(c["p0"], c["p1"], "{at}: {c:?}");
        }
    }
}

/// A page stored alone because the only pages holding its article's sentences then were a
/// short copy in a site's template and the same copy scraped onto another site (one cluster,
/// neither verifying against the article through the template's lines) joins that cluster
/// once the template is furniture: the cluster's pages are looked up again without it and
/// gather the one page alone they now link to. In batches and one at a time, the article
/// before and after the copies; without the rule the article stays apart.
#[test]
fn a_page_alone_joins_the_cluster_whose_pages_link_it_once_their_furniture_is_known() {
    let mut rng = Rng(0x1a7e_6a7e_0000_0004);
    let mut off_apart = 0;
    for round in 0..6 {
        let [first, site, _] = pages(&mut rng);
        let [own, copy] = [first[0].clone(), first[1].clone()];
        let scraped = page("z", "https://mirror.example/z", &copy.text);
        for own_first in [true, false] {
            let stored = if own_first {
                vec![own.clone(), copy.clone(), scraped.clone()]
            } else {
                vec![copy.clone(), scraped.clone(), own.clone()]
            };
            let batches = [stored, site.clone()];
            for in_batches in [true, false] {
                let at = format!("round {round}, own first: {own_first}, in batches: {in_batches}");
                let c = clusters(true, &batches, in_batches);
                assert_eq!(c["x"], c["z"], "{at}: {c:?}");
                assert_eq!(c["a"], c["x"], "{at}: {c:?}");
                common::assert_site_pages_apart(&c, "a", &at);
                let c = clusters(false, &batches, in_batches);
                assert_eq!(c["x"], c["z"], "{at}: {c:?}");
                off_apart += usize::from(c["a"] != c["x"]);
            }
        }
    }
    assert!(
        off_apart > 0,
        "the article joined without the rule in every run"
    );
}

/// The same once its site shows the template's lines in a second cluster only (its own
/// article's page: never furniture): a short copy of an article in the template, the copy
/// on a third site joining it, then the article (not verifying against the copy in the
/// template through those lines, and so joining no cluster through its excerpt), then the
/// site's page. The copy's cluster, looked up again without the template, gathers the
/// article, though the article's own site's footer was seen on a second page in the same
/// batch (the article a page alone looked up again then, and left alone). Without the rule
/// the article stays apart.
#[test]
fn a_page_alone_is_gathered_once_its_copys_template_is_seen_on_a_second_page() {
    let mut rng = Rng(0x1a7e_6a7e_0000_0005);
    let mut off_apart = 0;
    for round in 0..6 {
        let template = lines(&mut rng, 2, 2);
        let article = lines(&mut rng, 10, 1);
        let opening = article[..3].join("\n");
        let in_template = [opening.clone(), template.join("\n")].join("\n");
        let other_article = lines(&mut rng, 6, 1).join("\n");
        let footer = lines(&mut rng, 1, 2).join("\n");
        let third_article = lines(&mut rng, 6, 1).join("\n");
        let docs = [
            page("t", "https://news.example/t", &in_template),
            page("e", "https://third.example/e", &opening),
            page(
                "x",
                "https://other.example/x",
                &[article.join("\n"), footer.clone()].join("\n"),
            ),
            page(
                "p",
                "https://news.example/p",
                &[other_article, template.join("\n")].join("\n"),
            ),
            page(
                "q",
                "https://other.example/q",
                &[third_article, footer].join("\n"),
            ),
        ];
        for in_batches in [true, false] {
            let at = format!("round {round}, in batches: {in_batches}");
            let batches = [docs.to_vec()];
            let c = clusters(true, &batches, in_batches);
            assert_eq!(c["t"], c["e"], "{at}: {c:?}");
            assert_eq!(c["x"], c["t"], "{at}: {c:?}");
            assert_ne!(c["p"], c["t"], "{at}: {c:?}");
            assert_ne!(c["q"], c["x"], "{at}: {c:?}");
            // Removing the copy that gathered the article leaves a consistent store.
            let mut db = store(true);
            for d in &docs {
                db.ingest_document(d, OnExisting::Skip).unwrap();
            }
            assert!(db.maintenance().remove("t").unwrap());
            db.searcher().verify().unwrap();
            assert!(!common::clusters_by_id(&db).contains_key("t"));
            let c = clusters(false, &batches, in_batches);
            assert_eq!(c["t"], c["e"], "{at}: {c:?}");
            off_apart += usize::from(c["x"] != c["t"]);
        }
    }
    assert!(
        off_apart > 0,
        "the article joined without the rule in every run"
    );
}
