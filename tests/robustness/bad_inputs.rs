//! Hostile inputs and paths that the command line and the readers meet, on the real binary and
//! real files (the server's are in `tests/serve/requests.rs`):
//! output paths inside the store, outputs opened before the lock, deeply nested HTML, damaged
//! gzip members and lying length fields in WARC and ARC, damaged Parquet row groups, the clock
//! override, control characters and long ids from archives, unterminated CSV quotes, a backup
//! inside the store, and the smaller flags.
//!
//! Over 600 lines: one case per kind of hostile input, each small.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::*;

const TEXTS: [&str; 6] = [
    "中华人民共和国宪法是国家的根本法，具有最高的法律效力。全国各族人民、一切国家机关和武装力量都必须以宪法为根本的活动准则。",
    "第二篇文章讲的是另一件事情，它和第一篇没有任何关系。记者从现场发回了详细的报道内容，读者可以看到很多细节。",
    "The committee approved the new budget on Tuesday after a long debate about school funding and road repairs in the county.",
    "天气预报说明天会有大雨，请市民出门带好雨具。交通部门提醒司机注意安全，减速慢行，保持车距。",
    "A small bakery in the old town has been baking the same rye bread every morning for more than ninety years now.",
    "农业部门发布通知，要求各地做好春耕备耕工作，确保粮食生产稳定，保障农民收入持续增长。",
];

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn jsonl(docs: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, text) in docs {
        out.extend(
            serde_json::json!({"id": id, "text": text})
                .to_string()
                .into_bytes(),
        );
        out.push(b'\n');
    }
    out
}

/// A WARC `resource` record holding `text`.
fn warc_record(uri: &str, text: &str, length: Option<&str>) -> Vec<u8> {
    let body = text.as_bytes();
    let len = length.map_or(body.len().to_string(), str::to_string);
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\n\
         WARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: text/plain\r\nContent-Length: {len}\r\n\r\n"
    )
    .into_bytes();
    r.extend_from_slice(body);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// An ARC v1 HTTP record holding `text`.
fn arc_record(url: &str, text: &str, length: Option<&str>) -> Vec<u8> {
    let content = format!("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n{text}");
    let len = length.map_or(content.len().to_string(), str::to_string);
    let mut r = format!("{url} 192.0.2.1 20010915120000 text/plain {len}\n").into_bytes();
    r.extend_from_slice(content.as_bytes());
    r.push(b'\n');
    r
}

fn arc_header() -> Vec<u8> {
    let desc = "1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n";
    format!(
        "filedesc://x.arc 0.0.0.0 20010915120000 text/plain {}\n{desc}\n",
        desc.len()
    )
    .into_bytes()
}

/// `fpdb --db DB ingest ARGS --json`: (exit code, summary, stderr).
fn ingest_json(dir: &Path, db: &str, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["--db", db, "ingest", "--json"];
    all.extend_from_slice(args);
    let o = run(dir, &all);
    let summary = serde_json::from_str(stdout(&o).trim()).unwrap_or(Value::Null);
    (code(&o), summary, stderr(&o))
}

fn verify_ok(dir: &Path, db: &str) {
    let o = run(dir, &["--db", db, "verify"]);
    assert_eq!(code(&o), 0, "verify: {}{}", stdout(&o), stderr(&o));
}

