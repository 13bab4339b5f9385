//! A site's furniture (`furniture`, format 13): a line seen on pages of one host in three
//! clusters is left out of that host's pages. Two short articles in one template are then told
//! apart, one short article is found on two sites, a page fingerprinted before its site's
//! furniture was known is still found by its repost, a batch decides as one-at-a-time ingest
//! does but for the furniture its pages show together (`batch_furniture`), and without the
//! rule (or without a URL) pages are read whole. A page's template lines
//! seen before do not hide a copy on another site, in ingest, `explain` and removals, nor on
//! its own site (`same_site_templates`), and a stored page's template does not either
//! (`site_templates`).
//!
//! Over 600 lines: one scenario per rule of a site's furniture and template, each on pages
//! built for it.

use crate::common;

use std::collections::BTreeMap;

use common::sites::{furniture, page, round};
use common::Rng;
use fpdb::{Document, Fpdb, OnExisting, Settings};

/// Ingest `docs` into a fresh in-memory store, one at a time or in batches of `batch.0`
/// (each looked up while the one before was decided when `batch.1`); their clusters by id.
fn clusters(
    settings: Settings,
    docs: &[Document],
    batch: Option<(usize, bool)>,
) -> BTreeMap<String, u64> {
    let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
    match batch {
        None => {
            for d in docs {
                db.ingest_document(d, OnExisting::Skip).unwrap();
            }
        }
        Some((n, ahead)) => {
            let batches: Vec<&[Document]> = docs.chunks(n).collect();
            common::ingest_ahead(
                &mut db,
                &batches,
                OnExisting::Skip,
                &mut |_| ahead,
                &mut |_, _| {},
            );
            let looked_ahead = if ahead && common::looks_ahead() {
                batches.len() - 1
            } else {
                0
            };
            assert_eq!(db.meters().batches_looked_up_ahead, looked_ahead as u64);
        }
    }
    common::clusters_by_id(&db)
}

/// `docs` ingested into `db` as one batch, not looked up ahead; their clusters by id.
fn one_batch(db: &mut Fpdb, docs: &[Document]) -> BTreeMap<String, u64> {
    common::ingest_ahead(
        db,
        &[docs],
        OnExisting::Skip,
        &mut |_| false,
        &mut |_, _| {},
    );
    common::clusters_by_id(db)
}

/// The defaults but a site's furniture learned from a batch's pages together
/// (`batch_furniture`): a batch then decides as one-at-a-time ingest does.
fn one_at_a_time() -> Settings {
    Settings {
        batch_furniture: Some(false),
        ..Default::default()
    }
}

fn without_rule() -> Settings {
    Settings {
        furniture: Some(false),
        ..only_furniture()
    }
}

/// The defaults without the rules that find a copy on a page beside other lines whatever the
/// furniture (teasers on pages, sites' templates): what the furniture alone decides.
fn only_furniture() -> Settings {
    Settings {
        page_teasers: Some(false),
        site_templates: Some(false),
        ..Default::default()
    }
}

#[test]
fn short_articles_are_told_apart_and_found_across_sites_once_the_furniture_is_known() {
    let mut rng = Rng(0xf0e4_1708_0000_0013);
    let rounds = 12;
    let (mut merged_without, mut found_without) = (0, 0);
    for r in 0..rounds {
        let docs = round(&mut rng, 3);
        let c = clusters(Settings::default(), &docs, None);
        assert_ne!(c["a-short1"], c["a-short2"], "round {r}: {c:?}");
        assert_eq!(c["a-short1"], c["b-short1"], "round {r}: {c:?}");
        assert_eq!(c["early"], c["early-repost"], "round {r}: {c:?}");
        for i in 0..3 {
            assert_ne!(c["early"], c[&format!("a-long{i}")], "round {r}: {c:?}");
        }
        let w = clusters(without_rule(), &docs, None);
        merged_without += usize::from(w["a-short1"] == w["a-short2"]);
        found_without += usize::from(w["a-short1"] == w["b-short1"]);
    }
    // The rule is what tells them apart and finds them: ten furniture sentences are about
    // two thirds of a short page's.
    assert!(
        merged_without >= rounds / 2,
        "without the rule {merged_without} of {rounds} pairs of short articles merged"
    );
    assert!(
        found_without <= rounds / 2,
        "without the rule {found_without} of {rounds} copies across sites were found"
    );
}

/// Seen in two clusters, a line is not yet furniture: after two long articles, the short
/// articles of one template are still compared with their furniture (the documented cost of
/// a new site's first pages), until the page that makes it furniture is looked up again.
#[test]
fn a_line_of_two_clusters_is_not_yet_furniture() {
    let mut rng = Rng(0xf0e4_1708_0000_0014);
    let mut merged = 0;
    let rounds = 8;
    for _ in 0..rounds {
        let docs = round(&mut rng, 2);
        merged += usize::from({
            let c = clusters(Settings::default(), &docs, None);
            c["a-short1"] == c["a-short2"]
        });
        let not_late = Settings {
            late_links: Some(false),
            ..only_furniture()
        };
        let c = clusters(not_late, &docs, None);
        let w = clusters(without_rule(), &docs, None);
        // The early short article and the two long ones are three clusters of site A: its
        // furniture is known from the short articles on. Site B's two long articles are not
        // enough: the copy there is compared with B's furniture.
        assert_eq!(
            c["a-short1"] == c["b-short1"],
            w["a-short1"] == w["b-short1"],
            "{c:?}"
        );
        // The copy is B's third cluster: it makes B's furniture known and, alone, is looked
        // up again without it (`late_links`), finding A's.
        let c = clusters(only_furniture(), &docs, None);
        assert_eq!(c["a-short1"], c["b-short1"], "{c:?}");
    }
    assert_eq!(merged, 0);
}

