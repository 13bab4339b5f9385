//! fpdb in a data pipeline, on the real binary: `dedup` writes exactly one record per cluster
//! (its original) whatever order the records arrive in, a re-run is "already stored" and
//! succeeds, and a first run that stores nothing leaves no store.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{code, json_lines, run, run_stdin, stderr, stdout, synthetic_doc, write_jsonl, Rng};
use serde_json::json;

/// A corpus of `clusters` stories, each with an original and up to three copies (a sentence
/// dropped or added), every member dated, in shuffled order: copies often arrive before their
/// original. Returns the lines and, per story, the id of its earliest member.
fn shuffled_corpus(seed: u64, clusters: usize) -> (Vec<serde_json::Value>, Vec<String>) {
    let mut rng = Rng(seed);
    let mut lines = Vec::new();
    let mut originals = Vec::new();
    for c in 0..clusters {
        let text = synthetic_doc(&mut rng, 8);
        let sentences: Vec<&str> = text.split_inclusive('。').collect();
        let copies = rng.below(4) as usize;
        // Day 1..=28 of a month; the original is the earliest member.
        let first_day = 1 + rng.below(20);
        originals.push(format!("s{c}-0"));
        for m in 0..=copies {
            let body = match m {
                0 => text.clone(),
                _ if rng.below(2) == 0 => {
                    let drop = rng.index(sentences.len());
                    sentences
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != drop)
                        .map(|(_, s)| *s)
                        .collect()
                }
                _ => format!("{text}{}", synthetic_doc(&mut rng, 1)),
            };
            lines.push(json!({
                "id": format!("s{c}-{m}"),
                "text": body,
                "date": format!("2024-03-{:02}", first_day + m as u64),
            }));
        }
    }
    // Fisher-Yates.
    for i in (1..lines.len()).rev() {
        let j = rng.index(i + 1);
        lines.swap(i, j);
    }
    (lines, originals)
}

