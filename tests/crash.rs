//! Crash safety, for real: an ingest is killed with SIGKILL at random moments, the store is
//! reopened, every index must agree with the documents, and every result the killed run had
//! acknowledged (written to --output, which happens only after a sync) must be in the store.
//! The store has the default algorithms and the exact-key ones that keep more per document
//! (keyword weights, titles, paragraph keys).

mod common;

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
        let start = Instant::now();
        let deadline = Duration::from_millis(150 + rng.below(900));
        while start.elapsed() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed_mid_run += 1;
        }
        child.wait().unwrap();

        // Reopen: consistent, and nothing acknowledged is lost.
        let v = run(dir.path(), &["--db", "db", "verify"]);
        assert_eq!(code(&v), 0, "round {round}: {}", stderr(&v));
        let db = fpdb::Fpdb::builder()
            .read_only(true)
            .open(dir.path().join("db"))
            .unwrap();
        let mut stored = HashSet::new();
        db.export(&mut |o| {
            stored.insert(o.id);
            Ok(())
        })
        .unwrap();
        let text = std::fs::read_to_string(dir.path().join(&out)).unwrap_or_default();
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
    assert_eq!(db.stats().documents, DOCS as u64);
    // Reposts were found despite the interruptions.
    let mut dups = 0;
    db.export(&mut |o| {
        dups += usize::from(o.duplicate_of.is_some());
        Ok(())
    })
    .unwrap();
    assert!(dups >= DOCS / 5 * 9 / 10, "{dups} duplicates");
}
