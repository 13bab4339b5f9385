//! Query latency against a store of N generated simhash fingerprints (used by scripts/bench.sh):
//! `query_latency STORE N QUERIES` builds STORE once (simhash only, compacted), then runs
//! QUERIES lookups of stored fingerprints with 0-3 bits flipped and prints p50/p99/max in µs,
//! first "cold" (fresh process, empty block cache) then "warm" (the same queries again).

use std::time::Instant;

use fpdb::{Document, Fingerprints, Fpdb, OnExisting, Settings};

use fpdb_tools::rng::Rng;

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::PathBuf::from(&args[1]);
    let n: u64 = args[2].parse().unwrap();
    let queries: usize = args[3].parse().unwrap();
    let fp_of =
        |i: u64| (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5555_0000_aaaa;
    if !path.join("CURRENT").exists() {
        let t = Instant::now();
        let settings = Settings {
            nshash: Some(false),
            expected_docs: Some(n),
            ..Default::default()
        };
        let mut db = Fpdb::builder()
            .settings(settings)
            .create(true)
            .open(&path)
            .unwrap();
        for i in 0..n {
            let f = Fingerprints {
                simhash: Some(fp_of(i)),
                chars: 1,
                ..Default::default()
            };
            db.ingest(&Document::new(i.to_string(), ""), f, OnExisting::Skip)
                .unwrap();
            if i % 200_000 == 199_999 {
                db.sync().unwrap();
                eprintln!(
                    "built {} of {n} ({:.0} docs/s)",
                    i + 1,
                    (i + 1) as f64 / t.elapsed().as_secs_f64()
                );
            }
        }
        db.maintenance().compact().unwrap();
        eprintln!(
            "built {n} fingerprints in {:.0}s",
            t.elapsed().as_secs_f64()
        );
    }
    let db = Fpdb::builder().read_only(true).open(&path).unwrap();
    let tables = db.permutations().len();
    let mut rng = Rng(12345);
    let qs: Vec<u64> = (0..queries)
        .map(|_| {
            let mut q = fp_of(rng.next() % n);
            for _ in 0..rng.next() % 4 {
                q ^= 1 << (rng.next() % 64);
            }
            q
        })
        .collect();
    for pass in ["cold", "warm"] {
        let mut lat = Vec::with_capacity(qs.len());
        let mut found = 0;
        for &q in &qs {
            let t = Instant::now();
            found += db.searcher().simhash_neighbors(q).unwrap().len();
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
        assert!(found >= qs.len(), "every query has a stored neighbour");
        let (p50, p99) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99));
        println!(
            "query_{pass}\t{n}\t{tables}\t{p50:.1}\t{p99:.1}\t{:.1}",
            lat.last().unwrap()
        );
    }
    println!("store_bytes\t{}", db.searcher().stats().disk_bytes);
}
