//! Mutation fuzzing of every input reader and every record decoder, kept out of the test run
//! (it takes minutes): valid seeds of each format (JSONL, CSV, TSV, WARC, HTML, text; plain,
//! gzip, zstd) are mutated at random (flipped bits and bytes, inserted, deleted and repeated
//! runs, truncation, a mutation under the compression or on the compressed bytes), written to
//! a file and read to the end; stored-record decoders get mutated encodings. A case fails on a
//! panic; the run fails when one does, or when the peak RSS passes 1 GiB.
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin fuzz -- 100000      # cases (default 100,000)
//! cargo run --release -p fpdb-tools --bin fuzz -- 100000 7    # another random seed: other cases
//! ```

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

use fpdb_tools::rng::Rng;

use fpdb::reader::{Inputs, ReadOptions};
use fpdb::store::schema::{self, Cf, ClusterRecord, DocRecord, StoredMatch};

fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Record-ID: <urn:uuid:{}>\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        uri.len(),
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let page = "<html><head><meta charset=\"utf-8\"><title>标题 Title</title><meta name=\"description\" content=\"描述\"></head><body><article><p>第一条 为了规范管理，制定本办法。</p><p>Second paragraph, with more words. 第二条 本办法适用于全国。</p></article></body></html>";
    let jsonl = format!(
        "{}\n{}\n{}\n{}\n",
        serde_json::json!({"id": "a", "title": "t", "text": "第一条 为了规范管理，制定本办法。第二条 本办法适用于全国。"}),
        serde_json::json!({"id": "b", "text": "Hello world. This is a longer English sentence for testing."}),
        serde_json::json!({"id": "c", "html": page, "url": "http://x/y"}),
        serde_json::json!({"id": 7, "text": ["not", "a", "string"]}),
    );
    let csv = "id,text,url\n1,\"第一条 为了规范管理，制定本办法。\",http://a\n2,\"quoted \"\"text\"\", with comma\",\n3,short,\n";
    let tsv = "id\ttext\n1\t第一条 为了规范管理。\n2\tsecond line of text\n";
    let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
    http.extend_from_slice(page.as_bytes());
    let mut chunked =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    chunked.extend_from_slice(format!("{:x}\r\n{page}\r\n0\r\n\r\n", page.len()).as_bytes());
    let mut warc = warc_record("warcinfo", "", b"software: test\r\n");
    warc.extend(warc_record("response", "http://example.com/a", &http));
    warc.extend(warc_record("response", "http://example.com/b", &chunked));
    warc.extend(warc_record(
        "conversion",
        "http://example.com/c",
        "第一条 为了规范管理，制定本办法。".as_bytes(),
    ));
    let (gbk, _, _) = encoding_rs::GBK.encode("第一条 为了规范管理，制定本办法。第二条 适用。");
    vec![
        ("jsonl", jsonl.into_bytes()),
        ("csv", csv.as_bytes().to_vec()),
        ("tsv", tsv.as_bytes().to_vec()),
        ("warc", warc),
        ("html", page.as_bytes().to_vec()),
        ("txt", gbk.into_owned()),
    ]
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn mutate(b: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..1 + rng.index(4) {
        let len = b.len().max(1);
        match rng.index(7) {
            0 if !b.is_empty() => {
                let i = rng.index(b.len());
                b[i] ^= 1 << rng.index(8);
            }
            1 if !b.is_empty() => {
                let i = rng.index(b.len());
                b[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.index(len);
                let n = 1 + rng.index(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                b.splice(i.min(b.len())..i.min(b.len()), bytes);
            }
            3 if !b.is_empty() => {
                let i = rng.index(b.len());
                let n = (1 + rng.index(64)).min(b.len() - i);
                b.drain(i..i + n);
            }
            4 if !b.is_empty() => {
                let i = rng.index(b.len());
                let n = (1 + rng.index(256)).min(b.len() - i);
                let run = b[i..i + n].to_vec();
                for _ in 0..1 + rng.index(8) {
                    b.splice(i..i, run.iter().copied());
                }
            }
            5 => b.truncate(rng.index(len)),
            _ => {
                // Interesting values where numbers live: lengths, sizes.
                let vals: [&[u8]; 5] = [b"0", b"18446744073709551615", b"-1", b"\r\n", b"\x00"];
                let v = vals[rng.index(vals.len())];
                let i = rng.index(len).min(b.len());
                b.splice(i..i, v.iter().copied());
            }
        }
    }
}

fn read_all(path: &PathBuf) -> usize {
    let mut n = 0;
    for mut r in Inputs::new(std::slice::from_ref(path), ReadOptions::default()) {
        r.finish();
        n += usize::from(r.doc.is_ok());
    }
    n
}

fn doc_record() -> DocRecord {
    DocRecord {
        id: "doc-1".into(),
        url: Some("http://x".into()),
        title: Some("标题".into()),
        description: None,
        keywords: Some("k".into()),
        chars: 1234,
        nshash: vec![1, 2, 3, 4, 5],
        simhash: Some(0xdead_beef),
        sketch: (0..40).collect(),
        shingles: (0..64).collect(),
        similar_id: 3,
        matches: vec![StoredMatch {
            seq: 2,
            algo: fpdb::Algo::Nshash,
            score: 0.4,
            overlap: 0.9,
        }],
        time: 1_700_000_000,
        bands: vec![9, 8, 7],
        keys: vec![0xA1 << 56 | 5],
        key_weights: vec![0.5, 0.25],
        order: (0..40).map(|i| i * 6).collect(),
        figures: vec![11, 12, 13],
        published: Some(1_690_000_000),
        cites: vec![3, 4],
        cited: true,
        digest: Some(0x5eed),
        template: vec![2, 5, 7],
        excerpts: vec![3, 1],
        highs: (0..40).map(|i| i * 7).collect(),
    }
}

fn decoders(rng: &mut Rng) {
    let mut rec = doc_record();
    match rng.index(4) {
        0 => {
            rec.bands.clear();
            rec.keys.clear();
            rec.key_weights.clear();
            rec.published = None;
            rec.cites.clear();
            rec.cited = false;
        }
        1 => {
            rec.key_weights.clear();
            rec.published = None;
            rec.cites.clear();
            rec.cited = false;
        }
        2 => {
            rec.published = None;
            rec.cites.clear();
            rec.cited = false;
        }
        _ => {}
    }
    let mut b = schema::encode_doc(&rec);
    mutate(&mut b, rng);
    let _ = schema::decode_doc(b"k", &b);
    let mut c = schema::encode_cluster(&ClusterRecord {
        parent: Some(1),
        first_seq: 2,
        size: 3,
        original: (rng.index(2) == 0).then_some(schema::Original {
            uncited: true,
            time: -5,
            seq: 2,
        }),
        pending_cites: vec![7, 9],
    });
    mutate(&mut c, rng);
    let _ = schema::decode_cluster(b"k", &c);
    let mut k = schema::nshash_key(rng.next(), schema::Seq(rng.next())).to_vec();
    let mut v = schema::u64_key(rng.next()).to_vec();
    mutate(&mut k, rng);
    mutate(&mut v, rng);
    let _ = schema::decode_nshash(&k, &v);
    let _ = schema::decode_simhash_key(&k);
    let _ = schema::decode_members_key(&k);
    let _ = schema::decode_u64(Cf::Meta, b"k", &v);
}

fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}

fn main() {
    let cases: u64 = std::env::args()
        .nth(1)
        .map_or(100_000, |s| s.parse().expect("cases"));
    let dir = tempfile::tempdir().expect("temp dir");
    let seeds = seeds();
    // The default seed repeats the cases of earlier runs; another explores new ones.
    let seed: Option<u64> = std::env::args().nth(2).map(|s| s.parse().expect("seed"));
    let mut rng = Rng(seed.map_or(0xf022_0000_0000_0001, |s| s | 1));
    let mix = seed.map_or(0, |s| s.rotate_left(32));
    let (mut panics, mut docs) = (0u64, 0usize);
    // Panics are counted, not printed case by case.
    std::panic::set_hook(Box::new(|_| {}));
    let start = std::time::Instant::now();
    for case in 0..cases {
        let (ext, seed) = &seeds[rng.index(seeds.len())];
        let mut bytes = seed.clone();
        let name = match rng.index(4) {
            0 => {
                // Mutate, then compress: the parser behind the decompressor.
                mutate(&mut bytes, &mut rng);
                bytes = gzip(&bytes);
                format!("c{case}.{ext}.gz")
            }
            1 => {
                // Compress, then mutate: the decompressor.
                bytes = if rng.index(2) == 0 {
                    gzip(&bytes)
                } else {
                    zstd::encode_all(&bytes[..], 1).unwrap()
                };
                mutate(&mut bytes, &mut rng);
                format!(
                    "c{case}.{ext}.{}",
                    if bytes.starts_with(&[0x1f]) {
                        "gz"
                    } else {
                        "zst"
                    }
                )
            }
            _ => {
                mutate(&mut bytes, &mut rng);
                format!("c{case}.{ext}")
            }
        };
        let path = dir.path().join(&name);
        std::fs::write(&path, &bytes).expect("write case");
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let n = read_all(&path);
            decoders(&mut Rng((case ^ mix) | 1));
            n
        }));
        match r {
            Ok(n) => docs += n,
            Err(_) => {
                panics += 1;
                let keep = dir
                    .path()
                    .join("..")
                    .join(format!("fpdb-fuzz-panic-{name}"));
                let _ = std::fs::write(&keep, &bytes);
                eprintln!(
                    "panic on case {case} ({name}); input kept at {}",
                    keep.display()
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    let rss = peak_rss_mib();
    println!(
        "fuzz: {cases} cases in {:.0} s, {docs} documents read, {panics} panics, peak RSS {rss} MiB",
        start.elapsed().as_secs_f64()
    );
    if panics > 0 || rss > 1024 {
        std::process::exit(1);
    }
}