/// Wait for `child` at most `secs` seconds (a hang fails the test instead of blocking it).
fn wait_bounded(mut child: std::process::Child, secs: u64, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().ok();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_output_inside_the_store_is_refused_and_the_store_survives() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "one.jsonl", &jsonl(&[("a", TEXTS[0]), ("b", TEXTS[1])]));
    let (c, _, err) = ingest_json(p, "s.db", &["one.jsonl"]);
    assert_eq!(c, 0, "{err}");
    let current = std::fs::read(p.join("s.db/CURRENT")).unwrap();
    let manifest = std::fs::read_dir(p.join("s.db"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("MANIFEST-"))
        .expect("a manifest");
    let inside = [
        "s.db/CURRENT".to_string(),
        format!("s.db/{manifest}"),
        "s.db/new-file.jsonl".to_string(),
        "./s.db/../s.db/CURRENT".to_string(),
    ];
    for target in &inside {
        for args in [
            vec!["--db", "s.db", "export", "-o", target],
            vec!["--db", "s.db", "ingest", "one.jsonl", "-o", target],
            vec!["--db", "s.db", "idf", "one.jsonl", "-o", target],
        ] {
            let o = run(p, &args);
            assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("inside the store directory"),
                "{args:?}: {}",
                stderr(&o)
            );
        }
    }
    // Through a symbolic link to the store's directory, too.
    std::os::unix::fs::symlink(p.join("s.db"), p.join("alias")).unwrap();
    let o = run(p, &["--db", "s.db", "export", "-o", "alias/CURRENT"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(std::fs::read(p.join("s.db/CURRENT")).unwrap(), current);
    assert!(!p.join("s.db/new-file.jsonl").exists());
    assert_eq!(stored_ids(p, "s.db"), ["a", "b"]);
    verify_ok(p, "s.db");
    // A backup inside the store is refused as well (removing the store would remove it).
    let o = run(p, &["--db", "s.db", "backup", "s.db/sub"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(!p.join("s.db/sub").exists());
    let o = run(p, &["--db", "s.db", "backup", "elsewhere"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_locked_store_leaves_an_earlier_runs_results_as_they_were() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "one.jsonl", &jsonl(&[("a", TEXTS[0])]));
    write(p, "two.jsonl", &jsonl(&[("b", TEXTS[1])]));
    let o = run(
        p,
        &[
            "--db",
            "lv.db",
            "ingest",
            "one.jsonl",
            "-o",
            "results.jsonl",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let results = std::fs::read(p.join("results.jsonl")).unwrap();
    assert!(!results.is_empty());
    // A live writer holds the store.
    let mut server = fpdb()
        .current_dir(p)
        .args(["--db", "lv.db", "serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut err, &mut line).unwrap() > 0,
            "serve did not start"
        );
    }
    let o = run(
        p,
        &[
            "--db",
            "lv.db",
            "ingest",
            "two.jsonl",
            "-o",
            "results.jsonl",
        ],
    );
    let o2 = run(
        p,
        &[
            "--db",
            "lv.db",
            "ingest",
            "two.jsonl",
            "-o",
            "lv.db/CURRENT",
        ],
    );
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let _ = server.wait();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("locked"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(p.join("results.jsonl")).unwrap(),
        results,
        "the earlier results are untouched"
    );
    assert_eq!(code(&o2), 2, "{}", stderr(&o2));
    assert_eq!(stored_ids(p, "lv.db"), ["a"]);
    verify_ok(p, "lv.db");
}

/// `<div>` nested `n` times around a paragraph.
fn nested(n: usize) -> String {
    format!(
        "<html><head><title>Nested</title></head><body>{}<p>{}</p>{}</body></html>",
        "<div>".repeat(n),
        TEXTS[0],
        "</div>".repeat(n)
    )
}

#[test]
fn deeply_nested_html_is_extracted_in_bounded_work() {
    // The parser's and readability's costs grow with the square and the cube of the nesting;
    // bounded, every page of the review's table (and 10^5 levels) is read at once. The limit
    // below only turns a hang into a failure; the times are in docs/robustness.md.
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut names = Vec::new();
    for n in [500, 1000, 2000, 3000, 10_000, 100_000] {
        let name = format!("d{n}.html");
        write(p, &name, nested(n).as_bytes());
        names.push(name);
    }
    // One such page inside a WARC, between two plain records.
    let mut warc = warc_record("http://x/1", TEXTS[1], None);
    let page = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{}",
        nested(50_000)
    );
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/deep\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        page.len()
    )
    .into_bytes();
    r.extend_from_slice(page.as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    warc.extend(r);
    warc.extend(warc_record("http://x/3", TEXTS[2], None));
    write(p, "deep.warc", &warc);
    let child = fpdb()
        .current_dir(p)
        .args(["--db", "h.db", "ingest", "--json", "deep.warc"])
        .args(&names)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, 60, "ingest of nested pages");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ids = stored_ids(p, "h.db");
    assert_eq!(ids.len(), 3 + names.len(), "{ids:?}");
    // The text inside the nesting is kept.
    let q = run(
        p,
        &["--db", "h.db", "query", "--json", "--file", "d100000.html"],
    );
    assert_eq!(code(&q), 0, "the page's own text is found: {}", stdout(&q));
}

/// `records` joined, each its own gzip member; the member `damaged` gets two bytes flipped.
fn gz_members(records: &[Vec<u8>], damaged: Option<usize>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let mut m = gz(r);
        if Some(i) == damaged {
            let mid = m.len() / 2;
            m[mid] ^= 0xff;
            m[mid + 1] ^= 0xa5;
        }
        out.extend(m);
    }
    out
}

#[test]
fn a_damaged_gzip_member_costs_one_record_and_is_counted() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let warc: Vec<Vec<u8>> = (0..6)
        .map(|i| warc_record(&format!("http://w/{i}"), TEXTS[i], None))
        .collect();
    write(p, "damaged.warc.gz", &gz_members(&warc, Some(1)));
    let mut arc = vec![arc_header()];
    arc.extend((0..6).map(|i| arc_record(&format!("http://a/{i}"), TEXTS[i], None)));
    write(p, "damaged.arc.gz", &gz_members(&arc, Some(2)));
    let lines: Vec<Vec<u8>> = (0..6)
        .map(|i| jsonl(&[(&format!("j{i}"), TEXTS[i])]))
        .collect();
    write(p, "damaged.jsonl.gz", &gz_members(&lines, Some(3)));
    for (file, prefix, lost) in [
        ("damaged.warc.gz", "http://w/", "http://w/1"),
        ("damaged.arc.gz", "http://a/", "http://a/1"),
        ("damaged.jsonl.gz", "j", "j3"),
    ] {
        let db = format!("{file}.db");
        let (c, sum, err) = ingest_json(p, &db, &[file]);
        assert_eq!(c, 3, "{file}: {err}");
        assert_eq!(sum["added"], 5, "{file}: {sum} {err}");
        assert_eq!(sum["lost_to_damage"], 1, "{file}: {sum}");
        // A line the damaged member decoded to before its checksum failed may be reported
        // as bad input too.
        assert!(
            sum["skipped_bad_input"].as_u64().unwrap() <= 1,
            "{file}: {sum}"
        );
        // Named as the damage, or as the garbage it decoded to (a flip in literal data is
        // found by the member's checksum only after the record's header was read).
        assert!(
            err.contains("damaged gzip member") || err.contains("corrupt"),
            "{file}: {err}"
        );
        let ids = stored_ids(p, &db);
        assert_eq!(ids.len(), 5, "{file}: {ids:?}");
        assert!(ids.iter().all(|i| i.starts_with(prefix)), "{ids:?}");
        assert!(!ids.contains(&lost.to_string()), "{file}: {ids:?}");
    }
}

#[test]
fn a_length_field_that_lies_costs_its_own_record_only() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for (bad, len) in [
        (1usize, "1000000000000000"),
        (3, "1000000000000000"),
        (1, "300"),
    ] {
        // WARC, plain and gzip (one member per record).
        let warc: Vec<Vec<u8>> = (0..6)
            .map(|i| {
                let l = (i == bad).then_some(len);
                warc_record(&format!("http://w/{i}"), TEXTS[i], l)
            })
            .collect();
        write(p, "lie.warc", &warc.concat());
        write(p, "lie.warc.gz", &gz_members(&warc, None));
        // ARC, plain and gzip.
        let mut arc = vec![arc_header()];
        arc.extend((0..6).map(|i| {
            let l = (i == bad).then_some(len);
            arc_record(&format!("http://a/{i}"), TEXTS[i], l)
        }));
        write(p, "lie.arc", &arc.concat());
        write(p, "lie.arc.gz", &gz_members(&arc, None));
        for file in ["lie.warc", "lie.warc.gz", "lie.arc", "lie.arc.gz"] {
            let db = format!("{file}-{bad}-{len}.db");
            let (c, sum, err) = ingest_json(p, &db, &[file]);
            assert_eq!(c, 3, "{file} {bad} {len}: {err}");
            assert_eq!(
                sum["added"], 5,
                "{file} record {bad} length {len}: {sum} {err}"
            );
            assert!(sum["lost_to_damage"].as_u64().unwrap() >= 1, "{sum}");
            let ids = stored_ids(p, &db);
            assert!(
                !ids.iter().any(|i| i.ends_with(&format!("/{bad}"))),
                "{file}: the lying record is not stored: {ids:?}"
            );
        }
    }
}

#[test]
fn an_arc_record_too_short_for_its_content_is_not_stored_as_junk() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut arc = arc_header();
    arc.extend(arc_record("http://a/0", TEXTS[0], None));
    arc.extend(arc_record("http://a/1", TEXTS[1], Some("10")));
    arc.extend(arc_record("http://a/2", TEXTS[2], None));
    write(p, "short.arc", &arc);
    let (c, sum, err) = ingest_json(p, "s.db", &["short.arc"]);
    assert_eq!(c, 3, "{err}");
    assert!(
        err.contains("does not end where its Archive-length"),
        "{err}"
    );
    assert_eq!(stored_ids(p, "s.db"), ["http://a/0", "http://a/2"], "{sum}");
}

