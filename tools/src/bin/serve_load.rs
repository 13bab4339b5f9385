//! Load generator for `fpdb serve` (used by `scripts/serve_bench.sh`): CLIENTS threads, each
//! with one keep-alive HTTP/1.1 connection, send requests built from the documents of a JSONL
//! file for SECONDS (or until the documents run out, for ingest) and print one JSON line:
//! requests, errors, requests/s, documents/s and latency percentiles.
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin serve_load -- ADDR MODE CLIENTS SECONDS CORPUS.jsonl [BATCH]
//! MODE: query (POST /v1/query, one document each, drawn at random)
//!       ingest (POST /v1/documents, BATCH documents each, every document once)
//!       write (CLIENTS writers send BATCH documents per request as fast as they can, the
//!              corpus over and over under new ids, until SECONDS; run `query` in another
//!              process beside it to measure queries under that load)
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fpdb_tools::rng::Rng;

/// One keep-alive connection.
struct Conn {
    addr: String,
    stream: Option<(TcpStream, BufReader<TcpStream>)>,
}

impl Conn {
    /// POST `body` to `path`; the status.
    fn post(&mut self, path: &str, body: &[u8]) -> std::io::Result<u16> {
        if self.stream.is_none() {
            let s = TcpStream::connect(&self.addr)?;
            s.set_nodelay(true)?;
            let r = BufReader::new(s.try_clone()?);
            self.stream = Some((s, r));
        }
        let (w, r) = self.stream.as_mut().expect("connected");
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut req = head.into_bytes();
        req.extend_from_slice(body);
        let sent = w.write_all(&req);
        let status = sent.and_then(|_| read_response(r));
        if status.is_err() {
            self.stream = None;
        }
        status
    }
}

fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<u16> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut len = 0usize;
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::Error::other("connection closed"));
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    Ok(status)
}

#[expect(
    clippy::too_many_lines,
    reason = "a load generator: arguments, clients, the report, in order"
)]
fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 6 {
        eprintln!("usage: serve_load ADDR query|ingest CLIENTS SECONDS CORPUS.jsonl [BATCH]");
        std::process::exit(2);
    }
    let (addr, mode) = (a[1].clone(), a[2].clone());
    let clients: usize = a[3].parse().expect("CLIENTS");
    let seconds: f64 = a[4].parse().expect("SECONDS");
    let batch: usize = a.get(6).and_then(|b| b.parse().ok()).unwrap_or(256);
    let docs: Vec<String> = std::fs::read_to_string(&a[5])
        .expect("read corpus")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let next = AtomicUsize::new(0);
    let latencies: Mutex<Vec<f64>> = Mutex::new(Vec::new());
    let errors = AtomicUsize::new(0);
    let sent_docs = AtomicUsize::new(0);
    let deadline = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for c in 0..clients {
            let (addr, mode, docs, next, latencies, errors, sent_docs) =
                (&addr, &mode, &docs, &next, &latencies, &errors, &sent_docs);
            scope.spawn(move || {
                let mut conn = Conn {
                    addr: addr.clone(),
                    stream: None,
                };
                let mut rng = Rng(c as u64 * 7919 + 1);
                let mut mine = Vec::new();
                let mut round = 0usize;
                let mut template = String::new();
                while start.elapsed() < deadline {
                    let (path, body, n) = if mode == "write" {
                        // A writer: BATCH documents under ids of this client and round (the
                        // request is built once; each round only renames its ids).
                        if template.is_empty() {
                            let from = rng.index(docs.len());
                            let body: Vec<String> = (0..batch)
                                .map(|k| {
                                    let d = &docs[(from + k) % docs.len()];
                                    let mut v: serde_json::Value =
                                        serde_json::from_str(d).expect("a JSON document");
                                    v["id"] = format!("c{c}-r@R@-{k}").into();
                                    v.to_string()
                                })
                                .collect();
                            template = format!("{{\"documents\":[{}]}}", body.join(","));
                        }
                        let body = template.replace("@R@", &round.to_string());
                        round += 1;
                        let t = Instant::now();
                        if let Ok(200) = conn.post("/v1/documents", body.as_bytes()) {
                            mine.push(t.elapsed().as_secs_f64());
                            sent_docs.fetch_add(batch, Ordering::Relaxed);
                        } else {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                        continue;
                    } else if mode == "query" {
                        let d = &docs[rng.index(docs.len())];
                        ("/v1/query", d.clone(), 1)
                    } else {
                        let from = next.fetch_add(batch, Ordering::Relaxed);
                        if from >= docs.len() {
                            break;
                        }
                        let to = (from + batch).min(docs.len());
                        let body = format!("{{\"documents\":[{}]}}", docs[from..to].join(","));
                        ("/v1/documents", body, to - from)
                    };
                    let t = Instant::now();
                    match conn.post(path, body.as_bytes()) {
                        Ok(200) => {
                            mine.push(t.elapsed().as_secs_f64());
                            sent_docs.fetch_add(n, Ordering::Relaxed);
                        }
                        _ => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                latencies.lock().expect("lock").extend(mine);
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let mut l = latencies.into_inner().expect("lock");
    l.sort_by(f64::total_cmp);
    let pct = |p: f64| -> f64 {
        if l.is_empty() {
            0.0
        } else {
            l[((l.len() as f64 * p) as usize).min(l.len() - 1)] * 1000.0
        }
    };
    println!(
        "{{\"mode\":\"{mode}\",\"clients\":{clients},\"requests\":{},\"errors\":{},\"seconds\":{secs:.2},\"requests_per_s\":{:.0},\"docs_per_s\":{:.0},\"p50_ms\":{:.3},\"p99_ms\":{:.3}}}",
        l.len(),
        errors.load(Ordering::Relaxed),
        l.len() as f64 / secs,
        sent_docs.load(Ordering::Relaxed) as f64 / secs,
        pct(0.5),
        pct(0.99)
    );
}
