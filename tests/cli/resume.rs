//! `dedup` stopped and run again, and crawls read in any order: for real, with the binary.
//!
//! - An interrupted `dedup` over a file (SIGINT or SIGTERM at random points), run again with
//!   the same command, writes the `-o` and `--duplicates-out` of one uninterrupted run, record
//!   for record, with and without `--replace`, and from a `--stream` run; a finished one run
//!   again writes them again. One stopped by a full disk names the output and goes on.
//! - A crawl with reposts, late originals and re-crawled URLs names the same originals, and
//!   `dedup` writes the same records, in every order of its records.
//! - A failed run leaves none of the outputs it created empty; every format is recognized on
//!   stdin.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{code, json_lines, run, run_stdin, stderr, stdout, synthetic_doc, Rng};

/// A corpus of `n` articles with reposts, dated copies published before their article, and
/// ids read twice (a later record of an id with another text): JSON lines.
fn corpus(n: usize) -> Vec<u8> {
    let mut rng = Rng(0x5eed);
    let mut out = Vec::new();
    let mut line = |v: serde_json::Value| {
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    };
    for i in 0..n {
        let text = synthetic_doc(&mut rng, 6);
        let day = 1 + (i % 27);
        line(
            serde_json::json!({"id": format!("a{i}"), "text": text, "date": format!("2024-03-{day:02}")}),
        );
        match i % 5 {
            0 => line(
                serde_json::json!({"id": format!("r{i}"), "text": format!("{text}\n（转载）"), "date": "2024-04-01"}),
            ),
            // A copy published before its article, read after it: it becomes the original.
            1 => line(
                serde_json::json!({"id": format!("e{i}"), "text": format!("{text}\n来源：网络"), "date": "2024-01-01"}),
            ),
            // The same id again, another text.
            2 => line(
                serde_json::json!({"id": format!("a{i}"), "text": synthetic_doc(&mut rng, 5), "date": "2024-05-01"}),
            ),
            _ => {}
        }
    }
    out
}

/// `fpdb dedup` of `input` into store `db` in `dir`, unique records to `u`, the others to
/// `d`, with `extra` flags.
fn dedup_args<'a>(db: &'a str, input: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--db",
        db,
        "-q",
        "dedup",
        input,
        "-o",
        "u.jsonl",
        "--duplicates-out",
        "d.jsonl",
        "--batch-size",
        "64",
    ];
    a.extend_from_slice(extra);
    a
}

/// Run `args` in `dir`, send `signal` after `after`; the exit status.
fn interrupt(dir: &Path, args: &[&str], signal: &str, after: Duration) -> Option<i32> {
    let child = common::fpdb()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let _ = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    // None: the signal came before the run set its handlers, and ended it as a crash would.
    let status = out.status.code();
    assert!(
        matches!(status, None | Some(0 | 3 | 130 | 143)),
        "{status:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    status
}

#[test]
fn an_interrupted_dedup_run_again_writes_what_one_run_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.jsonl"), corpus(6000)).unwrap();
    let read = |name: &str| std::fs::read(d.join(name)).unwrap();
    let mut rng = Rng(0xfeed);
    // A `--stream` run stopped and run again writes in two passes: what one run without
    // `--stream` writes.
    for (replace, stream, rounds) in [(false, false, 10), (true, false, 10), (false, true, 8)] {
        let mut extra: Vec<&str> = Vec::new();
        if replace {
            extra.push("--replace");
        }
        // One uninterrupted run: what every interrupted one must end with.
        let t = Instant::now();
        let whole_db = format!("whole{replace}{stream}.db");
        let whole = run(d, &dedup_args(&whole_db, "in.jsonl", &extra));
        let took = t.elapsed();
        // Exit 3: the ids read twice with another text are skipped (and listed).
        assert!(matches!(code(&whole), 0 | 3), "{}", stderr(&whole));
        let (want_u, want_d) = (read("u.jsonl"), read("d.jsonl"));
        assert!(want_u.len() > 1000 && want_d.len() > 1000);
        // What one uninterrupted streaming run writes (it keeps later originals too): a run
        // killed before it recorded its job leaves nothing stored, and its re-run streams.
        let streamed = if stream {
            extra.push("--stream");
            let whole = run(d, &dedup_args("whole-stream.db", "in.jsonl", &extra));
            assert!(matches!(code(&whole), 0 | 3), "{}", stderr(&whole));
            assert!(read("u.jsonl") != want_u, "the corpus has late originals");
            Some((read("u.jsonl"), read("d.jsonl")))
        } else {
            None
        };
        let mut stopped = 0;
        for round in 0..rounds {
            let db = format!("r{round}{replace}{stream}.db");
            let args = dedup_args(&db, "in.jsonl", &extra);
            let signal = if rng.below(2) == 0 { "INT" } else { "TERM" };
            // Anywhere from the start to past the end of a whole run; sometimes twice.
            let at = |rng: &mut Rng| {
                Duration::from_millis(rng.below(took.as_millis() as u64 * 11 / 10 + 1))
            };
            let mut times = 1 + rng.below(2);
            // Whether a run got as far as its signal handlers (its job was recorded).
            let mut handled = false;
            while times > 0 {
                let status = interrupt(d, &args, signal, at(&mut rng));
                if matches!(status, None | Some(130 | 143)) {
                    stopped += 1;
                }
                handled |= status.is_some();
                times -= 1;
            }
            let again = run(d, &args);
            assert!(matches!(code(&again), 0 | 3), "{}", stderr(&again));
            let got = (read("u.jsonl"), read("d.jsonl"));
            let as_one_run = got.0 == want_u && got.1 == want_d;
            let as_a_stream = !handled && streamed.as_ref() == Some(&got);
            assert!(
                as_one_run || as_a_stream,
                "round {round} (--replace {replace}, --stream {stream}): the outputs differ \
                 from one uninterrupted run's"
            );
            // Finished: the same command again writes the records of one run.
            if round == 0 {
                let once_more = run(d, &args);
                assert!(matches!(code(&once_more), 0 | 3), "{}", stderr(&once_more));
                assert!(read("u.jsonl") == want_u && read("d.jsonl") == want_d);
            }
            let v = run(d, &["--db", &db, "verify"]);
            assert_eq!(code(&v), 0, "{}", stderr(&v));
        }
        assert!(
            stopped >= 3,
            "only {stopped} of the runs were stopped mid-way"
        );
    }
}

