//! The rules of the quality issue, on texts made for them: MinHash band candidates against a
//! brute-force oracle, a hard-wrapped text whose lines were shuffled (found through bands and
//! 4-gram resemblance), and chains of overlapping windows (kept apart by tight clusters).
//!
//! Over 600 lines: one oracle or scenario per rule, on texts built for it.

use crate::common;

use std::collections::BTreeMap;

use common::Rng;
use fpdb::{Document, Fingerprints, Fpdb, OnExisting, Settings};
use proptest::prelude::*;

/// Only minhash, no verification: every band candidate is accepted.
fn bands_only(band_holders: bool) -> Settings {
    Settings {
        nshash: Some(false),
        simhash: Some(false),
        verify_overlap_pct: Some(0),
        tight_clusters: Some(false),
        band_holders: Some(band_holders),
        ..Default::default()
    }
}

/// The minhash matches (id -> score) of a query of band keys `query` against a store of
/// documents `d00`, `d01`, ... holding `stored` (`band_holders` as given), and each stored
/// document's cluster at its ingest.
fn band_matches(
    stored: &[std::collections::BTreeSet<u64>],
    query: &std::collections::BTreeSet<u64>,
    band_holders: bool,
) -> (BTreeMap<String, f64>, Vec<u64>) {
    let mut db = Fpdb::builder()
        .settings(bands_only(band_holders))
        .open_in_memory()
        .unwrap();
    let mut at_ingest = Vec::new();
    for (i, keys) in stored.iter().enumerate() {
        let f = Fingerprints {
            bands: keys.iter().copied().collect(),
            chars: 1,
            ..Default::default()
        };
        match db.ingest(&Document::new(format!("d{i:02}"), "x"), f, OnExisting::Skip) {
            Ok(fpdb::IngestResult::Added { outcome, .. }) => {
                at_ingest.push(outcome.similar_id.unwrap());
            }
            other => panic!("{other:?}"),
        }
    }
    let q = Fingerprints {
        bands: query.iter().copied().collect(),
        chars: 1,
        ..Default::default()
    };
    let got = db
        .searcher()
        .query("q", &q)
        .unwrap()
        .matches
        .into_iter()
        .map(|m| {
            assert_eq!(m.algo, "minhash");
            (m.id, m.score)
        })
        .collect();
    (got, at_ingest)
}