/// A new site whose first articles are short: its furniture puts them in one cluster, where a
/// line counted by cluster would stay "seen in one cluster" however many articles join it. A
/// page that brings text new to its site counts by itself for its cluster's lines, so the
/// furniture is known after three articles and the later ones are apart; a repost (nothing
/// new) still counts with its cluster and joins its article.
#[test]
fn a_site_whose_first_articles_merge_on_its_furniture_still_learns_it() {
    let mut rng = Rng(0xf0e4_1708_0000_0019);
    let rounds = 8;
    let mut first_merged = 0;
    for r in 0..rounds {
        let f = furniture(&mut rng);
        let bodies: Vec<Vec<String>> = (0..6).map(|_| short_article(&mut rng)).collect();
        let mut docs: Vec<Document> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| page(&format!("s{i}"), "a.example", &f, b))
            .collect();
        docs.push(page("s5-repost", "a.example", &f, &bodies[5]));
        docs.push(page("s4-repost", "a.example", &f, &bodies[4]));
        let not_late = Settings {
            late_links: Some(false),
            ..Default::default()
        };
        let c = clusters(not_late, &docs, None);
        first_merged += usize::from(c["s0"] == c["s1"]);
        // Once three of them made the furniture known, the cluster it made of the first two
        // is checked again without it and split (`late_links`).
        let late = clusters(Settings::default(), &docs, None);
        for i in 1..6 {
            for j in 0..i {
                assert_ne!(
                    late[&format!("s{i}")],
                    late[&format!("s{j}")],
                    "round {r}: {late:?}"
                );
            }
        }
        assert_eq!(late["s5"], late["s5-repost"], "round {r}: {late:?}");
        for i in 3..6 {
            for j in 0..i {
                assert_ne!(c[&format!("s{i}")], c[&format!("s{j}")], "round {r}: {c:?}");
            }
        }
        assert_eq!(c["s5"], c["s5-repost"], "round {r}: {c:?}");
        assert_eq!(c["s4"], c["s4-repost"], "round {r}: {c:?}");
    }
    // The case is the one the rule is for: without late joins the site's first two articles
    // merge on its furniture (the cost of a new site's first pages that they take away).
    assert!(
        first_merged >= rounds / 2,
        "the first two articles merged in {first_merged} of {rounds} rounds"
    );
}

/// The pages of one batch learn their sites' furniture together (`batch_furniture`): a new
/// site's first short articles, in one batch, are apart from the first, whatever their order
/// in it; one of them is found on another site whose pages are in the batch too; reposts join
/// their articles; and the store keeps the furniture for the pages after the batch. Without
/// the rule (or one page at a time) the site's first two articles merge on their furniture
/// in most rounds.
#[test]
fn a_batchs_pages_learn_their_sites_furniture_together() {
    let mut rng = Rng(0xf0e4_1708_0000_0020);
    let rounds = 8;
    let mut first_merged_without = 0;
    for r in 0..rounds {
        let (fa, fb) = (furniture(&mut rng), furniture(&mut rng));
        let mut body = || short_article(&mut rng);
        let bodies: Vec<Vec<String>> = (0..4).map(|_| body()).collect();
        let mut docs: Vec<Document> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| page(&format!("s{i}"), "a.example", &fa, b))
            .collect();
        docs.push(page("s1-repost", "a.example", &fa, &bodies[1]));
        docs.push(page("b-copy", "b.example", &fb, &bodies[0]));
        for i in 0..3 {
            docs.push(page(&format!("b{i}"), "b.example", &fb, &body()));
        }
        let later = page("s-later", "a.example", &fa, &body());
        let mut partitions = Vec::new();
        for turn in 0..3 {
            let mut order = docs.clone();
            match turn {
                0 => {}
                1 => order.reverse(),
                _ => order.rotate_left(4),
            }
            let mut db = Fpdb::builder().open_in_memory().unwrap();
            let c = one_batch(&mut db, &order);
            for i in 1..4 {
                for j in 0..i {
                    assert_ne!(c[&format!("s{i}")], c[&format!("s{j}")], "round {r}: {c:?}");
                }
            }
            assert_eq!(c["s1"], c["s1-repost"], "round {r}: {c:?}");
            assert_eq!(c["s0"], c["b-copy"], "round {r}: {c:?}");
            // The ten lines of site A's furniture are stored as such.
            assert_eq!(
                db.searcher().without_furniture(&later).unwrap().1,
                10,
                "round {r}"
            );
            partitions.push(partition(&c));
        }
        assert!(partitions.iter().all(|p| *p == partitions[0]), "round {r}");
        // One page at a time and without late joins (which part them once the furniture is
        // known).
        let alone = Settings {
            late_links: Some(false),
            ..one_at_a_time()
        };
        let w = clusters(alone, &docs, Some((docs.len(), false)));
        first_merged_without += usize::from(w["s0"] == w["s1"]);
    }
    assert!(
        first_merged_without >= rounds / 2,
        "without the rule the first two articles merged in {first_merged_without} of {rounds} rounds"
    );
}

