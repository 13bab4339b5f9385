//! The floor of terms under which a document has no simhash (`simhash_min_terms`): a simhash
//! of a few terms finds only texts of the same few words, mostly unrelated ones, which each
//! cost a record read to reject; MinHash finds the short copies instead. (Simhash is off in
//! new stores by default: these stores ask for it.)

use crate::common;

use fpdb::{Document, Fpdb, IngestResult, OnExisting, Outcome, Settings};

/// Two short texts with one term each, the same one (`香蕉`: the other words are one
/// character or stop words), and nothing else in common.
const SAME_WORD_A: &str = "香蕉！我的了是在哪？";
const SAME_WORD_B: &str = "你吧呢，香蕉他在不？";

/// Distinct English nouns: each one term.
const NOUNS: [&str; 8] = [
    "apple", "bridge", "candle", "dolphin", "engine", "forest", "guitar", "harbor",
];

fn added(r: IngestResult) -> Outcome {
    match r {
        IngestResult::Added { outcome, .. } => outcome,
        other => panic!("not added: {other:?}"),
    }
}

/// The defaults with simhash.
fn simhash_on() -> Settings {
    Settings {
        simhash: Some(true),
        ..Default::default()
    }
}

fn store(settings: Settings) -> Fpdb {
    Fpdb::builder().settings(settings).open_in_memory().unwrap()
}

#[test]
fn a_text_of_fewer_terms_than_the_floor_has_no_simhash_where_minhash_is_on() {
    let db = store(simhash_on());
    assert_eq!(db.options().simhash_min_terms, 8);
    let eight = NOUNS.join(" ");
    let seven = NOUNS[..7].join(" ");
    assert!(db.fingerprint(&eight).simhash.is_some(), "8 terms");
    assert!(db.fingerprint(&seven).simhash.is_none(), "7 terms");
    assert!(db.fingerprint(SAME_WORD_A).simhash.is_none());

    // Asked for 1: every text with a term has one, as in stores made before the setting.
    let one = store(Settings {
        simhash_min_terms: Some(1),
        ..simhash_on()
    });
    assert_eq!(
        one.fingerprint(SAME_WORD_A).simhash,
        one.fingerprint(SAME_WORD_B).simhash
    );
    assert!(one.fingerprint(&seven).simhash.is_some());

    // Without MinHash bands nothing else finds short copies: the setting reads as 1.
    let no_minhash = store(Settings {
        minhash_bands: Some(0),
        ..simhash_on()
    });
    assert_eq!(no_minhash.options().simhash_min_terms, 1);
    assert!(no_minhash.fingerprint(&seven).simhash.is_some());
    let mut alone = Settings::default();
    alone.set_algos(&["simhash"]).unwrap();
    let alone = store(alone);
    assert_eq!(alone.options().simhash_min_terms, 1);
    assert!(alone.fingerprint(SAME_WORD_A).simhash.is_some());
}

/// `fpdb eval` fingerprints each configuration as its store would: simhash alone keeps a
/// simhash for every text with a term, the defaults with simhash do not.
#[test]
fn eval_fingerprints_each_configuration_with_its_stores_floor() {
    let docs = [Document::new("a", SAME_WORD_A)];
    let mut alone = Settings::default();
    alone.set_algos(&["simhash"]).unwrap();
    assert_eq!(fpdb::eval::simhash_floor(&alone).unwrap(), Some(1));
    assert!(fpdb::eval::fingerprint_all(&docs, &alone).unwrap()[0]
        .simhash
        .is_some());
    let defaults = simhash_on();
    assert_eq!(fpdb::eval::simhash_floor(&defaults).unwrap(), Some(8));
    assert!(fpdb::eval::fingerprint_all(&docs, &defaults).unwrap()[0]
        .simhash
        .is_none());
    let mut nshash = Settings::default();
    nshash.set_algos(&["nshash"]).unwrap();
    assert_eq!(fpdb::eval::simhash_floor(&nshash).unwrap(), None);
    let zero = Settings {
        simhash_min_terms: Some(0),
        ..simhash_on()
    };
    assert_eq!(fpdb::eval::simhash_floor(&zero).unwrap(), Some(1));
}

/// What the floor saves: a text whose only term another text shares has that text's simhash,
/// which makes it a candidate whose record is read and rejected. Under the floor it is not
/// one; the two stay apart either way.
#[test]
fn texts_of_the_same_few_words_are_not_read_as_candidates() {
    for (min_terms, candidates) in [(1, 1), (8, 0)] {
        let mut db = store(Settings {
            simhash_min_terms: Some(min_terms),
            ..simhash_on()
        });
        db.ingest_document(&Document::new("a", SAME_WORD_A), OnExisting::Skip)
            .unwrap();
        let b = added(
            db.ingest_document(&Document::new("b", SAME_WORD_B), OnExisting::Skip)
                .unwrap(),
        );
        assert!(b.matches.is_empty(), "{min_terms}: {b:?}");
        let s = db.meters().lookups;
        assert_eq!(s.simhash_candidates, candidates, "{min_terms}: {s:?}");
        assert_eq!(s.records_read, candidates, "{min_terms}: {s:?}");
        assert_eq!(s.verified, 0, "{min_terms}: {s:?}");
    }
}

/// A short text of five terms and its copy with a character added are found under the
/// floor (by MinHash, verified on their 4-grams), as with a simhash for every text (the
/// same terms: distance 0).
#[test]
fn short_copies_are_still_found_under_the_floor() {
    let original = "北京图书馆周末举办读书会，欢迎参加";
    let copy = "北京图书馆本周末举办读书会，欢迎参加";
    for min_terms in [1, 8] {
        let mut db = store(Settings {
            simhash_min_terms: Some(min_terms),
            ..simhash_on()
        });
        let a = added(
            db.ingest_document(&Document::new("a", original), OnExisting::Skip)
                .unwrap(),
        );
        let b = added(
            db.ingest_document(&Document::new("b", copy), OnExisting::Skip)
                .unwrap(),
        );
        assert_eq!(a.similar_id, b.similar_id, "{min_terms}: {b:?}");
        let by_simhash = b.matches.iter().any(|m| m.algo == "simhash");
        assert_eq!(by_simhash, min_terms == 1, "{min_terms}: {b:?}");
    }
}

/// The floor is the store's: reopened with another one, the ingest is refused with both
/// values named, and the store keeps its documents.
#[test]
fn another_floor_for_a_stored_store_is_refused_naming_both() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("in.jsonl"),
        format!("{{\"id\":\"a\",\"text\":\"{SAME_WORD_A}\"}}\n"),
    )
    .unwrap();
    let o = common::run(
        d.path(),
        &[
            "--db",
            "s",
            "-q",
            "ingest",
            "in.jsonl",
            "--algos",
            "nshash,simhash,minhash",
        ],
    );
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let o = common::run(
        d.path(),
        &[
            "--db",
            "s",
            "ingest",
            "in.jsonl",
            "--simhash-min-terms",
            "1",
        ],
    );
    let err = common::stderr(&o);
    assert_eq!(common::code(&o), 2, "{err}");
    assert!(
        err.contains("simhash_min_terms = 8") && err.contains("simhash_min_terms = 1"),
        "{err}"
    );
    let stats = common::stdout(&common::run(d.path(), &["--db", "s", "stats"]));
    assert!(
        stats.contains("min_terms=8") && stats.contains("documents    1"),
        "{stats}"
    );
}
