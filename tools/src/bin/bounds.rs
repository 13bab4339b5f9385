//! The limits fpdb's ingest runs against, measured on this machine (used by scripts/bench.sh):
//! `bounds SHORT.jsonl LAWS.jsonl` prints `name<TAB>value<TAB>unit` lines:
//! - read + parse + nshash fingerprint of every document, no store (docs/s, all cores and one);
//! - jieba-rs `cut` (MB/s, one core), md5 and farmhash (MB/s, 4 KiB blocks);
//! - RocksDB WriteBatch(1000) of 8-byte keys and values, WAL on (keys/s).

use std::path::PathBuf;
use std::time::Instant;

use md5::{Digest, Md5};
use rayon::prelude::*;

fn docs(path: &str) -> Vec<String> {
    fpdb::reader::Inputs::new(&[PathBuf::from(path)], Default::default())
        .filter_map(|r| r.doc.ok())
        .map(|d| d.text)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (short_path, laws_path) = (&args[1], &args[2]);
    let opts = fpdb::Settings {
        simhash: Some(false),
        ..Default::default()
    }
    .resolve()
    .unwrap();

    // Read + parse + fingerprint, no store: what nshash ingest could reach at best.
    let t = Instant::now();
    let short = docs(short_path);
    let read = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let n: usize = short
        .par_iter()
        .map(|d| fpdb::fingerprint::fingerprint(d, &opts).nshash.len())
        .sum();
    let fp_all = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let _: usize = short
        .iter()
        .take(200_000)
        .map(|d| fpdb::fingerprint::fingerprint(d, &opts).nshash.len())
        .sum();
    let fp_one = t.elapsed().as_secs_f64() * short.len() as f64 / short.len().min(200_000) as f64;
    assert!(n > 0);
    println!(
        "read_parse_docs_per_s\t{:.0}\tdocs/s",
        short.len() as f64 / read
    );
    println!(
        "read_parse_nshash_all_cores\t{:.0}\tdocs/s",
        short.len() as f64 / (read + fp_all)
    );
    println!(
        "read_parse_nshash_one_core\t{:.0}\tdocs/s",
        short.len() as f64 / (read + fp_one)
    );

    let laws = docs(laws_path);
    let bytes: usize = laws.iter().map(std::string::String::len).sum();
    let jieba = jieba_rs::Jieba::new();
    let t = Instant::now();
    let words: usize = laws.iter().map(|d| jieba.cut(d, false).len()).sum();
    assert!(words > 0);
    println!(
        "jieba_cut_one_core\t{:.1}\tMB/s",
        bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let words: usize = laws.par_iter().map(|d| jieba.cut(d, false).len()).sum();
    assert!(words > 0);
    println!(
        "jieba_cut_all_cores\t{:.1}\tMB/s",
        bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
    );

    let block = vec![0x5au8; 4096];
    let t = Instant::now();
    for _ in 0..50_000 {
        std::hint::black_box(Md5::digest(std::hint::black_box(&block)));
    }
    println!(
        "md5_4k\t{:.0}\tMB/s",
        50_000.0 * 4096.0 / 1e6 / t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    for _ in 0..1_000_000 {
        std::hint::black_box(fpdb::fingerprint::fingerprint64(std::hint::black_box(
            &block,
        )));
    }
    println!(
        "farmhash_4k\t{:.0}\tMB/s",
        1e6 * 4096.0 / 1e6 / t.elapsed().as_secs_f64()
    );

    let dir = tempfile::tempdir().unwrap();
    let db = rocksdb::DB::open_default(dir.path()).unwrap();
    let t = Instant::now();
    let total = 2_000_000u64;
    for chunk in 0..total / 1000 {
        let mut b = rocksdb::WriteBatch::default();
        for i in 0..1000u64 {
            let k = (chunk * 1000 + i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            b.put(k.to_be_bytes(), i.to_be_bytes());
        }
        db.write(b).unwrap();
    }
    println!(
        "rocksdb_batched_put\t{:.0}\tkeys/s",
        total as f64 / t.elapsed().as_secs_f64()
    );
}
