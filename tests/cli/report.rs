//! `Fpdb::report` against a brute-force oracle: every document's outcome and stored record read
//! one by one and counted in memory (cluster size classes, the day's duplicates, host pairs,
//! the largest clusters and their members); and `fpdb report` as the binary writes it.

use crate::common;

use std::collections::{BTreeMap, HashMap};

use fpdb::report::ReportOptions;
use fpdb::{Document, Fpdb, OnExisting};
use proptest::prelude::*;

use common::*;

/// `n` documents on `hosts` hosts, a third of them copies (a line added) of an earlier one,
/// some without a URL.
fn corpus(seed: u64, n: usize, hosts: u64) -> Vec<Document> {
    let mut rng = Rng(seed | 1);
    let mut docs: Vec<Document> = Vec::new();
    for i in 0..n {
        let text = if i > 0 && rng.below(3) == 0 {
            let src = docs[rng.index(docs.len())].text.clone();
            format!("【转载】\n{src}")
        } else {
            let sentences = 3 + rng.index(4);
            synthetic_doc(&mut rng, sentences)
        };
        let mut d = Document::new(format!("d{i}"), text);
        if rng.below(5) != 0 {
            d.url = Some(format!("https://www.h{}.example/p/{i}", rng.below(hosts)));
        }
        d.title = Some(format!("title {i}"));
        docs.push(d);
    }
    docs
}

fn host(url: &Option<String>) -> Option<String> {
    url.as_deref().and_then(fpdb::text::cites::host)
}

