//! What a store learns of a site never hides a copy nor joins two articles (`site_knowledge`,
//! format 18), in the shapes of the fourth adversarial review's scripts: reposts of one
//! article by accounts of a shared host, each with a footer or a comment of its own
//! (`furn3.py`, `furn2.py`, `furn4.py` in one batch), a page holding most of two articles'
//! lines shown before on its site (`tmpl_merge.py`) and a digest of two stories' openings,
//! and removals (`delete`, `expire`) that leave the `furniture` family as an empty store's
//! after `compact`. Each scenario also runs with the setting off, where the review's defect
//! shows, so that the test fails without the rule.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::Rng;
use fpdb::{Document, Fpdb, OnExisting, Settings};

/// A page of `text` at `url`.
pub(crate) fn page(id: &str, url: &str, text: &str) -> Document {
    let mut d = Document::new(id, text);
    d.url = Some(url.to_string());
    d
}

/// `n` lines of one synthetic sentence each.
fn lines(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, 1)).collect()
}

/// An article of 7 paragraphs of 4 sentences (the review's `ART`: 849 characters in 7 lines).
pub(crate) fn article(rng: &mut Rng) -> String {
    (0..7)
        .map(|_| common::synthetic_doc(rng, 4))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A footer of its own: one line of 5 sentences (over 100 letters, so that the page counts
/// by itself for the lines its cluster holds).
pub(crate) fn footer(rng: &mut Rng) -> String {
    common::synthetic_doc(rng, 5)
}

/// A fresh in-memory store with the rule `on` or off.
pub(crate) fn store(on: bool) -> Fpdb {
    Fpdb::builder()
        .settings(settings(on))
        .open_in_memory()
        .unwrap()
}

fn settings(on: bool) -> Settings {
    Settings {
        site_knowledge: Some(on),
        ..Default::default()
    }
}

/// Ingest `docs` one at a time, or as one batch; their clusters.
pub(crate) fn ingest(db: &mut Fpdb, docs: &[Document], one_batch: bool) -> BTreeMap<String, u64> {
    if one_batch {
        common::ingest_ahead(
            db,
            &[docs],
            OnExisting::Skip,
            &mut |_| false,
            &mut |_, _| {},
        );
    } else {
        for d in docs {
            db.ingest_document(d, OnExisting::Skip).unwrap();
        }
    }
    common::clusters_by_id(db)
}

pub(crate) const WX: &str = "https://mp.weixin.qq.com/s/";

/// `furn3.py`: article A on one site and B on another; accounts 0–3 of a shared host repost
/// A, accounts 4–6 repost B, each with a footer of its own, then account Z reposts both with
/// one footer. The reposts, as (id, article it reposts).
fn shared_host_reposts(rng: &mut Rng) -> (Vec<Document>, Vec<(String, &'static str)>) {
    let a = article(rng);
    let b = article(rng);
    let mut docs = vec![
        page("A", "https://news.example/a", &a),
        page("B", "https://other-news.example/b", &b),
    ];
    let mut reposts = Vec::new();
    for k in 0..7 {
        let (article, of) = if k < 4 { (&a, "A") } else { (&b, "B") };
        let id = format!("r{k}");
        let text = format!("{article}\n{}", footer(rng));
        docs.push(page(&id, &format!("{WX}{id}"), &text));
        reposts.push((id, of));
    }
    let z = footer(rng);
    for (article, of) in [(&a, "A"), (&b, "B")] {
        let id = format!("z{of}");
        docs.push(page(&id, &format!("{WX}{id}"), &format!("{article}\n{z}")));
        reposts.push((id, of));
    }
    (docs, reposts)
}

/// How many of `reposts` are in their article's cluster, and whether A and B share one.
fn found(clusters: &BTreeMap<String, u64>, reposts: &[(String, &str)]) -> (usize, bool) {
    let n = reposts
        .iter()
        .filter(|(id, of)| clusters[id] == clusters[*of])
        .count();
    (n, clusters["A"] == clusters["B"])
}

#[test]
fn reposts_on_a_shared_host_are_found_one_at_a_time_and_in_one_batch() {
    for one_batch in [false, true] {
        let (docs, reposts) = shared_host_reposts(&mut Rng(7));
        let mut db = store(true);
        let c = ingest(&mut db, &docs, one_batch);
        assert_eq!(
            found(&c, &reposts),
            (reposts.len(), false),
            "batch {one_batch}: {c:?}"
        );
        // Without the rule the article became the host's furniture (the review's defect 1).
        let mut old = store(false);
        let c = ingest(&mut old, &docs, one_batch);
        assert!(
            found(&c, &reposts).0 < reposts.len(),
            "batch {one_batch}: {c:?}"
        );
    }
}

/// `furn2.py`: 8 accounts repost A with a comment of their own before it and a footer after
/// it; then a plain repost with the footer alone.
#[test]
fn reposts_with_comments_of_their_own_are_found() {
    let mut rng = Rng(11);
    let art = article(&mut rng);
    let foot = footer(&mut rng);
    let mut docs = vec![page("A", "https://news.example/a", &art)];
    for k in 0..8 {
        let comment = common::synthetic_doc(&mut rng, 5);
        let text = format!("{comment}\n{art}\n{foot}账号{k}");
        docs.push(page(&format!("wx{k}"), &format!("{WX}acct{k}"), &text));
    }
    docs.push(page(
        "plain",
        &format!("{WX}acct99"),
        &format!("{art}\n{foot}"),
    ));
    let mut db = store(true);
    let c = ingest(&mut db, &docs, false);
    assert!(c.values().all(|&id| id == c["A"]), "{c:?}");
    let mut old = store(false);
    let c = ingest(&mut old, &docs, false);
    assert!(c.values().any(|&id| id != c["A"]), "{c:?}");
}

/// `tmpl_merge.py` and its digest case: A and B (12 lines each, on two sites); a third site
/// shows B's first `n` lines with text of its own, then A's, then both. The last page may join
/// one of them; A and B stay apart, and a query of B still answers B.
#[test]
fn a_page_of_two_articles_shown_before_never_merges_them() {
    for n in [8, 4] {
        let mut rng = Rng(23 + n as u64);
        let a = lines(&mut rng, 12);
        let b = lines(&mut rng, 12);
        let own1 = lines(&mut rng, 6);
        let own2 = lines(&mut rng, 6);
        let e = "https://evil.example/";
        let docs = vec![
            page("A", "https://a.example/1", &a.join("\n")),
            page("B", "https://b.example/1", &b.join("\n")),
            page(
                "e1",
                &format!("{e}1"),
                &[&b[..n], &own1[..]].concat().join("\n"),
            ),
            page(
                "e2",
                &format!("{e}2"),
                &[&a[..n], &own2[..]].concat().join("\n"),
            ),
            page(
                "e3",
                &format!("{e}3"),
                &[&a[..n], &b[..n]].concat().join("\n"),
            ),
        ];
        let mut db = store(true);
        let c = ingest(&mut db, &docs, false);
        assert_ne!(c["A"], c["B"], "{n} lines: {c:?}");
        let fps = db.fingerprint_document(&Document::new("q", b.join("\n")));
        let q = db.searcher().query("q", &fps).unwrap();
        assert_eq!(q.duplicate_of.as_deref(), Some("B"), "{n} lines: {q:?}");
        if n == 8 {
            let mut old = store(false);
            let c = ingest(&mut old, &docs, false);
            assert_eq!(c["A"], c["B"], "the review's defect 2: {c:?}");
        }
    }
}

/// 40 pages of 2,000 distinct lines each (80,000 lines the `furniture` family counts: about
/// 2 MiB), on `hosts` hosts.
fn big_pages(rng: &mut Rng, hosts: usize) -> Vec<Document> {
    (0..40)
        .map(|i| {
            let text = lines(rng, 2000).join("\n");
            page(
                &format!("p{i}"),
                &format!("https://h{}.example/p{i}", i % hosts),
                &text,
            )
        })
        .collect()
}

fn disk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// The review's defect 6: after deleting (or expiring) every document and compacting, the
/// store is back to an empty store's size within 1 MiB; without the rule the lines stay.
#[test]
fn removing_every_page_and_compacting_leaves_an_empty_stores_size() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty.db");
    {
        let mut db = Fpdb::builder()
            .settings(settings(true))
            .create(true)
            .open(&empty)
            .unwrap();
        db.ingest_document(
            &Document::new("x", "一个简单的测试文本，用来创建空的存储。"),
            OnExisting::Skip,
        )
        .unwrap();
        assert!(db.maintenance().remove("x").unwrap());
        db.maintenance().compact().unwrap();
    }
    let empty_bytes = disk_bytes(&empty);
    let docs = big_pages(&mut Rng(5), 3);
    for (on, expire) in [(true, false), (true, true), (false, false)] {
        let path = d.path().join(format!("s-{on}-{expire}.db"));
        let mut db = Fpdb::builder()
            .settings(settings(on))
            .create(true)
            .open(&path)
            .unwrap();
        for doc in &docs {
            db.ingest_document(doc, OnExisting::Skip).unwrap();
        }
        db.sync().unwrap();
        if expire {
            assert_eq!(
                db.maintenance().expire(fpdb::now() + 10).unwrap(),
                docs.len() as u64
            );
        } else {
            for doc in &docs {
                assert!(db.maintenance().remove(&doc.id).unwrap());
            }
        }
        db.sync().unwrap();
        db.maintenance().compact().unwrap();
        db.searcher().verify().unwrap();
        let stats = db.searcher().stats();
        drop(db);
        let bytes = disk_bytes(&path);
        let within = bytes < empty_bytes + (1 << 20);
        assert_eq!(
            within, on,
            "{path:?}: {bytes} bytes, an empty store {empty_bytes}: {:?}",
            stats.column_family_bytes
        );
    }
}

/// Removing the pages that made a line furniture withdraws it: a page holding the line is
/// fingerprinted with it again.
#[test]
fn removing_the_pages_that_made_a_line_furniture_withdraws_it() {
    let mut rng = Rng(31);
    let nav = lines(&mut rng, 3);
    let site = |id: &str, body: &[String]| {
        let text = [&nav[..], body].concat().join("\n");
        page(id, &format!("https://site.example/{id}"), &text)
    };
    let mut db = store(true);
    for i in 0..3 {
        db.ingest_document(
            &site(&format!("a{i}"), &lines(&mut rng, 12)),
            OnExisting::Skip,
        )
        .unwrap();
    }
    let probe = site("probe", &lines(&mut rng, 12));
    assert_eq!(db.searcher().without_furniture(&probe).unwrap().1, 3);
    assert!(db.maintenance().remove("a1").unwrap());
    db.sync().unwrap();
    assert_eq!(db.searcher().without_furniture(&probe).unwrap().1, 0);
    // A third article again makes them furniture.
    db.ingest_document(&site("a3", &lines(&mut rng, 12)), OnExisting::Skip)
        .unwrap();
    assert_eq!(db.searcher().without_furniture(&probe).unwrap().1, 3);
}

/// `explain` of the `tmpl_merge.py` pair says the link holds only with the lines left out.
#[test]
fn explain_says_when_a_link_holds_only_with_template_lines_left_out() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(29);
    let a = lines(&mut rng, 12);
    let b = lines(&mut rng, 12);
    let (own1, own2) = (lines(&mut rng, 6), lines(&mut rng, 6));
    let doc = |id: &str, url: &str, text: Vec<String>| serde_json::json!({"id": id, "url": url, "text": text.join("\n")});
    let e = "https://evil.example/";
    let stored = [
        doc("A", "https://a.example/1", a.clone()),
        doc("B", "https://b.example/1", b.clone()),
        doc("e1", &format!("{e}1"), [&b[..8], &own1[..]].concat()),
        doc("e2", &format!("{e}2"), [&a[..8], &own2[..]].concat()),
    ];
    common::write_jsonl(&d.path().join("in.jsonl"), &stored);
    let third = doc("e3", &format!("{e}3"), [&a[..8], &b[..8]].concat());
    common::write_jsonl(&d.path().join("e3.jsonl"), &[stored[0].clone(), third]);
    let o = common::run(d.path(), &["--db", "s.db", "-q", "ingest", "in.jsonl"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = common::run(
        d.path(),
        &[
            "--db", "s.db", "explain", "--corpus", "e3.jsonl", "A", "e3", "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(v["linked_only_with_lines_left_out"], true, "{v}");
    let o = common::run(
        d.path(),
        &["--db", "s.db", "explain", "--corpus", "e3.jsonl", "A", "e3"],
    );
    assert!(
        common::stdout(&o).contains("never merges two"),
        "{}",
        common::stdout(&o)
    );
}

/// An attacker's posts on a shared host, each quoting article A after text of its own longer
/// than A (so no post is a copy of A, and none is in A's cluster), make A's lines the host's
/// furniture; a later repost of A there, whose furniture is then most of its page, is still
/// compared whole with A and found.
#[test]
fn a_repost_whose_article_bait_made_furniture_is_still_found() {
    let run = |on: bool| {
        let mut rng = Rng(41);
        let art = article(&mut rng);
        let mut db = store(on);
        let a = page("A", "https://news.example/a", &art);
        db.ingest_document(&a, OnExisting::Skip).unwrap();
        for k in 0..3 {
            let own = (0..9)
                .map(|_| common::synthetic_doc(&mut rng, 4))
                .collect::<Vec<_>>()
                .join("\n");
            let bait = page(
                &format!("bait{k}"),
                &format!("{WX}bait{k}"),
                &format!("{own}\n{art}"),
            );
            db.ingest_document(&bait, OnExisting::Skip).unwrap();
        }
        let repost = page(
            "repost",
            &format!("{WX}genuine"),
            &format!("{art}\n{}", footer(&mut rng)),
        );
        db.ingest_document(&repost, OnExisting::Skip).unwrap();
        let c = common::clusters_by_id(&db);
        (
            c["repost"] == c["A"],
            c["bait0"] == c["A"],
            db.searcher().without_furniture(&repost).unwrap().1,
        )
    };
    let (found, bait_linked, left_out) = run(true);
    assert!(!bait_linked, "the bait is no copy of A");
    assert!(
        left_out > 0,
        "the bait made A's lines furniture on the host"
    );
    assert!(found, "the repost was missed");
    let (found, _, _) = run(false);
    assert!(!found, "without the rule the repost is missed");
}

/// A page stored before its site's furniture was known is found by a later copy on another
/// site (the review's "time decides"): site A's article comes first, then four articles on A
/// and on B make both templates furniture, then the article comes on B. The stored page still
/// holds A's template, and its longest sentences are the template's: it is also keyed by
/// the longest sentence of each of its first lines (its site had no furniture then), and the
/// sentences of lines A has made furniture since are left out of it as the copy is compared.
/// Eight rounds (articles of two to five paragraphs: a copy left with under 50 letters
/// without its furniture is read whole), one at a time and in one batch.
#[test]
fn a_page_stored_before_its_sites_furniture_was_known_is_found_by_a_later_copy() {
    use common::sites::{furniture, page};
    for one_batch in [false, true] {
        let mut found = 0;
        for round in 0..8 {
            let mut rng = Rng(100 + round);
            let (fa, fb) = (furniture(&mut rng), furniture(&mut rng));
            let article = common::paragraphs(&mut rng, 2 + round as usize % 4);
            let mut docs = vec![page("early", "a.example", &fa, &article)];
            for i in 0..4 {
                let (a, b) = (
                    common::paragraphs(&mut rng, 8),
                    common::paragraphs(&mut rng, 8),
                );
                docs.push(page(&format!("a{i}"), "a.example", &fa, &a));
                docs.push(page(&format!("b{i}"), "b.example", &fb, &b));
            }
            docs.push(page("copy", "b.example", &fb, &article));
            let mut db = store(true);
            let c = ingest(&mut db, &docs, one_batch);
            found += usize::from(c["copy"] == c["early"]);
            // No article of one site joins another's.
            let a_apart = (0..4).all(|i| c[&format!("a{i}")] != c["early"]);
            assert!(a_apart, "round {round}, batch {one_batch}: {c:?}");
        }
        assert_eq!(found, 8, "batch {one_batch}");
    }
}

/// The same with a site's template not yet its furniture (`later_templates`): site A's
/// article comes first, then one more article on A and one on B, so that each site's lines
/// are seen in two clusters (its template, not furniture: that takes three), then the article
/// comes on B, the template around it and between its paragraphs. The stored page holds A's template; the
/// copy leaves B's out as a page of
/// another host, and A's is left out of the stored page as the copy is compared, as had A
/// shown it before its first page (an article of 10 sentences, so that leaving the template
/// out leaves most of the page). Without the rule the copy is missed in every round; with it
/// the copy is found one at a time, and with the three pages after the first in one batch
/// (the stored page was checked before the batch's first page taught its template, and is
/// checked again with what it taught); `explain` leaves the template out of the stored page
/// as ingest did.
#[test]
fn a_sites_first_page_is_found_by_a_later_copy_once_its_template_is_seen() {
    use common::sites::furniture;
    // The template around the article and between its paragraphs (a headline of another
    // article after each), so that the article is no run of the stored page's sentences.
    let page = |id: &str, host: &str, template: &[String], body: &[String]| {
        let mut lines = Vec::new();
        for (i, t) in template.iter().enumerate() {
            lines.push(t.clone());
            lines.extend(body.get(i).cloned());
        }
        let mut d = Document::new(id, lines.join("\n"));
        d.url = Some(format!("https://{host}/{id}"));
        d
    };
    for on in [true, false] {
        for one_batch in [false, true] {
            let mut found = 0;
            for round in 0..8 {
                let mut rng = Rng(300 + round);
                let (fa, fb) = (furniture(&mut rng), furniture(&mut rng));
                // 10 sentences against a template of 8 kept: compared with it, under 60%.
                let article: Vec<String> =
                    (0..5).map(|_| common::synthetic_doc(&mut rng, 2)).collect();
                let (a, b) = (
                    common::paragraphs(&mut rng, 8),
                    common::paragraphs(&mut rng, 8),
                );
                let docs = [
                    page("early", "a.example", &fa, &article),
                    page("a0", "a.example", &fa, &a),
                    page("b0", "b.example", &fb, &b),
                    page("copy", "b.example", &fb, &article),
                ];
                let mut db = Fpdb::builder()
                    .settings(Settings {
                        later_templates: Some(on),
                        // A page's teaser rule links this layout as well (the copy's
                        // paragraphs in order among the stored page's lines): off, the
                        // template decides alone.
                        page_teasers: Some(false),
                        ..Default::default()
                    })
                    .open_in_memory()
                    .unwrap();
                ingest(&mut db, &docs[..1], false);
                let c = ingest(&mut db, &docs[1..], one_batch);
                found += usize::from(c["copy"] == c["early"]);
                // `explain` compares the stored page as ingest did: without those lines.
                let (_, left_out) = db
                    .searcher()
                    .without_stored_template(&docs[0], &docs[3])
                    .unwrap();
                assert_eq!(left_out > 0, on, "round {round}, batch {one_batch}");
                let apart = c["a0"] != c["early"] && c["b0"] != c["copy"] && c["a0"] != c["b0"];
                assert!(apart, "round {round}, batch {one_batch}, on {on}: {c:?}");
            }
            let want = if on { 8 } else { 0 };
            assert_eq!(found, want, "batch {one_batch}, on {on}");
        }
    }
}
