//! Hamming distances of simhash under different stop-word / IDF settings: labeled positive
//! pairs (want small) against random document pairs (want ~32; a low mean means unrelated
//! documents look alike).
//! `cargo run --release -p fpdb-tools --bin simhash_spread -- corpus.jsonl pairs.tsv`

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use fpdb::fingerprint::Fingerprinter;
use fpdb::text::IdfTable;
use fpdb::{IdfSource, Options, Stopwords};
use fpdb_tools::rng::Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (corpus, pairs) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let docs: Vec<(String, String)> = fpdb::reader::Inputs::new(&[corpus], Default::default())
        .filter_map(|r| r.doc.ok())
        .map(|d| (d.id, d.text))
        .collect();
    let index: HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.0.as_str(), i))
        .collect();
    let pairs = fpdb::eval::read_pairs(&pairs).unwrap();
    let learned = Arc::new(IdfTable::learn(
        docs.iter()
            .map(|d| fpdb::text::normalize(&d.1))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    ));
    println!("stopwords\tidf\tpos_mean\tpos_le3\trand_mean\trand_le3\trand_le6");
    for stop in [Stopwords::Jieba, Stopwords::Iso, Stopwords::None] {
        for idf in [None, Some(learned.clone())] {
            let opts = Options {
                nshash: false,
                simhash_stopwords: stop,
                simhash_idf: idf.as_ref().map_or(IdfSource::Jieba, |t| IdfSource::Table {
                    digest: t.digest(),
                    words: t.len() as u64,
                    docs: t.docs(),
                }),
                ..Options::default()
            };
            let name = if idf.is_some() { "learned" } else { "jieba" };
            let fp = Fingerprinter::new(opts, idf).unwrap();
            let sims: Vec<Option<u64>> =
                docs.iter().map(|d| fp.fingerprint(&d.1).simhash).collect();
            let dist = |a: usize, b: usize| match (sims[a], sims[b]) {
                (Some(x), Some(y)) => Some((x ^ y).count_ones()),
                _ => None,
            };
            let pos: Vec<u32> = pairs
                .iter()
                .filter(|p| p.duplicate)
                .filter_map(|p| dist(*index.get(p.a.as_str())?, *index.get(p.b.as_str())?))
                .collect();
            let mut rng = Rng(0x9E3779B97F4A7C15);
            let mut rand: Vec<u32> = Vec::new();
            for _ in 0..200_000 {
                let x = rng.next();
                let (a, b) = (
                    (x % docs.len() as u64) as usize,
                    ((x >> 32) % docs.len() as u64) as usize,
                );
                if a != b {
                    rand.extend(dist(a, b));
                }
            }
            let mean = |v: &[u32]| f64::from(v.iter().sum::<u32>()) / v.len().max(1) as f64;
            let frac =
                |v: &[u32], k| v.iter().filter(|d| **d <= k).count() as f64 / v.len().max(1) as f64;
            println!(
                "{stop}\t{name}\t{:.2}\t{:.3}\t{:.2}\t{:.5}\t{:.5}",
                mean(&pos),
                frac(&pos, 3),
                mean(&rand),
                frac(&rand, 3),
                frac(&rand, 6)
            );
        }
    }
}
