//! Crash safety, for real: an ingest is killed with SIGKILL at random moments, the store is
//! reopened, every index must agree with the documents, and every result the killed run had
//! acknowledged (written to --output, which happens only after a sync) must be in the store.
//! The store has the default algorithms and the exact-key ones that keep more per document
//! (keyword weights, titles, paragraph keys); pages of sites whose furniture is learned as
//! they come are killed too, with late links (a second commit after a batch) at work.

use crate::common;

use std::collections::HashSet;
use std::io::Write;
use std::time::{Duration, Instant};

use common::{code, json_lines, run, stderr};

const DOCS: usize = 40_000;

const ALGOS: &str = "nshash,simhash,minhash,keywords-check,punct-title,two-stage";

fn write_input(path: &std::path::Path) {
    let mut rng = common::Rng(0x5eed);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut texts: Vec<String> = Vec::new();
    for i in 0..DOCS {
        let text = if i % 5 == 4 {
            // A repost of an earlier document with a new first line.
            format!(
                "【转载】第{i}号\n{}",
                texts[rng.below(texts.len() as u64) as usize]
            )
        } else {
            common::synthetic_doc(&mut rng, 3)
        };
        // Titles for the algorithms that read them (punct-title, two-stage).
        let title = format!("标题 {}", i % 7);
        writeln!(
            f,
            "{}",
            serde_json::json!({"id": format!("doc{i}"), "title": title, "text": text})
        )
        .unwrap();
        texts.push(text);
    }
}

