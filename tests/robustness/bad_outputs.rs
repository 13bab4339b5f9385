//! Hostile outputs, checksums and hosts, on the real binary, real files and raw sockets:
//! outputs that are not regular files, two outputs that are one file, gzip members
//! and zstd frames that fail their checks, a damaged member larger than the recovery tape,
//! a tokenless server's Host and cross-site checks, publication times outside the window, and
//! the members' `limit` cap. Repeated pages are in `tests/store/lookup_stats.rs` and
//! `tests/oracles/batch.rs`.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::server::{read_response, Server};
use common::*;

/// Distinct Chinese texts, one per seed (sentences made from the seed).
fn text(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    synthetic_doc(&mut rng, 6)
}

fn store_with_docs(dir: &Path, n: u64) -> PathBuf {
    let input = dir.join("in.jsonl");
    let lines: Vec<Value> = (0..n)
        .map(|i| serde_json::json!({"id": format!("d{i}"), "text": text(i), "title": format!("标题 {i}")}))
        .collect();
    write_jsonl(&input, &lines);
    let o = run(dir, &["--db", "s.db", "-q", "ingest", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    dir.join("s.db")
}

fn summary(o: &std::process::Output) -> Value {
    let out = stdout(o);
    serde_json::from_str(out.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {out}\n{}", stderr(o)))
}

#[test]
fn report_writes_into_a_fifo_and_through_a_symlink_and_keeps_a_files_mode() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    store_with_docs(d, 5);
    // A FIFO: written in place (its reader gets the page), still a FIFO after.
    let fifo = d.join("pipe.html");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let o = run(d, &["--db", "s.db", "-q", "report", "-o", "pipe.html"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let got = reader.join().unwrap();
        assert!(got.starts_with(b"<!DOCTYPE html>") || got.starts_with(b"<!doctype html>"));
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
    // A symbolic link: its target gets the page, the link stays a link.
    std::fs::write(d.join("target.html"), "old").unwrap();
    std::os::unix::fs::symlink("target.html", d.join("link.html")).unwrap();
    let o = run(d, &["--db", "s.db", "-q", "report", "-o", "link.html"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(d.join("link.html"))
        .unwrap()
        .file_type()
        .is_symlink());
    let page = std::fs::read_to_string(d.join("target.html")).unwrap();
    assert!(
        page.contains("标题") || page.len() > 1000,
        "{}",
        &page[..page.len().min(200)]
    );
    // A 0600 file stays 0600.
    let private = d.join("private.html");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run(d, &["--db", "s.db", "-q", "report", "-o", "private.html"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(std::fs::read_to_string(&private).unwrap().len() > 1000);
    // A directory is refused, not replaced.
    std::fs::create_dir(d.join("adir")).unwrap();
    let o = run(d, &["--db", "s.db", "-q", "report", "-o", "adir"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
}

#[test]
fn two_outputs_that_are_one_file_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("dd.jsonl");
    write_jsonl(
        &input,
        &[
            serde_json::json!({"id": "u1", "text": text(1)}),
            serde_json::json!({"id": "d1", "text": text(1)}),
        ],
    );
    std::fs::write(d.join("same.jsonl"), "kept\n").unwrap();
    std::os::unix::fs::symlink("same.jsonl", d.join("alias.jsonl")).unwrap();
    let abs = d.join("same.jsonl");
    for second in ["./same.jsonl", "alias.jsonl", abs.to_str().unwrap()] {
        let o = run(
            d,
            &[
                "--db",
                "dd.db",
                "-q",
                "dedup",
                "dd.jsonl",
                "-o",
                "same.jsonl",
                "--duplicates-out",
                second,
            ],
        );
        assert_eq!(code(&o), 2, "{second}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("are the same file"),
            "{second}: {}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(d.join("same.jsonl")).unwrap(),
            "kept\n"
        );
        assert!(
            !d.join("dd.db").exists(),
            "no store is made for a refused run"
        );
    }
    // Not yet existing: by resolved name.
    let o = run(
        d,
        &[
            "--db",
            "dd.db",
            "-q",
            "dedup",
            "dd.jsonl",
            "-o",
            "new.jsonl",
            "--duplicates-out",
            "./new.jsonl",
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    // stdout (a file here) named twice: `-` and /dev/stdout.
    let out = std::fs::File::create(d.join("stdout.txt")).unwrap();
    let o = fpdb()
        .current_dir(d)
        .args([
            "--db",
            "dd.db",
            "-q",
            "dedup",
            "dd.jsonl",
            "-o",
            "/dev/stdout",
            "--duplicates-out",
            "-",
        ])
        .stdout(out)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("are the same file"), "{}", stderr(&o));
    // The null device may take both.
    let o = run(
        d,
        &[
            "--db",
            "dd.db",
            "-q",
            "dedup",
            "dd.jsonl",
            "-o",
            "/dev/null",
            "--duplicates-out",
            "/dev/null",
        ],
    );
    assert_ne!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn export_onto_a_hard_link_of_a_store_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = store_with_docs(d, 3);
    let victim = std::fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file() && p.file_name().is_some_and(|n| n != "LOCK"))
        .unwrap();
    let before = std::fs::read(&victim).unwrap();
    std::fs::hard_link(&victim, d.join("h")).unwrap();
    let o = run(d, &["--db", "s.db", "export", "-o", "h"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("inside the store"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), before);
}

fn gz(bytes: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn warc_record(i: usize, body: &str) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://site{i}.example/p{i}\r\n\
         WARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body.as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn ingest_json(d: &Path, store: &str, file: &str) -> Value {
    let o = run(d, &["--db", store, "-q", "ingest", file, "--json"]);
    assert!(code(&o) == 0 || code(&o) == 3, "{}", stderr(&o));
    summary(&o)
}

#[test]
fn a_gzip_member_that_fails_its_crc_gives_no_record_and_costs_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let records: Vec<Vec<u8>> = (0..10).map(|i| warc_record(i, &text(i as u64))).collect();
    // Member 3 stored (level 0) with one byte of its URL changed: the deflate stream decodes,
    // only the CRC sees it. Member 4's CRC itself is wrong.
    let mut data = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let mut m = gz(r, if i == 3 { 0 } else { 6 });
        if i == 3 {
            let at = m.windows(9).position(|w| w == b"http://si").unwrap() + 8;
            m[at] = b'9';
        }
        if i == 4 {
            let n = m.len();
            m[n - 8] ^= 0xff;
        }
        data.extend(m);
    }
    std::fs::write(d.join("f.warc.gz"), &data).unwrap();
    let s = ingest_json(d, "f.db", "f.warc.gz");
    assert_eq!(s["added"], 8, "{s}");
    assert_eq!(s["lost_to_damage"], 2, "{s}");
    assert_eq!(s["records"], 10, "{s}");
    let got = stored_ids(d, "f.db");
    assert!(
        !got.iter()
            .any(|id| id.contains("9ite3") || id.contains("site3.") || id.contains("site4.")),
        "{got:?}"
    );
    assert_eq!(got.len(), 8);
}

#[test]
fn a_damaged_member_larger_than_the_tape_loses_nothing_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut records: Vec<Vec<u8>> = (0..40).map(|i| warc_record(i, &text(i as u64))).collect();
    let big: String = (0..3000)
        .map(|k| text(9000 + k))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(big.len() > 1 << 20);
    records[3] = warc_record(3, &big);
    let mut data = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if i != 3 {
            data.extend(gz(r, 6));
            continue;
        }
        // Stored blocks (what compressors emit for incompressible payloads); the last block's
        // LEN set to 65,535 so inflate runs on into the members after it.
        let mut m = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
        let mut last = 0;
        for (k, chunk) in r.chunks(65535).enumerate() {
            last = m.len();
            let fin = u8::from((k + 1) * 65535 >= r.len());
            m.push(fin);
            let n = chunk.len() as u16;
            m.extend_from_slice(&n.to_le_bytes());
            m.extend_from_slice(&(!n).to_le_bytes());
            m.extend_from_slice(chunk);
        }
        m[last + 1..last + 3].copy_from_slice(&65535u16.to_le_bytes());
        m[last + 3..last + 5].copy_from_slice(&0u16.to_le_bytes());
        m.extend_from_slice(&crc32fast::hash(r).to_le_bytes());
        m.extend_from_slice(&(r.len() as u32).to_le_bytes());
        data.extend(m);
    }
    std::fs::write(d.join("big.warc.gz"), &data).unwrap();
    let s = ingest_json(d, "b.db", "big.warc.gz");
    assert_eq!(s["added"], 39, "{s}");
    assert_eq!(s["lost_to_damage"], 1, "{s}");
}

fn zst(bytes: &[u8]) -> Vec<u8> {
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_damaged_zstd_frame_costs_only_its_own_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A WARC written a record per frame, two bytes flipped in frame 4.
    let mut data = Vec::new();
    for i in 0..10 {
        let mut f = zst(&warc_record(i, &text(i as u64)));
        if i == 4 {
            let k = f.len() / 2;
            f[k] ^= 0xff;
            f[k + 1] ^= 0x55;
        }
        data.extend(f);
    }
    std::fs::write(d.join("z.warc.zst"), &data).unwrap();
    let s = ingest_json(d, "z.db", "z.warc.zst");
    assert_eq!(s["added"], 9, "{s}");
    assert_eq!(s["lost_to_damage"], 1, "{s}");
    // The same through stdin (no seeking back).
    let o = run_stdin(
        d,
        &[
            "--db", "zs.db", "-q", "ingest", "-", "--format", "warc", "--json",
        ],
        &data,
    );
    assert_eq!(summary(&o)["added"], 9, "{}", stderr(&o));
    // JSONL: 10 frames of 10 lines, frame 3 damaged: its 10 lines are lost, no other.
    let mut data = Vec::new();
    for f in 0..10u64 {
        let lines: Vec<u8> = (0..10u64)
            .flat_map(|k| {
                let i = f * 10 + k;
                let mut l = serde_json::json!({"id": format!("j{i}"), "text": text(100 + i)})
                    .to_string()
                    .into_bytes();
                l.push(b'\n');
                l
            })
            .collect();
        let mut z = zst(&lines);
        if f == 3 {
            let k = z.len() / 2;
            z[k] ^= 0xff;
        }
        data.extend(z);
    }
    std::fs::write(d.join("j.jsonl.zst"), &data).unwrap();
    let s = ingest_json(d, "j.db", "j.jsonl.zst");
    assert_eq!(s["added"], 90, "{s}");
    assert_eq!(s["skipped_bad_input"], 0, "{s}");
    assert_eq!(s["lost_to_damage"], 1, "{s}");
}

#[test]
fn publication_times_outside_the_window_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = text(7);
    write_jsonl(
        &d.join("t.jsonl"),
        &[
            serde_json::json!({"id": "orig", "text": base, "date": "2024-05-01", "url": "https://a.example/o"}),
            serde_json::json!({"id": "zero", "text": base, "date": "0000-01-01T00:00:00Z"}),
            serde_json::json!({"id": "old", "text": text(8), "date": "1899-12-31"}),
            serde_json::json!({"id": "future", "text": text(9), "date": "2099-01-01"}),
        ],
    );
    let o = fpdb()
        .current_dir(d)
        .env("FPDB_NOW", "1717200000")
        .args(["--db", "t.db", "ingest", "t.jsonl", "-o", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let err = stderr(&o);
    for (line, what) in [(2, "earliest"), (3, "earliest"), (4, "later than now")] {
        assert!(
            err.contains(&format!("t.jsonl:{line}")) && err.contains(what),
            "line {line}: {err}"
        );
    }
    // The copy dated year 0 did not become the original.
    let results = json_lines(&std::fs::read_to_string(d.join("r.jsonl")).unwrap());
    assert_eq!(results[1]["duplicate_of"], "orig", "{results:?}");
    // Garbage in the flags: a clear refusal, nothing made.
    for (flag, value) in [
        ("--published-from", "last tuesday"),
        ("--published-ahead", "soon"),
    ] {
        let o = run(d, &["--db", "bad.db", "ingest", "t.jsonl", flag, value]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{}", stderr(&o));
        assert!(!d.join("bad.db").exists());
    }
    // A flag widens the window.
    let o = fpdb()
        .current_dir(d)
        .env("FPDB_NOW", "1717200000")
        .args([
            "--db",
            "t2.db",
            "ingest",
            "t.jsonl",
            "--published-from",
            "1800-01-01",
            "--published-ahead",
            "100y",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("t.jsonl:2") && !err.contains("t.jsonl:3") && !err.contains("t.jsonl:4"),
        "{err}"
    );
}

/// A raw HTTP/1.1 request with exactly these header lines.
fn raw(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let req = format!(
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    read_response(&mut s)
}

#[test]
fn a_tokenless_server_refuses_foreign_hosts_and_cross_site_writes() {
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start(dir.path(), "srv.db", &[]);
    let a = srv.addr.clone();
    let doc = r#"{"documents":[{"id":"csrf1","text":"一段用来测试跨站请求的文字，它不应当被写进存储。"}]}"#;
    // A text/plain POST (a CORS simple request) is refused, with or without a foreign Origin.
    for extra in ["", "Origin: http://evil.example\r\n"] {
        let (st, body) = raw(
            &a,
            &format!(
                "POST /v1/documents HTTP/1.1\r\nHost: {a}\r\nContent-Type: text/plain\r\n{extra}"
            ),
            doc,
        );
        assert_eq!(st, 403, "{body}");
    }
    // JSON from a foreign origin, or marked cross-site, is refused too.
    for extra in [
        "Origin: http://evil.example\r\n",
        "Origin: null\r\n",
        "Sec-Fetch-Site: cross-site\r\n",
    ] {
        let (st, body) = raw(&a, &format!("POST /v1/documents?replace=true HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\n{extra}"), doc);
        assert_eq!(st, 403, "{extra}: {body}");
    }
    // A foreign Host (DNS rebinding) gets nothing, not even a read.
    let port = a.rsplit(':').next().unwrap();
    let (st, _) = raw(
        &a,
        &format!("GET /v1/stats HTTP/1.1\r\nHost: attacker.example:{port}\r\n"),
        "",
    );
    assert_eq!(st, 403);
    let (st, _) = raw(
        &a,
        &format!("GET / HTTP/1.1\r\nHost: attacker.example:{port}\r\n"),
        "",
    );
    assert_eq!(st, 403);
    let (st, body) = srv.get("/v1/stats");
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["documents"], 0, "nothing was written: {body}");
    // Its own page's requests are served: its Origin, localhost as Host.
    let (st, body) = raw(&a, &format!("POST /v1/documents HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\nOrigin: http://{a}\r\n"), doc);
    assert_eq!(st, 200, "{body}");
    // limit: percent-decoded, and capped.
    let (st, body) = srv.get("/v1/clusters/1/members?limit=%31%30");
    assert_eq!(st, 200, "{body}");
    let (st, body) = srv.get("/v1/clusters/1/members?limit=18446744073709551615");
    assert_eq!(st, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("at most 1000"),
        "{body}"
    );
    srv.stop();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Random WARC archives, a record per gzip member (or zstd frame), some members damaged
    /// (bytes flipped in their compressed data or their check): exactly the intact members'
    /// records are read, and the losses counted equal the damaged members, each one, in a row
    /// or apart; nothing is counted as bad input.
    #[test]
    fn lost_to_damage_is_what_was_destroyed(
        n in 2usize..24,
        damaged in proptest::collection::btree_set(0usize..24, 0..6),
        at in proptest::collection::vec(0.0f64..1.0, 24),
        zstd_frames: bool,
    ) {
        let damaged: Vec<usize> = damaged.into_iter().filter(|&i| i < n).collect();
        let mut data = Vec::new();
        for (i, at) in at.iter().enumerate().take(n) {
            let rec = warc_record(i, &text(i as u64 + 500));
            let mut m = if zstd_frames { zst(&rec) } else { gz(&rec, 6) };
            if damaged.contains(&i) {
                // Past the header (whose optional fields no check covers): the compressed data
                // or the trailer.
                let head = if zstd_frames { 6 } else { 10 };
                let p = head + ((m.len() - head - 2) as f64 * at) as usize;
                m[p] ^= 0x5a;
                m[p + 1] ^= 0xa5;
            }
            data.extend(m);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(if zstd_frames { "a.warc.zst" } else { "a.warc.gz" });
        std::fs::write(&path, &data).unwrap();
        let mut read = Vec::new();
        let (mut lost, mut bad) = (0, 0);
        for mut r in fpdb::reader::Inputs::new(&[path], fpdb::reader::ReadOptions::default()) {
            r.finish();
            match &r.doc {
                Ok(d) => read.push(d.id.clone()),
                Err(_) if r.lost > 0 => lost += r.lost,
                Err(_) => bad += 1,
            }
        }
        let intact: Vec<String> = (0..n)
            .filter(|i| !damaged.contains(i))
            .map(|i| format!("http://site{i}.example/p{i}"))
            .collect();
        proptest::prop_assert_eq!(read, intact);
        proptest::prop_assert_eq!(lost, damaged.len() as u64);
        proptest::prop_assert_eq!(bad, 0);
    }
}