/// The matches of a query of `query` against a store of `stored` (`band_holders` as given)
/// equal an oracle's: each key of the query names the holders `named` picks from its holders
/// (stored indices in ingest order, with each stored document's cluster at its ingest), and a
/// document's score is the keys naming it over the query's keys.
fn bands_match_the_oracle(
    stored: &[std::collections::BTreeSet<u64>],
    query: &std::collections::BTreeSet<u64>,
    band_holders: bool,
    named: impl Fn(&[usize], &[u64]) -> Vec<usize>,
) -> Result<(), TestCaseError> {
    let (got, at_ingest) = band_matches(stored, query, band_holders);
    let mut want: BTreeMap<String, f64> = BTreeMap::new();
    for k in query {
        let holders: Vec<usize> = (0..stored.len())
            .filter(|&i| stored[i].contains(k))
            .collect();
        for i in named(&holders, &at_ingest) {
            *want.entry(format!("d{i:02}")).or_default() += 1.0 / query.len() as f64;
        }
    }
    prop_assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (id, s) in &want {
        prop_assert!((got[id] - s).abs() < 1e-9, "{}: {} vs {}", id, got[id], s);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Without `band_holders`, each band key of a query names the oldest stored document
    /// holding it; a document is a candidate with score = its keys / the query's keys.
    /// Checked against a scan of every stored key set.
    #[test]
    fn band_candidates_equal_a_brute_force_scan(
        stored in proptest::collection::vec(proptest::collection::btree_set(0u64..40, 1..6), 1..25),
        query in proptest::collection::btree_set(0u64..40, 1..8),
    ) {
        bands_match_the_oracle(&stored, &query, false, |holders, _| holders.iter().copied().take(1).collect())?;
    }

    /// With `band_holders`, each band key names its first four holders in ingest order,
    /// stopping after the first whose cluster at its ingest is not the oldest's; a document is
    /// a candidate with score = the keys naming it / the query's keys. Checked against a scan
    /// of every stored key set.
    #[test]
    fn every_band_holder_read_equals_a_brute_force_scan(
        stored in proptest::collection::vec(proptest::collection::btree_set(0u64..40, 1..6), 1..25),
        query in proptest::collection::btree_set(0u64..40, 1..8),
    ) {
        bands_match_the_oracle(&stored, &query, true, |holders, at_ingest| {
            let mut named = Vec::new();
            for (n, &i) in holders.iter().take(4).enumerate() {
                named.push(i);
                if n > 0 && at_ingest[i] != at_ingest[holders[0]] {
                    break;
                }
            }
            named
        })?;
    }
}

fn hard_wrap(text: &str, rng: &mut Rng) -> Vec<String> {
    fpdb::eval::edits::hard_wrap(text, || 30 + rng.index(41))
}

/// Ingest `docs` in order; their clusters at the end, by id.
fn clusters(db: &mut Fpdb, docs: &[&Document]) -> BTreeMap<String, u64> {
    for d in docs {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    common::export_outcomes(db)
        .into_iter()
        .map(|o| (o.id, o.similar_id.unwrap()))
        .collect()
}

fn same_cluster(db: &mut Fpdb, a: &Document, b: &Document) -> bool {
    let c = clusters(db, &[a, b]);
    c[&a.id] == c[&b.id]
}

fn legacy_rules() -> Settings {
    Settings {
        minhash_bands: Some(0),
        verify_resemblance_pct: Some(90),
        tight_clusters: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        ..Default::default()
    }
}

#[test]
fn a_wrapped_text_with_shuffled_lines_is_found_by_default() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut found, mut found_legacy) = (0, 0);
    let n = 12;
    for i in 0..n {
        let sentences = 20 + rng.index(40);
        let text = common::synthetic_doc(&mut rng, sentences);
        let mut lines = hard_wrap(&text, &mut rng);
        let orig = Document::new(format!("o{i}"), lines.join("\n"));
        for j in (1..lines.len()).rev() {
            lines.swap(j, rng.index(j + 1));
        }
        let copy = Document::new(format!("c{i}"), lines.join("\n\n"));
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        found += usize::from(same_cluster(&mut db, &orig, &copy));
        let mut old = Fpdb::builder()
            .settings(legacy_rules())
            .open_in_memory()
            .unwrap();
        found_legacy += usize::from(same_cluster(&mut old, &orig, &copy));
    }
    assert_eq!(found, n, "default rules find every shuffled copy");
    assert!(
        found_legacy < n / 2,
        "the rules before bands and the resemblance floor found {found_legacy} of {n}"
    );
}

/// Paragraphs of 2–4 synthetic sentences.
fn paragraphs(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let sentences = 2 + rng.index(3);
            common::synthetic_doc(rng, sentences)
        })
        .collect()
}

#[test]
fn tight_clusters_keep_overlapping_windows_apart() {
    let mut rng = Rng(0x0c4a_1e55_0000_0007);
    let mut chained = 0;
    for round in 0..12 {
        let p = paragraphs(&mut rng, 16);
        let window = |from: usize, id: &str| Document::new(id, p[from..from + 10].join("\n\n"));
        // A and C share 7 of 10 paragraphs, C and B 7, A and B 4.
        let (a, c, b) = (window(0, "A"), window(3, "C"), window(6, "B"));
        // A copy of B with one paragraph dropped.
        let b2 = Document::new("B2", p[7..16].join("\n\n"));
        let ingest = |settings: Settings| {
            let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
            clusters(&mut db, &[&a, &c, &b, &b2])
        };
        let tight = ingest(Settings::default());
        assert_ne!(tight["A"], tight["B"], "round {round}: {tight:?}");
        assert_eq!(tight["A"], tight["C"], "round {round}: {tight:?}");
        assert_eq!(tight["B"], tight["B2"], "round {round}: {tight:?}");
        let single = ingest(Settings {
            tight_clusters: Some(false),
            ..Default::default()
        });
        chained += usize::from(single["A"] == single["B"]);
    }
    // The case is real: single linkage chains A to B through C (when B's kept sentences are
    // held by C rather than by A).
    assert!(chained >= 3, "single linkage chained {chained} of 12");
}

