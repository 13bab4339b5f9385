//! Which one is the original: every reader gives documents their publication time, and a
//! cluster names its earliest member whatever order its members arrived in (`duplicate_of`),
//! through reopen, delete, `--replace`, backup and batches; `verify` checks it. An oracle
//! proptest ingests dated copies in random orders and batch sizes.
//!
//! Over 600 lines: one scenario per way a document arrives or leaves, each reading top to
//! bottom.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{code, json_lines, run, stderr, stdout, synthetic_doc, write_jsonl, Rng};
use fpdb::{Document, Fpdb, OnExisting};

/// A news article (five paragraphs): copies of it with a source line added stay within
/// simhash reach of it, so a citation counts through a candidate that verified.
const NEWS: &str = "国家统计局15日发布数据显示，今年1至2月份，全国规模以上工业增加值同比增长7.0%，比上年12月份加快0.2个百分点。其中，制造业增加值增长7.5%，高技术制造业增加值增长7.5%，装备制造业增加值增长8.5%。\n\
        分三大门类看，采矿业增加值同比增长2.3%，制造业增长7.7%，电力、热力、燃气及水生产和供应业增长7.9%。分经济类型看，国有控股企业增加值同比增长5.6%；股份制企业增长7.6%，外商及港澳台商投资企业增长5.8%；私营企业增长5.3%。\n\
        国家统计局新闻发言人在国务院新闻办公室举行的新闻发布会上表示，1至2月份，国民经济延续回升向好态势，生产需求稳中有升，就业物价总体稳定，转型升级持续推进，发展质量稳步提升。\n\
        从需求看，1至2月份，社会消费品零售总额81307亿元，同比增长5.5%。其中，除汽车以外的消费品零售额73787亿元，增长5.6%。全国网上零售额21209亿元，同比增长15.1%。\n\
        从投资看，1至2月份，全国固定资产投资（不含农户）50847亿元，同比增长4.2%，增速比上年全年加快1.2个百分点。分领域看，基础设施投资增长6.3%，制造业投资增长9.4%，房地产开发投资下降9.0%。";

/// Three long paragraphs: copies of it (a line added) are near-duplicates of it.
fn article(seed: u64) -> String {
    synthetic_doc(&mut Rng(seed), 8)
}

/// Every member but `original` names it; `original` names nobody.
fn assert_original(map: &BTreeMap<String, Option<String>>, members: &[&str], original: &str) {
    for m in members {
        let want = (*m != original).then(|| original.to_string());
        assert_eq!(map[*m], want, "{m} in {map:?}");
    }
}