#[test]
fn archive_urls_with_control_characters_or_over_the_id_limit_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let long = format!("http://w/{}", "x".repeat(9000));
    let mut warc = warc_record("http://w/\x01ctl", TEXTS[0], None);
    warc.extend(warc_record("http://w/\x1b[31mred", TEXTS[1], None));
    warc.extend(warc_record(&long, TEXTS[2], None));
    warc.extend(warc_record("http://w/ok", TEXTS[3], None));
    write(p, "ids.warc", &warc);
    let mut arc = arc_header();
    arc.extend(arc_record("http://a/\x7fdel", TEXTS[4], None));
    arc.extend(arc_record("http://a/ok", TEXTS[5], None));
    write(p, "ids.arc", &arc);
    let (c, sum, err) = ingest_json(p, "i.db", &["ids.warc", "ids.arc"]);
    assert_eq!(c, 3, "{err}");
    assert_eq!(sum["skipped_bad_input"], 4, "{sum} {err}");
    assert!(err.contains("control character"), "{err}");
    assert!(err.contains("over the limit of 8192"), "{err}");
    assert_eq!(stored_ids(p, "i.db"), ["http://a/ok", "http://w/ok"]);
}

#[test]
fn a_damaged_parquet_row_group_costs_its_own_rows() {
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let docs = sample_docs();
    let rows: Vec<&fpdb::Document> = docs.iter().take(30).collect();
    let col = |f: &dyn Fn(&fpdb::Document) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(|d| f(d))))
    };
    let batch = RecordBatch::try_from_iter([
        ("id", col(&|d| d.id.clone())),
        ("text", col(&|d| d.text.clone())),
    ])
    .unwrap();
    let path = p.join("five.parquet");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(6))
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    let meta = w.close().unwrap();
    assert_eq!(meta.num_row_groups(), 5);
    // Bytes flipped in the middle of row group 1's text column chunk.
    let chunk = meta.row_group(1).column(1);
    let (start, len) = chunk.byte_range();
    let mut bytes = std::fs::read(&path).unwrap();
    for k in 0..8 {
        bytes[(start + len / 2) as usize + k] ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let (c, sum, err) = ingest_json(p, "pq.db", &["five.parquet"]);
    assert_eq!(c, 3, "{err}");
    assert!(err.contains("row group 1"), "{err}");
    assert_eq!(sum["lost_to_damage"], 6, "{sum} {err}");
    let ids = stored_ids(p, "pq.db");
    let expected: Vec<String> = {
        let mut v: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| !(6..12).contains(i))
            .map(|(_, d)| d.id.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids, expected, "{sum}");
}

