//! Print, for every labeled pair of a dev set, the signals a decision rule can use:
//! `cargo run --release --example pair_features -- corpus.jsonl pairs.tsv > features.tsv`

use std::collections::HashMap;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (corpus, pairs) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let docs: HashMap<String, String> = fpdb::reader::Inputs::new(&[corpus], Default::default())
        .filter_map(|r| r.doc.ok())
        .map(|d| (d.id, d.text))
        .collect();
    let fp = fpdb::fingerprint::Fingerprinter::new(fpdb::Options::default(), None).unwrap();
    println!("kind\tlabel\tlen_a\tlen_b\tkept_a\tkept_b\tshared\tdistance");
    for p in fpdb::eval::read_pairs(&pairs).unwrap() {
        let (Some(a), Some(b)) = (docs.get(&p.a), docs.get(&p.b)) else {
            continue;
        };
        let e = fpdb::explain::explain(a, b, &fp);
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            p.kind,
            u8::from(p.duplicate),
            a.chars().count(),
            b.chars().count(),
            e.sentences_a.len(),
            e.sentences_b.len(),
            e.shared_sentences.len(),
            e.comparison.distance.map_or(-1, |d| d as i64)
        );
    }
}