fn check(seed: u64, n: usize, hosts: u64) -> Result<(), TestCaseError> {
    let docs = corpus(seed, n, hosts);
    let mut db = Fpdb::builder().open_in_memory().unwrap();
    for d in &docs {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    let opts = ReportOptions {
        largest: 3,
        members: 4,
        hosts: 1000,
    };
    let r = db.searcher().report(opts).unwrap();

    // The oracle: clusters from export, duplicates and hosts from each stored document.
    let outcomes = export_outcomes(&db);
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for o in &outcomes {
        *sizes.entry(o.similar_id.unwrap()).or_default() += 1;
    }
    let mut classes: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for &size in sizes.values() {
        let c = classes.entry(1 << (63 - size.leading_zeros())).or_default();
        c.0 += 1;
        c.1 += size;
    }
    let got: BTreeMap<u64, (u64, u64)> = r
        .cluster_sizes
        .iter()
        .map(|c| (c.from, (c.clusters, c.documents)))
        .collect();
    prop_assert_eq!(got, classes);
    let by_id: HashMap<&str, &Document> = docs.iter().map(|d| (d.id.as_str(), d)).collect();
    let mut pairs: BTreeMap<(String, String), u64> = BTreeMap::new();
    let (mut across, mut within) = (0, 0);
    for d in &docs {
        let stored = db.searcher().stored_document(&d.id).unwrap().unwrap();
        let Some(best) = stored.matched_at_ingest.first() else {
            continue;
        };
        // The matched document was ingested before this one: this one is the copy.
        if let (Some(mine), Some(theirs)) = (host(&d.url), host(&by_id[best.as_str()].url)) {
            if mine == theirs {
                within += 1;
            } else {
                across += 1;
                *pairs.entry((mine, theirs)).or_default() += 1;
            }
        }
    }
    prop_assert_eq!(r.days.len(), 1);
    prop_assert_eq!(r.days[0].documents, n as u64);
    // A day's duplicates: its members that are not their cluster's original.
    let duplicates = outcomes.iter().filter(|o| o.duplicate_of.is_some()).count() as u64;
    prop_assert_eq!(r.days[0].duplicates, duplicates);
    prop_assert_eq!(
        (r.hosts.across_hosts, r.hosts.within_host),
        (across, within)
    );
    prop_assert!(r.hosts.exact);
    let got: BTreeMap<(String, String), u64> = r
        .hosts
        .pairs
        .iter()
        .map(|p| ((p.copy.clone(), p.source.clone()), p.pages))
        .collect();
    prop_assert_eq!(got, pairs);
    prop_assert_eq!(
        r.hosts.documents_with_host,
        docs.iter().filter(|d| host(&d.url).is_some()).count() as u64
    );

    // The largest clusters: the sizes of the three largest of two or more, each listing its
    // first members in ingest order.
    let mut largest: Vec<(u64, u64)> = sizes
        .iter()
        .filter(|(_, &s)| s >= 2)
        .map(|(&id, &s)| (s, id))
        .collect();
    largest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    largest.truncate(3);
    let got: Vec<(u64, u64)> = r.largest.iter().map(|c| (c.size, c.similar_id)).collect();
    prop_assert_eq!(got, largest);
    for c in &r.largest {
        let first: Vec<&str> = outcomes
            .iter()
            .filter(|o| o.similar_id == Some(c.similar_id))
            .map(|o| o.id.as_str())
            .take(4)
            .collect();
        let listed: Vec<&str> = c.members.iter().take(4).map(|m| m.id.as_str()).collect();
        prop_assert_eq!(&listed, &first);
        prop_assert_eq!(c.members.iter().filter(|m| m.original).count(), 1);
        for m in &c.members {
            prop_assert_eq!(&m.url, &by_id[m.id.as_str()].url);
            prop_assert_eq!(m.links.is_empty(), m.id == first[0]);
        }
    }
    prop_assert_eq!(r.documents, n as u64);
    prop_assert_eq!(r.clusters, sizes.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn the_report_equals_a_brute_force_count(seed in any::<u64>(), n in 1usize..120, hosts in 1u64..6) {
        check(seed, n, hosts)?;
    }
}

#[test]
fn report_writes_a_page_outside_the_store_and_refuses_one_inside() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let o = run(
        dir,
        &["--db", "s.db", "ingest", "-q", sample().to_str().unwrap()],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(dir, &["--db", "s.db", "report", "-o", "out/r.html"]);
    assert_ne!(code(&o), 0, "a missing directory is an error");
    assert!(stderr(&o).contains("out/r.html"), "{}", stderr(&o));
    let o = run(dir, &["--db", "s.db", "report", "-o", "s.db/r.html"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("inside the store directory"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("s.db/r.html").exists());
    let o = run(dir, &["--db", "s.db", "report", "-o", "r.html"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = std::fs::read_to_string(dir.join("r.html")).unwrap();
    // Self-contained: nothing is fetched.
    for outside in ["src=\"http", "href=\"http", "<link", "@import", "url("] {
        assert!(!page.contains(outside), "{outside}");
    }
    let json = page
        .split("<script type=\"application/json\" id=\"fpdb-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the data element");
    let data: serde_json::Value = serde_json::from_str(json).unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir, &["--db", "s.db", "report", "--json"]))).unwrap();
    for k in ["documents", "clusters", "cluster_sizes", "largest"] {
        assert_eq!(data[k], listed[k], "{k}");
    }
    assert_eq!(data["documents"], 100);
    let o = run(dir, &["--db", "s.db", "report", "-o", "-"]);
    assert_eq!(code(&o), 0);
    let piped = stdout(&o);
    assert!(piped.starts_with("<!doctype html>"), "{piped}");
    assert!(piped.contains("id=\"fpdb-data\">{\"generated\":"));
    assert!(!dir.join("-").exists());
    // No store: a clear error, no page.
    let o = run(dir, &["--db", "none.db", "report", "-o", "n.html"]);
    assert_eq!(code(&o), 2);
    assert!(!dir.join("n.html").exists());
}

/// `GET /v1/report` while the server takes writes all along is of one state of the store: its
/// cluster size classes and its days add up to its documents and clusters (the report is made
/// in chunks of 4,096 records, and writes come between them).
#[test]
fn a_report_made_during_writes_adds_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut rng = Rng(7);
    let lines: Vec<serde_json::Value> = (0..12_000)
        .map(|i| serde_json::json!({"id": format!("d{i}"), "text": synthetic_doc(&mut rng, 3)}))
        .collect();
    write_jsonl(&dir.join("in.jsonl"), &lines);
    let o = run(dir, &["--db", "s.db", "ingest", "-q", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let server = std::sync::Arc::new(common::server::Server::start(dir, "s.db", &[]));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (server, stop) = (server.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(11);
            let mut batches = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let docs: Vec<serde_json::Value> = (0..50)
                    .map(|i| serde_json::json!({"id": format!("w{batches}-{i}"), "text": synthetic_doc(&mut rng, 3)}))
                    .collect();
                let (status, v) =
                    server.post("/v1/documents", &serde_json::json!({ "documents": docs }));
                assert_eq!(status, 200, "{v}");
                batches += 1;
            }
            batches
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (status, report) = server.get("/v1/report");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let batches = writer.join().unwrap();
    assert_eq!(status, 200, "{report}");
    assert!(batches > 2, "the writes went on: {batches} batches");
    let sum = |list: &str, field: &str| -> u64 {
        report[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[field].as_u64().unwrap())
            .sum()
    };
    let documents = report["documents"].as_u64().unwrap();
    assert!(documents >= 12_000, "{documents}");
    assert_eq!(sum("cluster_sizes", "documents"), documents);
    assert_eq!(
        sum("cluster_sizes", "clusters"),
        report["clusters"].as_u64().unwrap()
    );
    assert_eq!(sum("days", "documents"), documents);
}