fn verify(dir: &Path, db: &str) {
    let out = run(dir, &["--db", db, "verify"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

fn page(body: &str, head: &str) -> String {
    format!("<html><head><title>t</title>{head}</head><body><article><p>{body}</p></article></body></html>")
}

/// Three copies of one article on three sites, fetched at `dates` (their WARC-Dates), each
/// with `published` as its own time when given: the original a store names after one ingest.
fn original_of_three(seed: u64, dates: [(&str, Option<&str>); 3]) -> String {
    let d = tempfile::tempdir().unwrap();
    let text = article(seed);
    let mut warc = String::new();
    for (i, (fetched, published)) in dates.iter().enumerate() {
        let body = format!("{text}\n第{i}次转载。");
        let head = published.map_or(String::new(), |t| {
            format!(r#"<meta property="article:published_time" content="{t}">"#)
        });
        warc.push_str(&common::warc_response(
            &format!("https://site{i}.example/a"),
            fetched,
            &page(&body, &head),
        ));
    }
    std::fs::write(d.path().join("crawl.warc"), warc).unwrap();
    let out = run(d.path(), &["--db", "s.db", "ingest", "crawl.warc"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    verify(d.path(), "s.db");
    let map = common::named(d.path(), "s.db");
    let original: Vec<&String> = map
        .iter()
        .filter(|(_, o)| o.is_none())
        .map(|(id, _)| id)
        .collect();
    assert_eq!(original.len(), 1, "one cluster: {map:?}");
    let members = [
        "https://site0.example/a",
        "https://site1.example/a",
        "https://site2.example/a",
    ];
    assert_original(&map, &members, original[0]);
    original[0].clone()
}

#[test]
fn a_warc_whose_dates_run_backwards_names_its_earliest_record() {
    // Crawled (archived) in reverse: the last record is the earliest. No page has a time of
    // its own: the record's date (when it was fetched) counts.
    let original = original_of_three(
        1,
        [
            ("2024-03-01T00:00:00Z", None),
            ("2024-02-01T00:00:00Z", None),
            ("2024-01-01T08:00:00Z", None),
        ],
    );
    assert_eq!(original, "https://site2.example/a");
}

#[test]
fn a_pages_own_time_outranks_when_it_was_fetched() {
    // Fetched in this order; published in the reverse: the last fetched was published first.
    let original = original_of_three(
        11,
        [
            ("2024-01-01T00:00:00Z", Some("2023-12-20T00:00:00Z")),
            ("2024-02-01T00:00:00Z", Some("2023-12-10T00:00:00Z")),
            ("2024-03-01T00:00:00Z", Some("2023-12-01T00:00:00Z")),
        ],
    );
    assert_eq!(original, "https://site2.example/a");
}

#[test]
fn a_jsonl_date_field_names_the_earliest_and_says_what_it_could_not_read() {
    let d = tempfile::tempdir().unwrap();
    let text = article(2);
    let lines = [
        serde_json::json!({"id": "b", "text": format!("{text}\n转载"), "date": "Sun, 26 May 2024 10:30:00 GMT"}),
        serde_json::json!({"id": "a", "text": text, "date": "2024年5月25日 10:30"}),
        serde_json::json!({"id": "c", "text": format!("{text}\n（完）"), "date": "next week"}),
        serde_json::json!({"id": "e", "text": format!("{text}\n编辑"), "date": 1_716_000_000}),
        serde_json::json!({"id": "f", "text": format!("{text}\n另"), "date": {"year": 2020}}),
    ];
    write_jsonl(&d.path().join("in.jsonl"), &lines);
    let out = run(
        d.path(),
        &[
            "--db",
            "s.db",
            "ingest",
            "in.jsonl",
            "--output",
            "out.jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The unreadable time is a located warning; the document is ingested (its ingest time
    // counts: later than every date here).
    let err = stderr(&out);
    assert!(
        err.contains("in.jsonl:3") && err.contains("`next week`"),
        "{err}"
    );
    // A time field holding neither a string nor a number is warned about too.
    assert!(
        err.contains("in.jsonl:5") && err.contains("not a string or a number"),
        "{err}"
    );
    assert!(err.contains("3 documents dated by their input"), "{err}");
    // 1,716,000,000 s is 2024-05-18: `e` came last and is the earliest.
    let results = json_lines(&std::fs::read_to_string(d.path().join("out.jsonl")).unwrap());
    assert_eq!(results[1]["previous_original"], "b", "{results:?}");
    assert_eq!(results[3]["previous_original"], "a", "{results:?}");
    assert_eq!(results[3]["duplicate_of"], serde_json::Value::Null);
    assert_original(&common::named(d.path(), "s.db"), &["a", "b", "c", "e"], "e");
    // A query names the cluster's original too.
    let out = run(d.path(), &["--db", "s.db", "query", "--json", &text]);
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["duplicate_of"], "e");
    // --time-field names another field; '' reads none.
    let other: String = lines
        .iter()
        .map(|l| format!("{}\n", l.to_string().replace("\"date\"", "\"published\"")))
        .collect();
    std::fs::write(d.path().join("other.jsonl"), other).unwrap();
    for (db, args, original) in [
        ("p.db", &["--time-field", "published"][..], "e"),
        ("n.db", &["--time-field", ""][..], "b"),
    ] {
        let mut a = vec!["--db", db, "ingest", "other.jsonl"];
        a.extend_from_slice(args);
        assert_eq!(code(&run(d.path(), &a)), 0);
        assert_original(
            &common::named(d.path(), db),
            &["a", "b", "c", "e"],
            original,
        );
    }
}

#[test]
fn html_pages_are_dated_by_their_published_time() {
    let d = tempfile::tempdir().unwrap();
    let pages = d.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    let text = article(3);
    for (name, head) in [
        (
            "1.html",
            r#"<meta property="article:published_time" content="2024-05-26T10:30:00+08:00">"#,
        ),
        ("2.html", r#"<meta name="pubdate" content="2023-01-02">"#),
        ("3.html", ""),
    ] {
        let html = page(&format!("{text}\n{name}"), head);
        // 3.html states its time in the body.
        let html = if head.is_empty() {
            html.replace(
                "<article>",
                r#"<article><time datetime="2022-12-31">昨天</time>"#,
            )
        } else {
            html
        };
        std::fs::write(pages.join(name), html).unwrap();
    }
    let out = run(d.path(), &["--db", "s.db", "ingest", "pages"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let map = common::named(d.path(), "s.db");
    let ids: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(ids.len(), 3, "{map:?}");
    let original = ids.iter().find(|i| i.ends_with("3.html")).unwrap();
    assert_original(&map, &ids, original);
}

/// The original moves as documents come and go: deleted, the next-earliest takes over;
/// replaced by a later-dated version, it hands over; a backup and a reopen keep it; verify
/// passes after each step.
#[test]
fn originals_survive_reopen_delete_replace_and_backup() {
    let d = tempfile::tempdir().unwrap();
    let text = article(4);
    let doc = |id: &str, extra: &str, date: &str| {
        format!(
            "{}\n",
            serde_json::json!({"id": id, "text": format!("{text}\n{extra}"), "date": date})
        )
    };
    let first = [
        doc("c", "三", "2024-03-01"),
        doc("a", "一", "2024-01-01"),
        doc("b", "二", "2024-02-01"),
    ]
    .concat();
    std::fs::write(d.path().join("1.jsonl"), first).unwrap();
    assert_eq!(
        code(&run(d.path(), &["--db", "s.db", "ingest", "1.jsonl"])),
        0
    );
    assert_original(&common::named(d.path(), "s.db"), &["a", "b", "c"], "a");
    verify(d.path(), "s.db");
    // The original deleted: the next-earliest takes over.
    assert_eq!(code(&run(d.path(), &["--db", "s.db", "delete", "a"])), 0);
    assert_original(&common::named(d.path(), "s.db"), &["b", "c"], "b");
    verify(d.path(), "s.db");
    // Replaced by a version dated later than c: c takes over.
    std::fs::write(
        d.path().join("2.jsonl"),
        doc("b", "二（修订）", "2024-04-01"),
    )
    .unwrap();
    let out = run(
        d.path(),
        &["--db", "s.db", "ingest", "2.jsonl", "--replace"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_original(&common::named(d.path(), "s.db"), &["b", "c"], "c");
    verify(d.path(), "s.db");
    // An earlier copy arriving later takes over and says whom it displaced.
    std::fs::write(d.path().join("3.jsonl"), doc("z", "零", "2023-12-31")).unwrap();
    let out = run(
        d.path(),
        &["--db", "s.db", "ingest", "3.jsonl", "--output", "-"],
    );
    let line = &json_lines(&stdout(&out))[0];
    assert_eq!(line["previous_original"], "c", "{line}");
    let before = common::named(d.path(), "s.db");
    assert_original(&before, &["b", "c", "z"], "z");
    // `clusters` names it too, and lists it first (the others in ingest order).
    let out = run(d.path(), &["--db", "s.db", "clusters", "--json"]);
    let cluster = &json_lines(&stdout(&out))[0];
    assert_eq!(cluster["original"], "z", "{cluster}");
    assert_eq!(
        cluster["members"],
        serde_json::json!(["z", "c", "b"]),
        "{cluster}"
    );
    // A backup holds the same; a reopened store too (the export above reopened it).
    assert_eq!(
        code(&run(d.path(), &["--db", "s.db", "backup", "copy.db"])),
        0
    );
    assert_eq!(common::named(d.path(), "copy.db"), before);
    verify(d.path(), "copy.db");
}

/// Oracle: dated copies of one text, ingested in a random order in random batches, one
/// document or a batch at a time, always name the earliest-dated member (the earliest
/// ingested among equal dates); verify passes.
mod oracle {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_orders_name_the_earliest_dated_member(
            dates in proptest::collection::vec(0i64..6, 2..9),
            order_seed in any::<u64>(),
            batch in 1usize..5,
        ) {
            let text = article(5);
            let docs: Vec<Document> = dates
                .iter()
                .enumerate()
                .map(|(i, &day)| Document {
                    published: Some(1_700_000_000 + day * 86_400),
                    ..Document::new(format!("d{i}"), format!("{text}\n第{i}份。"))
                })
                .collect();
            // A random order (Fisher-Yates on a xorshift stream).
            let mut order: Vec<usize> = (0..docs.len()).collect();
            let mut rng = Rng(order_seed | 1);
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut db = Fpdb::builder().open_in_memory().unwrap();
            for chunk in order.chunks(batch) {
                if batch == 1 {
                    db.ingest_document(&docs[chunk[0]], OnExisting::Skip).unwrap();
                } else {
                    let with: Vec<_> = chunk
                        .iter()
                        .map(|&i| (&docs[i], db.fingerprint_document(&docs[i])))
                        .collect();
                    let out = db.ingest_batch(with, OnExisting::Skip);
                    prop_assert!(out.error.is_none(), "{:?}", out.error);
                }
            }
            // The earliest date; among equal dates, the one ingested first.
            let earliest = order
                .iter()
                .copied()
                .min_by_key(|&i| dates[i])
                .unwrap();
            let want = format!("d{earliest}");
            for o in common::export_outcomes(&db) {
                let expect = (o.id != want).then(|| want.clone());
                prop_assert_eq!(&o.duplicate_of, &expect, "{}", o.id);
            }
            db.searcher().verify().unwrap();
        }
    }
}

/// The longest 55% of `text`'s sentences (ending in `。`), in their order.
fn longest_part(text: &str) -> String {
    let parts: Vec<&str> = text
        .split_inclusive('。')
        .filter(|s| !s.trim().is_empty())
        .collect();
    let mut by_len: Vec<usize> = (0..parts.len()).collect();
    by_len.sort_by_key(|&i| std::cmp::Reverse(parts[i].chars().count()));
    let mut keep: Vec<usize> = by_len[..(parts.len() * 11).div_ceil(20)].to_vec();
    keep.sort_unstable();
    keep.iter().map(|&i| parts[i]).collect()
}

/// Two documents of the zh_laws dev set (the quality fixture's copy) and a rewrite made of
/// the longer half of each: the rewrite verifies against neither (each is half of it), and is
/// reported as a composite of both by ingest, query and explain; a plain copy is not.
#[test]
fn a_mix_of_two_dev_set_documents_is_reported_as_a_composite() {
    let d = tempfile::tempdir().unwrap();
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quality/zh_laws/corpus.jsonl");
    let docs: Vec<serde_json::Value> = json_lines(&std::fs::read_to_string(corpus).unwrap());
    let pick = |prefix: &str| {
        docs.iter()
            .find(|v| v["id"].as_str().unwrap().starts_with(prefix))
            .unwrap()
            .clone()
    };
    let (a, b) = (pick("案例/民法典/张某某"), pick("案例/消费购物/李某"));
    let (ida, idb) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    let (ta, tb) = (a["text"].as_str().unwrap(), b["text"].as_str().unwrap());
    let mix = format!("{}\n{}", longest_part(ta), longest_part(tb));
    let lines = [
        serde_json::json!({"id": ida, "text": ta}),
        serde_json::json!({"id": idb, "text": tb}),
        serde_json::json!({"id": "mix", "text": mix}),
        serde_json::json!({"id": "copy", "text": format!("【转载】{ta}")}),
    ];
    write_jsonl(&d.path().join("in.jsonl"), &lines);
    let out = run(
        d.path(),
        &["--db", "s.db", "ingest", "in.jsonl", "--output", "-"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let results = json_lines(&stdout(&out));
    assert_eq!(
        results[2]["composite_of"],
        serde_json::json!([ida, idb]),
        "{results:?}"
    );
    // Its sources stay apart (each is half of it: it verifies against neither).
    assert_ne!(results[0]["similar_id"], results[1]["similar_id"]);
    assert!(results[3].get("composite_of").is_none(), "{}", results[3]);
    assert_eq!(results[3]["duplicate_of"], ida);
    // A query of the mix says so; explain too, by id and as a text.
    std::fs::write(d.path().join("mix.txt"), &mix).unwrap();
    let out = run(
        d.path(),
        &["--db", "s.db", "query", "--json", "--file", "mix.txt"],
    );
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let parts: Vec<&str> = answer["composite_of"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(parts.contains(&ida) && parts.contains(&idb), "{answer}");
    let out = run(d.path(), &["--db", "s.db", "explain", "mix", ida]);
    assert!(
        stdout(&out).contains("composite: mix draws on 2"),
        "{}",
        stdout(&out)
    );
    let out = run(d.path(), &["--db", "s.db", "explain", "copy", ida]);
    assert!(!stdout(&out).contains("composite"), "{}", stdout(&out));
}

/// A citation overrides an earlier date without one: B, published before A, names A as its
/// source (a source line in JSONL; a source link in a WARC page), so A stays the original; C,
/// the earliest but cited by nobody, does not take its place; verify agrees; a citation that
/// arrives before the cited page counts when the page comes.
#[test]
fn a_citation_overrides_an_earlier_date_without_one() {
    let d = tempfile::tempdir().unwrap();
    let text = article(6);
    let lines = [
        serde_json::json!({"id": "a", "url": "https://www.site-a.example/news/1", "text": text, "date": "2024-02-01"}),
        serde_json::json!({"id": "b", "url": "https://site-b.example/x", "text": format!("{text}\n来源：https://site-a.example/news/1/"), "date": "2024-01-01"}),
        serde_json::json!({"id": "c", "url": "https://site-c.example/y", "text": format!("{text}\n（完）"), "date": "2023-12-01"}),
    ];
    let jsonl = write_jsonl(&d.path().join("in.jsonl"), &lines);
    assert_eq!(
        code(&run(d.path(), &["--db", "s.db", "ingest", "in.jsonl"])),
        0
    );
    assert_original(&common::named(d.path(), "s.db"), &["a", "b", "c"], "a");
    verify(d.path(), "s.db");
    // The citing page first, the cited one after it: the citation still counts.
    let reversed: String = jsonl.lines().rev().map(|l| format!("{l}\n")).collect();
    std::fs::write(d.path().join("rev.jsonl"), reversed).unwrap();
    assert_eq!(
        code(&run(d.path(), &["--db", "r.db", "ingest", "rev.jsonl"])),
        0
    );
    assert_original(&common::named(d.path(), "r.db"), &["a", "b", "c"], "a");
    verify(d.path(), "r.db");
    // Without the source line, the earliest date decides.
    let plain = jsonl.replace("\\n来源：https://site-a.example/news/1/", "");
    std::fs::write(d.path().join("plain.jsonl"), plain).unwrap();
    assert_eq!(
        code(&run(d.path(), &["--db", "p.db", "ingest", "plain.jsonl"])),
        0
    );
    assert_original(&common::named(d.path(), "p.db"), &["a", "b", "c"], "c");
    // A WARC: the repost links to its source ("来源：<a href>"), crawled and dated earlier.
    let mut warc = common::warc_response(
        "https://repost.example/2",
        "2024-01-01T00:00:00Z",
        &page(
            &format!("{text}</p><p>来源：<a href=\"https://source.example/1\">源站</a>"),
            "",
        ),
    );
    warc.push_str(&common::warc_response(
        "https://source.example/1",
        "2024-03-01T00:00:00Z",
        &page(&text, ""),
    ));
    std::fs::write(d.path().join("crawl.warc"), warc).unwrap();
    assert_eq!(
        code(&run(d.path(), &["--db", "w.db", "ingest", "crawl.warc"])),
        0
    );
    assert_original(
        &common::named(d.path(), "w.db"),
        &["https://repost.example/2", "https://source.example/1"],
        "https://source.example/1",
    );
    verify(d.path(), "w.db");
}

/// A citation between two pages of one site does not count (the third review): a copier
/// re-crawled under its own URL, or another page of its site, citing it does not make it the
/// source over the earlier-dated original on another site; a page of another site citing it
/// still does.
#[test]
fn a_citation_from_the_same_site_does_not_count() {
    let d = tempfile::tempdir().unwrap();
    let text = article(7);
    let orig = serde_json::json!({"id": "orig", "url": "https://news.example/2024/a1", "date": "2024-05-01", "text": text});
    let copier = serde_json::json!({"id": "copier", "url": "https://spam.example/x1", "date": "2024-06-01", "text": format!("{text}\n来源：网络")});
    let cite = |id: &str, url: &str| serde_json::json!({"id": id, "url": url, "date": "2024-06-03", "text": format!("{text}\n来源：https://spam.example/x1")});
    for (name, citer) in [
        ("recrawl", cite("copier2", "https://spam.example/x1")),
        ("sibling", cite("copier2", "https://www.spam.example/other")),
    ] {
        write_jsonl(
            &d.path().join("in.jsonl"),
            &[orig.clone(), copier.clone(), citer],
        );
        let db = format!("{name}.db");
        assert_eq!(
            code(&run(d.path(), &["--db", &db, "-q", "ingest", "in.jsonl"])),
            0
        );
        assert_original(
            &common::named(d.path(), &db),
            &["orig", "copier", "copier2"],
            "orig",
        );
        verify(d.path(), &db);
    }
    // Another site's page citing it still counts.
    write_jsonl(
        &d.path().join("in.jsonl"),
        &[orig, copier, cite("puppet", "https://elsewhere.example/y")],
    );
    assert_eq!(
        code(&run(
            d.path(),
            &["--db", "o.db", "-q", "ingest", "in.jsonl"]
        )),
        0
    );
    assert_original(
        &common::named(d.path(), "o.db"),
        &["orig", "copier", "puppet"],
        "copier",
    );
}

/// A citation leaves with its page (the third review): a page of another site citing a copier
/// makes the copier the original; once that page is deleted (or replaced by one without the
/// citation) the copier is cited no more, and the original is the earlier-dated page again, as
/// a fresh ingest of the remaining documents names it.
#[test]
fn a_deleted_citation_no_longer_names_the_original() {
    let d = tempfile::tempdir().unwrap();
    let text = NEWS;
    let lines = [
        serde_json::json!({"id": "orig", "url": "https://news.example/2024/a1", "date": "2024-05-01", "text": text}),
        serde_json::json!({"id": "copier", "url": "https://spam.example/x1", "date": "2024-06-01", "text": text}),
        serde_json::json!({"id": "puppet", "url": "https://spam2.example/y", "date": "2024-06-02", "text": format!("{text}\n来源：https://spam.example/x1")}),
    ];
    write_jsonl(&d.path().join("in.jsonl"), &lines);
    for db in ["del.db", "rep.db"] {
        assert_eq!(
            code(&run(d.path(), &["--db", db, "-q", "ingest", "in.jsonl"])),
            0
        );
        assert_original(
            &common::named(d.path(), db),
            &["orig", "copier", "puppet"],
            "copier",
        );
    }
    let o = run(d.path(), &["--db", "del.db", "-q", "delete", "puppet"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_original(
        &common::named(d.path(), "del.db"),
        &["orig", "copier"],
        "orig",
    );
    verify(d.path(), "del.db");
    // Replaced by a page without the citation.
    write_jsonl(
        &d.path().join("rep.jsonl"),
        &[
            serde_json::json!({"id": "puppet", "url": "https://spam2.example/y", "date": "2024-06-02", "text": format!("{text}\n（完）")}),
        ],
    );
    let o = run(
        d.path(),
        &["--db", "rep.db", "-q", "ingest", "--replace", "rep.jsonl"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_original(
        &common::named(d.path(), "rep.db"),
        &["orig", "copier", "puppet"],
        "orig",
    );
    verify(d.path(), "rep.db");
    // What a fresh ingest of the remaining documents names.
    write_jsonl(&d.path().join("fresh.jsonl"), &lines[..2]);
    assert_eq!(
        code(&run(
            d.path(),
            &["--db", "fresh.db", "-q", "ingest", "fresh.jsonl"]
        )),
        0
    );
    assert_original(
        &common::named(d.path(), "fresh.db"),
        &["orig", "copier"],
        "orig",
    );
}

/// Oracle: after any sequence of ingests, deletes and replaces of copies that cite each other
/// (within a site and across sites, dated and undated; a replace may move a page to another
/// site or change what it cites), every document names the original a
/// fresh ingest of the surviving documents names, in their order (a replace is a removal and an
/// ingest at the end, unless it changes nothing); `verify` passes at every step.
mod edits {
    use super::*;
    use proptest::prelude::*;

    const SITES: [&str; 3] = ["a", "b", "c"];

    /// Page `id`'s URL on site `site`.
    fn url(site: usize, id: usize) -> String {
        format!("https://{}.example/{id}", SITES[site])
    }

    /// A page: `NEWS` at `url(site, id)`, linking to `url(cite)` as its source when given, on
    /// `day` when given. The citation is a source link, not a line of text, so that every copy
    /// verifies against every other (a copy that did not verify against the page it cites
    /// may name another original than a fresh ingest: docs/decisions.md).
    fn page(id: usize, site: usize, cite: Option<(usize, usize)>, day: Option<i64>) -> Document {
        Document {
            url: Some(url(site, id)),
            published: day.map(|d| 1_700_000_000 + d * 86_400),
            cites: cite.map(|(s, i)| url(s, i)).into_iter().collect(),
            ..Document::new(format!("p{id}"), NEWS.to_string())
        }
    }

    /// The citations that count: a link to a page of its own site is none.
    fn counted(d: &Document) -> Vec<&String> {
        let host = |u: &str| u.split('/').nth(2).map(str::to_string);
        let mine = d.url.as_deref().and_then(host);
        d.cites.iter().filter(|c| host(c) != mine).collect()
    }

    fn names(db: &Fpdb) -> BTreeMap<String, Option<String>> {
        common::export_outcomes(db)
            .into_iter()
            .map(|o| (o.id, o.duplicate_of))
            .collect()
    }

    /// (0: delete, else ingest or replace; id; site; citation; day).
    type Op = (u8, usize, usize, Option<(usize, usize)>, Option<i64>);

    fn op() -> impl Strategy<Value = Op> {
        (
            0u8..4,
            0usize..6,
            0usize..SITES.len(),
            proptest::option::of((0usize..SITES.len(), 0usize..6)),
            proptest::option::of(0i64..3),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn originals_after_deletes_and_replaces_are_a_fresh_ingests(
            ops in proptest::collection::vec(op(), 1..24),
        ) {
            let mut db = Fpdb::builder().open_in_memory().unwrap();
            let mut live: Vec<Document> = Vec::new();
            for (step, (kind, id, site, cite, day)) in ops.into_iter().enumerate() {
                let name = format!("p{id}");
                let at = live.iter().position(|d| d.id == name);
                match (kind, at) {
                    (0, Some(i)) => {
                        prop_assert!(db.maintenance().remove(&name).unwrap());
                        live.remove(i);
                    }
                    (0, None) => prop_assert!(!db.maintenance().remove(&name).unwrap()),
                    (_, at) => {
                        let doc = page(id, site, cite, day);
                        db.ingest_document(&doc, OnExisting::Replace).unwrap();
                        match at {
                            Some(i)
                                if counted(&live[i]) == counted(&doc)
                                    && live[i].url == doc.url
                                    && live[i].published == doc.published => {}
                            Some(i) => {
                                live.remove(i);
                                live.push(doc);
                            }
                            None => live.push(doc),
                        }
                    }
                }
                if let Err(e) = db.searcher().verify() {
                    return Err(TestCaseError::fail(format!("step {step}: verify: {e}")));
                }
                let mut fresh = Fpdb::builder().open_in_memory().unwrap();
                for d in &live {
                    fresh.ingest_document(d, OnExisting::Skip).unwrap();
                }
                prop_assert_eq!(names(&db), names(&fresh), "step {}", step);
            }
        }
    }
}
