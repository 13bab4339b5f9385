//! Operations on a live store, with the real binary: delete (clusters re-derived), backup
//! (also while an ingest runs) and restore by opening the copy, compact.

use crate::common;

use std::path::Path;
use std::process::Stdio;

use common::{code, json_lines, run, stderr, stdout};
use serde_json::Value;

fn export(dir: &Path, db: &str) -> Vec<Value> {
    json_lines(&stdout(&run(dir, &["--db", db, "export"])))
}

fn verify_ok(dir: &Path, db: &str) {
    let o = run(dir, &["--db", db, "verify"]);
    assert_eq!(code(&o), 0, "{db}: {}{}", stdout(&o), stderr(&o));
}

#[test]
fn delete_hands_the_cluster_on_and_reports_unknown_ids() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let sample = common::sample();
    assert_eq!(
        code(&run(p, &["-q", "ingest", sample.to_str().unwrap()])),
        0
    );
    let before = export(p, "fpdb.db");
    let clusters = json_lines(&stdout(&run(p, &["clusters", "--json", "--min-size", "2"])));
    let first = clusters[0]["members"][0].as_str().unwrap().to_string();
    let second = clusters[0]["members"][1].as_str().unwrap().to_string();
    std::fs::write(p.join("ids.txt"), format!("{first}\nnot-stored\n")).unwrap();
    let o = run(p, &["delete", "--ids-from", "ids.txt", "--json"]);
    assert_eq!(code(&o), 3, "an unknown id is reported: {}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines[0]["status"], "deleted");
    assert_eq!(lines[1]["status"], "not_found");
    verify_ok(p, "fpdb.db");
    let after = export(p, "fpdb.db");
    assert_eq!(after.len(), before.len() - 1);
    assert!(after.iter().all(|o| o["id"] != first.as_str()));
    let heir = after.iter().find(|o| o["id"] == second.as_str()).unwrap();
    assert!(
        heir["duplicate_of"].is_null(),
        "the next member is the first now: {heir}"
    );
    assert_eq!(heir["similar_id"], clusters[0]["similar_id"]);
    // Everything else is untouched.
    for o in &after {
        let b = before.iter().find(|b| b["id"] == o["id"]).unwrap();
        if b["similar_id"] != clusters[0]["similar_id"] {
            assert_eq!(o, b);
        }
    }
    // Deleting the same id again: nothing to delete (exit 3); an empty request is an error.
    assert_eq!(code(&run(p, &["delete", &first])), 3);
    assert_eq!(code(&run(p, &["delete"])), 2);
    // A missing store is an error, and is not created.
    assert_eq!(code(&run(p, &["--db", "none.db", "delete", "x"])), 2);
    assert!(!p.join("none.db").exists());
}

