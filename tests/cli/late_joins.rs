//! Late joins through the binary: a short article in a site's template, ingested in one run
//! before the site's other pages, joins its article's page on another site in the next run,
//! which makes the template furniture. The first run's output line named its own cluster;
//! the second run says how many pages joined late (`late_joins` in `--json`), and `export`
//! and `verify` show a consistent store with the join; with `--late-links false` the page
//! stays alone and nothing is counted.

use crate::common;

use common::{run, write_jsonl, Rng};
use serde_json::{json, Value};

fn lines(rng: &mut Rng, n: usize, k: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, k)).collect()
}

/// `fpdb args` in `dir`, which must succeed.
fn ok(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
    for (db, on) in [("on.db", true), ("off.db", false)] {
        let flag = if on { "true" } else { "false" };
        let first = [
            "--db",
            db,
            "ingest",
            "-q",
            "first.jsonl",
            "--late-links",
            flag,
        ];
        ok(
            dir.path(),
            &[&first[..], &["--output", "first.out"]].concat(),
        );
        let first = similar_ids(&std::fs::read(dir.path().join("first.out")).unwrap());
        assert_ne!(first["x"], first["a"]);
        let out = ok(dir.path(), &["--db", db, "ingest", "site.jsonl", "--json"]);
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["late_joins"], u64::from(on), "{summary}");
        let now = similar_ids(&ok(dir.path(), &["--db", db, "export", "-q"]).stdout);
        // With the rule off the copy stays alone.
        assert_eq!(now["x"] == now["a"], on, "{now:?}");
        assert_ne!(now["s0"], now["a"]);
        ok(dir.path(), &["--db", db, "verify"]);
    }
}
