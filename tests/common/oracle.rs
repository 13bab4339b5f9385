//! The simhash index's brute-force oracle (tests/oracles/index.rs; on Redis, tests/store/redis.rs).

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

/// A store of simhash alone with k and `blocks` permuted blocks.
pub fn simhash_only(k: u32, blocks: u32) -> fpdb::Settings {
    fpdb::Settings {
        nshash: Some(false),
        simhash_k: Some(k),
        simhash_blocks: Some(blocks),
        ..Default::default()
    }
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

/// The stored documents (`d{i}` holds `fps[i]`, stored in order) within k of `q`: at most
/// `fpdb::SIMHASH_MOST`, the closest, the oldest first among equally close; ordered by id.
pub fn brute(fps: &[u64], q: u64, k: u32) -> Vec<(String, u32)> {
    let mut near: Vec<(u32, usize)> = fps
        .iter()
        .enumerate()
        .map(|(i, &fp)| ((fp ^ q).count_ones(), i))
        .filter(|&(d, _)| d <= k)
        .collect();
    near.sort_unstable();
    near.truncate(fpdb::SIMHASH_MOST);
    let mut v: Vec<(String, u32)> = near
        .into_iter()
        .map(|(d, i)| (format!("d{i}"), d))
        .collect();
    v.sort();
    v
}

/// Stored fingerprints as crawls hold them: a few texts stored many times each (exact copies
/// and copies at distances 1..=k+1), past `fpdb::SIMHASH_MOST` of one value.
pub fn dense_corpus(seed: u64, n: usize, k: u32) -> Vec<u64> {
    let mut rng = super::Rng(seed | 1);
    let bases: Vec<u64> = (0..3).map(|_| rng.next()).collect();
    (0..n)
        .map(|_| {
            let b = bases[rng.below(3) as usize];
            match rng.below(3) {
                0 | 1 => b,
                _ => flip(b, 1 + rng.below(u64::from(k) + 1) as u32, rng.next()),
            }
        })
        .collect()
}

/// Stored fingerprints: random bases plus copies of them at distances 0..=k+1.
pub fn corpus(seed: u64, n: usize, k: u32) -> Vec<u64> {
    let mut rng = super::Rng(seed | 1);
    let bases: Vec<u64> = (0..n / 4 + 1).map(|_| rng.next()).collect();
    (0..n)
        .map(|i| {
            let b = bases[i % bases.len()];
            flip(b, rng.below(u64::from(k) + 2) as u32, rng.next())
        })
        .collect()
}

/// Per query: the neighbours a store found, and the brute-force answer.
pub type Answers = Vec<(Vec<(String, u32)>, Vec<(String, u32)>)>;

/// 20 queries at distances 0..=k+1 from stored fingerprints (every 4th from a random one):
/// for each, the neighbours `db` finds and the brute-force answer over `fps`.
pub fn lookups_and_brute_force(db: &Fpdb, fps: &[u64], seed: u64, k: u32) -> Answers {
    let mut rng = super::Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1);
    (0..20u64)
        .map(|i| {
            let base = if i % 4 == 3 {
                rng.next()
            } else {
                fps[rng.below(fps.len() as u64) as usize]
            };
            let q = flip(base, rng.below(u64::from(k) + 2) as u32, rng.next());
            (
                db.searcher().simhash_neighbors(q).unwrap(),
                brute(fps, q, k),
            )
        })
        .collect()
}
