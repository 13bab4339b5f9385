//! The simhash index's brute-force oracle (tests/index_oracle.rs; on Redis, tests/redis.rs).

use fpdb::{Fingerprints, Fpdb, OnExisting};

pub fn flip(mut fp: u64, bits: u32, seed: u64) -> u64 {
    let mut rng = super::Rng(seed | 1);
    let mut flipped = 0u64;
    while flipped.count_ones() < bits {
        flipped |= 1 << rng.below(64);
    }
    fp ^= flipped;
    fp
}

pub fn store_with(db: &mut Fpdb, fps: &[u64]) {
    for (i, &fp) in fps.iter().enumerate() {
        let f = Fingerprints {
            simhash: Some(fp),
            chars: 1,
            ..Default::default()
        };
        db.ingest(
            &fpdb::Document::new(format!("d{i}"), "x"),
            f,
            OnExisting::Skip,
        )
        .unwrap();
    }
}

pub fn brute(fps: &[u64], q: u64, k: u32) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = fps
        .iter()
        .enumerate()
        .map(|(i, &fp)| (format!("d{i}"), (fp ^ q).count_ones()))
        .filter(|&(_, d)| d <= k)
        .collect();
    v.sort();
    v
}

/// Stored fingerprints: random bases plus copies of them at distances 0..=k+1.
pub fn corpus(seed: u64, n: usize, k: u32) -> Vec<u64> {
    let mut rng = super::Rng(seed | 1);
    let bases: Vec<u64> = (0..n / 4 + 1).map(|_| rng.next()).collect();
    (0..n)
        .map(|i| {
            let b = bases[i % bases.len()];
            flip(b, rng.below(k as u64 + 2) as u32, rng.next())
        })
        .collect()
}
