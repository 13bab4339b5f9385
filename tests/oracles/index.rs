//! The permuted-prefix index against its oracle: a brute-force scan over every stored
//! fingerprint must return exactly the same neighbours, for every distance 0..=k+1.

use crate::common;

use fpdb::index::{Permutations, MAX_TABLES};
use fpdb::{Fingerprints, Fpdb, OnExisting, Settings};
use proptest::prelude::*;

use common::oracle::{
    brute, corpus, dense_corpus, flip, lookups_and_brute_force, simhash_only, store_with,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn permutations_are_distance_preserving_bijections(k in 0u32..7, extra in 1u32..6, a: u64, b: u64) {
        let blocks = k + extra;
        prop_assume!(Permutations::new(k, blocks).is_ok());
        let p = Permutations::new(k, blocks).unwrap();
        prop_assert!(p.len() <= MAX_TABLES);
        for t in 0..p.len() {
            let (pa, pb) = (p.permute(t, a), p.permute(t, b));
            prop_assert_eq!(p.unpermute(t, pa), a);
            prop_assert_eq!((pa ^ pb).count_ones(), (a ^ b).count_ones());
            let (lo, hi) = p.range(t, a);
            prop_assert!(lo <= pa && pa <= hi);
        }
    }

    /// Many copies of a few texts: the lookup is the bounded brute force (the closest
    /// `SIMHASH_MOST`, the oldest first), though the scan left most of them unread.
    #[test]
    fn dense_lookup_equals_bounded_brute_force(seed: u64, k in 1u32..5, extra in 1u32..4, n in 40usize..400) {
        let blocks = k + extra;
        prop_assume!(Permutations::new(k, blocks).is_ok());
        let mut db = Fpdb::builder().settings(simhash_only(k, blocks)).open_in_memory().unwrap();
        let fps = dense_corpus(seed, n, k);
        store_with(&mut db, &fps);
        for (got, want) in lookups_and_brute_force(&db, &fps, seed, k) {
            prop_assert!(got.len() <= fpdb::SIMHASH_MOST);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn lookup_equals_brute_force(seed: u64, k in 0u32..6, extra in 1u32..4, n in 1usize..150) {
        let blocks = k + extra;
        prop_assume!(Permutations::new(k, blocks).is_ok());
        let mut db = Fpdb::builder().settings(simhash_only(k, blocks)).open_in_memory().unwrap();
        let fps = corpus(seed, n, k);
        store_with(&mut db, &fps);
        for (got, want) in lookups_and_brute_force(&db, &fps, seed, k) {
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn rocksdb_lookup_equals_brute_force_at_every_distance() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        nshash: Some(false),
        expected_docs: Some(1 << 20),
        ..Default::default()
    };
    let mut db = Fpdb::builder()
        .settings(settings)
        .create(true)
        .open(dir.path().join("db"))
        .unwrap();
    let k = db.options().simhash_k;
    assert_eq!(k, 3, "default k is 3, inclusive");
    let fps = corpus(42, 3000, k);
    // Half committed to RocksDB, half still staged in memory: lookups merge both.
    store_with(&mut db, &fps[..1500]);
    db.sync().unwrap();
    let rest: Vec<u64> = fps[1500..].to_vec();
    for (i, &fp) in rest.iter().enumerate() {
        let f = Fingerprints {
            simhash: Some(fp),
            chars: 1,
            ..Default::default()
        };
        db.ingest(
            &fpdb::Document::new(format!("d{}", 1500 + i), "x"),
            f,
            OnExisting::Skip,
        )
        .unwrap();
    }
    let mut rng = common::Rng(7);
    let mut seen = [0usize; 5];
    for _ in 0..400 {
        let base = fps[rng.below(fps.len() as u64) as usize];
        let q = flip(base, rng.below(u64::from(k) + 2) as u32, rng.next());
        let got = db.searcher().simhash_neighbors(q).unwrap();
        for (_, d) in &got {
            seen[*d as usize] += 1;
        }
        assert_eq!(got, brute(&fps, q, k));
    }
    // Every distance 0..=k was actually exercised, and k is included.
    assert!(seen[..=k as usize].iter().all(|&c| c > 0), "{seen:?}");
}

/// On RocksDB (one iterator per share of ranges, the seek past a value held by many): 2,000
/// fingerprints of three texts, the lookup is the bounded brute force and reads a bounded
/// number of table keys.
#[test]
fn rocksdb_dense_lookup_equals_bounded_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Fpdb::builder()
        .settings(simhash_only(3, 6))
        .create(true)
        .open(dir.path().join("db"))
        .unwrap();
    let fps = dense_corpus(9, 2000, 3);
    store_with(&mut db, &fps);
    db.sync().unwrap();
    let before = db.meters().lookups;
    let answers = lookups_and_brute_force(&db, &fps, 9, 3);
    for (got, want) in &answers {
        assert_eq!(got, want);
    }
    assert!(answers
        .iter()
        .any(|(got, _)| got.len() == fpdb::SIMHASH_MOST));
    let s = db.meters().lookups;
    let per_lookup = (s.simhash_scanned - before.simhash_scanned) / answers.len() as u64;
    // 20 tables. In each, a text's ~440 exact copies are read up to SIMHASH_MOST + a seek
    // past the rest; its ~220 near copies (distinct values) are read whole. Unbounded, a
    // lookup read about 660 keys in each table.
    assert!(per_lookup < 20 * 400, "{per_lookup} keys per lookup");
}
