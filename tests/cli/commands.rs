//! The real `fpdb` binary, run in temp dirs: the main job, bad input, re-ingest, settings,
//! locking, exit codes.
//!
//! Over 600 lines: one file per front end, so a test binary starts one set of helpers; each
//! test stands alone.

use crate::common;

use std::io::Write;

use common::{code, json_lines, run, stderr, stdout};

#[test]
fn ingest_sample_then_query_stats_export() {
    let dir = tempfile::tempdir().unwrap();
    let sample = common::sample();
    let o = run(
        dir.path(),
        &["ingest", sample.to_str().unwrap(), "--output", "out.jsonl"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        dir.path().join("fpdb.db").is_dir(),
        "default store is ./fpdb.db"
    );
    let out = json_lines(&std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap());
    let docs = common::sample_docs();
    assert_eq!(out.len(), docs.len());
    for (line, d) in out.iter().zip(&docs) {
        assert_eq!(line["id"], d.id.as_str(), "output is in input order");
        assert_eq!(line["status"], "added");
    }
    let dups = out.iter().filter(|l| !l["duplicate_of"].is_null()).count();
    assert!(dups > 20, "the sample has near-duplicates, found {dups}");

    // export after reopen equals what ingest reported (no later merges in the sample).
    let ex = json_lines(&stdout(&run(dir.path(), &["export"])));
    assert_eq!(ex.len(), out.len());
    for (e, o) in ex.iter().zip(&out) {
        for f in ["id", "similar_id", "duplicate_of"] {
            assert_eq!(e[f], o[f], "{f} of {}", o["id"]);
        }
        let ids = |v: &serde_json::Value| {
            v["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["id"].clone(), m["algo"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(e), ids(o));
    }

    // query: a stored text is a duplicate (exit 0), an unrelated one is not (exit 1).
    let known = &docs
        .iter()
        .find(|d| d.id.contains("#retitle"))
        .unwrap()
        .text;
    let f = dir.path().join("q.txt");
    std::fs::write(&f, known).unwrap();
    let q = run(
        dir.path(),
        &["query", "--json", "--file", f.to_str().unwrap()],
    );
    assert_eq!(code(&q), 0, "{}", stderr(&q));
    let v: serde_json::Value = serde_json::from_str(&stdout(&q)).unwrap();
    assert_eq!(v["duplicate"], true);
    assert!(v["similar_id"].as_u64().is_some());
    let q = run(
        dir.path(),
        &[
            "query",
            "完全无关的一段文字，不会和任何法律条文重复，只是用来测试查询接口的返回值。",
        ],
    );
    assert_eq!(code(&q), 1, "{}", stdout(&q));
    assert!(stdout(&q).starts_with("new"));

    let s = run(dir.path(), &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&s)).unwrap();
    assert_eq!(v["documents"], docs.len() as u64);
    assert_eq!(
        v["duplicates"].as_u64().unwrap() + v["clusters"].as_u64().unwrap(),
        docs.len() as u64
    );
    let vr = run(dir.path(), &["verify"]);
    assert_eq!(code(&vr), 0, "{}", stderr(&vr));
}

/// `--memory-filters`: `off` keeps and saves no presence filter, the default saves one, and
/// neither changes a result; `query --batch` answers the same with the saved filter as
/// without it.
#[test]
fn memory_filters_change_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sample = common::sample();
    let text = std::fs::read_to_string(&sample).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    std::fs::write(d.join("a.jsonl"), lines[..half].join("\n") + "\n").unwrap();
    std::fs::write(d.join("b.jsonl"), lines[half..].join("\n") + "\n").unwrap();
    let mut outs = Vec::new();
    for (db, extra) in [
        ("on", "--memory-filters=auto"),
        ("off", "--memory-filters=off"),
    ] {
        for part in ["a", "b"] {
            let out = format!("{db}-{part}.jsonl");
            let input = format!("{part}.jsonl");
            let o = run(d, &["ingest", &input, "--db", db, extra, "--output", &out]);
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            outs.push(std::fs::read_to_string(d.join(&out)).unwrap());
        }
        let saved = d.join(db).join("fpdb-presence").exists();
        assert_eq!(saved, db == "on", "{db}: filter saved: {saved}");
        let o = run(d, &["stats", "--db", db, "--json"]);
        let stats: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        assert_eq!(
            stats["presence_filter"]["current"].as_bool(),
            (db == "on").then_some(true),
            "{db}: {}",
            stats["presence_filter"]
        );
    }
    assert_eq!(outs[..2], outs[2..]);
    let q = |db: &str| {
        let o = run(
            d,
            &["query", "--db", db, "--batch", sample.to_str().unwrap()],
        );
        assert!(matches!(code(&o), 0 | 1), "{}", stderr(&o));
        common::stdout(&o)
    };
    let (on, off) = (q("on"), q("off"));
    assert_eq!(on.lines().count(), lines.len());
    assert_eq!(on, off);
    // A run without the filter after one that saved it: the file is behind the store by the
    // second half, which the next open reads into it (and says so); the same answers.
    for (part, extra) in [
        ("a", "--memory-filters=auto"),
        ("b", "--memory-filters=off"),
    ] {
        let input = format!("{part}.jsonl");
        let o = run(d, &["ingest", &input, "--db", "mixed", extra, "-q"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let o = run(d, &["stats", "--db", "mixed", "--json"]);
    let stats: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    let f = &stats["presence_filter"];
    assert_eq!(f["current"].as_bool(), Some(true), "{f}");
    assert_eq!(
        f["documents_since"].as_u64(),
        Some((lines.len() - half) as u64),
        "{f}"
    );
    assert_eq!(q("mixed"), on);
    // (Every document is stored already: exit 0, all already stored.)
    let o = run(d, &["ingest", "b.jsonl", "--db", "mixed"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let caught = format!(
        "{} document(s) written since it was saved",
        lines.len() - half
    );
    assert!(stderr(&o).contains(&caught), "{}", stderr(&o));
}

/// The block cache (`--cache-mib`) changes no result: the sample ingested with the smallest
/// cache (8 MiB) and in small batches gives the lines of a default ingest, and the store
/// verifies.
#[test]
fn a_small_cache_gives_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let sample = common::sample();
    let sample = sample.to_str().unwrap();
    let mut outs = Vec::new();
    for (db, extra) in [
        ("d", &[][..]),
        ("s", &["--cache-mib", "8", "--batch-size", "7"][..]),
    ] {
        let out = format!("{db}.jsonl");
        let mut args = vec!["ingest", sample, "--db", db, "--output", &out];
        args.extend_from_slice(extra);
        let o = run(dir.path(), &args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let o = run(dir.path(), &["verify", "--db", db]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        outs.push(std::fs::read_to_string(dir.path().join(&out)).unwrap());
    }
    assert_eq!(outs[0].lines().count(), common::sample_docs().len());
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn bad_input_is_located_counted_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = std::fs::File::create(dir.path().join("bad.jsonl")).unwrap();
    f.write_all(
        "{\"id\":\"ok1\",\"text\":\"第一篇文章的内容，足够长的一句话用来测试。\"}\n".as_bytes(),
    )
    .unwrap();
    f.write_all(b"{\"id\":\"broken\",\"text\":\n").unwrap();
    f.write_all(b"{\"id\":\"notext\"}\n").unwrap();
    f.write_all(b"{\"id\":\"utf\",\"text\":\"bad \xff\xfe bytes\"}\n")
        .unwrap();
    f.write_all(b"{\"id\":\"empty\",\"text\":\"   \"}\n")
        .unwrap();
    f.write_all(b"\n").unwrap();
    f.write_all(
        "{\"id\":\"ok2\",\"text\":\"Second document, with a sentence long enough to count.\"}\n"
            .as_bytes(),
    )
    .unwrap();
    drop(f);
    let o = run(
        dir.path(),
        &["ingest", "bad.jsonl", "-o", "out.jsonl", "--json"],
    );
    assert_eq!(code(&o), 3, "skipped input gives exit 3; {}", stderr(&o));
    let err = stderr(&o);
    for (line, what) in [
        (2, "malformed JSON"),
        (3, "missing text field"),
        (4, "invalid UTF-8"),
        (5, "empty document"),
    ] {
        assert!(
            err.contains(&format!("bad.jsonl:{line}: {what}")),
            "line {line}: {err}"
        );
    }
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (sum["added"].as_u64(), sum["skipped_bad_input"].as_u64()),
        (Some(2), Some(4))
    );
    let out = json_lines(&std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap());
    let status: Vec<&str> = out.iter().map(|l| l["status"].as_str().unwrap()).collect();
    assert_eq!(
        status,
        ["added", "skipped", "skipped", "skipped", "skipped", "added"]
    );
    assert_eq!(out[1]["source"], "bad.jsonl:2");
    let ex = json_lines(&stdout(&run(dir.path(), &["export"])));
    assert_eq!(
        ex.iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["ok1", "ok2"]
    );
}

#[test]
fn reingesting_an_id_is_reported_or_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    let s = s.to_str().unwrap();
    assert_eq!(code(&run(dir.path(), &["ingest", s, "--limit", "5"])), 0);
    // The same texts again: already stored, a success, nothing listed.
    let o = run(dir.path(), &["ingest", s, "--limit", "6", "-o", "-"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("is stored with another text"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("5 already stored"), "{}", stderr(&o));
    let out = json_lines(&stdout(&o));
    assert_eq!(
        out.iter()
            .filter(|l| l["status"] == "already_stored")
            .count(),
        5
    );
    assert_eq!(out[5]["status"], "added");
    let o = run(
        dir.path(),
        &["ingest", s, "--limit", "2", "--replace", "-o", "-"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(json_lines(&stdout(&o))
        .iter()
        .all(|l| l["status"] == "replaced"));
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(v["documents"], 6);
    // Another text under 30 stored ids: the first ten are listed, the rest counted on one
    // line, exit 3.
    assert_eq!(code(&run(dir.path(), &["ingest", s, "--limit", "30"])), 0);
    let edited: String = std::fs::read_to_string(s)
        .unwrap()
        .lines()
        .take(30)
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let t = format!("{}\n补充说明。", v["text"].as_str().unwrap());
            v["text"] = serde_json::Value::String(t);
            format!("{v}\n")
        })
        .collect();
    std::fs::write(dir.path().join("edited.jsonl"), edited).unwrap();
    let o = run(dir.path(), &["ingest", "edited.jsonl"]);
    assert_eq!(code(&o), 3);
    let e = stderr(&o);
    assert_eq!(e.matches("is stored with another text").count(), 10, "{e}");
    assert!(
        e.contains("skipped 20 more documents whose ids are stored with another text"),
        "{e}"
    );
    assert_eq!(code(&run(dir.path(), &["verify"])), 0);
}

#[test]
fn other_settings_on_an_existing_store_name_both_values() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    let s = s.to_str().unwrap();
    assert_eq!(
        code(&run(
            dir.path(),
            &["ingest", s, "--limit", "3", "--nshash-hash", "md5"]
        )),
        0
    );
    let o = run(dir.path(), &["ingest", s, "--nshash-hash", "farmhash"]);
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains("nshash_hash = md5") && e.contains("nshash_hash = farmhash"),
        "{e}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(v["documents"], 3, "nothing was written by the refused run");
}

#[test]
fn a_second_writer_gets_a_locked_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = fpdb::Fpdb::open(dir.path().join("fpdb.db")).unwrap();
    let o = run(dir.path(), &["ingest", common::sample().to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("locked by another process"),
        "{}",
        stderr(&o)
    );
    // Readers still work while the writer holds the store.
    assert_eq!(code(&run(dir.path(), &["stats"])), 0);
    drop(db);
}

#[test]
fn db_option_before_or_after_the_subcommand_and_from_env() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    let s = s.to_str().unwrap();
    assert_eq!(
        code(&run(
            dir.path(),
            &["--db", "a.db", "ingest", s, "--limit", "2"]
        )),
        0
    );
    assert_eq!(
        code(&run(
            dir.path(),
            &["ingest", s, "--limit", "3", "--db", "b.db"]
        )),
        0
    );
    let o = common::fpdb()
        .current_dir(dir.path())
        .env("FPDB_DB", "c.db")
        .args(["ingest", s, "--limit", "4"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0);
    for (db, n) in [("a.db", 2), ("b.db", 3), ("c.db", 4)] {
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&run(dir.path(), &["--db", db, "stats", "--json"])))
                .unwrap();
        assert_eq!(v["documents"], n, "{db}");
    }
    assert!(!dir.path().join("fpdb.db").exists());
}

#[test]
fn text_files_directories_and_compressed_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("pages");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let text = common::synthetic_doc(&mut common::Rng(3), 8);
    std::fs::write(d.join("a.txt"), &text).unwrap();
    std::fs::write(
        d.join("sub/b.txt"),
        format!("【转载】\n{text}\n责任编辑：张三"),
    )
    .unwrap();
    std::fs::write(
        d.join("sub/c.txt"),
        common::synthetic_doc(&mut common::Rng(4), 8),
    )
    .unwrap();
    std::fs::write(d.join("empty.txt"), "  \n").unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(
        format!(
            "{{\"id\":\"gz1\",\"text\":{}}}\n",
            serde_json::to_string(&text).unwrap()
        )
        .as_bytes(),
    )
    .unwrap();
    std::fs::write(dir.path().join("more.jsonl.gz"), gz.finish().unwrap()).unwrap();
    let o = run(dir.path(), &["ingest", "pages", "more.jsonl.gz", "-o", "-"]);
    assert_eq!(code(&o), 3, "the empty file is skipped; {}", stderr(&o));
    assert!(
        stderr(&o).contains("empty.txt:1: empty document"),
        "{}",
        stderr(&o)
    );
    let out = json_lines(&stdout(&o));
    let ids: Vec<&str> = out.iter().map(|l| l["id"].as_str().unwrap_or("")).collect();
    assert_eq!(
        ids,
        [
            "pages/a.txt",
            "",
            "pages/sub/b.txt",
            "pages/sub/c.txt",
            "gz1"
        ]
    );
    assert_eq!(out[2]["similar_id"], out[0]["similar_id"]);
    assert_eq!(out[4]["similar_id"], out[0]["similar_id"]);
    assert_ne!(out[3]["similar_id"], out[0]["similar_id"]);
}

/// A gzip file cut short (a crawl stopped while writing), written a member per 20 lines as
/// archive writers flush: the members before the cut are read; the cut member is one loss (its
/// start decoded, but no check covers it: a damaged member decodes as much before it fails).
#[test]
fn truncated_gzip_keeps_the_members_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for part in 0..10 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for i in part * 20..part * 20 + 20 {
            let t = common::synthetic_doc(&mut common::Rng(100 + i), 4);
            gz.write_all(format!("{{\"id\":\"d{i}\",\"text\":\"{t}\"}}\n").as_bytes())
                .unwrap();
        }
        bytes.extend(gz.finish().unwrap());
    }
    std::fs::write(dir.path().join("t.jsonl.gz"), &bytes[..bytes.len() * 2 / 3]).unwrap();
    let o = run(dir.path(), &["ingest", "t.jsonl.gz", "--json"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("t.jsonl.gz:"), "{}", stderr(&o));
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let added = sum["added"].as_u64().unwrap();
    assert!(
        (100..200).contains(&added) && added.is_multiple_of(20),
        "{added}"
    );
    assert_eq!(sum["lost_to_damage"], 1, "{sum}");
    assert_eq!(sum["skipped_bad_input"], 0, "{sum}");
    // Every document added was looked up first; unrelated texts read no record.
    assert_eq!(sum["lookups"]["lookups"].as_u64(), Some(added), "{sum}");
    assert_eq!(sum["lookups"]["records_read"].as_u64(), Some(0), "{sum}");
    assert_eq!(code(&run(dir.path(), &["verify"])), 0);
}

#[test]
fn query_and_stats_on_a_missing_store_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["query", "some text"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no fpdb store at"), "{}", stderr(&o));
    assert!(
        !dir.path().join("fpdb.db").exists(),
        "query never creates a store"
    );
    assert_eq!(code(&run(dir.path(), &["stats"])), 2);
}

#[test]
fn help_explains_every_command() {
    let o = run(std::path::Path::new("."), &["--help"]);
    assert_eq!(code(&o), 0);
    let h = stdout(&o);
    for w in [
        "ingest",
        "query",
        "stats",
        "export",
        "verify",
        "eval",
        "--db",
        "Exit codes",
    ] {
        assert!(h.contains(w), "--help lacks {w}");
    }
    let o = run(std::path::Path::new("."), &["ingest", "--help"]);
    for w in [
        "--output",
        "--replace",
        "--simhash-k",
        "--nshash-n",
        "--id-field",
        "--limit",
    ] {
        assert!(stdout(&o).contains(w), "ingest --help lacks {w}");
    }
}

#[test]
fn eval_on_the_sample_pairs_finds_the_labeled_duplicates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let eval = |extra: &[&str]| {
        let base = [
            "eval",
            "--corpus",
            "data/sample.jsonl",
            "--pairs",
            "data/sample_pairs.tsv",
        ];
        run(root, &[&base[..], extra].concat())
    };
    let o = eval(&["--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let reports: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let default = reports.iter().find(|r| r["algo"] == "default").unwrap();
    assert_eq!(default["fp"], 0, "{default}");
    assert!(default["f1"].as_f64().unwrap() >= 0.9, "{default}");
    assert_eq!(default["kinds"]["edit_width"]["accuracy"], 1.0, "{default}");
    // Every wrongly judged pair is listed, for `fpdb explain`.
    for r in &reports {
        let wrong = r["fp"].as_u64().unwrap() + r["fn_"].as_u64().unwrap();
        assert_eq!(r["errors"].as_array().unwrap().len() as u64, wrong, "{r}");
    }
    let simhash = reports.iter().find(|r| r["algo"] == "simhash").unwrap();
    assert!(
        simhash["fn_"].as_u64().unwrap() > 0,
        "the listing is exercised"
    );
    let out = stdout(&eval(&["--algo", "simhash", "--errors", "2"]));
    assert!(out.contains("wrongly judged (2 of "), "{out}");
    assert_eq!(out.matches("    missed ").count(), 2, "{out}");
    // A batch size of none, or not a number, is refused before anything is read.
    for bad in ["--batch-size=0", "--batch-size=-3", "--batch-size=many"] {
        let o = eval(&[bad]);
        assert_eq!(code(&o), 2, "{bad}");
        assert!(stderr(&o).contains("--batch-size"), "{bad}: {}", stderr(&o));
    }
    // Batches of one document judge the sample as batches of 1,024 do (its documents have no
    // URLs: only a batch's pages learn from each other).
    let json = |extra: &[&str]| {
        stdout(&eval(
            &[&["--json", "--algo", "default"][..], extra].concat(),
        ))
    };
    assert_eq!(json(&["--batch-size", "1"]), json(&[]));
}

/// `explain` reads a file as `ingest` does: a gzipped page gives its main text, and the same
/// article in two sites' pages matches.
#[test]
fn explain_reads_compressed_pages_as_ingest_does() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let article = common::synthetic_doc(&mut common::Rng(21), 8);
    let body: String = article
        .lines()
        .map(|l| format!("<p>{l}</p>"))
        .collect::<Vec<_>>()
        .join("\n");
    for (name, nav) in [
        ("a.html.gz", "首页 | 新闻 | 体育"),
        ("b.html.gz", "Home | World | Sport"),
    ] {
        let page = format!(
            "<html><head><title>t</title></head><body><nav>{nav}</nav><article>{body}</article></body></html>"
        );
        let mut gz = flate2::write::GzEncoder::new(
            std::fs::File::create(dir.path().join(name)).unwrap(),
            flate2::Compression::default(),
        );
        gz.write_all(page.as_bytes()).unwrap();
        gz.finish().unwrap();
    }
    let o = run(dir.path(), &["explain", "a.html.gz", "b.html.gz", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(e["verified"], true, "{e}");
    assert!(
        !stdout(&o).contains("首页"),
        "the navigation is not the text"
    );
    // A file of several documents names its ids with --corpus.
    std::fs::write(
        dir.path().join("two.jsonl"),
        "{\"id\": \"x\", \"text\": \"一。\"}\n{\"id\": \"y\", \"text\": \"二。\"}\n",
    )
    .unwrap();
    let o = run(dir.path(), &["explain", "two.jsonl", "a.html.gz"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--corpus"), "{}", stderr(&o));
}

/// With a store, `explain` compares two pages as the store fingerprints them: without the
/// lines it has seen on their site's pages in three clusters.
#[test]
fn explain_leaves_out_the_furniture_the_store_knows() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = common::Rng(0xe4b1_a1e5);
    let f = common::sites::furniture(&mut rng);
    let mut pages: Vec<fpdb::Document> = (0..3)
        .map(|i| {
            let body = common::paragraphs(&mut rng, 10);
            common::sites::page(&format!("long{i}"), "a.example", &f, &body)
        })
        .collect();
    for id in ["short1", "short2"] {
        let body = common::paragraphs(&mut rng, 2);
        pages.push(common::sites::page(id, "a.example", &f, &body));
    }
    let lines: Vec<serde_json::Value> = pages
        .iter()
        .map(|d| serde_json::json!({"id": d.id, "text": d.text, "url": d.url}))
        .collect();
    common::write_jsonl(&dir.path().join("c.jsonl"), &lines);
    let o = run(dir.path(), &["ingest", "--db", "s.db", "-q", "c.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let explain = |db: &str| {
        let args = [
            "explain", "--db", db, "--corpus", "c.jsonl", "short1", "short2",
        ];
        let o = run(dir.path(), &[&args[..], &["--json"]].concat());
        let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let t = run(dir.path(), &args);
        // Both forms exit alike: 0 linked, 1 not linked.
        assert_eq!(code(&o), code(&t), "{}", stderr(&o));
        (e, stdout(&t), code(&o))
    };
    let (e, text, exit) = explain("s.db");
    assert_eq!(exit, 1, "{text}");
    assert_eq!(
        e["furniture_lines_left_out"],
        serde_json::json!([10, 10]),
        "{e}"
    );
    assert!(
        text.contains("furniture: 10 lines of A and 10 of B left out"),
        "{text}"
    );
    assert!(text.contains("decision: not linked"), "{text}");
    let shown = |e: &serde_json::Value| e["sentences_a"].as_array().unwrap().len();
    // Without a store, the pages are read whole.
    let (whole, text, _) = explain("none.db");
    assert_eq!(whole["furniture_lines_left_out"], serde_json::json!([0, 0]));
    assert!(!text.contains("furniture:"), "{text}");
    assert!(
        whole["shared_sentences"].as_array().unwrap().len()
            > e["shared_sentences"].as_array().unwrap().len(),
        "{whole} / {e}"
    );
    assert!(shown(&whole) >= shown(&e));
}

#[test]
fn explain_shows_shared_sentences_and_distance() {
    let dir = tempfile::tempdir().unwrap();
    let a = common::synthetic_doc(&mut common::Rng(11), 8);
    std::fs::write(dir.path().join("a.txt"), &a).unwrap();
    std::fs::write(dir.path().join("b.txt"), format!("【转载】\n{a}")).unwrap();
    std::fs::write(
        dir.path().join("c.txt"),
        common::synthetic_doc(&mut common::Rng(12), 8),
    )
    .unwrap();
    let o = run(dir.path(), &["explain", "a.txt", "b.txt", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The five longest sentences and, in stores with `excerpts`, the first.
    assert_eq!(e["shared_sentences"].as_array().unwrap().len(), 6);
    assert_eq!(e["verified"], true);
    let o = run(dir.path(), &["explain", "a.txt", "c.txt"]);
    assert_eq!(code(&o), 1, "unrelated texts do not match");
    assert!(stdout(&o).contains("not verified"), "{}", stdout(&o));
    // The keyword weight check: the same text, the same weights.
    let o = run(
        dir.path(),
        &[
            "explain",
            "a.txt",
            "b.txt",
            "--algos",
            "keywords-check",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(e["weight_distance"].as_f64().unwrap() < 0.1, "{e}");
    assert_eq!(e["key_matches"][0][0], "keywords-check");
    let o = run(
        dir.path(),
        &["explain", "a.txt", "c.txt", "--algos", "keywords-check"],
    );
    assert!(
        stdout(&o).contains("keyword weights: distance"),
        "{}",
        stdout(&o)
    );
}

/// `fpdb query --title`: the title counts for punct-title (parts 1, title 1.5, 3 needed); B
/// keeps 2 of A's 3 punctuation-context parts.
#[test]
fn query_title_counts_for_the_algorithms_that_read_one() {
    let dir = tempfile::tempdir().unwrap();
    let a = "第一条为了规范,制定本办法.第二条本办法适用于全国.第三条由国务院负责解释!";
    let b = a.replace("解释", "解说");
    std::fs::write(
        dir.path().join("in.jsonl"),
        format!(
            "{}\n",
            serde_json::json!({"id": "a", "title": "某某条例", "text": a})
        ),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &[
            "ingest",
            "in.jsonl",
            "--algos",
            "punct-title",
            "--verify-overlap",
            "0",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(code(&run(dir.path(), &["query", &b])), 1);
    let o = run(dir.path(), &["query", &b, "--title", "某某条例", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let q: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(q["duplicate_of"], "a");
    assert_eq!(
        code(&run(dir.path(), &["query", &b, "--title", "别的标题"])),
        1
    );
    // Titles with nothing to hash, or control characters: no title key, no error.
    for title in ["", " \t ", "\u{7}\u{1b}", "###"] {
        let o = run(dir.path(), &["query", &b, "--title", title]);
        assert_eq!(code(&o), 1, "{title:?}: {}", stderr(&o));
    }
}

/// Ingest `original` then `copy` (ids "a", "b") into a fresh store with `off` (the setting
/// switched off) and one with the defaults: linked only in the second. Then the default store
/// refuses `off` naming `setting`.
fn linked_only_with_the_setting(original: &str, copy: &str, off: [&str; 2], setting: &str) {
    let dir = tempfile::tempdir().unwrap();
    let lines = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "a", "text": original}),
        serde_json::json!({"id": "b", "text": copy})
    );
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    for (db, flags, linked) in [("off.db", &off[..], false), ("on.db", &[][..], true)] {
        let mut args = vec!["--db", db, "ingest", "in.jsonl", "-o", "-"];
        args.extend(flags);
        let o = run(dir.path(), &args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = json_lines(&stdout(&o));
        assert_eq!(
            out[1]["similar_id"] == out[0]["similar_id"],
            linked,
            "{db}: {out:?}"
        );
    }
    let o = run(dir.path(), &["--db", "on.db", "stats"]);
    assert!(
        stdout(&o).contains(&format!("{setting}=true")),
        "{}",
        stdout(&o)
    );
    let mut args = vec!["--db", "on.db", "ingest", "in.jsonl"];
    args.extend(off);
    let o = run(dir.path(), &args);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains(&format!("{setting} = true")),
        "{}",
        stderr(&o)
    );
}

/// The link shape (the default): an edited copy of a document that joined another's cluster
/// through a window link joins that cluster through it, while a window of it on the far side
/// stays apart, even one similar enough to be a strong link by similarity; `--link-shape
/// false` keeps the copy apart and lets that window in.
#[test]
fn link_shape_lets_a_copy_of_a_member_in_and_keeps_windows_out() {
    // Sixteen distinct sentences of a longer text, 20 ideographs each.
    let mut x: u32 = 12345;
    let mut sentence = || -> String {
        let s: String = (0..20)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                char::from_u32(0x4E00 + (x >> 8) % 0x5000).unwrap()
            })
            .collect();
        s + "。"
    };
    let p: Vec<String> = (0..16).map(|_| sentence()).collect();
    let extra: Vec<String> = (0..4).map(|_| sentence()).collect();
    let text = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n");
    let c = text(&p[0..10].iter().collect::<Vec<_>>());
    let b = text(&p[3..13].iter().collect::<Vec<_>>());
    // B with a new title, an ad after its third sentence, two sentences rewritten: 8 of 13
    // shared with B (verified, not strong), 6 with C (not verified).
    let mut copy: Vec<&String> = vec![&extra[0]];
    copy.extend(&p[3..6]);
    copy.push(&extra[1]);
    copy.extend(&p[6..10]);
    copy.extend([&extra[2], &extra[3]]);
    copy.push(&p[12]);
    let copy = text(&copy);
    // A window of B on the far side from C: 7 of 10 shared with B, 4 with C.
    let far = text(&p[6..16].iter().collect::<Vec<_>>());
    let lines: String = [("c", &c), ("b", &b), ("copy", &copy), ("far", &far)]
        .iter()
        .map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string() + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    // The ingest-time cluster of each line of `file`, in a new store `db` made with `flags`.
    let clusters = |db: &str, file: &str, flags: &[&str]| -> Vec<u64> {
        let mut args = vec!["--db", db, "ingest", file, "-o", "-"];
        args.extend(flags);
        let o = run(dir.path(), &args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = json_lines(&stdout(&o));
        out.iter()
            .map(|l| l["similar_id"].as_u64().unwrap())
            .collect()
    };
    let off = ["--link-shape", "false"];
    for (db, flags, copy_joins) in [("on.db", &[][..], true), ("off.db", &off[..], false)] {
        let c = clusters(db, "in.jsonl", flags);
        assert_eq!(c[1], c[0], "{db}: b joins c (c is first): {c:?}");
        assert_eq!(c[2] == c[0], copy_joins, "{db}: {c:?}");
        assert_ne!(c[3], c[0], "{db}: the far window stays out: {c:?}");
    }
    // `explain` names the shapes (stored ids), and none without the link shape.
    for (b, shape) in [("copy", "copy"), ("far", "window")] {
        let o = run(dir.path(), &["--db", "on.db", "explain", "b", b, "--json"]);
        let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(e["shape"], shape, "{e}");
    }
    let o = run(dir.path(), &["--db", "on.db", "explain", "b", "far"]);
    assert!(stdout(&o).contains("shape: window ("), "{}", stdout(&o));
    let o = run(
        dir.path(),
        &["--db", "off.db", "explain", "b", "copy", "--json"],
    );
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(e.get("shape").is_none(), "{e}");
    let o = run(dir.path(), &["--db", "on.db", "stats"]);
    assert!(stdout(&o).contains("link_shape=true"), "{}", stdout(&o));
    let o = run(dir.path(), &["--db", "off.db", "stats"]);
    assert!(stdout(&o).contains("link_shape=false"), "{}", stdout(&o));
    // Windows of 20 sentences: c joins a (13 of 20 shared, a is first); w shares 18 of 20
    // with c (a link strong by similarity alone) and 11 with a. Shaped as two windows, that
    // link does not join w to a's cluster; without the link shape it does (a chain).
    let q: Vec<String> = (0..29).map(|_| sentence()).collect();
    let window = |r: std::ops::Range<usize>| text(&q[r].iter().collect::<Vec<_>>());
    let lines: String = [
        ("a", window(0..20)),
        ("c", window(7..27)),
        ("w", window(9..29)),
    ]
    .iter()
    .map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string() + "\n")
    .collect();
    std::fs::write(dir.path().join("windows.jsonl"), lines).unwrap();
    for (db, flags, chained) in [("w-on.db", &[][..], false), ("w-off.db", &off[..], true)] {
        let c = clusters(db, "windows.jsonl", flags);
        assert_eq!(c[1], c[0], "{db}: {c:?}");
        assert_eq!(c[2] == c[0], chained, "{db}: {c:?}");
    }
}

/// t2s is the default; `--t2s false` gives stores that keep scripts apart.
#[test]
fn t2s_store_matches_a_traditional_repost() {
    let simp = "中华人民共和国宪法是国家的根本法，具有最高的法律效力。全国各族人民、一切国家机关和武装力量、各政党和各社会团体、各企业事业组织，都必须以宪法为根本的活动准则，并且负有维护宪法尊严、保证宪法实施的职责。";
    let trad = "中華人民共和國憲法是國家的根本法，具有最高的法律效力。全國各族人民、一切國家機關和武裝力量、各政黨和各社會團體、各企業事業組織，都必須以憲法為根本的活動準則，並且負有維護憲法尊嚴、保證憲法實施的職責。";
    linked_only_with_the_setting(simp, trad, ["--t2s", "false"], "t2s");
}

/// A repost converted with OpenCC's `s2twp` (Taiwan script *and* vocabulary: 软件 → 軟體,
/// 程序 → 程式) is found by a default store (the Taiwan-vocabulary fold) and not by one made
/// with `--tw-phrases false` (script only); the copy is made by OpenCC itself here.
#[test]
fn tw_phrases_store_matches_a_taiwan_vocabulary_repost() {
    use ferrous_opencc::{config::BuiltinConfig, OpenCC};
    let original = "本软件的程序在运行时会创建数据文件，并通过网络发送信息到服务器。\n\
        用户可以在设置中打开或关闭这个功能，默认情况下内存中的对象会被保存到硬盘上。\n\
        如果打印机没有连接，系统会显示一个对话框，提示用户检查驱动程序和接口。\n\
        开发者可以使用源代码中的函数查找文件，也可以通过命令行参数设置默认的字体和屏幕分辨率。";
    let copy = OpenCC::from_config(BuiltinConfig::S2twp)
        .unwrap()
        .convert(original);
    assert!(copy.contains("軟體") && copy.contains("程式"), "{copy}");
    linked_only_with_the_setting(original, &copy, ["--tw-phrases", "false"], "tw_phrases");
}

#[test]
fn idf_table_learned_then_used_by_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    let s = s.to_str().unwrap();
    let o = run(dir.path(), &["idf", s, "-o", "idf.txt"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let table = std::fs::read_to_string(dir.path().join("idf.txt")).unwrap();
    assert!(table.contains("# docs 100"), "{}", &table[..100]);
    let o = run(
        dir.path(),
        &["ingest", s, "--idf", "idf.txt", "--limit", "50"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Reopened without --idf: the stored table is used; the summary shows it.
    let o = run(dir.path(), &["ingest", s, "--skip", "50"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(v["documents"], 100);
    let digest = v["options"]["simhash_idf"]["table"]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(digest.len(), 16);
    assert!(stdout(&run(dir.path(), &["stats"])).contains(&digest));
    // Another table on this store: refused, both named.
    std::fs::write(dir.path().join("other.txt"), "天气 1.5\n纽约 2\n").unwrap();
    let o = run(dir.path(), &["ingest", s, "--idf", "other.txt"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains(&digest), "{}", stderr(&o));
    // A malformed table: located error, nothing created.
    std::fs::write(dir.path().join("bad.txt"), "天气 1.5\n纽约\n").unwrap();
    let o = run(
        dir.path(),
        &["--db", "new.db", "ingest", s, "--idf", "bad.txt"],
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("bad.txt:2"), "{}", stderr(&o));
    assert!(!dir.path().join("new.db").exists());
    // eval can learn the table from its corpus.
    let pairs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample_pairs.tsv");
    let o = run(
        dir.path(),
        &[
            "eval",
            "--corpus",
            s,
            "--pairs",
            pairs.to_str().unwrap(),
            "--learn-idf",
            "--algo",
            "simhash",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(r[0]["recall"].as_f64().unwrap() > 0.5, "{r}");
}

#[test]
fn explain_two_stored_ids_from_their_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    assert_eq!(code(&run(dir.path(), &["ingest", s.to_str().unwrap()])), 0);
    let (orig, copy, other) = (
        "20news-bydate-train/rec.autos/102901",
        "20news-bydate-train/rec.autos/102901#byline",
        "20news-bydate-train/sci.med/58992",
    );
    let o = run(dir.path(), &["explain", orig, copy, "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(e["same_cluster"], true);
    assert_eq!(e["verified"], true);
    assert_eq!(e["b"]["matched_at_ingest"][0], orig);
    let o = run(dir.path(), &["explain", orig, other]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("same cluster: no"), "{}", stdout(&o));
    let o = run(dir.path(), &["explain", orig, "no-such-id"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("`no-such-id` is neither a file nor an id in the store"));
}

#[test]
fn query_batch_looks_up_every_document_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::sample();
    let s = s.to_str().unwrap();
    assert_eq!(code(&run(dir.path(), &["ingest", s, "--limit", "50"])), 0);
    let mut input = std::fs::read_to_string(s).unwrap();
    input.push_str("not json\n");
    std::fs::write(dir.path().join("q.jsonl"), input).unwrap();
    let o = run(dir.path(), &["query", "--batch", "q.jsonl"]);
    assert_eq!(code(&o), 3, "a bad line: {}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let docs = common::sample_docs();
    assert_eq!(lines.len(), docs.len() + 1);
    for (l, d) in lines.iter().zip(&docs[..50]) {
        assert_eq!(l["id"], d.id.as_str(), "input order");
        assert_eq!(
            l["duplicate"], true,
            "stored documents find themselves: {l}"
        );
    }
    assert_eq!(lines[100]["status"], "skipped");
    assert!(lines[100]["source"]
        .as_str()
        .unwrap()
        .ends_with("q.jsonl:101"));
    // The lookups run on all cores: each line is what a single `query` of that text says.
    for (i, d) in docs.iter().enumerate().step_by(9) {
        std::fs::write(dir.path().join("one.txt"), &d.text).unwrap();
        let single = run(dir.path(), &["query", "--json", "--file", "one.txt"]);
        let one: serde_json::Value = serde_json::from_str(&stdout(&single)).unwrap();
        for k in ["duplicate", "similar_id", "duplicate_of", "matches"] {
            assert_eq!(lines[i][k], one[k], "document {i} ({}), {k}", d.id);
        }
    }
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(v["documents"], 50, "query never writes");
}

#[test]
fn idf_on_garbage_is_located_and_learns_from_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = std::fs::read_to_string(common::sample()).unwrap();
    lines.push_str("{\"id\": \"x\", \"text\": \n\u{0}\u{1}binary\n");
    std::fs::write(dir.path().join("mixed.jsonl"), lines).unwrap();
    std::fs::write(dir.path().join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let o = run(
        dir.path(),
        &["idf", "mixed.jsonl", "blob.bin", "-o", "idf.txt"],
    );
    assert_eq!(code(&o), 3, "bad input counted: {}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("mixed.jsonl:101") && e.contains("mixed.jsonl:102"),
        "{e}"
    );
    assert!(e.contains("blob.bin"), "{e}");
    let table = std::fs::read_to_string(dir.path().join("idf.txt")).unwrap();
    assert!(
        table.contains("# docs 100"),
        "the 100 good documents: {}",
        &table[..60]
    );
    // Only garbage: nothing learned, a clear error, no table written.
    let o = run(dir.path(), &["idf", "blob.bin", "-o", "none.txt"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no words learned"), "{}", stderr(&o));
    assert!(!dir.path().join("none.txt").exists());
    // A binary or empty file given as a table: refused before any store is created.
    for bad in ["blob.bin", "empty.txt"] {
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let o = run(
            dir.path(),
            &["--db", "t.db", "ingest", "mixed.jsonl", "--idf", bad],
        );
        assert_eq!(code(&o), 2, "{bad}");
        assert!(stderr(&o).contains(bad), "{}", stderr(&o));
        assert!(!dir.path().join("t.db").exists());
    }
}