#[test]
fn a_copy_of_a_member_joins_its_cluster_even_when_the_first_document_differs() {
    let mut rng = Rng(0x57a0_9911_0000_0003);
    for round in 0..6 {
        // Paragraphs of 4 sentences; C = P0..9, B = P4..13 shares 24 of C's 40 sentences
        // (60%: B joins C's cluster); B3 = B + two one-sentence paragraphs shares 40 of its
        // 42 sentences with B (strong) but only 24 with C (57%: C alone would refuse it).
        let p: Vec<String> = (0..14)
            .map(|_| common::synthetic_doc(&mut rng, 4))
            .collect();
        let c = Document::new("C", p[0..10].join("\n\n"));
        let b = Document::new("B", p[4..14].join("\n\n"));
        let extra = [
            common::synthetic_doc(&mut rng, 1),
            common::synthetic_doc(&mut rng, 1),
        ];
        let b3 = Document::new("B3", format!("{}\n\n{}", b.text, extra.join("\n\n")));
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let ids = clusters(&mut db, &[&c, &b, &b3]);
        assert_eq!(ids["B"], ids["C"], "round {round}: {ids:?}");
        assert_eq!(ids["B3"], ids["B"], "round {round}: {ids:?}");
        let why = fpdb::explain::compare(
            &db.fingerprint(&b3.text),
            &db.fingerprint(&c.text),
            db.options(),
        );
        assert!(
            !why.verified,
            "round {round}: B3 verifies against C: {why:?}"
        );
    }
}

/// The strong link by resemblance, on fingerprints made for it: X is a cluster's first
/// document and M joined it (60% of the sentences shared). Q shares 60% of M's sentences and
/// 81% of its 4-grams (edits inside sentences), and little of X: with the default rule it
/// joins M's cluster (resemblance ≥ 78%, 21 points over the sentence overlap); with the rule
/// off, or when the sentence overlap is close to the resemblance (Q2: 80% of M's sentences,
/// a window sharing whole sentences), the first document's check keeps it out. W, 90% of M's
/// sentences but 59% of its 4-grams, is a window too: strong by similarity only with the rule
/// off (format 4).
#[test]
fn a_copy_edited_inside_its_sentences_joins_through_a_member() {
    // Sketches are sorted lists of hashes.
    let fp = |nshash: &[u64], mut sketch: Vec<u32>, shingles: Vec<u32>| {
        sketch.sort_unstable();
        Fingerprints {
            nshash: nshash.to_vec(),
            sketch,
            shingles,
            chars: 500,
            ..Default::default()
        }
    };
    let x = fp(&[101], (1..=10).collect(), (300..364).collect());
    let m = fp(
        &[101, 102],
        (1..=6).chain(20..24).collect(),
        (100..164).collect(),
    );
    let shingles_q: Vec<u32> = (100..152).chain(200..212).collect();
    let q = fp(
        &[102],
        (20..24).chain([1, 2, 40, 41, 42, 43]).collect(),
        shingles_q.clone(),
    );
    let q2 = fp(
        &[102],
        (20..24).chain([1, 2, 3, 4, 40, 41]).collect(),
        shingles_q,
    );
    // W shares 90% of M's sentences (a strong link by similarity before format 5) but only
    // 59% of its 4-grams: whole sentences shared, the rest different, a window.
    let w = fp(
        &[102],
        (2..7).chain(20..24).chain([50]).collect(),
        (100..138).chain(400..426).collect(),
    );
    for (strong, q_joins, w_joins) in [(None, true, false), (Some(0), false, true)] {
        let settings = Settings {
            strong_resemblance_pct: strong,
            ..Default::default()
        };
        let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
        let sid = |db: &mut Fpdb, id: &str, f: &Fingerprints| match db
            .ingest(&Document::new(id, "x"), f.clone(), OnExisting::Skip)
            .unwrap()
        {
            fpdb::IngestResult::Added { outcome, .. } => outcome.similar_id.unwrap(),
            other => panic!("{other:?}"),
        };
        let sx = sid(&mut db, "x", &x);
        assert_eq!(sid(&mut db, "m", &m), sx, "M joins X");
        assert!(
            sid(&mut db, "q2", &q2) != sx,
            "Q2: whole sentences, no strong link"
        );
        assert_eq!(
            sid(&mut db, "q", &q) == sx,
            q_joins,
            "strong_resemblance {strong:?}"
        );
        assert_eq!(
            sid(&mut db, "w", &w) == sx,
            w_joins,
            "W, strong_resemblance {strong:?}"
        );
    }
}

