//! On the real binary in a temp dir: `--replace` keeps clusters true, and no input or output
//! path (a closed pipe, a full device, an output that is an input, symlink loops and FIFOs in
//! a walk) hangs, panics or destroys data.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{code, fpdb, json_lines, run, stderr, stdout};
use serde_json::Value;

const TEXT: &str = "The quick brown fox jumps over the lazy dog near the river bank today. \
Another sentence follows here with enough letters to count. \
A third sentence about storage engines and write ahead logs closes it.";
const OTHER: &str = "Entirely unrelated second version of the page talks about rockets. \
Rockets burn fuel and oxidizer in a combustion chamber to make thrust. \
Orbital mechanics decides where the stage goes after separation.";

fn jsonl(dir: &Path, name: &str, docs: &[(&str, &str)]) -> String {
    let body: String = docs
        .iter()
        .map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join(name), body).unwrap();
    name.to_string()
}

fn ingest_out(dir: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["-q", "ingest"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", "-"]);
    let o = run(dir, &a);
    assert!(matches!(code(&o), 0 | 3), "{}", stderr(&o));
    json_lines(&stdout(&o))
}

fn export(dir: &Path, db: &str) -> Vec<Value> {
    json_lines(&stdout(&run(dir, &["--db", db, "export"])))
}

fn verify_ok(dir: &Path, db: &str) {
    let o = run(dir, &["--db", db, "verify"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
}

fn stats(dir: &Path, db: &str) -> Value {
    serde_json::from_str(&stdout(&run(dir, &["--db", db, "stats", "--json"]))).unwrap()
}

#[test]
fn replace_of_a_first_document_hands_its_cluster_to_the_others() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let a = jsonl(p, "a.jsonl", &[("A", TEXT), ("B", TEXT)]);
    let a3 = jsonl(p, "a3.jsonl", &[("A", OTHER)]);
    let dd = jsonl(p, "d.jsonl", &[("D", TEXT)]);
    ingest_out(p, &["--db", "r.db", &a]);
    let r = ingest_out(p, &["--db", "r.db", &a3, "--replace"]);
    assert_eq!(r[0]["status"], "replaced");
    assert!(r[0]["duplicate_of"].is_null());
    let r = ingest_out(p, &["--db", "r.db", &dd]);
    assert_eq!(r[0]["duplicate_of"], "B", "{r:?}");
    let ex = export(p, "r.db");
    let b = ex.iter().find(|o| o["id"] == "B").unwrap();
    assert!(b["duplicate_of"].is_null(), "B is now the first: {b}");
    assert_eq!(b["similar_id"], r[0]["similar_id"]);
    verify_ok(p, "r.db");
    // A near copy of B (2 of its 3 sentences) is still found.
    let q = "The quick brown fox jumps over the lazy dog near the river bank today. \
             Another sentence follows here with enough letters to count.";
    let o = run(p, &["--db", "r.db", "query", "--json", q]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn replace_with_the_same_text_keeps_the_cluster_and_its_id() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let a = jsonl(p, "a.jsonl", &[("A", TEXT), ("B", TEXT)]);
    let a2 = jsonl(p, "a2.jsonl", &[("A", TEXT)]);
    let c = jsonl(p, "c.jsonl", &[("C", TEXT)]);
    let first = ingest_out(p, &["--db", "r.db", "--algos", "nshash", &a]);
    let r = ingest_out(p, &["--db", "r.db", &a2, "--replace"]);
    assert_eq!(r[0]["similar_id"], first[0]["similar_id"]);
    // Unchanged: A stays where it was, the cluster's first document (never duplicate_of itself).
    assert!(r[0]["duplicate_of"].is_null(), "{r:?}");
    assert_eq!(r[0]["status"], "replaced");
    let r = ingest_out(p, &["--db", "r.db", &c]);
    assert_eq!(r[0]["similar_id"], first[0]["similar_id"]);
    let ex = export(p, "r.db");
    assert!(ex.iter().all(|o| o["similar_id"] == first[0]["similar_id"]));
    assert_eq!(stats(p, "r.db")["clusters"], 1);
    verify_ok(p, "r.db");

    // A singleton re-sent unchanged keeps its similar_id, run after run; counts stay true.
    let x = jsonl(p, "x1.jsonl", &[("X", TEXT)]);
    let ids: Vec<Value> = (0..3)
        .map(|_| ingest_out(p, &["--db", "s.db", &x, "--replace"])[0]["similar_id"].clone())
        .collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "{ids:?}");
    let s = stats(p, "s.db");
    assert_eq!(
        (s["documents"].clone(), s["clusters"].clone()),
        (1.into(), 1.into())
    );
}

#[test]
fn copies_of_a_replaced_text_still_link_to_each_other() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let x1 = jsonl(p, "x1.jsonl", &[("X", TEXT)]);
    let x2 = jsonl(p, "x2.jsonl", &[("X", OTHER)]);
    let y = jsonl(p, "y.jsonl", &[("Y", TEXT)]);
    let z = jsonl(p, "z.jsonl", &[("Z", TEXT)]);
    ingest_out(p, &["--db", "r.db", "--algos", "nshash", &x1]);
    ingest_out(p, &["--db", "r.db", &x2, "--replace"]);
    let s = stats(p, "r.db");
    assert_eq!(
        (s["documents"].clone(), s["clusters"].clone()),
        (1.into(), 1.into())
    );
    let y = ingest_out(p, &["--db", "r.db", &y]);
    let z = ingest_out(p, &["--db", "r.db", &z]);
    assert_eq!(z[0]["similar_id"], y[0]["similar_id"]);
    assert_eq!(z[0]["duplicate_of"], "Y");
    verify_ok(p, "r.db");
}

/// A process whose stdout is a pipe already closed by its reader.
fn closed_pipe(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut child = fpdb()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    (code(&o), stderr(&o))
}

#[test]
fn every_command_survives_a_closed_pipe_and_reports_a_full_disk() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let a = jsonl(p, "a.jsonl", &[("A", TEXT), ("B", TEXT)]);
    let b = jsonl(p, "b.jsonl", &[("C", OTHER)]);
    ingest_out(p, &[&a]);
    std::fs::write(
        p.join("pairs.tsv"),
        "id_a\tid_b\tlabel\tkind\nA\tB\t1\tsame\n",
    )
    .unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["stats"],
        vec!["stats", "--json"],
        vec!["verify"],
        vec!["verify", "--json"],
        vec!["query", TEXT],
        vec!["query", "--json", TEXT],
        vec![
            "query",
            "nothing like it at all in the store, a sentence of its own.",
        ],
        vec!["explain", "A", "B"],
        vec!["explain", "--json", "A", "B"],
        vec!["export"],
        vec!["clusters"],
        vec!["ingest", "--json", &b],
        vec!["eval", "--json", "--corpus", &a, "--pairs", "pairs.tsv"],
        vec!["eval", "--corpus", &a, "--pairs", "pairs.tsv"],
        vec!["query", "--batch", &a],
        vec!["idf", &a],
        vec!["--help"],
    ];
    for args in &commands {
        let (c, err) = closed_pipe(p, args);
        assert!(
            matches!(c, 0 | 1),
            "{args:?} on a closed pipe: exit {c}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    for args in &commands {
        if args[0] == "ingest" || args[0] == "--help" {
            continue; // its documents are stored now; the next run would only skip them
        }
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = fpdb()
            .current_dir(p)
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?} > /dev/full: {}", stderr(&o));
        // Named: "cannot write to stdout: No space left …" (`export`: "<stdout>: …").
        assert!(
            stderr(&o).contains("stdout") && stderr(&o).contains("No space left"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let c = jsonl(p, "c.jsonl", &[("D", OTHER)]);
    let o = fpdb()
        .current_dir(p)
        .args(["ingest", "--json", &c])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let a = jsonl(p, "same.jsonl", &[("A", TEXT), ("B", TEXT)]);
    let before = std::fs::read(p.join(&a)).unwrap();
    let o = run(p, &["--db", "sm.db", "ingest", &a, "-o", &a]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("also an input"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(p.join(&a)).unwrap(),
        before,
        "input untouched"
    );
    assert!(!p.join("sm.db").exists(), "no store created");

    // An output inside a walked directory is not read back as input.
    std::fs::create_dir(p.join("in")).unwrap();
    jsonl(&p.join("in"), "docs.jsonl", &[("A", TEXT)]);
    let o = run(p, &["--db", "w.db", "ingest", "in", "-o", "in/out.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        json_lines(&std::fs::read_to_string(p.join("in/out.jsonl")).unwrap()).len(),
        1
    );

    // An unwritable output or a bad setting: refused before the store is created.
    let o = run(
        p,
        &[
            "--db",
            "o.db",
            "ingest",
            &a,
            "-o",
            "/nonexistent/dir/out.jsonl",
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(!p.join("o.db").exists(), "no store created");
    let o = run(p, &["--db", "e.db", "ingest", &a, "--expected-docs", "0"]);
    assert_eq!(code(&o), 2);
    assert!(!p.join("e.db").exists(), "no store created");
}

/// Wait for `cmd` at most `secs` seconds; a hang fails the test instead of blocking it.
fn run_bounded(mut cmd: Command, secs: u64) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().ok();
            panic!("{cmd:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn directory_walks_skip_symlinked_directories_and_fifos() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir_all(p.join("loop/sub")).unwrap();
    std::fs::write(p.join("loop/sub/doc.txt"), TEXT).unwrap();
    std::os::unix::fs::symlink("..", p.join("loop/sub/up")).unwrap();
    std::os::unix::fs::symlink(".", p.join("loop/a")).unwrap();
    std::os::unix::fs::symlink(".", p.join("loop/b")).unwrap();
    // A FIFO nobody writes to, between two readable files.
    std::fs::create_dir(p.join("fdir")).unwrap();
    jsonl(&p.join("fdir"), "a.jsonl", &[("A", TEXT), ("B", TEXT)]);
    let st = Command::new("mkfifo")
        .arg(p.join("fdir/b.pipe"))
        .status()
        .unwrap();
    assert!(st.success());
    jsonl(&p.join("fdir"), "c.jsonl", &[("C", OTHER)]);
    let mut cmd = fpdb();
    cmd.current_dir(p)
        .args(["--db", "w.db", "ingest", "loop", "fdir", "-o", "out.jsonl"]);
    let o = run_bounded(cmd, 60);
    assert_eq!(code(&o), 3, "skipped entries are reported: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("b.pipe") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(err.contains("symbolic link to a directory"), "{err}");
    let ids: Vec<String> = export(p, "w.db")
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["loop/sub/doc.txt", "A", "B", "C"]);
    // A FIFO named on the command line is read.
    let fifo = p.join("named.pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::fs::write(
                fifo,
                serde_json::json!({"id": "F", "text": OTHER}).to_string() + "\n",
            )
        })
    };
    let mut cmd = fpdb();
    cmd.current_dir(p)
        .args(["--db", "w.db", "ingest", "--format", "jsonl", "named.pipe"]);
    let o = run_bounded(cmd, 60);
    writer.join().unwrap().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Its format found from its first bytes, a FIFO gives its whole text: a query of the
    // stored text through one is that document's exact copy (the format check once read the
    // first 4 bytes away, and the rest matched nothing).
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, OTHER))
    };
    let mut cmd = fpdb();
    cmd.current_dir(p)
        .args(["--db", "w.db", "query", "--json", "--file", "named.pipe"]);
    let o = run_bounded(cmd, 60);
    writer.join().unwrap().unwrap();
    let answer: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(answer["duplicate"], true, "{answer}");
    assert!(
        answer["matches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "F" && m["overlap"] == 1.0),
        "{answer}"
    );
}

#[test]
fn a_utf8_bom_is_not_part_of_the_first_record() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let body = format!(
        "\u{feff}{}\n{}\n",
        serde_json::json!({"id": "bom1", "text": TEXT}),
        serde_json::json!({"id": "bom2", "text": OTHER})
    );
    std::fs::write(p.join("bom.jsonl"), &body).unwrap();
    std::fs::write(p.join("bom_noext"), &body).unwrap();
    std::fs::write(
        p.join("bom.csv"),
        format!("\u{feff}id,text\nc1,\"{TEXT}\"\n"),
    )
    .unwrap();
    let out = ingest_out(p, &["bom.jsonl", "bom_noext", "bom.csv"]);
    let ids: Vec<&str> = out
        .iter()
        .map(|o| o["id"].as_str().unwrap_or("?"))
        .collect();
    // The second file repeats the first's records: already stored, the same text.
    assert_eq!(ids, ["bom1", "bom2", "bom1", "bom2", "c1"], "{out:?}");
    assert_eq!(out[2]["status"], "already_stored");
}

