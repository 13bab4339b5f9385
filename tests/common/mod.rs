//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real `fpdb` binary built by cargo for this test run.
pub fn fpdb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fpdb"));
    c.env_remove("FPDB_DB");
    c
}

/// Run `fpdb` with `args` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    fpdb()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fpdb")
}

/// Run `fpdb` with `args` in `dir`, `input` on its stdin.
pub fn run_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = fpdb()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fpdb");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait for fpdb")
}

/// This process's peak resident memory (VmHWM), KiB.
pub fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// Every record of `path` (format told by its content), and how many MiB this process's peak
/// memory grew while reading them.
pub fn read_all_measuring(path: std::path::PathBuf) -> (Vec<fpdb::reader::Record>, u64) {
    let before = peak_rss_kib();
    let opts = fpdb::reader::ReadOptions {
        format: fpdb::reader::Format::Auto,
        ..Default::default()
    };
    let recs: Vec<_> = fpdb::reader::Inputs::new(&[path], opts).collect();
    (recs, (peak_rss_kib() - before) / 1024)
}

/// Exit code of an output.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The sample corpus shipped in `data/`.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample.jsonl")
}

/// Documents of the sample corpus.
pub fn sample_docs() -> Vec<fpdb::Document> {
    fpdb::reader::Inputs::new(&[sample()], Default::default())
        .map(|r| r.doc.expect("sample is clean"))
        .collect()
}

/// Parse JSON lines.
pub fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

pub mod conformance;
pub mod oracle;
mod rng;
pub mod sites;
pub use rng::Rng;

/// A synthetic Chinese document: `sentences` sentences of 12..40 common characters.
pub fn synthetic_doc(rng: &mut Rng, sentences: usize) -> String {
    const CHARS: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";
    let chars: Vec<char> = CHARS.chars().collect();
    let mut s = String::new();
    for _ in 0..sentences {
        let n = 12 + rng.below(28) as usize;
        for _ in 0..n {
            s.push(chars[rng.below(chars.len() as u64) as usize]);
        }
        s.push('。');
    }
    s
}

/// `n` paragraphs of 2–3 synthetic sentences ([`synthetic_doc`]).
pub fn paragraphs(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let sentences = 2 + rng.index(2);
            synthetic_doc(rng, sentences)
        })
        .collect()
}

/// Write `lines` to `path` as JSON lines; the text written.
pub fn write_jsonl(path: &Path, lines: &[serde_json::Value]) -> String {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, &text).unwrap();
    text
}

/// Every stored document's outcome, in store order (`Fpdb::export` collected).
pub fn export_outcomes(db: &fpdb::Fpdb) -> Vec<fpdb::Outcome> {
    let mut v = Vec::new();
    db.searcher()
        .export(&mut |o| {
            v.push(o);
            Ok(())
        })
        .unwrap();
    v
}

/// The six orders of three documents (indices), for tests of a rule that must not depend on
/// the order its documents came in.
pub const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// Each stored document's cluster, by id.
pub fn clusters_by_id(db: &fpdb::Fpdb) -> std::collections::BTreeMap<String, u64> {
    export_outcomes(db)
        .into_iter()
        .map(|o| (o.id, o.similar_id.unwrap()))
        .collect()
}

/// Assert that none of a site's other pages (`s0`–`s2`, as the rule tests name them) is in
/// `of`'s cluster of `c` (clusters by id); `at` says where.
pub fn assert_site_pages_apart(c: &std::collections::BTreeMap<String, u64>, of: &str, at: &str) {
    for s in ["s0", "s1", "s2"] {
        assert_ne!(c[s], c[of], "{at}: {s} joined {of}");
    }
}

/// Ingest `docs` one at a time, in order, into a fresh in-memory store of `settings`; their
/// clusters by id.
pub fn clusters_in_order(
    settings: fpdb::Settings,
    docs: &[&fpdb::Document],
) -> std::collections::BTreeMap<String, u64> {
    let mut db = fpdb::Fpdb::builder()
        .settings(settings)
        .open_in_memory()
        .unwrap();
    for d in docs {
        db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
    }
    clusters_by_id(&db)
}