/// With `batch_furniture`, a batch looked up while the one before it was decided (against
/// the store without that one) decides as one looked up after: the lines the batch before
/// counted in a cluster are still the batch's furniture. Batches of three: two pages of site
/// B and the first article of site A, then three short articles of site A, whose lines the
/// first batch counted in one cluster and the second marks as furniture.
#[test]
fn a_batchs_furniture_is_the_same_looked_up_ahead_or_not() {
    let mut rng = Rng(0xf0e4_1708_0000_0021);
    let mut apart = 0;
    let rounds = 6;
    for r in 0..rounds {
        let (fa, fb) = (furniture(&mut rng), furniture(&mut rng));
        let mut body = || short_article(&mut rng);
        let docs = vec![
            page("b0", "b.example", &fb, &body()),
            page("b1", "b.example", &fb, &body()),
            page("a0", "a.example", &fa, &body()),
            page("a1", "a.example", &fa, &body()),
            page("a2", "a.example", &fa, &body()),
            page("a3", "a.example", &fa, &body()),
        ];
        let after = clusters(Settings::default(), &docs, Some((3, false)));
        assert_eq!(
            clusters(Settings::default(), &docs, Some((3, true))),
            after,
            "round {r}"
        );
        apart += usize::from((1..4).all(|i| after[&format!("a{i}")] != after["a0"]));
    }
    // The second batch's articles are apart from the first's, which holds the furniture.
    assert_eq!(apart, rounds);
}

/// `fpdb eval` ingests in batches as `ingest` does (`--batch-size`, 1,024 by default): a
/// new site's first short articles are told apart in one batch; in batches of one document
/// it judges as with the rule off, and the first two merge in some rounds.
#[test]
fn eval_judges_in_batches_as_ingest_does() {
    let mut rng = Rng(0xf0e4_1708_0000_0022);
    let dir = tempfile::tempdir().unwrap();
    let mut missed_one_at_a_time = 0;
    for r in 0..4 {
        let fa = furniture(&mut rng);
        let docs: Vec<Document> = (0..4)
            .map(|i| page(&format!("s{i}"), "a.example", &fa, &short_article(&mut rng)))
            .collect();
        let corpus: Vec<String> = docs.iter().map(|d| page_json(d).to_string()).collect();
        std::fs::write(dir.path().join("c.jsonl"), corpus.join("\n") + "\n").unwrap();
        std::fs::write(
            dir.path().join("p.tsv"),
            "id_a\tid_b\tlabel\tkind\ns0\ts1\t0\tother\ns1\ts2\t0\tother\ns2\ts3\t0\tother\n",
        )
        .unwrap();
        let fp = |extra: &[&str]| -> u64 {
            let base = [
                "eval", "--corpus", "c.jsonl", "--pairs", "p.tsv", "--algo", "default", "--json",
            ];
            let o = common::run(dir.path(), &[&base[..], extra].concat());
            assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
            let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
            v[0]["fp"].as_u64().unwrap()
        };
        assert_eq!(fp(&[]), 0, "round {r}");
        // Without late joins, which part the first pages once the furniture is known.
        let one = fp(&["--batch-size", "1", "--late-links", "false"]);
        let apart = ["--batch-furniture", "false", "--late-links", "false"];
        assert_eq!(one, fp(&apart), "round {r}");
        assert_eq!(fp(&["--batch-size", "1"]), 0, "round {r}");
        missed_one_at_a_time += one;
    }
    assert!(missed_one_at_a_time > 0);
}

/// A handle with `set_batch_furniture(false)` (`fpdb serve`'s) decides a batch of pages as
/// one at a time does, in a store with `batch_furniture`.
#[test]
fn a_handle_can_decide_its_batches_one_at_a_time() {
    let mut rng = Rng(0xf0e4_1708_0000_0023);
    let mut differ = 0;
    for r in 0..6 {
        let fa = furniture(&mut rng);
        let docs: Vec<Document> = (0..4)
            .map(|i| page(&format!("s{i}"), "a.example", &fa, &short_article(&mut rng)))
            .collect();
        // Without late joins, which part the first pages once the furniture is known
        // whichever way the batch was decided.
        let not_late = || Settings {
            late_links: Some(false),
            ..Default::default()
        };
        let one = clusters(not_late(), &docs, None);
        let mut db = Fpdb::builder()
            .settings(not_late())
            .open_in_memory()
            .unwrap();
        db.set_batch_furniture(false);
        assert_eq!(one_batch(&mut db, &docs), one, "round {r}");
        differ += usize::from(clusters(not_late(), &docs, Some((4, false))) != one);
    }
    // The case is one the batch's furniture decides otherwise.
    assert!(differ > 0);
}

/// A short article of two paragraphs, over `NEW_TEXT_CHARS` (100) letters: an article of
/// its own, not an edit.
fn short_article(rng: &mut Rng) -> Vec<String> {
    loop {
        let b = common::paragraphs(rng, 2);
        if b.iter().map(|p| p.chars().count()).sum::<usize>() >= 120 {
            return b;
        }
    }
}

/// Clusters as sets of ids (whatever their ids, which follow the order of ingest).
fn partition(c: &BTreeMap<String, u64>) -> Vec<Vec<String>> {
    let mut by: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (id, s) in c {
        by.entry(*s).or_default().push(id.clone());
    }
    let mut p: Vec<Vec<String>> = by.into_values().collect();
    p.sort();
    p
}

