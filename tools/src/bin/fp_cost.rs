//! Fingerprint the first N documents of a JSONL file on one thread, no store: the cost of
//! fingerprinting alone, for before/after comparisons. Under
//! `valgrind --tool=callgrind` its instruction count is repeatable whatever the machine does.
//!
//! `fp_cost FILE.jsonl [N] [ALGOS] [SEGMENTER]` (ALGOS as `fpdb ingest --algos`, default the
//! store defaults; SEGMENTER jieba, fmm or bmm; `FPDB_TW_PHRASES=false` leaves the
//! Taiwan-vocabulary fold out) prints documents, MB, seconds and MB/s.

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: fp_cost FILE.jsonl [N] [ALGOS]");
    let n: usize = args.get(2).map_or(usize::MAX, |s| s.parse().expect("N"));
    let mut settings = fpdb::Settings::default();
    if let Some(algos) = args.get(3) {
        settings.simhash = Some(algos.split(',').any(|a| a == "simhash"));
        settings.nshash = Some(algos.split(',').any(|a| a == "nshash"));
        if !algos.split(',').any(|a| a == "minhash") {
            settings.minhash_bands = Some(0);
        }
    }
    // FPDB_TW_PHRASES=false: without the Taiwan-vocabulary fold.
    settings.tw_phrases = std::env::var("FPDB_TW_PHRASES").ok().map(|v| v != "false");
    settings.segmenter = args.get(4).map(|s| match s.as_str() {
        "jieba" => fpdb::Segmenter::Jieba,
        "fmm" => fpdb::Segmenter::Fmm,
        "bmm" => fpdb::Segmenter::Bmm,
        other => panic!("segmenter {other}: jieba, fmm or bmm"),
    });
    let opts = settings.resolve().expect("settings");
    let fp = fpdb::fingerprint::Fingerprinter::new(opts, None).expect("fingerprinter");
    let docs: Vec<String> = fpdb::reader::Inputs::new(&[PathBuf::from(path)], Default::default())
        .filter_map(|r| r.doc.ok())
        .map(|d| d.text)
        .take(n)
        .collect();
    let bytes: usize = docs.iter().map(std::string::String::len).sum();
    let t = Instant::now();
    let mut keys = 0usize;
    for d in &docs {
        let f = fp.fingerprint(d);
        keys += f.nshash.len() + f.bands.len() + f.shingles.len();
    }
    let s = t.elapsed().as_secs_f64();
    let mb = bytes as f64 / 1e6;
    println!(
        "{} docs, {mb:.1} MB, {s:.3} s, {:.1} MB/s (keys {keys})",
        docs.len(),
        mb / s
    );
}