#[test]
fn a_backup_opens_as_the_same_store_and_compact_changes_nothing_visible() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let sample = common::sample();
    assert_eq!(
        code(&run(p, &["-q", "ingest", sample.to_str().unwrap()])),
        0
    );
    let o = run(p, &["backup", "bk"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    verify_ok(p, "bk");
    assert_eq!(export(p, "bk"), export(p, "fpdb.db"));
    // The copy is a store of its own: writing to it leaves the original alone.
    let q = run(
        p,
        &[
            "--db",
            "bk",
            "delete",
            "--json",
            export(p, "bk")[0]["id"].as_str().unwrap(),
        ],
    );
    assert_eq!(code(&q), 0, "{}", stderr(&q));
    assert_eq!(export(p, "bk").len() + 1, export(p, "fpdb.db").len());
    // Into an existing directory: refused.
    assert_eq!(code(&run(p, &["backup", "bk"])), 2);
    let before = export(p, "fpdb.db");
    let o = run(p, &["compact", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["bytes_after"].as_u64().unwrap() > 0);
    assert_eq!(export(p, "fpdb.db"), before);
    verify_ok(p, "fpdb.db");
}

/// Write 30,000 generated documents to `big.jsonl` in `dir` and start `fpdb ingest` on them
/// (nshash, batches of 64, so a reader meets many flushes).
fn spawn_big_ingest(dir: &Path, seed: u64) -> std::process::Child {
    let mut rng = common::Rng(seed);
    let mut body = String::new();
    for i in 0..30_000 {
        let text = common::synthetic_doc(&mut rng, 3);
        body.push_str(&serde_json::json!({"id": format!("d{i}"), "text": text}).to_string());
        body.push('\n');
    }
    std::fs::write(dir.join("big.jsonl"), body).unwrap();
    common::fpdb()
        .current_dir(dir)
        .args([
            "-q",
            "ingest",
            "big.jsonl",
            "--algos",
            "nshash",
            "--batch-size",
            "64",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_backup_taken_while_an_ingest_runs_is_consistent() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut ingest = spawn_big_ingest(p, 9);
    // Wait for the store to exist, then back it up (read-only view) while it grows.
    let mut taken = 0;
    for i in 0..200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if !p.join("fpdb.db/CURRENT").exists() {
            continue;
        }
        let name = format!("bk{i}");
        let o = run(p, &["backup", &name]);
        if code(&o) == 0 {
            verify_ok(p, &name);
            taken += 1;
        } else {
            // Only before the first batch is synced may there be nothing to copy yet.
            assert!(stderr(&o).contains("no fpdb store"), "{}", stderr(&o));
        }
        if taken >= 3 {
            break;
        }
    }
    assert!(ingest.wait().unwrap().success());
    assert!(taken >= 1, "no backup taken during the ingest");
    verify_ok(p, "fpdb.db");
}

/// Run `fpdb` with the clock set to `now` (seconds since the epoch).
fn run_at(dir: &Path, now: u64, args: &[&str]) -> std::process::Output {
    common::fpdb()
        .current_dir(dir)
        .env("FPDB_NOW", now.to_string())
        .args(args)
        .output()
        .unwrap()
}

fn docs(dir: &Path, name: &str, ids: &[&str], seed: u64) {
    let mut rng = common::Rng(seed);
    let body: String = ids
        .iter()
        .map(|id| {
            let text = common::synthetic_doc(&mut rng, 4);
            serde_json::json!({"id": id, "text": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join(name), body).unwrap();
}

#[test]
fn expire_and_retention_delete_by_ingest_time() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    const DAY: u64 = 86_400;
    let t0 = 1_780_000_000; // 2026-05-28
    docs(p, "old.jsonl", &["o1", "o2", "o3"], 1);
    docs(p, "new.jsonl", &["n1", "n2"], 2);
    assert_eq!(code(&run_at(p, t0, &["-q", "ingest", "old.jsonl"])), 0);
    assert_eq!(
        code(&run_at(p, t0 + 10 * DAY, &["-q", "ingest", "new.jsonl"])),
        0
    );
    // Nothing is older than 20 days; the first three are older than 5.
    let o = run_at(
        p,
        t0 + 10 * DAY,
        &["expire", "--older-than", "20d", "--json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["removed"], 0);
    let o = run_at(
        p,
        t0 + 10 * DAY,
        &["expire", "--older-than", "5d", "--json"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["removed"].clone(), v["documents"].clone()),
        (3.into(), 2.into())
    );
    verify_ok(p, "fpdb.db");
    let ids: Vec<Value> = export(p, "fpdb.db")
        .iter()
        .map(|o| o["id"].clone())
        .collect();
    assert_eq!(ids, ["n1", "n2"]);
    // --before a date: 2026-06-01 is after t0 + 10 days? No: t0 + 10 d = 2026-06-07.
    assert_eq!(code(&run_at(p, t0, &["-q", "ingest", "old.jsonl"])), 0);
    let o = run(p, &["expire", "--before", "2026-06-01", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["removed"], 3, "{v}");
    // Bad values are refused before anything happens.
    for bad in [
        vec!["expire", "--before", "yesterday"],
        vec!["expire", "--older-than", "soon"],
        vec!["expire"],
        vec!["expire", "--before", "2026-01-01", "--older-than", "1d"],
        vec!["ingest", "new.jsonl", "--retention", "forever"],
    ] {
        let o = run(p, &bad);
        assert_eq!(code(&o), 2, "{bad:?}");
    }
    assert_eq!(export(p, "fpdb.db").len(), 2);

    // Retention: set by one ingest, applied by every later one.
    let r = tempfile::tempdir().unwrap();
    let r = r.path();
    docs(r, "old.jsonl", &["o1", "o2", "o3"], 1);
    docs(r, "new.jsonl", &["n1", "n2"], 2);
    let o = run_at(r, t0, &["-q", "ingest", "old.jsonl", "--retention", "7d"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run_at(r, t0 + 3 * DAY, &["ingest", "new.jsonl", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["expired"], 0);
    let o = run_at(r, t0 + 8 * DAY, &["ingest", "new.jsonl", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["expired"], 3, "{v}");
    assert_eq!(export(r, "fpdb.db").len(), 2);
    // `--retention off` keeps everything from then on.
    let o = run_at(
        r,
        t0 + 30 * DAY,
        &["ingest", "new.jsonl", "--retention", "off", "--json"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["expired"], 0);
    verify_ok(r, "fpdb.db");
}

/// `stats`, `query` and `export` run over and over against a store while an ingest writes it
/// (flushes, log deletions, compactions): every run succeeds (a read-only open that races a
/// deleted file is retried) and never sees more documents than the ingest finally holds.
#[test]
fn reads_while_an_ingest_runs_succeed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut rng = common::Rng(11);
    std::fs::write(p.join("page.txt"), common::synthetic_doc(&mut rng, 3)).unwrap();
    let mut ingest = spawn_big_ingest(p, 11);
    let mut reads = 0;
    let mut seen = Vec::new();
    for _ in 0..400 {
        if !p.join("fpdb.db/CURRENT").exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        for args in [
            &["stats", "--json"][..],
            &["query", "--file", "page.txt"][..],
        ] {
            let o = run(p, args);
            let err = stderr(&o);
            // Before the first batch is synced there may be no store to open yet.
            if err.contains("no fpdb store") {
                continue;
            }
            assert!(
                code(&o) == 0 || (args[0] == "query" && code(&o) == 1),
                "{args:?}: exit {} {err}",
                code(&o)
            );
            if args[0] == "stats" {
                let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
                seen.push(v["documents"].as_u64().unwrap());
            }
            reads += 1;
        }
        if ingest.try_wait().unwrap().is_some() {
            break;
        }
    }
    assert!(ingest.wait().unwrap().success());
    assert!(reads >= 4, "only {reads} reads ran during the ingest");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(seen.iter().all(|&n| n <= 30_000), "{seen:?}");
    verify_ok(p, "fpdb.db");
}

/// A byte flipped inside the largest table file (document records): `verify`, `export` and
/// `report` stop with a located error (the file and offset RocksDB's block checksum names) and exit 2, never
/// a panic; `stats`, which reads no record, still answers.
#[test]
fn a_flipped_byte_in_a_table_file_is_reported_with_its_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let ids: Vec<String> = (0..3000).map(|i| format!("d{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    docs(p, "in.jsonl", &ids, 5);
    let o = run(p, &["-q", "ingest", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut tables: Vec<_> = std::fs::read_dir(p.join("fpdb.db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| f.extension().is_some_and(|x| x == "sst"))
        .collect();
    tables.sort_by_key(|f| std::fs::metadata(f).unwrap().len());
    let largest = tables
        .last()
        .expect("the ingest flushed table files")
        .clone();
    let mut bytes = std::fs::read(&largest).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 0xff;
    std::fs::write(&largest, bytes).unwrap();
    let name = largest.file_name().unwrap().to_string_lossy().to_string();
    for args in [
        &["verify"][..],
        &["export"][..],
        &["report", "-o", "r.html"][..],
    ] {
        let o = run(p, args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains("Corruption") && err.contains(&name),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!p.join("r.html").exists(), "no page from a damaged store");
    let o = run(p, &["stats", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// Documents in the store at `db` (by `stats --json`), with `env` set.
fn stored_documents(p: &Path, db: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = common::fpdb();
    c.current_dir(p).args(["stats", "--json", "--db", db]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_flipped_byte_in_the_write_ahead_log_is_an_error_not_a_silent_loss() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut ingest = spawn_big_ingest(p, 21);
    // Kill the ingest once its log holds a few MB of acknowledged batches (nothing flushed).
    let log = || -> Option<std::path::PathBuf> {
        std::fs::read_dir(p.join("fpdb.db"))
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "log"))
            .max_by_key(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
    };
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        if log().is_some_and(|l| std::fs::metadata(l).map_or(0, |m| m.len()) > 2 << 20) {
            break;
        }
    }
    ingest.kill().unwrap();
    ingest.wait().unwrap();
    let log = log().expect("the ingest wrote a log");
    assert!(std::fs::metadata(&log).unwrap().len() > 2 << 20);
    let intact = p.join("intact.db");
    std::fs::create_dir(&intact).unwrap();
    for e in std::fs::read_dir(p.join("fpdb.db")).unwrap() {
        let e = e.unwrap().path();
        if e.file_name().unwrap() != "LOCK" {
            std::fs::copy(&e, intact.join(e.file_name().unwrap())).unwrap();
        }
    }
    let o = stored_documents(p, "intact.db", &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let all = serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["documents"]
        .as_u64()
        .unwrap();
    assert!(all > 1000, "{all} documents acknowledged before the kill");

    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let name = log.file_name().unwrap().to_string_lossy().to_string();
    for args in [
        &["stats"][..],
        &["verify"][..],
        &["export"][..],
        &["ingest", "big.jsonl"][..],
    ] {
        let o = run(p, args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains("Corruption") && err.contains(&name) && err.contains("write-ahead log"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The way out the message offers: the writes before the damage.
    let o = stored_documents(p, "fpdb.db", &[("FPDB_WAL_RECOVERY", "point-in-time")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let before = serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["documents"]
        .as_u64()
        .unwrap();
    assert!(before < all, "{before} of {all}");
}

#[test]
fn verify_deep_finds_damage_no_scan_reads() {
    // A flipped byte in a table file's filter escapes `verify` (its scans read data and index
    // blocks only) but not `verify --deep` (every block, with checksums). Find such a byte in
    // the second half of a table file: the largest files first (the records' family has no
    // filter: its reads always hit).
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let o = run(p, &["-q", "ingest", common::sample().to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let db = p.join("fpdb.db");
    let mut tables: Vec<std::path::PathBuf> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| f.extension().is_some_and(|x| x == "sst"))
        .collect();
    tables.sort_by_key(|f| std::cmp::Reverse(std::fs::metadata(f).unwrap().len()));
    let check = |deep: bool| {
        let db = fpdb::Fpdb::builder().read_only(true).open(&db);
        db.and_then(|db| {
            if deep {
                db.searcher().verify_checksums()?;
            }
            db.searcher().verify().map(|_| ())
        })
    };
    let mut found = None;
    'tables: for table in &tables {
        let original = std::fs::read(table).unwrap();
        let len = original.len();
        // The filter blocks come before the index and the properties (up to the last half
        // of a small file): about 200 places in that half.
        for at in (len / 2..len - 60).step_by((len / 400).max(5)) {
            let mut bytes = original.clone();
            bytes[at] ^= 0xff;
            std::fs::write(table, &bytes).unwrap();
            let (plain, deep) = (check(false), check(true));
            if plain.is_err() {
                assert!(deep.is_err(), "byte {at}: verify failed, --deep passed");
            } else if let Err(e) = deep {
                std::fs::write(table, &original).unwrap();
                found = Some((table.clone(), original, at, e.to_string()));
                break 'tables;
            }
        }
        std::fs::write(table, &original).unwrap();
    }
    let (largest, original, at, err) = found.expect("a byte only --deep notices");
    let name = largest.file_name().unwrap().to_string_lossy().to_string();
    assert!(err.contains("Corruption") && err.contains(&name), "{err}");
    // The same through the binary: verify says ok, verify --deep exits 2 naming the file.
    let mut bytes = original.clone();
    bytes[at] ^= 0xff;
    std::fs::write(&largest, &bytes).unwrap();
    assert_eq!(code(&run(p, &["verify"])), 0);
    let o = run(p, &["verify", "--deep"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains(&name), "{}", stderr(&o));
    std::fs::write(&largest, &original).unwrap();
    let o = run(p, &["verify", "--deep", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json_lines(&stdout(&o))[0]["deep"], true);
}