/// The export's originals (documents that name no other as their original) and every
/// document's cluster.
fn exported(dir: &std::path::Path, db: &str) -> (BTreeSet<String>, BTreeMap<String, u64>) {
    let o = run(dir, &["--db", db, "export"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut originals = BTreeSet::new();
    let mut cluster = BTreeMap::new();
    for v in json_lines(&stdout(&o)) {
        let id = v["id"].as_str().unwrap().to_string();
        if v["duplicate_of"].is_null() {
            originals.insert(id.clone());
        }
        cluster.insert(id, v["similar_id"].as_u64().unwrap());
    }
    (originals, cluster)
}

fn ids_of(jsonl: &str) -> Vec<String> {
    json_lines(jsonl)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dedup_writes_one_record_per_cluster_its_original_whatever_the_order() {
    for seed in [3, 17, 4242] {
        let dir = tempfile::tempdir().unwrap();
        let (lines, story_originals) = shuffled_corpus(seed, 40);
        let input = write_jsonl(&dir.path().join("in.jsonl"), &lines);
        let o = run(
            dir.path(),
            &[
                "dedup",
                "in.jsonl",
                "-o",
                "unique.jsonl",
                "--duplicates-out",
                "dups.jsonl",
                "--json",
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let unique = std::fs::read_to_string(dir.path().join("unique.jsonl")).unwrap();
        let dups = std::fs::read_to_string(dir.path().join("dups.jsonl")).unwrap();
        let (originals, cluster) = exported(dir.path(), "fpdb.db");
        let written: Vec<String> = ids_of(&unique);
        // Exactly the originals of the export, once each: one per final cluster.
        assert_eq!(
            written.iter().cloned().collect::<BTreeSet<_>>(),
            originals,
            "seed {seed}"
        );
        assert_eq!(written.len(), originals.len(), "seed {seed}");
        let clusters: BTreeSet<u64> = cluster.values().copied().collect();
        assert_eq!(written.len(), clusters.len(), "seed {seed}");
        // The stories' own originals are the ones kept (every copy is dated after them).
        for id in &story_originals {
            assert!(originals.contains(id), "seed {seed}: {id} is not kept");
        }
        // Every input line went to one output, byte for byte, in input order.
        let mut both: Vec<&str> = unique.lines().chain(dups.lines()).collect();
        both.sort_unstable();
        let mut all: Vec<&str> = input.lines().collect();
        all.sort_unstable();
        assert_eq!(both, all, "seed {seed}");
        let order: Vec<String> = ids_of(&input)
            .into_iter()
            .filter(|id| originals.contains(id))
            .collect();
        assert_eq!(written, order, "seed {seed}: input order");
        let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(sum["dedup"]["unique"], originals.len(), "seed {seed}");
        assert_eq!(sum["dedup"]["kept_later_predated"], 0, "seed {seed}");

        // Streaming (`--stream`, and stdin) keeps a record a later original displaced.
        let o = run(
            dir.path(),
            &[
                "--db",
                "stream.db",
                "dedup",
                "in.jsonl",
                "--stream",
                "-o",
                "s.jsonl",
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let streamed = ids_of(&std::fs::read_to_string(dir.path().join("s.jsonl")).unwrap());
        assert!(
            streamed.len() > originals.len(),
            "seed {seed}: a shuffled corpus has late originals"
        );
        let o = run_stdin(dir.path(), &["--db", "stdin.db", "dedup"], input.as_bytes());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(ids_of(&stdout(&o)), streamed, "seed {seed}: stdin streams");
        // A FIFO cannot be read twice either: it streams (and does not hang on a second pass).
        let fifo = dir.path().join("in.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let writer = {
            let (fifo, input) = (fifo.clone(), input.clone());
            std::thread::spawn(move || std::fs::write(fifo, input).unwrap())
        };
        let o = run(
            dir.path(),
            &["--db", "fifo.db", "dedup", "in.fifo", "-o", "f.jsonl"],
        );
        writer.join().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let from_fifo = ids_of(&std::fs::read_to_string(dir.path().join("f.jsonl")).unwrap());
        assert_eq!(from_fifo, streamed, "seed {seed}: a FIFO streams");
    }
}

#[test]
fn a_rerun_is_already_stored_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(99);
    let lines: Vec<serde_json::Value> = (0..30)
        .map(|i| json!({"id": format!("d{i}"), "text": synthetic_doc(&mut rng, 6)}))
        .collect();
    write_jsonl(&dir.path().join("in.jsonl"), &lines);
    for args in [
        &["ingest"][..],
        &["--db", "old.db", "ingest", "--digests", "false"][..],
    ] {
        let db = if args.contains(&"old.db") {
            "old.db"
        } else {
            "fpdb.db"
        };
        let first = [args, &["in.jsonl"]].concat();
        let o = run(dir.path(), &first);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        // The same command again: every record already stored, exit 0, nothing listed.
        let again = [
            &["--db", db][..],
            &["ingest", "in.jsonl", "--json", "-o", "r.jsonl"],
        ]
        .concat();
        let o = run(dir.path(), &again);
        assert_eq!(code(&o), 0, "{db}: {}", stderr(&o));
        assert!(!stderr(&o).contains("skipped"), "{db}: {}", stderr(&o));
        let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(sum["already_stored"], 30, "{db}");
        assert_eq!(sum["skipped"], 0, "{db}");
        assert_eq!(sum["added"], 0, "{db}");
        let results = json_lines(&std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap());
        assert!(
            results.iter().all(|r| r["status"] == "already_stored"),
            "{db}"
        );
        assert!(results.iter().all(|r| r["similar_id"].is_u64()), "{db}");
        // Another text under a stored id is still reported, and the run is a partial one.
        let mut changed = lines.clone();
        changed[4]["text"] = json!(synthetic_doc(&mut rng, 6));
        write_jsonl(&dir.path().join("changed.jsonl"), &changed);
        let o = run(
            dir.path(),
            &[&["--db", db][..], &["ingest", "changed.jsonl", "--json"]].concat(),
        );
        assert_eq!(code(&o), 3, "{db}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("changed.jsonl:5: id `d4` is stored with another text"),
            "{db}: {}",
            stderr(&o)
        );
        let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(sum["already_stored"], 29, "{db}");
        assert_eq!(sum["skipped_existing_id"], 1, "{db}");
    }
}

/// What the library's probe of a re-run says: the same text under a stored id is known by its
/// digest; another text, an unknown id, or a store without digests is left to the ingest.
#[test]
fn stored_texts_know_a_document_by_its_digest() {
    let dir = tempfile::tempdir().unwrap();
    let docs = common::sample_docs();
    for (name, digests) in [("with", true), ("without", false)] {
        let mut db = fpdb::Fpdb::builder()
            .settings(fpdb::Settings {
                digests: Some(digests),
                ..Default::default()
            })
            .create(true)
            .open(dir.path().join(name))
            .unwrap();
        assert!(
            db.searcher().stored_texts().is_none(),
            "an empty store has nothing to know"
        );
        for d in &docs[..5] {
            db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
        }
        db.sync().unwrap();
        let Some(stored) = db.searcher().stored_texts() else {
            assert!(!digests);
            continue;
        };
        assert!(digests);
        for d in &docs[..5] {
            let at_ingest = stored.already_stored(d).unwrap().expect("stored");
            let now = db
                .searcher()
                .stored_document(&d.id)
                .unwrap()
                .unwrap()
                .similar_id;
            assert_eq!(db.searcher().resolve(at_ingest).unwrap(), now);
        }
        let mut edited = docs[0].clone();
        edited.text.push('。');
        assert_eq!(stored.already_stored(&edited).unwrap(), None);
        assert_eq!(stored.already_stored(&docs[6]).unwrap(), None);
    }
}

#[test]
fn a_first_run_that_stores_nothing_leaves_no_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "{\"body\": \"no id\"}\n").unwrap();
    let o = run(dir.path(), &["--db", "e.db", "ingest", "bad.jsonl"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no store was created at e.db"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("e.db").exists());
    // So the next attempt, with other settings, is not refused for a mismatch.
    std::fs::write(
        dir.path().join("good.jsonl"),
        "{\"body\": \"a text long enough to count as a document\", \"id\": \"a\"}\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &[
            "--db",
            "e.db",
            "ingest",
            "good.jsonl",
            "--text-field",
            "body",
            "--algos",
            "nshash",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Empty stdin is an error naming it, and leaves no store either.
    let o = run_stdin(dir.path(), &["--db", "s.db", "ingest", "-"], b"");
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing to ingest: stdin held no records"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("s.db").exists());
    // An empty directory given as the store stays, emptied of what the run made.
    std::fs::create_dir(dir.path().join("empty.db")).unwrap();
    let o = run(dir.path(), &["--db", "empty.db", "ingest", "bad.jsonl"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_dir(dir.path().join("empty.db"))
            .unwrap()
            .count(),
        0
    );
    // A store that exists keeps what it had, whatever the run.
    let o = run(dir.path(), &["--db", "e.db", "ingest", "bad.jsonl"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(dir.path().join("e.db").join("CURRENT").exists());
    // --db at a file.
    std::fs::write(dir.path().join("afile"), "x").unwrap();
    for args in [&["ingest", "good.jsonl"][..], &["stats"][..]] {
        let o = run(dir.path(), &[&["--db", "afile"][..], args].concat());
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("afile is a file, not an fpdb store"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(dir.path().join("afile")).unwrap(), b"x");
}

/// Batches looked up while the batch before them is decided store what one thread stores
/// (which never looks ahead): small batches, copies and merges across them, reused ids.
#[test]
fn lookups_ahead_store_what_one_thread_stores() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, _) = shuffled_corpus(11, 60);
    let n = lines.len();
    for i in (0..n).step_by(7) {
        let mut again = lines[i].clone();
        again["id"] = json!(format!("again-{i}"));
        lines.push(again);
    }
    let reused = lines[3].clone();
    lines.push(reused);
    write_jsonl(&dir.path().join("in.jsonl"), &lines);
    let mut exports = Vec::new();
    for threads in ["1", "4"] {
        let db = format!("s{threads}");
        let o = run(
            dir.path(),
            &[
                "--db",
                &db,
                "ingest",
                "in.jsonl",
                "--batch-size",
                "3",
                "--threads",
                threads,
                "--json",
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let ahead = sum["batches_looked_up_ahead"].as_u64().unwrap();
        let batches = (lines.len() as u64).div_ceil(3);
        assert!(ahead < batches, "{ahead} of {batches}");
        if threads == "1" {
            assert_eq!(ahead, 0);
        }
        exports.push(stdout(&run(dir.path(), &["--db", &db, "export"])));
    }
    assert!(exports[0].lines().count() > 60);
    assert_eq!(exports[0], exports[1]);
}

/// One vocabulary: a duplicate is a member that is not its cluster's original. The summary of
/// a run, its result lines, `export`, `stats`, `clusters` and `dedup` count the same, on a
/// corpus whose originals arrive late and whose clusters merge.
#[test]
fn every_command_counts_the_same_and_result_lines_agree_with_export() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, _) = shuffled_corpus(7, 30);
    // x and y share two of five sentences (not near-duplicates); m shares four of its six
    // with each and merges their clusters, after both.
    let mut rng = Rng(5);
    let s: Vec<String> = (0..8).map(|_| synthetic_doc(&mut rng, 1)).collect();
    let doc = |id: &str, r: std::ops::Range<usize>, day: u32| json!({"id": id, "text": s[r].concat(), "date": format!("2024-04-{day:02}")});
    lines.push(doc("x", 0..5, 3));
    lines.push(doc("y", 3..8, 2));
    lines.push(doc("m", 1..7, 1));
    write_jsonl(&dir.path().join("in.jsonl"), &lines);
    let o = run(
        dir.path(),
        &["ingest", "in.jsonl", "-o", "r.jsonl", "--json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(sum["merges"].as_u64().unwrap() >= 1, "{sum}");
    // Where the time went: every stage worked, and none for longer than the run (each runs
    // on its own threads, one chunk after another).
    let seconds = sum["seconds"].as_f64().unwrap();
    for stage in ["read", "fingerprint", "look_up", "decide", "commit"] {
        let busy = sum["stages"][stage].as_f64().unwrap();
        assert!(
            busy > 0.0 && busy <= seconds,
            "{stage}: {busy} of {seconds} s"
        );
    }
    // The store's own thread applies the batches where there is a second core to run it.
    let apply = sum["stages"]["apply"].as_f64().unwrap();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    assert!(
        apply <= seconds && (apply > 0.0) == (cores >= 2),
        "apply: {apply} of {seconds} s on {cores} cores"
    );
    let ex = json_lines(&stdout(&run(dir.path(), &["export"])));
    let exported: BTreeMap<&str, (&serde_json::Value, &serde_json::Value)> = ex
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap(),
                (&e["similar_id"], &e["duplicate_of"]),
            )
        })
        .collect();
    let results = json_lines(&std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap());
    assert_eq!(results.len(), lines.len());
    for r in &results {
        let id = r["id"].as_str().unwrap();
        assert_eq!(r["status"], "added");
        assert_eq!(
            (&r["similar_id"], &r["duplicate_of"]),
            exported[id],
            "{id}: the result line as export says"
        );
    }
    let duplicates = ex.iter().filter(|e| !e["duplicate_of"].is_null()).count() as u64;
    let originals = ex.len() as u64 - duplicates;
    // m, published first, took x's and y's place; some copies arrived before their original.
    assert!(results.iter().any(|r| r["previous_original"].is_string()));
    assert_eq!(sum["duplicates"], duplicates, "{sum}");
    assert_eq!(sum["originals"], originals, "{sum}");
    assert_eq!(sum["store_duplicates"], duplicates, "{sum}");
    assert_eq!(sum["store_clusters"], originals, "{sum}");
    let stats: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(stats["clusters"], originals, "{stats}");
    let footer = stdout(&run(dir.path(), &["clusters", "--min-size", "1"]));
    assert!(
        footer.contains(&format!(
            "{originals} of the store's {originals} clusters have at least 1 documents ({} documents, {duplicates} of them duplicates",
            ex.len()
        )),
        "{footer}"
    );
    let o = run(
        dir.path(),
        &[
            "--db", "d.db", "dedup", "in.jsonl", "-o", "u.jsonl", "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(d["dedup"]["unique"], originals, "{d}");
    assert_eq!(d["dedup"]["duplicates"], duplicates, "{d}");
    assert_eq!(d["duplicates"], duplicates, "{d}");
    replacing_run_counts_as_export(dir.path(), &lines, &mut rng);
}

/// A run that replaces: m (which held x and y together) gets a text of its own, and the first
/// stories' members other texts: clusters split and originals move. Its counts and lines are
/// its documents as `export` says they stand.
fn replacing_run_counts_as_export(
    dir: &std::path::Path,
    lines: &[serde_json::Value],
    rng: &mut Rng,
) {
    let mut replaced =
        vec![json!({"id": "m", "text": synthetic_doc(rng, 5), "date": "2024-04-01"})];
    replaced.extend(
        lines
            .iter()
            .take(6)
            .map(|l| json!({"id": l["id"], "text": synthetic_doc(rng, 6), "date": l["date"]})),
    );
    write_jsonl(&dir.join("re.jsonl"), &replaced);
    let o = run(
        dir,
        &[
            "ingest",
            "re.jsonl",
            "--replace",
            "-o",
            "r2.jsonl",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ex = json_lines(&stdout(&run(dir, &["export"])));
    let ids: BTreeSet<&str> = replaced.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mine: Vec<&serde_json::Value> = ex
        .iter()
        .filter(|e| ids.contains(e["id"].as_str().unwrap()))
        .collect();
    let dups = mine.iter().filter(|e| !e["duplicate_of"].is_null()).count() as u64;
    assert_eq!(sum["duplicates"], dups, "{sum}");
    assert_eq!(sum["originals"], mine.len() as u64 - dups, "{sum}");
    let all_dups = ex.iter().filter(|e| !e["duplicate_of"].is_null()).count() as u64;
    assert_eq!(sum["store_duplicates"], all_dups, "{sum}");
    for r in json_lines(&std::fs::read_to_string(dir.join("r2.jsonl")).unwrap()) {
        let e = mine.iter().find(|e| e["id"] == r["id"]).unwrap();
        assert_eq!(
            (&r["similar_id"], &r["duplicate_of"]),
            (&e["similar_id"], &e["duplicate_of"])
        );
    }
}

#[test]
fn the_export_is_the_same_at_every_thread_count_and_batch_size() {
    // Dated copies in shuffled order (late originals, clusters that merge) and exact repeats
    // (one simhash, found in the batch and across batches): each run decides in input order,
    // whatever runs on how many threads and where the batches end.
    let (mut lines, _) = shuffled_corpus(52, 120);
    let repeated: Vec<serde_json::Value> = lines
        .iter()
        .step_by(7)
        .enumerate()
        .map(|(i, l)| {
            let mut l = l.clone();
            l["id"] = json!(format!("again-{i}"));
            l
        })
        .collect();
    lines.extend(repeated);
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("in.jsonl"), &lines);
    let export = |threads: &str, batch: &str| -> String {
        let db = format!("t{threads}-b{batch}.db");
        let o = run(
            dir.path(),
            &[
                "--db",
                &db,
                "-q",
                "ingest",
                "in.jsonl",
                "--threads",
                threads,
                "--batch-size",
                batch,
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let o = run(dir.path(), &["--db", &db, "export"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o)
    };
    let one = export("1", "1024");
    assert!(one.contains("\"duplicate_of\":\"s"), "copies were found");
    for (threads, batch) in [("1", "5"), ("4", "5"), ("4", "64"), ("2", "1024")] {
        assert!(
            export(threads, batch) == one,
            "--threads {threads} --batch-size {batch} exported otherwise than one thread"
        );
    }
}