#[test]
fn a_dedup_stopped_by_a_full_disk_says_where_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.jsonl"), corpus(600)).unwrap();
    let read = |name: &str| std::fs::read(d.join(name)).unwrap();
    let whole = run(d, &dedup_args("whole.db", "in.jsonl", &[]));
    assert!(matches!(code(&whole), 0 | 3), "{}", stderr(&whole));
    let (want_u, want_d) = (read("u.jsonl"), read("d.jsonl"));
    // /dev/full: every write fails as on a full disk.
    for (flag, stream) in [("-o", true), ("--duplicates-out", true), ("-o", false)] {
        let db = format!("full{flag}{stream}.db");
        let mut args = vec!["--db", &db, "dedup", "in.jsonl", "--batch-size", "64"];
        let (u, dups) = match flag {
            "-o" => ("/dev/full", "d.jsonl"),
            _ => ("u.jsonl", "/dev/full"),
        };
        args.extend(["-o", u, "--duplicates-out", dups]);
        if stream {
            args.push("--stream");
        }
        let o = run(d, &args);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("cannot write the {flag} output /dev/full"))
                && err.contains("run the same command again to go on"),
            "{err}"
        );
        // Once there is room (other files: the job is named by its input), it goes on.
        let again = run(
            d,
            &dedup_args(&db, "in.jsonl", if stream { &["--stream"] } else { &[] }),
        );
        assert!(matches!(code(&again), 0 | 3), "{}", stderr(&again));
        assert!(
            read("u.jsonl") == want_u && read("d.jsonl") == want_d,
            "{flag} (--stream {stream}): the outputs differ from one uninterrupted run's"
        );
    }
    // The results of `ingest -o` likewise name their file (stdout: `paths_and_replace.rs`).
    let o = run(
        d,
        &["--db", "i.db", "ingest", "in.jsonl", "-o", "/dev/full"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write the results to /dev/full: No space left"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_failed_dedup_leaves_no_output_it_created_and_keeps_one_it_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.jsonl"), "{\"id\": \"a\", \"body\": \"x\"}\n").unwrap();
    let out = run(d, &["--db", "s.db", "dedup", "in.jsonl", "-o", "u.jsonl"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(!d.join("u.jsonl").exists(), "an empty -o was left");
}

/// A page of `body`; `published`: its own publication time.
fn page(body: &str, published: Option<&str>) -> String {
    let head = published.map_or(String::new(), |t| {
        format!(r#"<meta property="article:published_time" content="{t}">"#)
    });
    let paras: String = body.lines().map(|l| format!("<p>{l}</p>")).collect();
    format!(
        "<html><head><title>t</title>{head}</head><body><article>{paras}</article></body></html>"
    )
}

/// `id -> duplicate_of`.
type Named = BTreeMap<String, Option<String>>;

#[test]
fn a_shuffled_crawl_names_the_same_originals_and_writes_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(0xc0ffee);
    let mut records = Vec::new();
    let mut want = BTreeMap::new();
    for k in 0..8 {
        let text = synthetic_doc(&mut rng, 8).replace('。', "。\n");
        let text = text.trim_end();
        // The original: published first, fetched last (after its reposts).
        let orig = format!("https://orig{k}.example/a");
        records.push(common::warc_response(
            &orig,
            "2024-06-10T00:00:00Z",
            &page(text, Some(&format!("2024-01-{:02}T08:00:00Z", k + 2))),
        ));
        for j in 0..2 {
            records.push(common::warc_response(
                &format!("https://copy{j}.example/{k}"),
                "2024-03-01T00:00:00Z",
                &page(
                    &format!("{text}\n转载自网络。"),
                    Some("2024-02-01T00:00:00Z"),
                ),
            ));
        }
        let mut original = orig;
        if k % 2 == 0 {
            // A page without a time of its own, fetched twice: first before the original was
            // published (it is then the original), and again later with a counter changed.
            let url = format!("https://nodate.example/{k}");
            records.push(common::warc_response(
                &url,
                "2024-01-01T00:00:00Z",
                &page(&format!("{text}\n阅读 10"), None),
            ));
            records.push(common::warc_response(
                &url,
                "2024-07-01T00:00:00Z",
                &page(&format!("{text}\n阅读 99"), None),
            ));
            original = url;
        }
        want.insert(k, original);
    }
    // The first order's originals (id -> duplicate_of) and unique ids.
    let mut seen: Option<(Named, BTreeSet<String>)> = None;
    for order in 0..10 {
        let mut shuffled = records.clone();
        if order > 0 {
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, rng.index(i + 1));
            }
        }
        let name = format!("crawl{order}.warc");
        std::fs::write(d.join(&name), shuffled.concat()).unwrap();
        let db = format!("s{order}.db");
        let out = run(d, &["--db", &db, "-q", "dedup", &name, "-o", "u.jsonl"]);
        assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
        let map = common::named(d, &db);
        let unique: BTreeSet<String> =
            json_lines(&std::fs::read_to_string(d.join("u.jsonl")).unwrap())
                .iter()
                .map(|l| l["id"].as_str().unwrap().to_string())
                .collect();
        for original in want.values() {
            assert_eq!(
                map[original], None,
                "order {order}: {original} is not an original: {map:?}"
            );
            assert!(
                unique.contains(original),
                "order {order}: {original} not in -o: {unique:?}"
            );
        }
        assert_eq!(unique.len(), want.len(), "order {order}: {unique:?}");
        // The times shown: a re-crawled page keeps its earliest fetch, a page its own time;
        // `clusters` lists each original first.
        let export = run(d, &["--db", &db, "export", "--times"]);
        let times: BTreeMap<String, serde_json::Value> = json_lines(&stdout(&export))
            .into_iter()
            .map(|l| {
                (
                    l["id"].as_str().unwrap().to_string(),
                    l["published"].clone(),
                )
            })
            .collect();
        assert_eq!(times["https://nodate.example/0"], "2024-01-01T00:00:00Z");
        assert_eq!(times["https://orig1.example/a"], "2024-01-03T08:00:00Z");
        let clusters = run(d, &["--db", &db, "clusters", "--json", "--times"]);
        for c in json_lines(&stdout(&clusters)) {
            assert_eq!(c["members"][0], c["original"], "{c}");
            let first = c["members"][0].as_str().unwrap();
            assert!(c["dates"][first]["ingested"].is_string(), "{c}");
        }
        match &seen {
            None => seen = Some((map, unique)),
            Some((m, u)) => {
                assert_eq!(&map, m, "order {order}");
                assert_eq!(&unique, u, "order {order}");
            }
        }
    }
}