#[test]
fn killed_ingests_leave_a_consistent_store_with_every_acknowledged_document() {
    let dir = tempfile::tempdir().unwrap();
    write_input(&dir.path().join("in.jsonl"));
    let mut rng = common::Rng(99);
    let mut killed_mid_run = 0;
    for round in 0..6 {
        let out = format!("out{round}.jsonl");
        let mut child = common::fpdb()
            .current_dir(dir.path())
            .args([
                "ingest",
                "in.jsonl",
                "--db",
                "db",
                "--algos",
                ALGOS,
                "--batch-size",
                "64",
                "--quiet",
                "--output",
                &out,
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        killed_mid_run += usize::from(kill_within(&mut child, 150 + rng.below(900)));
        if !store_was_made(&dir.path().join("db"), &dir.path().join(&out), round) {
            continue;
        }

        // Reopen: consistent, and nothing acknowledged is lost.
        let v = run(dir.path(), &["--db", "db", "verify"]);
        assert_eq!(code(&v), 0, "round {round}: {}", stderr(&v));
        every_acknowledged_is_stored(&dir.path().join("db"), &dir.path().join(&out), round);
    }
    assert!(
        killed_mid_run >= 3,
        "only {killed_mid_run} runs were killed mid-way"
    );

    // A final run completes the store; every document is in exactly once.
    let o = run(dir.path(), &["ingest", "in.jsonl", "--db", "db", "--quiet"]);
    assert!(matches!(code(&o), 0 | 3), "{}", stderr(&o));
    assert_eq!(code(&run(dir.path(), &["--db", "db", "verify"])), 0);
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .open(dir.path().join("db"))
        .unwrap();
    assert_eq!(db.searcher().stats().documents, DOCS as u64);
    // Reposts were found despite the interruptions.
    let mut dups = 0;
    db.searcher()
        .export(&mut |o| {
            dups += usize::from(o.duplicate_of.is_some());
            Ok(())
        })
        .unwrap();
    assert!(dups >= DOCS / 5 * 9 / 10, "{dups} duplicates");
}

/// Kill `child` with SIGKILL after `ms` milliseconds unless it ended before; whether it was
/// killed. It has ended either way when this returns.
fn kill_within(child: &mut std::process::Child, ms: u64) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(ms) && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = child.try_wait().unwrap().is_none();
    if killed {
        child.kill().unwrap();
    }
    child.wait().unwrap();
    killed
}

/// Whether the killed run of `round` had made the store at `db`. Killed before it had (a
/// loaded machine starts slowly; or between RocksDB's files and the store's first write), it
/// cannot have acknowledged anything: its `output` is empty.
fn store_was_made(db: &std::path::Path, output: &std::path::Path, round: usize) -> bool {
    let opened = fpdb::RocksStore::open_read_only(db)
        .and_then(|_| fpdb::Fpdb::builder().read_only(true).open(db).map(drop));
    match opened {
        Err(fpdb::Error::NotFound { .. }) => {
            let acked = std::fs::read_to_string(output).unwrap_or_default();
            assert!(
                acked.is_empty(),
                "round {round}: acknowledged without a store"
            );
            false
        }
        opened => {
            opened.unwrap_or_else(|e| panic!("round {round}: {e}"));
            true
        }
    }
}

/// Every document a killed run acknowledged (an "added" line of its `--output`, written only
/// after a sync) is in the store at `db`.
fn every_acknowledged_is_stored(db: &std::path::Path, output: &std::path::Path, round: usize) {
    let db = fpdb::Fpdb::builder().read_only(true).open(db).unwrap();
    let mut stored = HashSet::new();
    db.searcher()
        .export(&mut |o| {
            stored.insert(o.id);
            Ok(())
        })
        .unwrap();
    let text = std::fs::read_to_string(output).unwrap_or_default();
    // Only complete lines were acknowledged.
    let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    for line in json_lines(complete) {
        if line["status"] == "added" {
            let id = line["id"].as_str().unwrap();
            assert!(
                stored.contains(id),
                "round {round}: acknowledged {id} is missing"
            );
        }
    }
}

/// Clusters as sets of ids, in a canonical order (cluster ids may differ between stores).
fn clusters(db: &std::path::Path) -> Vec<Vec<String>> {
    let db = fpdb::Fpdb::builder().read_only(true).open(db).unwrap();
    let mut by: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
    db.searcher()
        .export(&mut |o| {
            by.entry(o.similar_id.unwrap()).or_default().push(o.id);
            Ok(())
        })
        .unwrap();
    let mut all: Vec<Vec<String>> = by
        .into_values()
        .map(|mut ids| {
            ids.sort();
            ids
        })
        .collect();
    all.sort();
    all
}

/// The presence filter saved by a clean run is loaded by the next one; killing that run (and
/// a run that rebuilds the filter by a scan) must leave nothing that a later run trusts
/// wrongly: the finished store has the clusters of one uninterrupted ingest.
#[test]
fn killed_runs_with_a_saved_presence_filter_change_no_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(&d.join("in.jsonl"));
    let text = std::fs::read_to_string(d.join("in.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = DOCS / 4;
    std::fs::write(d.join("a.jsonl"), lines[..cut].join("\n") + "\n").unwrap();
    std::fs::write(d.join("b.jsonl"), lines[cut..].join("\n") + "\n").unwrap();
    let ingest = |input: &str, db: &str, extra: &[&str]| {
        let mut args = vec!["ingest", input, "--db", db, "--algos", ALGOS, "--quiet"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--batch-size", "64"]);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let complete = |input: &str, db: &str| {
        let args = ingest(input, db, &[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(d, &args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    };
    complete("in.jsonl", "ref");
    complete("a.jsonl", "db");
    assert!(
        d.join("db/fpdb-presence").exists(),
        "saved by the clean run"
    );
    let mut rng = common::Rng(7);
    let mut killed = 0;
    for extra in [&[][..], &["--memory-filters"][..], &[][..]] {
        let mut child = common::fpdb()
            .current_dir(d)
            .args(ingest("b.jsonl", "db", extra))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        killed += usize::from(kill_within(&mut child, 200 + rng.below(500)));
        assert_eq!(code(&run(d, &["--db", "db", "verify"])), 0);
    }
    assert!(killed >= 1, "no run was killed mid-way");
    let o = common::fpdb()
        .current_dir(d)
        .args(ingest("b.jsonl", "db", &[]))
        .output()
        .unwrap();
    assert!(matches!(code(&o), 0 | 3), "{}", stderr(&o));
    assert_eq!(clusters(&d.join("db")), clusters(&d.join("ref")));
}

/// Pages of 300 sites (each site's furniture around short articles; every fifth page a copy
/// of another site's article put in its template), shuffled, so that sites learn their
/// furniture as the ingest goes and late links (`late_links`: joins and splits after a
/// batch, a second commit) are at work in small batches. Killed at random moments, the store
/// reopens consistent with every acknowledged page, and a final run completes it.
#[test]
fn killed_ingests_of_pages_with_late_links_leave_a_consistent_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = common::Rng(0x1a7e_c4a5);
    let mut pages: Vec<String> = Vec::new();
    let mut articles: Vec<Vec<String>> = Vec::new();
    for site in 0..300 {
        let furniture = common::sites::furniture(&mut rng);
        for i in 0..40 {
            let body = if i % 5 == 4 && !articles.is_empty() {
                articles[rng.below(articles.len() as u64) as usize].clone()
            } else {
                common::paragraphs(&mut rng, 2)
            };
            articles.push(body.clone());
            let p = common::sites::page(
                &format!("p{site}-{i}"),
                &format!("s{site}.example"),
                &furniture,
                &body,
            );
            pages.push(serde_json::json!({"id": p.id, "url": p.url, "text": p.text}).to_string());
        }
    }
    for i in (1..pages.len()).rev() {
        pages.swap(i, rng.below(i as u64 + 1) as usize);
    }
    std::fs::write(d.join("pages.jsonl"), pages.join("\n") + "\n").unwrap();
    let args = |db: &str, out: &str| -> Vec<String> {
        [
            "ingest",
            "pages.jsonl",
            "--db",
            db,
            "--batch-size",
            "8",
            "--quiet",
            "--output",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    // The rule is at work on these pages: an uninterrupted run counts late links.
    let o = run(
        d,
        &[
            "ingest",
            "pages.jsonl",
            "--db",
            "whole",
            "--batch-size",
            "8",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    let late = summary["late_joins"].as_u64().unwrap() + summary["late_splits"].as_u64().unwrap();
    assert!(late > 0, "{summary}");
    let mut rng = common::Rng(41);
    let mut killed = 0;
    for round in 0..5 {
        let out = format!("out{round}.jsonl");
        let mut child = common::fpdb()
            .current_dir(d)
            .args(args("db", &out))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        killed += usize::from(kill_within(&mut child, 100 + rng.below(600)));
        if !store_was_made(&d.join("db"), &d.join(&out), round) {
            continue;
        }
        let v = run(d, &["--db", "db", "verify"]);
        assert_eq!(code(&v), 0, "round {round}: {}", stderr(&v));
        every_acknowledged_is_stored(&d.join("db"), &d.join(&out), round);
    }
    assert!(killed >= 2, "only {killed} runs were killed mid-way");
    let o = run(
        d,
        &[
            "ingest",
            "pages.jsonl",
            "--db",
            "db",
            "--batch-size",
            "8",
            "--quiet",
        ],
    );
    assert!(matches!(code(&o), 0 | 3), "{}", stderr(&o));
    assert_eq!(code(&run(d, &["--db", "db", "verify"])), 0);
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .open(d.join("db"))
        .unwrap();
    assert_eq!(db.searcher().stats().documents, pages.len() as u64);
}
