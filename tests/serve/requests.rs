//! `fpdb serve`, for real: the binary is started on a free loopback port in a temp dir and
//! spoken to over TCP (the small HTTP/1.1 client of common/server.rs, so malformed requests can
//! be sent too).
//!
//! Over 600 lines: one scenario per test, each starting its own server.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use common::server::*;
use common::*;

/// Percent-encoding of a path segment (ids hold `/`, spaces, `#`, Chinese).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn ids_of(matches: &Value) -> Vec<String> {
    let mut v: Vec<String> = matches
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["id"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// (id, similar_id, duplicate_of, status, matched ids) of an ingest result line.
fn key(line: &Value) -> (String, String, String, String, Vec<String>) {
    (
        line["id"].as_str().unwrap().to_string(),
        line["similar_id"].to_string(),
        line["duplicate_of"].to_string(),
        line["status"].to_string(),
        ids_of(&line["matches"]),
    )
}

fn sample_json() -> Vec<Value> {
    sample_docs()
        .into_iter()
        .map(|d| json!({"id": d.id, "text": d.text, "title": d.title, "url": d.url}))
        .collect()
}

/// A corpus with planted near-duplicate groups: originals and lightly edited copies.
fn planted_corpus(n_groups: usize, seed: u64) -> Vec<Value> {
    let mut rng = Rng(seed * 2654435761 + 1);
    let mut docs = Vec::new();
    for g in 0..n_groups {
        let sentences = 8 + rng.below(6) as usize;
        let base = synthetic_doc(&mut rng, sentences);
        docs.push(json!({"id": format!("g{g}-0"), "text": base}));
        for c in 1..=rng.below(3) {
            let copy = format!("转载：第{c}版\n{base}\n责任编辑：{c}");
            docs.push(json!({"id": format!("g{g}-{c}"), "text": copy}));
        }
    }
    // Interleave groups so copies arrive far from their originals.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    order.into_iter().map(|i| docs[i].clone()).collect()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one server started once, every route asked in turn"
)]
fn every_route_answers_and_ingest_equals_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    // With the in-memory presence filters (the other tests run without): same lines as the CLI.
    let server = Server::start(dir.path(), "served.db", &["--memory-filters"]);
    let docs = sample_json();

    // Health first, on an empty store.
    assert_eq!(server.get("/healthz"), (200, json!({"status": "ok"})));

    // Ingest the sample in requests of 7 documents.
    let mut lines = Vec::new();
    for chunk in docs.chunks(7) {
        let (status, v) = server.post("/v1/documents", &json!({ "documents": chunk }));
        assert_eq!(status, 200, "{v}");
        lines.extend(v["results"].as_array().unwrap().iter().cloned());
    }
    assert_eq!(lines.len(), docs.len());

    // The CLI on the same documents in the same order gives the same lines.
    let out = run(
        dir.path(),
        &[
            "--db",
            "cli.db",
            "ingest",
            "--output",
            "cli.jsonl",
            sample().to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cli = json_lines(&std::fs::read_to_string(dir.path().join("cli.jsonl")).unwrap());
    let served: Vec<_> = lines.iter().map(key).collect();
    let expected: Vec<_> = cli.iter().map(key).collect();
    assert_eq!(served, expected);
    let dup = lines
        .iter()
        .find(|l| !l["duplicate_of"].is_null())
        .expect("the sample has duplicates");
    let (dup_id, sid) = (
        dup["id"].as_str().unwrap(),
        dup["similar_id"].as_u64().unwrap(),
    );

    // The same document again: already stored, with its cluster.
    let again = docs.iter().find(|d| d["id"] == dup["id"]).unwrap();
    let (status, v) = server.post("/v1/documents", again);
    assert_eq!(status, 200);
    assert_eq!(v["results"][0]["status"], "already_stored");
    assert_eq!(v["results"][0]["similar_id"], json!(sid));
    let mut replaced = again.clone();
    replaced["replace"] = json!(true);
    let (status, v) = server.post("/v1/documents", &replaced);
    assert_eq!(
        (status, &v["results"][0]["status"]),
        (200, &json!("replaced")),
        "{v}"
    );
    assert_eq!(v["results"][0]["similar_id"], json!(sid));

    // Query: a stored text is a duplicate, as `fpdb query --json` says; a new one is not.
    let text = again["text"].as_str().unwrap();
    let (status, q) = server.post("/v1/query", &json!({ "text": text }));
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["duplicate"], true);
    assert_eq!(q["similar_id"], json!(sid));
    let (status, q2) = server.post(
        "/v1/query",
        &json!({"text": "一段从未出现过的全新文字，与样例中的任何文档都不相同。"}),
    );
    assert_eq!(
        (status, &q2["duplicate"], &q2["similar_id"]),
        (200, &json!(false), &Value::Null)
    );
    let (status, html) = server.post(
        "/v1/query",
        &json!({ "html": format!("<html><head><title>t</title></head><body><p>{}</p></body></html>", text.replace('\n', "</p><p>")) }),
    );
    assert_eq!((status, &html["duplicate"]), (200, &json!(true)), "{html}");

    // Batch query: one answer per document, in order, ids kept or given.
    let (status, b) = server.post(
        "/v1/query/batch",
        &json!({"documents": [{"id": "x", "text": text}, {"text": "另一段全新的文字，不会与任何文档重复，长度也足够。"}]}),
    );
    assert_eq!(status, 200, "{b}");
    let r = b["results"].as_array().unwrap();
    assert_eq!(
        (r[0]["id"].as_str(), &r[0]["duplicate"]),
        (Some("x"), &json!(true))
    );
    assert_eq!(
        (r[1]["id"].as_str(), &r[1]["duplicate"]),
        (Some("1"), &json!(false))
    );

    // Documents and clusters.
    let (status, d) = server.get(&format!("/v1/documents/{}", encode(dup_id)));
    assert_eq!(status, 200, "{d}");
    assert_eq!(
        (d["id"].as_str(), d["similar_id"].as_u64()),
        (Some(dup_id), Some(sid))
    );
    let (status, e) = server.get("/v1/documents/no-such-id");
    assert_eq!(status, 404);
    assert!(e["error"].as_str().unwrap().contains("no-such-id"), "{e}");
    let (status, c) = server.get(&format!("/v1/clusters/{sid}"));
    assert_eq!(status, 200, "{c}");
    let members: Vec<&str> = c["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(members.contains(&dup_id), "{c}");
    assert_eq!(c["size"].as_u64(), Some(members.len() as u64));
    let (status, c1) = server.get(&format!("/v1/clusters/{sid}?limit=1"));
    assert_eq!(
        (
            status,
            c1["members"].as_array().unwrap().len(),
            &c1["truncated"]
        ),
        (200, 1, &json!(true))
    );
    assert_eq!(server.get("/v1/clusters/999999999").0, 404);
    let (status, e) = server.get("/v1/clusters/abc");
    assert_eq!((status, e["field"].as_str()), (400, Some("similar_id")));

    // Stats, metrics, the OpenAPI document, an unknown route.
    let (status, s) = server.get("/v1/stats");
    assert_eq!(
        (status, s["documents"].as_u64()),
        (200, Some(docs.len() as u64))
    );
    let (status, m) = http(&server.addr, "GET", "/metrics", &[], b"");
    assert_eq!(status, 200);
    assert!(m.contains("fpdb_http_requests_total{"), "{m}");
    assert!(m.contains(&format!("fpdb_documents {}", docs.len())), "{m}");
    assert!(m.contains("fpdb_group_commits_total"), "{m}");
    // Every document ingested was looked up first (queries add to it).
    let looked_up = |what: &str| -> u64 {
        let head = format!("fpdb_lookup_reads_total{{what=\"{what}\"}} ");
        m.lines()
            .find_map(|l| l.strip_prefix(&head))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {head} in {m}"))
    };
    assert!(looked_up("lookups") >= docs.len() as u64, "{m}");
    assert!(
        looked_up("simhash_scanned") >= looked_up("simhash_candidates"),
        "{m}"
    );
    let (status, api) = server.get("/v1/openapi.json");
    assert_eq!(status, 200);
    assert!(api["paths"]["/v1/query"]["post"].is_object());
    let (status, e) = server.get("/v1/nothing");
    assert_eq!(status, 404);
    assert!(e["error"].is_string());

    assert_eq!(server.stop(), 0);
    // The store reopens consistent after the server stopped.
    let out = run(dir.path(), &["--db", "served.db", "verify"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn bad_requests_get_json_errors_naming_the_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "s.db", &["--max-body-bytes", "20000"]);
    let bad = |body: &str, path: &str| -> (u16, Value) {
        let (status, text) = http(&server.addr, "POST", path, &[], body.as_bytes());
        (
            status,
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
        )
    };
    let (status, e) = bad("{\"id\": \"a\", \"text\": ", "/v1/documents");
    assert_eq!(status, 400);
    assert!(
        e["error"].as_str().unwrap().contains("malformed JSON"),
        "{e}"
    );
    let (status, e) = bad("[1, 2]", "/v1/documents");
    assert_eq!(status, 400);
    assert!(e["error"].as_str().unwrap().contains("JSON object"), "{e}");
    let (status, e) = bad(
        r#"{"documents": [{"id": "ok", "text": "这是一篇完全正常的文档，内容足够长。"}, {"id": "b"}]}"#,
        "/v1/documents",
    );
    assert_eq!(
        (status, e["field"].as_str()),
        (400, Some("documents[1]")),
        "{e}"
    );
    assert!(e["error"].as_str().unwrap().contains("`text`"), "{e}");
    let (status, e) = bad(
        r#"{"documents": [{"id": "c", "text": "正文", "title": 5}]}"#,
        "/v1/documents",
    );
    assert_eq!(status, 400);
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("`title` is not a string"),
        "{e}"
    );
    let (status, e) = bad(r#"{"id": "a\nb", "text": "正文内容"}"#, "/v1/documents");
    assert_eq!(status, 400);
    assert!(
        e["error"].as_str().unwrap().contains("control character"),
        "{e}"
    );
    let (status, e) = bad(r#"{"documents": {"id": "a"}}"#, "/v1/documents");
    assert_eq!((status, e["field"].as_str()), (400, Some("documents")));
    let (status, e) = bad(r#"{"documents": [], "replace": "yes"}"#, "/v1/documents");
    assert_eq!((status, e["field"].as_str()), (400, Some("replace")));
    let (status, e) = bad(
        r#"{"id": "a", "text": "正文内容"}"#,
        "/v1/documents?replace=maybe",
    );
    assert_eq!((status, e["field"].as_str()), (400, Some("replace")));
    let (status, e) = bad(r#"{"title": "no text"}"#, "/v1/query");
    assert_eq!(status, 400);
    assert!(e["error"].as_str().unwrap().contains("`text`"), "{e}");
    let (status, e) = bad(r#"{"text": "   "}"#, "/v1/query");
    assert_eq!(status, 400);
    assert!(e["error"].as_str().unwrap().contains("empty"), "{e}");
    // Too large: refused by its declared length, and by its bytes.
    let big = format!("{{\"id\": \"big\", \"text\": \"{}\"}}", "长".repeat(10_000));
    let (status, e) = bad(&big, "/v1/documents");
    assert_eq!(status, 413, "{e}");
    assert!(e["error"].as_str().unwrap().contains("20000"), "{e}");
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.write_all(b"POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 1000000000\r\n\r\n")
        .unwrap();
    let (status, _) = read_response(&mut s);
    assert_eq!(status, 413);
    // Wrong method on a known route.
    let (status, e) = http(&server.addr, "GET", "/v1/documents", &[], b"");
    assert_eq!(status, 405);
    assert!(e.contains("\"error\""), "{e}");
    // Garbage instead of HTTP: the connection is dropped, the server goes on.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let _ = s.write_all(b"\x00\x01\x02 garbage\r\n\r\n");
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);

    // Nothing of any refused request was written (not even the good first document).
    assert_eq!(server.get("/healthz").0, 200);
    let (_, stats) = server.get("/v1/stats");
    assert_eq!(stats["documents"], 0, "{stats}");
    assert_eq!(server.stop(), 0);
}

#[test]
fn the_token_guards_every_route_but_healthz() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cret-token-0123456789";
    std::fs::write(dir.path().join("token"), format!("{token}\n")).unwrap();
    let server = Server::start(dir.path(), "t.db", &["--token-file", "token"]);
    let auth = format!("Bearer {token}");
    assert_eq!(http(&server.addr, "GET", "/healthz", &[], b"").0, 200);
    for path in [
        "/v1/stats",
        "/metrics",
        "/v1/openapi.json",
        "/v1/documents/x",
        "/v1/clusters/1",
    ] {
        assert_eq!(http(&server.addr, "GET", path, &[], b"").0, 401, "{path}");
        let wrong = [("Authorization", "Bearer wrong-token-0123456789")];
        assert_eq!(
            http(&server.addr, "GET", path, &wrong, b"").0,
            401,
            "{path}"
        );
    }
    let body = r#"{"id": "a", "text": "有令牌才能写入的文档，内容足够长。"}"#.as_bytes();
    assert_eq!(
        http(&server.addr, "POST", "/v1/documents", &[], body).0,
        401
    );
    let ok = [("Authorization", auth.as_str())];
    assert_eq!(
        http(&server.addr, "POST", "/v1/documents", &ok, body).0,
        200
    );
    let (status, text) = http(&server.addr, "GET", "/v1/stats", &ok, b"");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["documents"],
        1
    );
    // A busy port: a clear error, and no new store left behind.
    let out = run(
        dir.path(),
        &["--db", "other.db", "serve", "--listen", &server.addr],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("cannot listen on"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("other.db").exists());
    // The store is locked by the server.
    let out = run(
        dir.path(),
        &["--db", "t.db", "serve", "--listen", "127.0.0.1:0"],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("locked by another process"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.stop(), 0);

    // No token: loopback only, unless asked for in so many words.
    let out = run(
        dir.path(),
        &["--db", "t.db", "serve", "--listen", "0.0.0.0:0"],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--token-file"), "{}", stderr(&out));
    std::fs::write(dir.path().join("short"), "abc\n").unwrap();
    let out = run(
        dir.path(),
        &["--db", "t.db", "serve", "--token-file", "short"],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("16 characters"), "{}", stderr(&out));
}

/// Concurrent writers (and readers meanwhile) give what a sequential ingest of the same
/// documents in commit order gives.
#[test]
fn concurrent_writers_equal_a_sequential_ingest_in_commit_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "c.db", &[]);
    let docs = planted_corpus(60, 7);
    let writers = 4;
    let acked: Mutex<Vec<Value>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..writers {
            let (server, docs, acked) = (&server, &docs, &acked);
            scope.spawn(move || {
                let mine: Vec<Value> = docs.iter().skip(w).step_by(writers).cloned().collect();
                let mut rng = Rng(w as u64 + 17);
                let mut rest = &mine[..];
                while !rest.is_empty() {
                    let n = (1 + rng.below(4) as usize).min(rest.len());
                    let (status, v) =
                        server.post("/v1/documents", &json!({ "documents": &rest[..n] }));
                    assert_eq!(status, 200, "{v}");
                    acked
                        .lock()
                        .unwrap()
                        .extend(v["results"].as_array().unwrap().iter().cloned());
                    rest = &rest[n..];
                }
            });
        }
        for r in 0..2 {
            let (server, docs) = (&server, &docs);
            scope.spawn(move || {
                for d in docs.iter().skip(r).step_by(5) {
                    let (status, v) = server.post("/v1/query", &json!({ "text": d["text"] }));
                    assert_eq!(status, 200, "{v}");
                }
            });
        }
    });
    assert_eq!(server.stop(), 0);
    let acked = acked.into_inner().unwrap();
    assert_eq!(acked.len(), docs.len());

    // Commit order = ingest order of the store (export is in seq order).
    let out = run(dir.path(), &["--db", "c.db", "export"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let exported = json_lines(&stdout(&out));
    let order: Vec<&str> = exported.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(order.len(), docs.len());
    let by_id: std::collections::HashMap<&str, &Value> = docs
        .iter()
        .map(|d| (d["id"].as_str().unwrap(), d))
        .collect();
    let ordered: String = order.iter().map(|id| format!("{}\n", by_id[id])).collect();
    std::fs::write(dir.path().join("ordered.jsonl"), ordered).unwrap();
    let out = run(
        dir.path(),
        &[
            "--db",
            "seq.db",
            "ingest",
            "--output",
            "seq.jsonl",
            "ordered.jsonl",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let seq = json_lines(&std::fs::read_to_string(dir.path().join("seq.jsonl")).unwrap());
    let mut served: Vec<_> = acked.iter().map(key).collect();
    let mut expected: Vec<_> = seq.iter().map(key).collect();
    served.sort();
    expected.sort();
    assert_eq!(served, expected);
    // And the planted groups came out as clusters.
    let dups = acked
        .iter()
        .filter(|l| !l["duplicate_of"].is_null())
        .count();
    let copies = docs
        .iter()
        .filter(|d| !d["id"].as_str().unwrap().ends_with("-0"))
        .count();
    assert_eq!(dups, copies);
    let out = run(dir.path(), &["--db", "seq.db", "export"]);
    assert_eq!(json_lines(&stdout(&out)), exported);
}

/// kill -9 in the middle of writes: every acknowledged document is in the reopened store,
/// which verifies.
#[test]
fn a_killed_server_keeps_every_acknowledged_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), "k.db", &[]);
    let docs = planted_corpus(150, 11);
    let acked: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let addr = server.addr.clone();
    std::thread::scope(|scope| {
        for w in 0..3 {
            let (docs, acked, addr) = (&docs, &acked, &addr);
            scope.spawn(move || {
                for chunk in docs.iter().skip(w).step_by(3).collect::<Vec<_>>().chunks(2) {
                    let body = json!({ "documents": chunk }).to_string();
                    let Ok(mut s) = TcpStream::connect(addr) else { return };
                    let req = format!(
                        "POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.write_all(req.as_bytes()).is_err() {
                        return;
                    }
                    let mut raw = Vec::new();
                    let _ = s.read_to_end(&mut raw);
                    let text = String::from_utf8_lossy(&raw);
                    if !text.starts_with("HTTP/1.1 200") {
                        return; // the server died before answering: not acknowledged
                    }
                    let v: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
                    let mut a = acked.lock().unwrap();
                    for l in v["results"].as_array().unwrap() {
                        a.push(l["id"].as_str().unwrap().to_string());
                    }
                }
            });
        }
        // Kill once a good part is acknowledged.
        let t0 = std::time::Instant::now();
        while acked.lock().unwrap().len() < docs.len() / 3 && t0.elapsed() < Duration::from_secs(60)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        server.child.kill().unwrap(); // SIGKILL
        server.child.wait().unwrap();
    });
    let acked = acked.into_inner().unwrap();
    assert!(
        acked.len() >= docs.len() / 3,
        "only {} acknowledged",
        acked.len()
    );
    assert!(acked.len() < docs.len(), "the kill came after every write");
    let out = run(dir.path(), &["--db", "k.db", "verify"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = run(dir.path(), &["--db", "k.db", "export"]);
    let stored: std::collections::HashSet<String> = json_lines(&stdout(&out))
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    for id in &acked {
        assert!(stored.contains(id), "acknowledged {id} is not stored");
    }
    // The store serves again.
    let server = Server::start(dir.path(), "k.db", &[]);
    let (_, stats) = server.get("/v1/stats");
    assert_eq!(stats["documents"].as_u64(), Some(stored.len() as u64));
    drop(server);
}

// The adversarial review of 2026-11-25: hostile clients and requests.

/// A raw connection that sends `head` (and `body`) and then waits, holding the request open.
fn stall(addr: &str, head: &str, body: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    s.flush().unwrap();
    s
}

/// Wait until `child` exits (at most `secs`): its exit code, or None when it still runs.
fn exits_within(child: &mut Child, secs: u64) -> Option<i32> {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn a_client_that_stalls_mid_request_cannot_hold_the_server_or_its_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        dir.path(),
        "st.db",
        &["--read-timeout", "2", "--shutdown-deadline", "3"],
    );
    let addr = server.addr.clone();
    let doc =
        json!({"id": "kept", "text": "停在半路的请求不能拖住服务器，已经确认的文档必须留下。"});
    assert_eq!(server.post("/v1/documents", &doc).0, 200);
    // Half a body: a 408 once the read timeout passes.
    let mut half_body = stall(
        &addr,
        &format!("POST /v1/documents HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"),
        b"{\"id\":",
    );
    half_body
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let (status, body) = read_response(&mut half_body);
    assert_eq!(status, 408, "{body}");
    assert!(body.contains("read-timeout"), "{body}");
    // Half a header: the connection is closed after the read timeout.
    let mut half_head = stall(
        &addr,
        "POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-",
        b"",
    );
    half_head
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = Vec::new();
    let started = std::time::Instant::now();
    let _ = half_head.read_to_end(&mut buf);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "closed by the server, not by the client's own timeout"
    );
    // Stalled clients while the server stops: it stops by its deadline, keeping what it
    // acknowledged.
    let _a = stall(
        &addr,
        &format!("POST /v1/documents HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"),
        b"{\"id\":",
    );
    let _b = stall(&addr, "GET /v1/stats HTTP/1.1\r\nHo", b"");
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let code = exits_within(&mut server.child, 20);
    assert_eq!(
        code,
        Some(0),
        "stopped within its deadline:\n{}",
        server.log()
    );
    let out = run(dir.path(), &["--db", "st.db", "export"]);
    assert_eq!(json_lines(&stdout(&out)).len(), 1);
    assert!(stdout(&out).contains("kept"));
}

#[test]
fn large_requests_are_bounded_and_deep_pages_stay_off_the_http_threads() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        "big.db",
        &["--max-request-docs", "500", "--max-group", "64"],
    );
    let docs: Vec<Value> = planted_corpus(200, 7).into_iter().take(400).collect();
    let n = docs.len();
    // Ingested in groups of 64 (the writer takes the store for one group at a time), answered
    // whole and in order.
    let (status, v) = server.post("/v1/documents", &json!({ "documents": docs }));
    assert_eq!(status, 200, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), n);
    for (r, d) in results.iter().zip(&docs) {
        assert_eq!(r["id"], d["id"]);
    }
    // Equal to one ingest of the same documents by the CLI.
    write_jsonl(&dir.path().join("same.jsonl"), &docs);
    let out = run(
        dir.path(),
        &["--db", "cli.db", "ingest", "same.jsonl", "-o", "-"],
    );
    let cli: Vec<_> = json_lines(&stdout(&out)).iter().map(key).collect();
    let http_lines: Vec<_> = results.iter().map(key).collect();
    assert_eq!(http_lines, cli);
    // Over the document limit: 413 naming it, nothing written.
    let many: Vec<Value> = (0..501)
        .map(|i| json!({"id": format!("m{i}"), "text": "太多的文档。"}))
        .collect();
    let (status, v) = server.post("/v1/documents", &json!({ "documents": many }));
    assert_eq!(status, 413, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("--max-request-docs"),
        "{v}"
    );
    let (status, v) = server.post("/v1/query/batch", &json!({ "documents": many }));
    assert_eq!(status, 413, "{v}");
    assert_eq!(server.get("/v1/stats").1["documents"], n);
    // An id over the id limit.
    let long = json!({"id": "x".repeat(9000), "text": "很长的编号。"});
    let (status, v) = server.post("/v1/documents", &long);
    assert_eq!(status, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("8192"), "{v}");
    // Two deeply nested pages at once, while /healthz is asked: all answered.
    let page = format!(
        "<html><body>{}<p>嵌套很深的网页也要很快读完，不能拖住其他请求。</p>{}</body></html>",
        "<div>".repeat(20_000),
        "</div>".repeat(20_000)
    );
    let addr = server.addr.clone();
    let queries: Vec<_> = (0..2)
        .map(|_| {
            let addr = addr.clone();
            let body = json!({ "html": page }).to_string();
            std::thread::spawn(move || http(&addr, "POST", "/v1/query", &[], body.as_bytes()).0)
        })
        .collect();
    assert_eq!(http(&addr, "GET", "/healthz", &[], b"").0, 200);
    for q in queries {
        assert_eq!(q.join().unwrap(), 200);
    }
    assert_eq!(server.stop(), 0);
}