/// The ids of a store's export, sorted (the binary's).
pub fn stored_ids(dir: &Path, db: &str) -> Vec<String> {
    let o = run(dir, &["--db", db, "export"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut ids: Vec<String> = json_lines(&stdout(&o))
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// Whether batches are looked up ahead here: only where the lookup threads are more than
/// one (rayon's default: one per core).
pub fn looks_ahead() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let set = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    set.filter(|&n| n > 0).unwrap_or(cores) > 1
}

/// The clusters of a new in-memory store of `settings` after `batches`, ingested as batches
/// ([`ingest_ahead`]) when `in_batches`, else one document at a time.
pub fn clusters_after(
    settings: fpdb::Settings,
    batches: &[Vec<fpdb::Document>],
    in_batches: bool,
) -> std::collections::BTreeMap<String, u64> {
    let mut db = fpdb::Fpdb::builder()
        .settings(settings)
        .open_in_memory()
        .unwrap();
    if in_batches {
        let b: Vec<&[fpdb::Document]> = batches.iter().map(Vec::as_slice).collect();
        ingest_ahead(
            &mut db,
            &b,
            fpdb::OnExisting::Skip,
            &mut |_| true,
            &mut |_, _| {},
        );
    } else {
        for d in batches.iter().flatten() {
            db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
        }
    }
    clusters_by_id(&db)
}

/// Ingest `batches` in turn with `Fpdb::ingest_batch_ahead`: each batch's lookups run while
/// the one before it is decided where `ahead(i)` says so for batch i + 1; after batch i,
/// `between(db, i)` (a sync, say). Returns every result, asserting no batch failed.
pub fn ingest_ahead(
    db: &mut fpdb::Fpdb,
    batches: &[&[fpdb::Document]],
    on: fpdb::OnExisting,
    ahead: &mut dyn FnMut(usize) -> bool,
    between: &mut dyn FnMut(&mut fpdb::Fpdb, usize),
) -> Vec<fpdb::IngestResult> {
    let mut results = Vec::new();
    let mut looked: Option<fpdb::BatchFingerprints> = None;
    for (i, batch) in batches.iter().enumerate() {
        let docs: Vec<&fpdb::Document> = batch.iter().collect();
        let fps = looked.take().unwrap_or_else(|| {
            let fps: Vec<fpdb::Fingerprints> =
                docs.iter().map(|d| db.fingerprint_document(d)).collect();
            fps.into()
        });
        let next = match batches.get(i + 1) {
            Some(n) if ahead(i) => {
                let fps = n.iter().map(|d| db.fingerprint_document(d)).collect();
                Some((n.iter().collect::<Vec<_>>(), fps))
            }
            _ => None,
        };
        let given = next.as_ref().map(|(docs, _)| docs.len());
        let (out, next) = db.ingest_batch_ahead(docs, fps, on, next);
        assert!(out.error.is_none(), "batch {i}: {:?}", out.error);
        // The next batch's fingerprints come back, looked up or not.
        assert_eq!(next.as_ref().map(fpdb::BatchFingerprints::len), given);
        assert_eq!(out.results.len(), batch.len());
        results.extend(out.results);
        looked = next;
        between(db, i);
    }
    results
}

/// `id -> duplicate_of` of a store's export (the binary's).
pub fn named(dir: &Path, db: &str) -> std::collections::BTreeMap<String, Option<String>> {
    let out = run(dir, &["--db", db, "export"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&stdout(&out))
        .into_iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap().to_string(),
                l["duplicate_of"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// A WARC response record of `html` at `uri`, fetched at `date` (its WARC-Date).
pub fn warc_response(uri: &str, date: &str, html: &str) -> String {
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{html}",
        html.len()
    );
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
        http.len()
    )
}

/// One ARC v1 record: header line, content, newline.
pub fn arc_record(url: &str, content_type: &str, content: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "{url} 192.0.2.1 20010915120000 {content_type} {}\n",
        content.len()
    )
    .into_bytes();
    r.extend_from_slice(content);
    r.push(b'\n');
    r
}