#[test]
fn every_format_is_recognized_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = synthetic_doc(&mut Rng(7), 6);
    let warc = common::warc_response(
        "https://a.example/1",
        "2024-01-01T00:00:00Z",
        &page(&text, None),
    );
    let csv = format!("id,text\nc1,{text}\nc2,{text}又\n");
    let tsv = format!("id\ttext\nt1\t{text}\n");
    let gz = |b: &[u8]| {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    };
    let zst = |b: &[u8]| zstd::encode_all(b, 3).unwrap();
    // An ARC file: its description record, then one HTTP page.
    let html = page(&text, None);
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{html}",
        html.len()
    );
    let arc = [
        common::arc_record(
            "filedesc://crawl.arc",
            "text/plain",
            b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n",
        ),
        common::arc_record("http://a.cn/1", "text/html", http.as_bytes()),
    ]
    .concat();
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        ("warc", warc.clone().into_bytes(), 1),
        ("warc.gz", gz(warc.as_bytes()), 1),
        ("warc.zst", zst(warc.as_bytes()), 1),
        ("csv", csv.clone().into_bytes(), 2),
        ("csv.gz", gz(csv.as_bytes()), 2),
        ("csv.zst", zst(csv.as_bytes()), 2),
        ("tsv", tsv.into_bytes(), 1),
        ("arc", arc.clone(), 1),
        ("arc.gz", gz(&arc), 1),
        ("html", html.clone().into_bytes(), 1),
        ("html.zst", zst(html.as_bytes()), 1),
    ];
    for (i, (what, bytes, n)) in cases.into_iter().enumerate() {
        let db = format!("s{i}.db");
        let out = run_stdin(d, &["--db", &db, "ingest", "--json", "-"], &bytes);
        assert_eq!(code(&out), 0, "{what}: {}", stderr(&out));
        let sum: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        assert_eq!(sum["added"], n, "{what}: {sum}");
    }
}

