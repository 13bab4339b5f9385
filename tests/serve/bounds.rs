//! `fpdb serve`'s answers are bounded whatever the ids: ids up to 8,192 bytes are cut in a
//! member list, its links and a query's matches (whole in the cluster's list of ids), an
//! answer over 64 MiB is
//! refused (413), and clients that ask and never read are dropped after the read timeout, so
//! the review's `slowread.py` and `batchamp.py` shapes keep the server under 500 MB.

use crate::common;

use std::io::Write;

use common::server::Server;
use serde_json::{json, Value};

/// The server's peak resident memory, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn answers_about_long_ids_stay_small_and_clients_that_do_not_read_are_dropped() {
    let d = tempfile::tempdir().unwrap();
    let text = common::synthetic_doc(&mut common::Rng(9), 30);
    let lines: Vec<Value> = (0..1000)
        .map(|i| json!({"id": format!("{i:05}{}", "x".repeat(8180)), "text": text}))
        .collect();
    common::write_jsonl(&d.path().join("long.jsonl"), &lines);
    // With simhash's links too, the member list's answer (about 2.5 MB) is more than the
    // sockets' buffers hold: a client that does not read leaves some of it unsent.
    let o = common::run(
        d.path(),
        &[
            "--db",
            "s.db",
            "-q",
            "ingest",
            "long.jsonl",
            "--algos",
            "nshash,simhash,minhash",
        ],
    );
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let server = Server::start(d.path(), "s.db", &["--read-timeout", "3"]);
    let (status, v) = server.get("/v1/clusters/1/members?limit=1000");
    assert_eq!(status, 200, "{v}");
    let members = v["members"].as_array().unwrap();
    assert_eq!(members.len(), 1000);
    // Ids cut in the member list and its links; whole in the cluster's list of ids.
    for id in [&members[0]["id"], &members[5]["links"][0]["id"]] {
        let id = id.as_str().unwrap();
        assert!(id.ends_with('…') && id.chars().count() == 256, "{id}");
    }
    let (status, ids) = server.get("/v1/clusters/1?limit=1000");
    assert_eq!(status, 200);
    assert_eq!(ids["members"][0].as_str().unwrap().len(), 8185, "{ids}");
    let whole = v.to_string().len();
    assert!(whole < 24 << 20, "{whole} bytes");
    // A batch of 1,000 copies: its matches' ids are cut.
    let docs: Vec<Value> = (0..1000)
        .map(|i| json!({"id": i.to_string(), "text": text}))
        .collect();
    let (status, v) = server.post("/v1/query/batch", &json!({"documents": docs}));
    assert_eq!(status, 200);
    let id = v["results"][0]["matches"][0]["id"].as_str().unwrap();
    assert!(id.chars().count() <= 256, "{id}");
    // 12 clients ask for the member list and never read it.
    let mut idle = Vec::new();
    for _ in 0..12 {
        let mut c = std::net::TcpStream::connect(&server.addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        write!(
            c,
            "GET /v1/clusters/1/members?limit=1000 HTTP/1.1\r\nHost: {}\r\n\r\n",
            server.addr
        )
        .unwrap();
        idle.push(c);
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (status, _) = server.post("/v1/query", &json!({"text": text}));
    assert_eq!(status, 200);
    // After the read timeout they are dropped: what is left to read ends.
    std::thread::sleep(std::time::Duration::from_secs(6));
    for mut c in idle {
        let mut got = Vec::new();
        let _ = std::io::Read::read_to_end(&mut c, &mut got);
        let body = got
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(0, |at| got.len() - at - 4);
        assert!(
            body < whole,
            "a client that did not read got its whole answer ({body} bytes)"
        );
    }
    let peak = peak_kib(server.child.id());
    eprintln!("server peak {peak} KiB");
    assert!(peak < 500 * 1024, "server peak {peak} KiB");
    assert_eq!(server.stop(), 0);
}