/// An article crawled again and again under one URL, a paragraph added each time (a live
/// article): each crawl brings new text, but the page counts by its URL, once, so its own
/// lines never become furniture and every crawl joins the first. Counted by page, the third
/// crawl would have made them furniture.
#[test]
fn an_article_updated_under_one_url_keeps_its_lines() {
    let mut rng = Rng(0xf0e4_1708_0000_001a);
    for round in 0..4 {
        let f = furniture(&mut rng);
        let mut body = common::paragraphs(&mut rng, 4);
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        for v in 0..6 {
            let mut d = page(&format!("live-v{v}"), "a.example", &f, &body);
            d.url = Some("https://a.example/live".into());
            let fps = db
                .searcher()
                .furnish(&d, db.fingerprint_document(&d))
                .unwrap();
            assert!(fps.left_out.is_empty(), "round {round}, crawl {v}");
            db.ingest_document(&d, OnExisting::Skip).unwrap();
            // The next crawl adds a paragraph of over 100 letters.
            body.push(loop {
                let p = common::synthetic_doc(&mut rng, 5);
                if p.chars().count() >= 120 {
                    break p;
                }
            });
        }
        let c: Vec<u64> = common::export_outcomes(&db)
            .into_iter()
            .map(|o| o.similar_id.unwrap())
            .collect();
        assert!(c.iter().all(|&s| s == c[0]), "round {round}: {c:?}");
    }
}

/// A page of `host` whose extractor kept `body` only: the furniture is around its main text.
fn page_around(id: &str, host: &str, f: &[String], body: &[String]) -> Document {
    let mut d = page(id, host, f, body);
    d.text = body.join("\n");
    d.around = f.join("\n");
    d
}

/// The lines around a page's main text count toward its site's furniture: long articles
/// whose main text left the furniture out make it known, so the short articles whose main
/// text takes it in (an author's box beside a short article) are apart. Counted in the main
/// text only, the furniture would be unknown and the short articles merged.
#[test]
fn lines_around_the_main_text_count_toward_the_furniture() {
    let mut rng = Rng(0xf0e4_1708_0000_001b);
    let rounds = 8;
    let mut merged_without = 0;
    for r in 0..rounds {
        let f = furniture(&mut rng);
        let mut docs: Vec<Document> = (0..3)
            .map(|i| {
                let body = common::paragraphs(&mut rng, 10);
                page_around(&format!("long{i}"), "a.example", &f, &body)
            })
            .collect();
        docs.push(page(
            "short1",
            "a.example",
            &f,
            &common::paragraphs(&mut rng, 2),
        ));
        docs.push(page(
            "short2",
            "a.example",
            &f,
            &common::paragraphs(&mut rng, 2),
        ));
        let c = clusters(Settings::default(), &docs, None);
        assert_ne!(c["short1"], c["short2"], "round {r}: {c:?}");
        for d in &mut docs {
            d.around.clear();
        }
        let w = clusters(Settings::default(), &docs, None);
        merged_without += usize::from(w["short1"] == w["short2"]);
    }
    assert!(
        merged_without >= rounds / 2,
        "without the lines around, {merged_without} of {rounds} pairs merged"
    );
}

/// The lines around a page's main text bring no text of its own: reposts of one article
/// with new headlines around it each time count with their cluster, so the article's lines
/// never become furniture and every repost joins it.
#[test]
fn lines_around_the_main_text_are_not_an_articles_own_text() {
    let mut rng = Rng(0xf0e4_1708_0000_001c);
    for round in 0..4 {
        let f = furniture(&mut rng);
        let body = common::paragraphs(&mut rng, 4);
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        for v in 0..6 {
            // Other "most read" headlines on every crawl: over 100 letters new to the site.
            let mut around = f.clone();
            around.extend(common::paragraphs(&mut rng, 3));
            // And a line of its own, too short to count as an article's text (under 100
            // letters) but enough to be fingerprinted alone (over 50), as what is left of a
            // page whose article lines were made furniture would be.
            let mut text = body.clone();
            text.push(loop {
                let p = common::synthetic_doc(&mut rng, 2);
                if (60..90).contains(&p.chars().count()) {
                    break p;
                }
            });
            let mut d = page_around(&format!("repost{v}"), "a.example", &around, &text);
            d.url = Some(format!("https://a.example/{round}/{v}"));
            let fps = db
                .searcher()
                .furnish(&d, db.fingerprint_document(&d))
                .unwrap();
            assert!(fps.left_out.is_empty(), "round {round}, repost {v}");
            db.ingest_document(&d, OnExisting::Skip).unwrap();
        }
        let c: Vec<u64> = common::export_outcomes(&db)
            .into_iter()
            .map(|o| o.similar_id.unwrap())
            .collect();
        assert!(c.iter().all(|&s| s == c[0]), "round {round}: {c:?}");
    }
}

#[test]
fn a_batch_decides_as_one_at_a_time_ingest_does() {
    let mut rng = Rng(0xf0e4_1708_0000_0015);
    for _ in 0..4 {
        let mut docs = round(&mut rng, 3);
        // Pages of a host without a URL, and the same again: read whole, never counted.
        let mut bare = docs[docs.len() - 2].clone();
        bare.id = "bare".into();
        bare.url = None;
        docs.push(bare);
        let one = clusters(one_at_a_time(), &docs, None);
        for n in [1, 2, 5, 64] {
            for ahead in [false, true] {
                assert_eq!(
                    clusters(one_at_a_time(), &docs, Some((n, ahead))),
                    one,
                    "batches of {n}, looked up ahead: {ahead}"
                );
            }
        }
    }
}

