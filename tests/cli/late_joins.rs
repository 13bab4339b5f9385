//! Late joins through the binary: a short article in a site's template, ingested in one run
//! before the site's other pages, joins its article's page on another site in the next run,
//! which makes the template furniture. The first run's output line named its own cluster;
//! the second run says how many pages joined late (`late_joins` in `--json`), and `export`
//! and `verify` show a consistent store with the join.

use crate::common;

use common::{run, write_jsonl, Rng};
use serde_json::{json, Value};

fn lines(rng: &mut Rng, n: usize, k: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, k)).collect()
}

fn similar_ids(export: &[u8]) -> std::collections::BTreeMap<String, u64> {
    String::from_utf8_lossy(export)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_string(),
                v["similar_id"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_page_joined_late_is_counted_and_exported_in_its_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x1a7e_c011_0000_0001);
    let template = lines(&mut rng, 3, 2);
    let article = lines(&mut rng, 4, 1);
    let copy = [template.clone(), article.clone()].concat().join("\n");
    write_jsonl(
        &dir.path().join("first.jsonl"),
        &[
            json!({"id": "a", "url": "https://other.example/a", "text": article.join("\n")}),
            json!({"id": "x", "url": "https://news.example/x", "text": copy}),
        ],
    );
    let site: Vec<Value> = (0..3)
        .map(|i| {
            let text = [lines(&mut rng, 2, 4), template.clone()].concat().join("\n");
            json!({"id": format!("s{i}"), "url": format!("https://news.example/s{i}"), "text": text})
        })
        .collect();
    write_jsonl(&dir.path().join("site.jsonl"), &site);
    let out = run(
        dir.path(),
        &[
            "--db",
            "s.db",
            "ingest",
            "-q",
            "first.jsonl",
            "--output",
            "first.out",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = similar_ids(&std::fs::read(dir.path().join("first.out")).unwrap());
    assert_ne!(first["x"], first["a"]);
    let out = run(
        dir.path(),
        &["--db", "s.db", "ingest", "site.jsonl", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["late_joins"], 1, "{summary}");
    let out = run(dir.path(), &["--db", "s.db", "export", "-q"]);
    let now = similar_ids(&out.stdout);
    assert_eq!(now["x"], now["a"]);
    assert_ne!(now["s0"], now["a"]);
    let out = run(dir.path(), &["--db", "s.db", "verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same pages with the rule off: the copy stays alone, nothing joins late.
    let out = run(
        dir.path(),
        &[
            "--db",
            "off.db",
            "ingest",
            "-q",
            "first.jsonl",
            "--late-links",
            "false",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        dir.path(),
        &["--db", "off.db", "ingest", "site.jsonl", "--json"],
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["late_joins"], 0, "{summary}");
    let now = similar_ids(&run(dir.path(), &["--db", "off.db", "export", "-q"]).stdout);
    assert_ne!(now["x"], now["a"]);
}