#[test]
fn query_file_reads_like_ingest() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let zh = "中华人民共和国宪法是国家的根本法，具有最高的法律效力。全国各族人民、一切国家机关和武装力量、各政党和各社会团体、各企业事业组织，都必须以宪法为根本的活动准则。";
    let (gbk, _, _) = encoding_rs::GBK.encode(zh);
    std::fs::write(p.join("gbk.txt"), &gbk).unwrap();
    let page = format!(
        "<html><head><title>t</title><script>var x = 1;</script></head><body><nav>home | about</nav>\
         <article><p>{TEXT}</p><p>{OTHER}</p></article><footer>(c) site</footer></body></html>"
    );
    std::fs::write(p.join("page.html"), page).unwrap();
    ingest_out(p, &["gbk.txt", "page.html"]);
    for f in ["gbk.txt", "page.html"] {
        let o = run(p, &["query", "--json", "--file", f]);
        assert_eq!(code(&o), 0, "{f}: {}{}", stdout(&o), stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["duplicate_of"], f);
    }
    let many = jsonl(p, "many.jsonl", &[("A", TEXT), ("B", OTHER)]);
    let o = run(p, &["query", "--file", &many]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--batch"), "{}", stderr(&o));
}

#[test]
fn ids_and_texts_of_the_wrong_kind_are_located_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let lines = [
        r#"{"id":"num","text":12345}"#.to_string(),
        r#"{"id":1.5e3,"text":"A float id would be reformatted, so it is refused as bad input."}"#
            .to_string(),
        r#"{"id":42,"text":"An integer id is taken as it is written, forty two."}"#.to_string(),
        serde_json::json!({"id": "evil\n  injected-id", "text": TEXT}).to_string(),
        serde_json::json!({"id": "  ", "text": TEXT}).to_string(),
        serde_json::json!({"id": "emoji", "text": "😀😃😄😁😆😅😂🤣"}).to_string(),
        serde_json::json!({"id": "emoji2", "text": "😀😃😄😁😆😅😂🤣"}).to_string(),
        serde_json::json!({"id": "pu", "text": "!!!???...，。！？、；：……——"}).to_string(),
        serde_json::json!({"id": "pu2", "text": "!!!???...，。！？、；：……——"}).to_string(),
    ];
    std::fs::write(p.join("in.jsonl"), lines.join("\n") + "\n").unwrap();
    let o = run(p, &["ingest", "in.jsonl", "-o", "-"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let out = json_lines(&stdout(&o));
    let status: Vec<&str> = out.iter().map(|o| o["status"].as_str().unwrap()).collect();
    assert_eq!(
        status,
        ["skipped", "skipped", "added", "skipped", "skipped", "added", "added", "added", "added"]
    );
    assert!(out[0]["reason"].as_str().unwrap().contains("not a string"));
    assert!(out[3]["reason"]
        .as_str()
        .unwrap()
        .contains("control character"));
    assert_eq!(out[3]["source"], "in.jsonl:4");
    assert_eq!(out[2]["id"], "42");
    assert_eq!(
        out[6]["duplicate_of"], "emoji",
        "identical emoji texts link"
    );
    assert_eq!(
        out[8]["duplicate_of"], "pu",
        "identical punctuation texts link"
    );
    let c = stdout(&run(p, &["clusters"]));
    assert!(!c.contains("injected"), "{c}");
}

/// A reader that stops after the first line (`fpdb query --batch … | head -1`): the commands
/// that stream JSON lines exit cleanly, without "Broken pipe" (serde_json's writer errors once
/// hid the pipe from the check, and `query --batch` exited 2).
#[test]
fn streaming_commands_stop_quietly_when_the_reader_stops_mid_stream() {
    use std::io::BufRead;
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let sample = common::sample();
    let sample = sample.to_str().unwrap();
    let o = fpdb()
        .current_dir(p)
        .args(["--quiet", "ingest", sample])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for args in [
        vec!["query", "--batch", sample],
        vec!["export"],
        vec!["clusters", "--json"],
    ] {
        let mut child = fpdb()
            .current_dir(p)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.starts_with('{'), "{args:?}: {first}");
        let o = child.wait_with_output().unwrap();
        assert!(
            matches!(code(&o), 0 | 1),
            "{args:?}: exit {}: {}",
            code(&o),
            stderr(&o)
        );
        assert!(!stderr(&o).contains("error"), "{args:?}: {}", stderr(&o));
    }
}