/// A store with only `algo`, every candidate accepted.
fn keys_only(algo: fpdb::KeyAlgo) -> Fpdb {
    let settings = Settings {
        nshash: Some(false),
        simhash: Some(false),
        minhash_bands: Some(0),
        verify_overlap_pct: Some(0),
        tight_clusters: Some(false),
        key_algos: Some(fpdb::KeyAlgos(vec![algo])),
        ..Default::default()
    };
    Fpdb::builder().settings(settings).open_in_memory().unwrap()
}

/// The ids of the stored documents a query matched through `name`, sorted.
fn matched(db: &Fpdb, q: &Fingerprints, name: &str) -> Vec<String> {
    let mut got: Vec<String> = db
        .searcher()
        .query("q", q)
        .unwrap()
        .matches
        .into_iter()
        .map(|m| {
            assert_eq!(m.algo, name);
            m.id
        })
        .collect();
    got.sort();
    got
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Punctuation context with the title: a stored document is a candidate when the query's
    /// keys it holds first weigh at least 3 (a part 1, the title 1.5). Checked against a scan.
    #[test]
    fn punct_title_candidates_equal_a_brute_force_scan(
        stored in proptest::collection::vec(
            (proptest::collection::btree_set(0u64..8, 0..4), proptest::option::of(0u64..3)),
            1..25,
        ),
        query in (proptest::collection::btree_set(0u64..8, 0..4), proptest::option::of(0u64..3)),
    ) {
        let keys = |(parts, title): &(std::collections::BTreeSet<u64>, Option<u64>)| -> Vec<u64> {
            let mut k: Vec<u64> = parts.iter().map(|&p| 0xAAu64 << 56 | p).collect();
            k.extend(title.map(|t| 0xABu64 << 56 | t));
            k
        };
        let mut db = keys_only(fpdb::KeyAlgo::PunctTitle);
        for (i, s) in stored.iter().enumerate() {
            let f = Fingerprints { keys: keys(s), chars: 1, ..Default::default() };
            db.ingest(&Document::new(format!("d{i:02}"), "x"), f, OnExisting::Skip).unwrap();
        }
        let q = Fingerprints { keys: keys(&query), chars: 1, ..Default::default() };
        let got = matched(&db, &q, "punct-title");
        let mut weight: BTreeMap<String, f64> = BTreeMap::new();
        for k in keys(&query) {
            if let Some(i) = stored.iter().position(|s| keys(s).contains(&k)) {
                let w = if k >> 56 == 0xAB { 1.5 } else { 1.0 };
                *weight.entry(format!("d{i:02}")).or_default() += w;
            }
        }
        let want: Vec<String> = weight.into_iter().filter(|(_, w)| *w >= 3.0).map(|(id, _)| id).collect();
        prop_assert_eq!(got, want);
    }

    /// The keyword weight check: the oldest holder of the query's key is a candidate when
    /// Σ(wᵢ−wⱼ)² / (Σwᵢ² + Σwⱼ²) < a over their weights. Checked against the formula.
    #[test]
    fn keyword_weight_check_equals_the_formula(
        stored in proptest::collection::vec((0u64..3, proptest::collection::vec(1u8..6, 3)), 1..20),
        query in (0u64..3, proptest::collection::vec(1u8..6, 3)),
        a in 0u32..400,
        con in any::<bool>(),
    ) {
        let algo = if con {
            fpdb::KeyAlgo::KeywordsCon { n: 3, check: Some(a) }
        } else {
            fpdb::KeyAlgo::Keywords { n: 3, check: Some(a) }
        };
        let tag: u64 = if con { 0xA9 } else { 0xA8 };
        let fps = |(k, w): &(u64, Vec<u8>)| Fingerprints {
            keys: vec![tag << 56 | k],
            key_weights: w.iter().map(|&x| f32::from(x)).collect(),
            chars: 1,
            ..Default::default()
        };
        let mut db = keys_only(algo);
        for (i, s) in stored.iter().enumerate() {
            db.ingest(&Document::new(format!("d{i:02}"), "x"), fps(s), OnExisting::Skip).unwrap();
        }
        let got = matched(&db, &fps(&query), if con { "keywords-con-check" } else { "keywords-check" });
        let mut want = Vec::new();
        if let Some(i) = stored.iter().position(|s| s.0 == query.0) {
            let (x, y) = (&query.1, &stored[i].1);
            let d: f64 = x.iter().zip(y).map(|(&p, &q)| (f64::from(p) - f64::from(q)).powi(2)).sum();
            let s: f64 = x.iter().chain(y).map(|&p| f64::from(p).powi(2)).sum();
            if d / s < f64::from(a) / 1000.0 {
                want.push(format!("d{i:02}"));
            }
        }
        prop_assert_eq!(got, want);
    }

    /// Segment signatures and two-stage keys: a stored document is a candidate when at least
    /// `m` of the query's keys name it as their oldest holder (`m` capped by the query's key
    /// count). Checked against a scan of every stored key set.
    #[test]
    fn m_of_n_candidates_equal_a_brute_force_scan(
        stored in proptest::collection::vec(proptest::collection::btree_set(0u64..30, 1..8), 1..25),
        query in proptest::collection::btree_set(0u64..30, 1..8),
        m in 1u32..5,
        two_stage in any::<bool>(),
    ) {
        let (algo, tag, name) = if two_stage {
            (fpdb::KeyAlgo::TwoStage { words: 3, paras: 8, m }, 0xACu64, "two-stage")
        } else {
            (fpdb::KeyAlgo::Segments { n: 8, m }, 0xA3, "segments")
        };
        let tagged = |k: u64| tag << 56 | k;
        let mut db = keys_only(algo);
        for (i, keys) in stored.iter().enumerate() {
            let f = Fingerprints { keys: keys.iter().map(|&k| tagged(k)).collect(), chars: 1, ..Default::default() };
            db.ingest(&Document::new(format!("d{i:02}"), "x"), f, OnExisting::Skip).unwrap();
        }
        let q = Fingerprints { keys: query.iter().map(|&k| tagged(k)).collect(), chars: 1, ..Default::default() };
        let got = matched(&db, &q, name);
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for k in &query {
            if let Some(i) = stored.iter().position(|s| s.contains(k)) {
                *count.entry(format!("d{i:02}")).or_default() += 1;
            }
        }
        let need = (m as usize).min(query.len());
        let want: Vec<String> = count.into_iter().filter(|(_, n)| *n >= need).map(|(id, _)| id).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn exact_key_algorithms_persist_and_find_copies() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    let algos = fpdb::KeyAlgos(vec![
        fpdb::KeyAlgo::imatch(),
        fpdb::KeyAlgo::keywords(),
        fpdb::KeyAlgo::keywords_pct(),
        fpdb::KeyAlgo::segments(),
        fpdb::KeyAlgo::keywords_check(),
        fpdb::KeyAlgo::two_stage(),
        fpdb::KeyAlgo::PunctTitle,
    ]);
    let settings = Settings {
        nshash: Some(false),
        simhash: Some(false),
        minhash_bands: Some(0),
        key_algos: Some(algos.clone()),
        ..Default::default()
    };
    let docs = common::sample_docs();
    {
        let mut db = Fpdb::builder()
            .settings(settings)
            .create(true)
            .open(&p)
            .unwrap();
        for d in &docs {
            db.ingest_document(d, OnExisting::Skip).unwrap();
        }
    }
    // Reopened without settings: the store's algorithms, every key indexed.
    let mut db = Fpdb::open(&p).unwrap();
    assert_eq!(db.options().key_algos, algos);
    db.searcher().verify().unwrap();
    // An exact copy of a stored text shares every key, and is found by each algorithm.
    let d = docs.iter().find(|d| d.text.chars().count() > 200).unwrap();
    let out = db.searcher().query_text(&d.text).unwrap();
    assert!(out.similar_id.is_some(), "{out:?}");
    for name in [
        "imatch",
        "keywords",
        "keywords-pct",
        "segments",
        "keywords-check",
        "two-stage",
        "punct-title",
    ] {
        assert!(
            out.matches.iter().any(|m| m.algo == name),
            "{name}: {out:?}"
        );
    }
    let copy = Document::new("copy", d.text.clone());
    let r = db.ingest_document(&copy, OnExisting::Skip).unwrap();
    let reported = match r {
        fpdb::IngestResult::Added { outcome, .. } => {
            assert_eq!(outcome.similar_id, out.similar_id);
            outcome.matches
        }
        other => panic!("{other:?}"),
    };
    // Export reads the matches back from the record: each under the algorithm ingest named
    // (punct-title, two-stage and keywords-check were exported as simhash when names were
    // strings).
    let exported = common::export_outcomes(&db)
        .into_iter()
        .find(|o| o.id == "copy")
        .unwrap()
        .matches;
    let algos = |m: &[fpdb::Match]| m.iter().map(|m| (m.id.clone(), m.algo)).collect::<Vec<_>>();
    assert!(!reported.is_empty());
    assert_eq!(algos(&exported), algos(&reported));
    assert!(
        exported.iter().all(|m| m.algo != fpdb::Algo::Simhash),
        "{exported:?}"
    );
    db.maintenance().remove("copy").unwrap();
    db.searcher().verify().unwrap();
}

/// The weight check's bar is a setting like the others: kept, and another one on reopen is
/// refused naming both values (also on a store without a checked keyword algorithm).
#[test]
fn the_weight_check_is_kept_and_checked() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("in.jsonl"),
        "{\"id\":\"a\",\"text\":\"一段足够长的句子用来测试设置。另一段足够长的句子也在这里。\"}\n",
    )
    .unwrap();
    let run = |args: &[&str]| common::run(d.path(), args);
    let o = run(&[
        "ingest",
        "in.jsonl",
        "--db",
        "s",
        "--algos",
        "nshash,keywords-check",
        "--weight-check",
        "0.05",
    ]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = run(&["stats", "--db", "s"]);
    assert!(
        common::stdout(&o).contains("weight distance < 0.05"),
        "{}",
        common::stdout(&o)
    );
    // The same bar again: fine (the document is already stored).
    let o = run(&["ingest", "in.jsonl", "--db", "s", "--weight-check", "0.05"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = run(&["ingest", "in.jsonl", "--db", "s", "--weight-check", "0.2"]);
    assert_eq!(common::code(&o), 2);
    let e = common::stderr(&o);
    assert!(
        e.contains("weight_check") && e.contains("0.05") && e.contains("0.2"),
        "{e}"
    );
    let o = run(&["ingest", "in.jsonl", "--db", "plain"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = run(&[
        "ingest",
        "in.jsonl",
        "--db",
        "plain",
        "--weight-check",
        "0.1",
    ]);
    assert_eq!(common::code(&o), 2);
    assert!(
        common::stderr(&o).contains("no keywords-check"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn bad_new_settings_are_refused_with_their_name() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("in.jsonl"),
        "{\"id\":\"a\",\"text\":\"一段足够长的句子用来测试设置。\"}\n",
    )
    .unwrap();
    for (args, says) in [
        (&["--algos", "nshash,bogus"][..], "bogus"),
        (&["--verify-resemblance", "101"][..], "verify resemblance"),
        (&["--verify-resemblance", "-3"][..], "-3"),
        (&["--minhash-bands", "65"][..], "minhash"),
        (&["--minhash-rows", "0"][..], "minhash rows"),
        (&["--minhash-rows", "99999999999"][..], "99999999999"),
        (
            &["--algos", "nshash", "--minhash-bands", "4"][..],
            "--minhash-bands",
        ),
        (&["--tight-clusters", "maybe"][..], "maybe"),
        (&["--link-shape", "sometimes"][..], "sometimes"),
        (&["--strong-resemblance", "101"][..], "strong resemblance"),
        (&["--algos", "imatch,imatch"][..], "twice"),
        (
            &["--algos", "keywords-check", "--weight-check", "1.5"][..],
            "weight check 1.5",
        ),
        (
            &["--algos", "keywords", "--weight-check", "0.2"][..],
            "weight check 0.2 needs keywords-check",
        ),
        (
            &["--algos", "keywords-check", "--weight-check", "nan"][..],
            "weight check NaN",
        ),
        (&["--weight-check", "lots"][..], "lots"),
        (&["--strong-resemblance", "-1"][..], "-1"),
        (&["--algos", "punct-title,two-stage,two-stage"][..], "twice"),
        (&["--cache-mib", "4"][..], "4"),
        (&["--cache-mib", "lots"][..], "lots"),
        (&["--simhash-min-terms", "few"][..], "few"),
        (&["--simhash-min-terms", "-1"][..], "-1"),
    ] {
        let mut all = vec!["ingest", "in.jsonl", "--db", "s"];
        all.extend_from_slice(args);
        let o = common::run(d.path(), &all);
        let err = common::stderr(&o);
        assert_eq!(common::code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            !d.path().join("s/CURRENT").exists(),
            "{args:?} created a store"
        );
    }
}

/// A store made with a maximum-matching segmenter keeps it: reopened it cuts words the same
/// way (its simhash of a stored text is the stored one), a different `--segmenter` is refused
/// with both values named, and `stats` shows it. (Words feed simhash only: these stores
/// have it.)
#[test]
fn segmenter_persists_and_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    let docs = common::sample_docs();
    let simhash_of = |db: &Fpdb, text: &str| db.fingerprint(text).simhash;
    let first = {
        let mut db = Fpdb::builder()
            .settings(Settings {
                segmenter: Some(fpdb::Segmenter::Bmm),
                simhash: Some(true),
                ..Default::default()
            })
            .create(true)
            .open(&p)
            .unwrap();
        for d in &docs {
            db.ingest_document(d, OnExisting::Skip).unwrap();
        }
        simhash_of(&db, &docs[0].text)
    };
    let db = Fpdb::open(&p).unwrap();
    assert_eq!(db.options().segmenter, fpdb::Segmenter::Bmm);
    assert_eq!(simhash_of(&db, &docs[0].text), first);
    db.searcher().verify().unwrap();
    // The segmenter changes the words, hence the simhash of a Chinese text.
    let jieba = Fpdb::builder()
        .settings(Settings {
            simhash: Some(true),
            ..Default::default()
        })
        .open_in_memory()
        .unwrap();
    let differs = docs
        .iter()
        .any(|d| simhash_of(&jieba, &d.text) != simhash_of(&db, &d.text));
    assert!(differs, "bmm and jieba cut every sample text alike");
    drop(db);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["stats", "--db"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("segmenter=bmm"));
    // A different segmenter for this store is refused, naming both.
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"id\":\"x\",\"text\":\"一段足够长的句子用来测试设置。\"}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["ingest", "--segmenter", "fmm", "--db"])
        .arg(&p)
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("segmenter") && err.contains("bmm") && err.contains("fmm"),
        "{err}"
    );
}

/// The `des` key is a page's meta description when it has one, at ingest and at query alike:
/// a page with the same description is found by it; the same body without the description
/// (keyed by its first 512 bytes) is not.
#[test]
fn des_key_uses_the_meta_description() {
    let dir = tempfile::tempdir().unwrap();
    let page = |desc: &str, body: &str| {
        format!(
            "<html><head><title>t</title><meta name=\"description\" content=\"{desc}\"></head>\
             <body><article><p>{body}</p></article></body></html>"
        )
    };
    let body = "国务院关于加强政务诚信建设的指导意见全文如下。".repeat(20);
    let desc = "关于加强政务诚信建设的指导意见";
    std::fs::write(dir.path().join("a.html"), page(desc, &body)).unwrap();
    std::fs::write(
        dir.path().join("b.html"),
        page(desc, &format!("转载：{body}")),
    )
    .unwrap();
    std::fs::write(dir.path().join("c.txt"), format!("转载：{body}")).unwrap();
    let fpdb = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fpdb"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = fpdb(&["ingest", "--db", "s", "--algos", "des", "a.html"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let query = |file: &str| {
        let out = fpdb(&["query", "--db", "s", "--json", "--file", file]);
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let b = query("b.html");
    assert!(b.contains("\"algo\":\"des\""), "{b}");
    let c = query("c.txt");
    assert!(!c.contains("\"algo\":\"des\""), "{c}");
}
