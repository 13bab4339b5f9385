//! Micro benchmarks (criterion, seeded inputs, `Throughput` set):
//! - fingerprinting: nshash (normalize + split + hash) and simhash (jieba + TF-IDF) in MB/s,
//!   the Taiwan-vocabulary fold alone,
//!   next to the raw bounds they run against (md5, farmhash, jieba `cut`);
//! - permuted-table lookup (µs per query, k = 3) on RocksDB stores of 10^5 and 10^6
//!   fingerprints (10^7: `scripts/bench.sh`);
//! - store write rate (documents/s, nshash fingerprints, group commit).
//!
//! Run: `cargo bench --bench throughput` (add `-- lookup` etc. to select).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use fpdb::{Document, Fingerprints, Fpdb, OnExisting, Options, Settings};
use md5::{Digest, Md5};

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const POOL: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处";

/// `n` short synthetic documents (2-4 sentences of 12-31 characters).
fn short_docs(n: usize, seed: u64) -> Vec<String> {
    let pool: Vec<char> = POOL.chars().collect();
    let mut rng = Rng(seed | 1);
    (0..n)
        .map(|_| {
            let mut s = String::new();
            for _ in 0..2 + rng.next() % 3 {
                for _ in 0..12 + rng.next() % 20 {
                    s.push(pool[(rng.next() % pool.len() as u64) as usize]);
                }
                s.push('。');
            }
            s
        })
        .collect()
}

/// The Chinese law texts of the sample corpus.
fn law_texts() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample.jsonl");
    fpdb::reader::Inputs::new(&[path], Default::default())
        .filter_map(|r| r.doc.ok())
        .filter(|d| !d.id.starts_with("20news"))
        .map(|d| d.text)
        .collect()
}

fn bytes(v: &[String]) -> u64 {
    v.iter().map(|s| s.len() as u64).sum()
}

fn fingerprinting(c: &mut Criterion) {
    let short = short_docs(10_000, 1);
    let laws = law_texts();
    let nshash_only = Settings {
        simhash: Some(false),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let both = Options::default();
    let mut g = c.benchmark_group("fingerprint");
    g.throughput(Throughput::Bytes(bytes(&short)));
    g.bench_function("nshash/short_docs", |b| {
        b.iter(|| {
            short
                .iter()
                .map(|t| fpdb::fingerprint::fingerprint(t, &nshash_only).nshash.len())
                .sum::<usize>()
        });
    });
    g.throughput(Throughput::Bytes(bytes(&laws)));
    g.bench_function("nshash/laws", |b| {
        b.iter(|| {
            laws.iter()
                .map(|t| fpdb::fingerprint::fingerprint(t, &nshash_only).nshash.len())
                .sum::<usize>()
        });
    });
    g.bench_function("nshash+simhash/laws", |b| {
        b.iter(|| {
            laws.iter()
                .filter_map(|t| fpdb::fingerprint::fingerprint(t, &both).simhash)
                .fold(0u64, |a, b| a ^ b)
        });
    });
    g.bench_function("raw/normalize", |b| {
        b.iter(|| laws.iter().map(|t| fpdb::normalize(t).len()).sum::<usize>());
    });
    // The Taiwan-vocabulary fold alone, on normalized laws (most are rewritten by it).
    let normalized: Vec<String> = laws.iter().map(|t| fpdb::normalize(t)).collect();
    g.throughput(Throughput::Bytes(bytes(&normalized)));
    g.bench_function("raw/tw_fold", |b| {
        b.iter(|| {
            normalized
                .iter()
                .map(|t| fpdb::text::fold_tw(t).len())
                .sum::<usize>()
        });
    });
    g.throughput(Throughput::Bytes(bytes(&laws)));
    g.bench_function("raw/jieba_tfidf_terms", |b| {
        b.iter(|| {
            laws.iter()
                .map(|t| fpdb::text::weighted_terms(t).len())
                .sum::<usize>()
        });
    });
    let jieba = jieba_rs::Jieba::new();
    g.bench_function("raw/jieba_cut", |b| {
        b.iter(|| {
            laws.iter()
                .map(|t| jieba.cut(t, false).len())
                .sum::<usize>()
        });
    });
    g.finish();

    let block = vec![0x5au8; 4096];
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Bytes(4096));
    g.bench_function("raw/md5_4k", |b| b.iter(|| Md5::digest(black_box(&block))));
    g.bench_function("raw/farmhash_4k", |b| {
        b.iter(|| fpdb::fingerprint::fingerprint64(black_box(&block)));
    });
    g.finish();
}

fn store_with(n: usize, seed: u64) -> (tempfile::TempDir, Fpdb, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        nshash: Some(false),
        expected_docs: Some(n as u64),
        ..Default::default()
    };
    let mut db = Fpdb::builder()
        .settings(settings)
        .create(true)
        .open(dir.path().join("db"))
        .unwrap();
    let mut rng = Rng(seed | 1);
    let fps: Vec<u64> = (0..n).map(|_| rng.next()).collect();
    for (i, &fp) in fps.iter().enumerate() {
        let f = Fingerprints {
            simhash: Some(fp),
            chars: 1,
            ..Default::default()
        };
        db.ingest(&Document::new(format!("d{i}"), "x"), f, OnExisting::Skip)
            .unwrap();
        if i % 100_000 == 0 {
            db.sync().unwrap();
        }
    }
    db.maintenance().compact().unwrap();
    (dir, db, fps)
}

fn lookup(c: &mut Criterion) {
    let mut g = c.benchmark_group("lookup_k3");
    for n in [100_000usize, 1_000_000] {
        let (_dir, db, fps) = store_with(n, 7);
        let mut rng = Rng(99);
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("simhash_neighbors/{n}"), |b| {
            b.iter(|| {
                // A stored fingerprint with up to 3 bits flipped.
                let mut q = fps[(rng.next() % fps.len() as u64) as usize];
                for _ in 0..rng.next() % 4 {
                    q ^= 1 << (rng.next() % 64);
                }
                db.searcher().simhash_neighbors(q).unwrap().len()
            });
        });
    }
    g.finish();
}

fn store_write(c: &mut Criterion) {
    let texts = short_docs(20_000, 3);
    let opts = Settings {
        simhash: Some(false),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let fps: Vec<Fingerprints> = texts
        .iter()
        .map(|t| fpdb::fingerprint::fingerprint(t, &opts))
        .collect();
    let docs: Vec<Document> = (0..texts.len())
        .map(|i| Document::new(format!("d{i}"), ""))
        .collect();
    let mut g = c.benchmark_group("store_write");
    g.sample_size(10);
    g.throughput(Throughput::Elements(docs.len() as u64));
    g.bench_function("nshash_docs_rocksdb", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let settings = Settings {
                    simhash: Some(false),
                    ..Default::default()
                };
                let db = Fpdb::builder()
                    .settings(settings)
                    .create(true)
                    .open(dir.path().join("db"))
                    .unwrap();
                (dir, db)
            },
            |(dir, mut db)| {
                for (d, f) in docs.iter().zip(&fps) {
                    db.ingest(d, f.clone(), OnExisting::Skip).unwrap();
                    if d.id.len() > 4 && d.id.ends_with("000") {
                        db.sync().unwrap();
                    }
                }
                db.sync().unwrap();
                (dir, db)
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

criterion_group!(benches, fingerprinting, lookup, store_write);
criterion_main!(benches);