#[test]
fn a_page_read_again_is_known_by_its_record_before_it_is_extracted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(99);
    let texts: Vec<String> = (0..3).map(|_| synthetic_doc(&mut rng, 6)).collect();
    let warc = |date: &str| -> String {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                common::warc_response(&format!("https://p.example/{i}"), date, &page(t, None))
            })
            .collect()
    };
    std::fs::write(d.join("a.warc"), warc("2024-01-01T00:00:00Z")).unwrap();
    let first = run(d, &["--db", "s.db", "ingest", "--json", "a.warc"]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    // The same records: each known by its record's digest, before extraction.
    let db = fpdb::Fpdb::builder().open(d.join("s.db")).unwrap();
    let stored = db.searcher().stored_texts().unwrap();
    let opts = fpdb::reader::ReadOptions {
        defer_pages: true,
        ..Default::default()
    };
    let mut records: Vec<_> =
        fpdb::reader::Inputs::new(&[d.join("a.warc")], opts.clone()).collect();
    assert_eq!(records.len(), 3);
    for r in &mut records {
        let digest = r
            .raw_digest()
            .expect("an archived page has a digest before extraction");
        assert!(stored
            .stored_page(r.id().unwrap(), digest)
            .unwrap()
            .is_some());
    }
    // Fetched again later: another record, not known before extraction.
    std::fs::write(d.join("b.warc"), warc("2024-02-01T00:00:00Z")).unwrap();
    for mut r in fpdb::reader::Inputs::new(&[d.join("b.warc")], opts) {
        let digest = r.raw_digest().unwrap();
        assert!(stored
            .stored_page(r.id().unwrap(), digest)
            .unwrap()
            .is_none());
    }
    drop((stored, db));
    // The CLI: the same file again is already stored; the later fetch, same text, too.
    for name in ["a.warc", "b.warc"] {
        let again = run(d, &["--db", "s.db", "ingest", "--json", name]);
        assert_eq!(code(&again), 0, "{name}: {}", stderr(&again));
        let sum: serde_json::Value = serde_json::from_str(stdout(&again).trim()).unwrap();
        assert_eq!(
            (sum["already_stored"].as_u64(), sum["added"].as_u64()),
            (Some(3), Some(0)),
            "{name}: {sum}"
        );
    }
}

/// Garbage on stdin (binary bytes, a header-like first line, a lone "WARC") is read as what it
/// looks like and each bad record gets a located reason: no panic, no store left behind.
#[test]
fn garbage_on_stdin_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(0xbad);
    let binary: Vec<u8> = (0..5000).map(|_| rng.below(256) as u8).collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("binary", binary),
        ("a lone WARC", b"WARC".to_vec()),
        (
            "WARC header cut short",
            b"WARC/1.0\r\nWARC-Type: resp".to_vec(),
        ),
        ("CSV header, no rows", b"id,text\n".to_vec()),
        ("CSV rows too short", b"id,text\n1\n2\n".to_vec()),
        ("gzip magic alone", b"\x1f\x8b".to_vec()),
    ];
    for (i, (what, bytes)) in cases.into_iter().enumerate() {
        let db = format!("g{i}.db");
        let out = run_stdin(d, &["--db", &db, "dedup", "-o", "u.jsonl"], &bytes);
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(err.contains("fpdb: "), "{what}: {err}");
        assert!(!d.join(&db).exists(), "{what}: a store was left");
        assert!(!d.join("u.jsonl").exists(), "{what}: an empty -o was left");
    }
}