/// A page whose lines are all furniture is read whole, and the standing of a line is per
/// host: the same lines on another host count anew.
#[test]
fn a_page_of_furniture_alone_is_read_whole_and_hosts_count_apart() {
    let mut rng = Rng(0xf0e4_1708_0000_0016);
    let f: Vec<String> = (0..4).map(|_| common::synthetic_doc(&mut rng, 2)).collect();
    let mut docs = Vec::new();
    for i in 0..3 {
        docs.push(page(
            &format!("long{i}"),
            "a.example",
            &f,
            &common::paragraphs(&mut rng, 10),
        ));
    }
    docs.push(page("bare1", "a.example", &f, &[]));
    docs.push(page("bare2", "a.example", &f, &[]));
    let short = common::paragraphs(&mut rng, 2);
    docs.push(page("c-short1", "c.example", &f, &short));
    docs.push(page(
        "c-short2",
        "c.example",
        &f,
        &common::paragraphs(&mut rng, 2),
    ));
    let c = clusters(Settings::default(), &docs, None);
    // Nothing of their own: fingerprinted whole, they are copies of each other.
    assert_eq!(c["bare1"], c["bare2"], "{c:?}");
    // Site C has not shown three clusters yet: its short pages are compared whole.
    let w = clusters(without_rule(), &docs, None);
    assert_eq!(
        c["c-short1"] == c["c-short2"],
        w["c-short1"] == w["c-short2"]
    );
}