#[test]
fn an_unterminated_csv_quote_is_an_error_not_a_longer_text() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let csv = format!(
        "id,text\nc5,{}\nc6,\"unterminated {}\nc7,{}\nc8,{}\n",
        TEXTS[0], TEXTS[1], TEXTS[2], TEXTS[3]
    );
    write(p, "q.csv", csv.as_bytes());
    let (c, sum, err) = ingest_json(p, "q.db", &["q.csv"]);
    assert_eq!(c, 3, "{err}");
    assert!(
        err.contains("q.csv:3") && err.contains("never closed"),
        "{err}"
    );
    assert_eq!(stored_ids(p, "q.db"), ["c5"], "{sum}");
    // A quoted field over several lines that does close is a field, as before.
    let csv = format!(
        "id,text\nc1,\"{}\n{}\"\nc2,{}\n",
        TEXTS[0], TEXTS[1], TEXTS[2]
    );
    write(p, "ok.csv", csv.as_bytes());
    let (c, _, err) = ingest_json(p, "ok.db", &["ok.csv"]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(stored_ids(p, "ok.db"), ["c1", "c2"]);
}

#[test]
fn the_clock_override_is_checked_and_never_panics() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "one.jsonl", &jsonl(&[("a", TEXTS[0])]));
    let o = run(p, &["--db", "ex.db", "ingest", "one.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for bad in [
        "18446744073709551615",
        "1000000000000",
        "abc",
        "-1",
        "1e20",
        "253402300800",
    ] {
        let o = fpdb()
            .current_dir(p)
            .env("FPDB_NOW", bad)
            .args(["--db", "ex.db", "expire", "--older-than", "1d"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "FPDB_NOW={bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("FPDB_NOW"),
            "FPDB_NOW={bad}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    // The latest time it takes works, and expires everything ingested before it.
    let o = fpdb()
        .current_dir(p)
        .env("FPDB_NOW", "253402300799")
        .args(["--db", "ex.db", "expire", "--older-than", "1d", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["removed"], 1, "{v}");
}

#[test]
fn small_flags_are_checked_and_errors_said_once() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "one.jsonl", &jsonl(&[("a", TEXTS[0])]));
    let o = run(
        p,
        &["--db", "t.db", "ingest", "--text-field", "", "one.jsonl"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be empty"), "{}", stderr(&o));
    assert!(!p.join("t.db").exists());
    write(p, "afile", b"not a store");
    let o = run(p, &["--db", "afile", "ingest", "one.jsonl"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    let first = err
        .find("File exists")
        .or_else(|| err.find("Not a directory"));
    if let Some(i) = first {
        assert!(
            !err[i + 5..].contains(&err[i..i + 11]),
            "the cause is said once: {err}"
        );
    }
}