#[test]
fn tokens_with_a_byte_order_mark_work_and_tokens_no_header_can_carry_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let token = "bom-token-0123456789abcdef";
    std::fs::write(dir.path().join("bom"), format!("\u{feff}{token}\r\n")).unwrap();
    let server = Server::start(
        dir.path(),
        "tk.db",
        &["--token-file", "bom", "--listen", "localhost:0"],
    );
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let auth = format!("{scheme} {token}");
        let (status, _) = http(
            &server.addr,
            "GET",
            "/v1/stats",
            &[("Authorization", auth.as_str())],
            b"",
        );
        assert_eq!(status, 200, "{scheme}");
    }
    assert_eq!(server.stop(), 0);
    std::fs::write(dir.path().join("accents"), "jeton-secret-été-2026\n").unwrap();
    let out = run(
        dir.path(),
        &["--db", "tk.db", "serve", "--token-file", "accents"],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("visible ASCII"), "{}", stderr(&out));
}

/// The page and its files need no token (they hold no data); its API calls do. The report, a
/// cluster's members with their links, and a query's sentences marked with the matches that
/// hold them answer as the CLI does; a bad flag is a 400 naming it.
/// The marked sentences of `/v1/query` are shown as the query writes them, not as normalized
/// (full-width digits), against a store holding `text` as `a`.
fn sentences_are_shown_as_written(addr: &str, auth: &[(&str, &str)], text: &str) {
    let wide = format!("转自：\n{}", text.replace("2025", "２０２５"));
    let q = json!({"text": wide, "sentences": true}).to_string();
    let (status, a) = http(addr, "POST", "/v1/query", auth, q.as_bytes());
    assert_eq!(status, 200, "{a}");
    let a: Value = serde_json::from_str(&a).unwrap();
    let shown: Vec<&str> = a["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["shared"].as_array().unwrap().contains(&json!("a")))
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(shown.len(), 2, "{a}");
    assert!(shown[1].contains("到２０２５年底"), "{a}");
    assert!(shown[0].ends_with("便利化"), "{a}");
}

#[test]
fn the_page_is_served_without_the_token_and_its_api_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "国务院办公厅日前印发通知，要求各地加快推进政务服务标准化、规范化、便利化。\n\
                通知提出，到2025年底，政务服务事项全面实现一网通办，企业和群众办事更加方便快捷。";
    let lines = [
        json!({"id": "a", "url": "https://a.example/1", "title": "A", "text": text}),
        json!({"id": "b", "url": "https://b.example/2", "title": "B", "text": format!("【转载】\n{text}")}),
        json!({"id": "c", "text": "The harbour master counted every fishing boat before the storm arrived."}),
    ];
    write_jsonl(&d.join("in.jsonl"), &lines);
    let o = run(d, &["--db", "p.db", "ingest", "-q", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    std::fs::write(d.join("token"), "page-test-token-0123456789abcdef").unwrap();
    let server = Server::start(d, "p.db", &["--token-file", "token"]);
    let auth = [("Authorization", "Bearer page-test-token-0123456789abcdef")];
    for (path, holds) in [
        ("/", "/ui/page.js"),
        ("/ui/page.js", "/v1/query"),
        ("/ui/render.js", "fpdbRender"),
        ("/ui/style.css", "--accent"),
    ] {
        let (status, body) = http(&server.addr, "GET", path, &[], &[]);
        assert_eq!(status, 200, "{path}");
        assert!(body.contains(holds), "{path}");
    }
    for path in ["/v1/report", "/v1/clusters/1/members"] {
        assert_eq!(http(&server.addr, "GET", path, &[], &[]).0, 401, "{path}");
    }
    let (status, report) = http(&server.addr, "GET", "/v1/report", &auth, &[]);
    assert_eq!(status, 200);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["documents"], 3);
    assert_eq!(
        report["hosts"]["pairs"],
        json!([{"copy": "b.example", "source": "a.example", "pages": 1}])
    );
    let similar_id = report["largest"][0]["similar_id"].as_u64().unwrap();
    let (status, c) = http(
        &server.addr,
        "GET",
        &format!("/v1/clusters/{similar_id}/members?limit=5"),
        &auth,
        &[],
    );
    assert_eq!(status, 200, "{c}");
    let c: Value = serde_json::from_str(&c).unwrap();
    assert_eq!(c["original"], "a");
    assert_eq!(c["members"][0]["original"], true);
    assert_eq!(c["members"][0]["links"], json!([]));
    assert_eq!(c["members"][1]["url"], "https://b.example/2");
    assert_eq!(c["members"][1]["links"][0]["id"], "a");
    assert_eq!(
        report["largest"][0], c,
        "the report lists the cluster as the route does"
    );
    for (path, want) in [
        ("/v1/clusters/999/members", 404),
        ("/v1/clusters/x/members", 400),
        ("/v1/clusters/1/members?limit=z", 400),
    ] {
        assert_eq!(
            http(&server.addr, "GET", path, &auth, &[]).0,
            want,
            "{path}"
        );
    }
    let q = json!({"text": format!("转自：\n{text}"), "sentences": true}).to_string();
    let (status, a) = http(&server.addr, "POST", "/v1/query", &auth, q.as_bytes());
    assert_eq!(status, 200, "{a}");
    let a: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(a["duplicate"], true);
    let sentences = a["sentences"].as_array().unwrap();
    // Each counted sentence is shared with `a` (and with `b`, its copy, which the bands
    // propose too).
    let shared: Vec<&Value> = sentences
        .iter()
        .filter(|s| s["shared"].as_array().unwrap().contains(&json!("a")))
        .collect();
    assert_eq!(shared.len(), 2, "{a}");
    assert_eq!(sentences[0]["counted"], false, "{a}");
    sentences_are_shown_as_written(&server.addr, &auth, text);
    let q = json!({"text": text, "sentences": "yes"}).to_string();
    let (status, e) = http(&server.addr, "POST", "/v1/query", &auth, q.as_bytes());
    assert_eq!(status, 400);
    assert!(e.contains("\"field\":\"sentences\""), "{e}");
    let q = json!({"text": text}).to_string();
    let (_, plain) = http(&server.addr, "POST", "/v1/query", &auth, q.as_bytes());
    assert!(!plain.contains("sentences"), "{plain}");
    assert_eq!(server.stop(), 0);
}