/// `fpdb query` (one page, and `--batch`) compares a page as `ingest` would: without its
/// site's furniture. A short article is no duplicate of the site's first page, which holds
/// the furniture; its copy on another site is found, and so is a repost of the first page.
#[test]
fn query_leaves_out_the_furniture_as_ingest_does() {
    let mut rng = Rng(0xf0e4_1708_0000_0017);
    let docs = round(&mut rng, 3);
    let asked = ["a-short2", "b-short1", "early-repost"];
    let (stored, queries): (Vec<&Document>, Vec<&Document>) =
        docs.iter().partition(|d| !asked.contains(&d.id.as_str()));
    let dir = tempfile::tempdir().unwrap();
    let stored: Vec<_> = stored.into_iter().map(page_json).collect();
    common::write_jsonl(&dir.path().join("in.jsonl"), &stored);
    let o = common::run(dir.path(), &["ingest", "--quiet", "in.jsonl"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let queries: Vec<_> = queries.into_iter().map(page_json).collect();
    common::write_jsonl(&dir.path().join("q.jsonl"), &queries);
    let o = common::run(dir.path(), &["query", "--quiet", "--batch", "q.jsonl"]);
    let answers: BTreeMap<String, serde_json::Value> = common::json_lines(&common::stdout(&o))
        .into_iter()
        .map(|v| (v["id"].as_str().unwrap().to_string(), v))
        .collect();
    assert_eq!(answers["a-short2"]["duplicate"], false, "{answers:?}");
    assert_eq!(
        answers["b-short1"]["duplicate_of"], "a-short1",
        "{answers:?}"
    );
    assert_eq!(
        answers["early-repost"]["duplicate_of"], "early",
        "{answers:?}"
    );
    for (i, q) in queries.iter().enumerate() {
        let one = dir.path().join(format!("one{i}.jsonl"));
        common::write_jsonl(&one, std::slice::from_ref(q));
        let o = common::run(
            dir.path(),
            &["query", "--json", "--file", one.to_str().unwrap()],
        );
        let v: serde_json::Value = serde_json::from_str(common::stdout(&o).trim()).unwrap();
        let id = q["id"].as_str().unwrap();
        assert_eq!(v["duplicate_of"], answers[id]["duplicate_of"], "{id}: {v}");
    }
}

/// A cluster whose pages were all removed no longer counts: two articles of a site, the
/// first removed, and a third make two clusters that hold the site's lines, not three.
#[test]
fn a_removed_page_no_longer_counts_for_its_sites_lines() {
    let mut rng = Rng(0xf0e4_1708_0000_0019);
    let f: Vec<String> = (0..4).map(|_| common::synthetic_doc(&mut rng, 2)).collect();
    let pages: Vec<Document> = (0..4)
        .map(|i| {
            page(
                &format!("p{i}"),
                "a.example",
                &f,
                &common::paragraphs(&mut rng, 10),
            )
        })
        .collect();
    for remove in [false, true] {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        for (i, p) in pages[..3].iter().enumerate() {
            db.ingest_document(p, OnExisting::Skip).unwrap();
            if i == 0 && remove {
                assert!(db.maintenance().remove("p0").unwrap());
            }
        }
        let fps = db.fingerprint_document(&pages[3]);
        let left_out = db.searcher().furnish(&pages[3], fps).unwrap().left_out;
        assert_eq!(left_out.is_empty(), remove, "removed: {remove}");
    }
}

/// Batches of 1, 2 and 3 of `docs`, looked up ahead or not, decide as one-at-a-time ingest
/// did (`c`: its clusters, with the defaults), without the furniture a batch's pages show
/// together.
fn batches_agree(docs: &[Document], c: &BTreeMap<String, u64>) {
    for n in [1, 2, 3] {
        for ahead in [false, true] {
            assert_eq!(clusters(one_at_a_time(), docs, Some((n, ahead))), *c);
        }
    }
}

/// A short article (two paragraphs of two sentences) bare on site A, and two pages of site
/// B under three lines of its template ([`under`]): another article, then the article.
fn template_pages(rng: &mut Rng) -> (Document, Document, Document) {
    template_pages_at(rng, "a.example")
}

/// [`template_pages`] with the bare copy on `host`.
fn template_pages_at(rng: &mut Rng, host: &str) -> (Document, Document, Document) {
    let template = furniture(rng)[..3].to_vec();
    let article: Vec<String> = (0..2).map(|_| common::synthetic_doc(rng, 2)).collect();
    let mut bare = Document::new("a-copy", article.join("\n"));
    bare.url = Some(format!("https://{host}/copy"));
    let other = common::paragraphs(rng, 3);
    let first = under("b-first", "b.example", &template, &other);
    let copy = under("b-copy", "b.example", &template, &article);
    (bare, first, copy)
}

/// A page as a JSONL input line: its id, URL and text.
fn page_json(d: &Document) -> serde_json::Value {
    serde_json::json!({"id": d.id, "url": d.url, "text": d.text})
}

/// `template_pages_at` of `seed` (the bare copy on `host`), and a scratch directory holding
/// `site.jsonl` and `pair.jsonl` written by `files` from them (`(bare, first, copy)`), for the
/// `explain` tests.
fn explain_scene(
    seed: u64,
    host: &str,
    files: impl Fn(&Document, &Document, &Document) -> [Vec<serde_json::Value>; 2],
) -> tempfile::TempDir {
    let (bare, first, copy) = template_pages_at(&mut Rng(seed), host);
    let tmp = tempfile::tempdir().unwrap();
    let [site, pair] = files(&bare, &first, &copy);
    common::write_jsonl(&tmp.path().join("site.jsonl"), &site);
    common::write_jsonl(&tmp.path().join("pair.jsonl"), &pair);
    tmp
}

/// A page of `host` under the lines of its `template` (all before its body: the article is
/// not the page's beginning, so a bare copy of it is no teaser of the page).
fn under(id: &str, host: &str, template: &[String], body: &[String]) -> Document {
    page(id, host, &template[..1], &[&template[1..], body].concat())
}

/// A page's lines that its host showed before on a page of another article (its template,
/// seen in one cluster: not yet furniture) are not counted against a copy of its article on
/// another site that lacks them. A short article (two paragraphs, four sentences) under three
/// lines of its site's template is found on a site that shows it bare (four of seven
/// sentences shared: under the 60% verification asks); not when the template is new to its
/// host (the copy comes before the site's other page) or without the rule; a page of the
/// template with another article joins neither. A batch decides as one-at-a-time ingest does.
#[test]
fn a_template_seen_before_does_not_hide_a_copy_on_another_site() {
    // Bare copy, the template's other page, the templated page; then the templated page first.
    copy_found_through_the_template(0xf0e4_1708_0000_0016, [0, 1, 2], [0, 2, 1], without_rule);
}

/// Sites' templates within a site (`same_site_templates`, format 16): the same as
/// [`a_template_seen_before_does_not_hide_a_copy_on_another_site`] with the bare page on the
/// templated page's own host (a teaser or a repost that took in a block of its site the
/// article's page showed around its main text): found with the rule, missed with it off, and
/// missed when the template was new to its host.
#[test]
fn a_template_seen_before_does_not_hide_a_copy_on_its_own_site() {
    let off = || Settings {
        same_site_templates: Some(false),
        ..Default::default()
    };
    let pages = |rng: &mut Rng| template_pages_at(rng, "b.example");
    copy_found_through(pages, 0xf0e4_1708_0000_001b, [0, 1, 2], [0, 2, 1], off);
}

/// Rounds of [`template_pages`] (`[bare, first, copy]`): ingested in the order `known`, the
/// bare copy on another site and the templated page join, and the template's page of another
/// article joins neither; batches decide as one at a time does; the copy is missed with the
/// settings `off`, and in the order `unknown` (the template new to its host when it counted)
/// unless the bare copy comes last under `later_templates`.
fn copy_found_through_the_template(
    seed: u64,
    known: [usize; 3],
    unknown: [usize; 3],
    off: fn() -> Settings,
) {
    copy_found_through(template_pages, seed, known, unknown, off);
}

/// [`copy_found_through_the_template`] on the rounds `pages` makes.
fn copy_found_through(
    pages: impl Fn(&mut Rng) -> (Document, Document, Document),
    seed: u64,
    known: [usize; 3],
    unknown: [usize; 3],
    off: fn() -> Settings,
) {
    let mut rng = Rng(seed);
    for r in 0..12 {
        let (bare, first, copy) = pages(&mut rng);
        let pages = [bare, first, copy];
        let docs = known.map(|i| pages[i].clone());
        let c = clusters(Settings::default(), &docs, None);
        assert_eq!(c["a-copy"], c["b-copy"], "round {r}: {c:?}");
        assert_ne!(c["b-first"], c["b-copy"], "round {r}: {c:?}");
        batches_agree(&docs, &c);
        let w = clusters(off(), &docs, None);
        assert_ne!(w["a-copy"], w["b-copy"], "round {r}: {w:?}");
        // The template new to its host when the templated page was stored: missed without
        // `later_templates`; with it, found by a bare copy that comes after the template's
        // other page (the stored page is compared without the lines its site showed since).
        let unknown_docs = unknown.map(|i| pages[i].clone());
        let before = Settings {
            later_templates: Some(false),
            ..Default::default()
        };
        let new_template = clusters(before, &unknown_docs, None);
        assert_ne!(
            new_template["a-copy"], new_template["b-copy"],
            "round {r}: {new_template:?}"
        );
        let later = clusters(Settings::default(), &unknown_docs, None);
        let bare_last = unknown[2] == 0;
        assert_eq!(
            later["a-copy"] == later["b-copy"],
            bare_last,
            "round {r}: {later:?}"
        );
        assert_ne!(later["b-first"], later["b-copy"], "round {r}: {later:?}");
    }
}

/// Sites' templates (`site_templates`, format 14): a stored page keeps the sentences of the
/// lines its host showed before it (its template, not yet furniture), and a page of another
/// host ingested after it is compared with it without those it lacks. The short article under
/// three lines of its site's template is stored first; its bare copy on another site comes
/// after and joins it; not with the setting off, nor when the template was new to its host
/// when the page was stored; the template's page of another article joins neither. A batch
/// decides as one-at-a-time ingest does.
#[test]
fn a_stored_page_is_compared_without_its_site_template() {
    // The template's other page, the templated page, the bare copy; then the templated page
    // first.
    let off = || Settings {
        site_templates: Some(false),
        ..Default::default()
    };
    copy_found_through_the_template(0xf0e4_1708_0000_0018, [1, 2, 0], [2, 1, 0], off);
}

/// `explain` with a store compares B as its ingest after A would: without the lines B's site
/// showed before that A lacks, and says how many it left out; the other way round, the page
/// with its template is A, compared whole.
#[test]
fn explain_leaves_out_the_template_as_ingest_does() {
    let tmp = explain_scene(0xf0e4_1708_0000_0017, "a.example", |bare, first, copy| {
        [
            vec![page_json(first)],
            vec![page_json(bare), page_json(copy)],
        ]
    });
    let dir = tmp.path();
    let o = common::run(dir, &["--db", "s.db", "ingest", "-q", "site.jsonl"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let explain = |a: &str, b: &str| {
        common::run(
            dir,
            &["--db", "s.db", "explain", "--corpus", "pair.jsonl", a, b],
        )
    };
    let o = explain("a-copy", "b-copy");
    assert_eq!(
        common::code(&o),
        0,
        "{}\n{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    assert!(
        common::stdout(&o).contains("template: 3 lines of B left out"),
        "{}",
        common::stdout(&o)
    );
    let o = explain("b-copy", "a-copy");
    assert_eq!(common::code(&o), 1, "{}", common::stdout(&o));
    assert!(!common::stdout(&o).contains("template:"));
}

/// A stored page that alone of its host showed its lines: `explain` does not count them as
/// lines its site showed before it (ingest of the bare copy after it does not leave them out
/// either, and does not link the two); with the site's other page stored, it does.
#[test]
fn explain_does_not_count_a_pages_own_lines_as_shown_before_it() {
    let tmp = explain_scene(0xf0e4_1708_0000_0021, "a.example", |bare, first, copy| {
        [
            vec![page_json(copy), page_json(first)],
            vec![page_json(bare), page_json(copy)],
        ]
    });
    let dir = tmp.path();
    let site = std::fs::read_to_string(dir.join("site.jsonl")).unwrap();
    let ingest_line = |n: usize| {
        let line = site.lines().nth(n).unwrap();
        std::fs::write(dir.join("one.jsonl"), format!("{line}\n")).unwrap();
        let o = common::run(dir, &["--db", "s.db", "ingest", "-q", "one.jsonl"]);
        assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    };
    let explain = || {
        common::run(
            dir,
            &[
                "--db",
                "s.db",
                "explain",
                "--corpus",
                "pair.jsonl",
                "a-copy",
                "b-copy",
            ],
        )
    };
    // The templated page alone of its host in the store.
    ingest_line(0);
    let alone = explain();
    assert_eq!(common::code(&alone), 1, "{}", common::stdout(&alone));
    assert!(
        !common::stdout(&alone).contains("template:"),
        "{}",
        common::stdout(&alone)
    );
    // The bare copy looked up after it is not linked either: explain says what ingest does.
    let o = common::run(dir, &["--db", "s.db", "query", "--batch", "pair.jsonl"]);
    let first_line = common::stdout(&o)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(first_line.contains("\"duplicate\":false"), "{first_line}");
    // The site's other page stored as well: its lines are the template shown before.
    ingest_line(1);
    let shown = explain();
    assert!(
        common::stdout(&shown).contains("template: 3 lines of B left out"),
        "{}",
        common::stdout(&shown)
    );
}

/// `explain` of two stored pages (no texts) compares their stored fingerprints whole, which
/// ingest did not (it left out each page's furniture and template lines), and says so, in
/// text and JSON; two stored documents without URLs get no such line.
#[test]
fn explain_of_two_stored_pages_says_they_are_compared_whole() {
    let tmp = explain_scene(0xf0e4_1708_0000_001d, "a.example", |bare, first, copy| {
        [
            vec![page_json(first), page_json(bare), page_json(copy)],
            vec![
                serde_json::json!({"id": "plain-1", "text": bare.text.clone()}),
                serde_json::json!({"id": "plain-2", "text": copy.text.clone()}),
            ],
        ]
    });
    let dir = tmp.path();
    for file in ["site.jsonl", "pair.jsonl"] {
        let o = common::run(dir, &["--db", "s.db", "ingest", "-q", file]);
        assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    }
    let explain = |args: &[&str]| {
        let o = common::run(dir, &[&["--db", "s.db", "explain"][..], args].concat());
        assert!(common::code(&o) <= 1, "{}", common::stderr(&o));
        common::stdout(&o)
    };
    let pages = explain(&["a-copy", "b-copy"]);
    assert!(
        pages.contains("pages: compared whole, as stored"),
        "{pages}"
    );
    let json = explain(&["--json", "a-copy", "b-copy"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["compared_whole_pages"], true, "{json}");
    let plain = explain(&["plain-1", "plain-2"]);
    assert!(!plain.contains("pages:"), "{plain}");
    let json = explain(&["--json", "plain-1", "plain-2"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert!(v.get("compared_whole_pages").is_none(), "{json}");
}

/// The same within a site (`same_site_templates`): with the bare page on the templated page's
/// own host, `explain` leaves out B's template lines that A lacks and links them; in a store
/// with the setting off it compares B whole, as that store's ingest does.
#[test]
fn explain_leaves_out_the_template_within_a_site_as_ingest_does() {
    let tmp = explain_scene(0xf0e4_1708_0000_001c, "b.example", |bare, first, copy| {
        [
            vec![page_json(first)],
            vec![page_json(bare), page_json(copy)],
        ]
    });
    explain_with_the_setting_on_and_off(
        tmp.path(),
        "--same-site-templates",
        ["a-copy", "b-copy"],
        "template: 3 lines of B left out",
    );
}

/// `explain` with a store compares a stored page A (`site_templates`) as a later page B of
/// another host would be compared with it at ingest: without A's lines of the template its
/// record keeps that B lacks, and says how many; with the setting off, A is compared whole.
#[test]
fn explain_leaves_out_a_stored_pages_template() {
    let tmp = explain_scene(0xf0e4_1708_0000_001a, "a.example", |bare, first, copy| {
        [
            vec![page_json(first), page_json(copy)],
            vec![page_json(copy), page_json(bare)],
        ]
    });
    explain_with_the_setting_on_and_off(
        tmp.path(),
        "--site-templates",
        ["b-copy", "a-copy"],
        "template: 3 lines of A left out",
    );
}

/// `site.jsonl` of `dir` ingested into a store with the setting `flag` on (the default) and
/// one with it off; `explain` of `pair` (ids in `pair.jsonl`) links them and says `left_out`
/// with it on, and neither with it off.
fn explain_with_the_setting_on_and_off(
    dir: &std::path::Path,
    flag: &str,
    [a, b]: [&str; 2],
    left_out: &str,
) {
    for (db, on) in [("on.db", true), ("off.db", false)] {
        let mut args = vec!["--db", db, "ingest", "-q", "site.jsonl"];
        if !on {
            args.extend([flag, "false"]);
        }
        let o = common::run(dir, &args);
        assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
        let o = common::run(
            dir,
            &["--db", db, "explain", "--corpus", "pair.jsonl", a, b],
        );
        let out = common::stdout(&o);
        assert_eq!(common::code(&o), if on { 0 } else { 1 }, "{db}: {out}");
        assert_eq!(out.contains(left_out), on, "{db}: {out}");
    }
}

/// Removals under the template rule: a copy on a third site linked to the bare page; removing
/// that third copy keeps the pair the rule linked; removing the bare page leaves the other two
/// as a fresh ingest of them does (the third copy's lines were never seen, so nothing joins
/// it to the page with the template). `verify` agrees after each. Without sites' templates:
/// with them, the third copy is linked to the templated page by its template, at a similarity
/// whose shingles do not make it strong, and a removal that takes a cluster's first document
/// keeps only strong links among the others (docs/decisions.md, "A stored page keeps its site's
/// template").
#[test]
fn removals_keep_what_the_template_rule_linked_as_a_fresh_ingest_would() {
    let mut rng = Rng(0xf0e4_1708_0000_0018);
    let settings = || Settings {
        site_templates: Some(false),
        ..Default::default()
    };
    for r in 0..6 {
        let (bare, first, copy) = template_pages(&mut rng);
        let mut third = bare.clone();
        third.id = "c-copy".into();
        third.url = Some("https://c.example/copy".into());
        let docs = [bare, first, copy, third];
        let open = || {
            let mut db = Fpdb::builder()
                .settings(settings())
                .open_in_memory()
                .unwrap();
            for d in &docs {
                db.ingest_document(d, OnExisting::Skip).unwrap();
            }
            db
        };
        let cluster_of = |db: &Fpdb| -> BTreeMap<String, u64> {
            common::export_outcomes(db)
                .into_iter()
                .map(|o| (o.id, o.similar_id.unwrap()))
                .collect()
        };
        let all = cluster_of(&open());
        assert!(
            all["a-copy"] == all["b-copy"] && all["a-copy"] == all["c-copy"],
            "round {r}: {all:?}"
        );
        let mut db = open();
        assert!(db.maintenance().remove("c-copy").unwrap());
        db.searcher().verify().unwrap();
        let c = cluster_of(&db);
        assert_eq!(c["a-copy"], c["b-copy"], "round {r}: {c:?}");
        let mut db = open();
        assert!(db.maintenance().remove("a-copy").unwrap());
        db.searcher().verify().unwrap();
        let c = cluster_of(&db);
        let fresh = clusters(settings(), &docs[1..], None);
        assert_eq!(
            c["b-copy"] == c["c-copy"],
            fresh["b-copy"] == fresh["c-copy"],
            "round {r}: {c:?} {fresh:?}"
        );
        assert_ne!(c["b-first"], c["b-copy"], "round {r}: {c:?}");
    }
}
