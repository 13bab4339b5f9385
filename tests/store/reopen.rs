//! Reopen tests: a store fed in several runs answers exactly like one fed in one run, and the
//! in-memory store decides exactly like the RocksDB one.

use crate::common;

use common::export_outcomes as export;
use fpdb::{Document, Fpdb, OnExisting, Settings};

fn ingest_all(db: &mut Fpdb, docs: &[Document]) {
    for d in docs {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    db.sync().unwrap();
}

#[test]
fn two_runs_give_the_same_similar_ids_as_one() {
    let docs = common::sample_docs();
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    {
        let mut db = Fpdb::open(&one).unwrap();
        ingest_all(&mut db, &docs);
    }
    let half = docs.len() / 2;
    for part in [&docs[..half], &docs[half..]] {
        let mut db = Fpdb::open(&two).unwrap();
        ingest_all(&mut db, part);
    }
    let a = export(&Fpdb::builder().read_only(true).open(&one).unwrap());
    let b = export(&Fpdb::builder().read_only(true).open(&two).unwrap());
    assert_eq!(a.len(), docs.len());
    assert_eq!(a, b);
    // The sample has near-duplicates: some documents share a similar_id.
    let distinct: std::collections::BTreeSet<_> = a.iter().map(|o| o.similar_id).collect();
    assert!(
        distinct.len() < docs.len() * 3 / 4,
        "{} clusters",
        distinct.len()
    );
    Fpdb::builder()
        .read_only(true)
        .open(&two)
        .unwrap()
        .searcher()
        .verify()
        .unwrap();
}

#[test]
fn memory_and_rocksdb_stores_decide_alike() {
    let docs = common::sample_docs();
    let dir = tempfile::tempdir().unwrap();
    let mut rocks = Fpdb::open(dir.path().join("db")).unwrap();
    let mut mem = Fpdb::builder().open_in_memory().unwrap();
    for d in &docs {
        let a = rocks.ingest_document(d, OnExisting::Skip).unwrap();
        let b = mem.ingest_document(d, OnExisting::Skip).unwrap();
        assert_eq!(a, b, "{}", d.id);
    }
    assert_eq!(export(&rocks), export(&mem));
    assert_eq!(rocks.searcher().stats().documents, docs.len() as u64);
}

#[test]
fn reopening_with_other_settings_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    drop(Fpdb::builder().simhash_k(3).create(true).open(&p).unwrap());
    let err = Fpdb::builder()
        .simhash_k(5)
        .open(&p)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("simhash_k = 3") && err.contains("simhash_k = 5"),
        "{err}"
    );
    // Without explicit settings, the stored ones are used.
    assert_eq!(Fpdb::builder().open(&p).unwrap().options().simhash_k, 3);
}

#[test]
fn merged_clusters_answer_the_oldest_id_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let s = |i: usize| common::synthetic_doc(&mut common::Rng(1000 + i as u64), 6);
    let (a, b) = (s(1), s(2));
    {
        let settings = Settings {
            simhash: Some(false),
            nshash_n: Some(12),
            verify_overlap_pct: Some(40),
            ..Default::default()
        };
        let mut db = Fpdb::builder()
            .settings(settings)
            .create(true)
            .open(&p)
            .unwrap();
        ingest_all(
            &mut db,
            &[Document::new("a", a.clone()), Document::new("b", b.clone())],
        );
        // A document made of both joins both clusters: they merge into the older one.
        let r = db
            .ingest_document(&Document::new("ab", format!("{a}{b}")), OnExisting::Skip)
            .unwrap();
        let fpdb::IngestResult::Added { outcome, .. } = r else {
            panic!()
        };
        assert_eq!(outcome.merged, vec![2]);
        assert_eq!(outcome.similar_id, Some(1));
        db.sync().unwrap();
    }
    let db = Fpdb::builder().read_only(true).open(&p).unwrap();
    assert_eq!(db.searcher().resolve(2).unwrap(), 1);
    let ex = export(&db);
    assert!(ex.iter().all(|o| o.similar_id == Some(1)), "{ex:?}");
    assert_eq!(ex[1].duplicate_of.as_deref(), Some("a"));
    assert_eq!(db.searcher().stats().clusters, 1);
    db.searcher().verify().unwrap();
}

/// Oracle: `clusters(min)` equals grouping the export by similar_id, for every minimum size,
/// on a store with merged clusters (sizes read from the cluster records must be right).
#[test]
fn clusters_equal_grouping_the_export() {
    let mut docs = common::sample_docs();
    // Two documents that each join two earlier clusters.
    let (a, b) = (docs[0].text.clone(), docs[3].text.clone());
    docs.push(Document::new("joins-0-3", format!("{a}\n{b}")));
    let mut db = Fpdb::builder()
        .settings(Settings {
            verify_overlap_pct: Some(40),
            ..Settings::default()
        })
        .open_in_memory()
        .unwrap();
    ingest_all(&mut db, &docs);
    let mut oracle: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
    for o in export(&db) {
        oracle.entry(o.similar_id.unwrap()).or_default().push(o.id);
    }
    assert!(oracle.values().any(|m| m.len() >= 3), "a cluster of 3+");
    for min in 0..5 {
        let want: Vec<(u64, Vec<String>)> = oracle
            .iter()
            .filter(|(_, m)| m.len() >= min.max(1))
            .map(|(k, m)| (*k, m.clone()))
            .collect();
        assert_eq!(db.searcher().clusters(min).unwrap(), want, "min_size {min}");
    }
}

#[test]
fn replacing_a_document_keeps_indexes_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Fpdb::open(dir.path().join("db")).unwrap();
    let (x, y) = (
        common::synthetic_doc(&mut common::Rng(5), 8),
        common::synthetic_doc(&mut common::Rng(6), 8),
    );
    ingest_all(
        &mut db,
        &[Document::new("a", x.clone()), Document::new("b", x.clone())],
    );
    let r = db
        .ingest_document(&Document::new("a", y.clone()), OnExisting::Skip)
        .unwrap();
    assert!(matches!(r, fpdb::IngestResult::SkippedExisting { .. }));
    let r = db
        .ingest_document(&Document::new("a", y.clone()), OnExisting::Replace)
        .unwrap();
    let fpdb::IngestResult::Added {
        outcome,
        replaced: true,
    } = r
    else {
        panic!("{r:?}")
    };
    assert!(
        outcome.matches.is_empty(),
        "the replaced text must not match its old self"
    );
    db.searcher().verify().unwrap();
    assert_eq!(db.searcher().stats().documents, 2);
    // The old text is still found through "b"; the new one through "a".
    let q = db.searcher().query_text(&x).unwrap();
    assert!(q.matches.iter().any(|m| m.id == "b"), "{q:?}");
    assert!(db
        .searcher()
        .query_text(&y)
        .unwrap()
        .matches
        .iter()
        .all(|m| m.id == "a"));
}

/// A store created with a learned IDF table keeps it: reopened without naming it, it
/// fingerprints with that table (not jieba's), and two runs decide like one in-memory run.
#[test]
fn a_learned_idf_table_lives_in_the_store() {
    use std::sync::Arc;
    let docs = common::sample_docs();
    let prepared: Vec<String> = docs.iter().map(|d| fpdb::normalize(&d.text)).collect();
    let table = Arc::new(fpdb::text::IdfTable::learn(prepared.iter()));
    let settings = Settings {
        simhash_idf: Some(table.clone()),
        simhash: Some(true),
        ..Settings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idf");
    let half = docs.len() / 2;
    {
        let mut db = Fpdb::builder()
            .settings(settings.clone())
            .create(true)
            .open(&path)
            .unwrap();
        ingest_all(&mut db, &docs[..half]);
    }
    let mut db = Fpdb::open(&path).unwrap();
    assert!(
        matches!(&db.options().simhash_idf, fpdb::IdfSource::Table { digest, .. } if *digest == table.digest())
    );
    let jieba_idf = fpdb::Options {
        simhash: true,
        ..fpdb::Options::default()
    };
    let default = fpdb::fingerprint::Fingerprinter::new(jieba_idf, None).unwrap();
    let differ = docs
        .iter()
        .filter(|d| db.fingerprint(&d.text).simhash != default.fingerprint(&d.text).simhash)
        .count();
    assert!(differ > docs.len() / 2, "only {differ} simhashes changed");
    ingest_all(&mut db, &docs[half..]);
    drop(db);

    let mut mem = Fpdb::builder().settings(settings).open_in_memory().unwrap();
    ingest_all(&mut mem, &docs);
    let disk = Fpdb::builder().read_only(true).open(&path).unwrap();
    assert_eq!(export(&disk), export(&mem));
    disk.searcher().verify().unwrap();

    // Naming another table on reopen is refused, naming the stored one too.
    let other = Arc::new(fpdb::text::IdfTable::learn(prepared[..10].iter()));
    let err = Fpdb::builder()
        .settings(Settings {
            simhash_idf: Some(other),
            ..Settings::default()
        })
        .open(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&table.digest()), "{err}");
}

/// The presence filter saved with a store at the end of a run is used by the next writer:
/// as it is when the store is still in the state it was saved at, and with the documents
/// written since read into it when it was saved at an earlier state of the store (a run that
/// was killed, or kept no filter). Runs using it decide exactly like one run without it.
#[test]
fn saved_presence_filter_changes_no_result_and_an_earlier_one_is_caught_up() {
    let docs = common::sample_docs();
    let third = docs.len() / 3;
    let (a, b) = (&docs[..third], &docs[third..2 * third]);
    // Copies of the second part under new ids: found only through the second part's keys.
    let c: Vec<Document> = b
        .iter()
        .map(|d| Document {
            id: format!("copy-{}", d.id),
            ..d.clone()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    {
        let mut db = Fpdb::open(&one).unwrap();
        ingest_all(&mut db, a);
        ingest_all(&mut db, b);
        ingest_all(&mut db, &c);
    }
    let file = two.join("fpdb-presence");
    {
        let mut db = Fpdb::builder()
            .create(true)
            .empty_filters(true)
            .open(&two)
            .unwrap();
        ingest_all(&mut db, a);
    }
    assert!(file.exists(), "saved when the store is closed");
    let stale = std::fs::read(&file).unwrap();
    {
        let mut db = Fpdb::builder().open(&two).unwrap();
        ingest_all(&mut db, b);
    }
    assert_ne!(
        std::fs::read(&file).unwrap(),
        stale,
        "saved again, with the new keys"
    );
    // The filter of the state before the second run, put back: it lacks the second part's
    // keys, which are read into it from the second part's records (else the copies, found
    // only through those keys, would be missed).
    std::fs::write(&file, &stale).unwrap();
    {
        let mut db = Fpdb::builder().open(&two).unwrap();
        assert_eq!(db.meters().memory_filter_caught_up, Some(b.len() as u64));
        ingest_all(&mut db, &c);
    }
    assert_ne!(
        std::fs::read(&file).unwrap(),
        stale,
        "saved again, caught up"
    );
    assert_eq!(
        Fpdb::builder()
            .open(&two)
            .unwrap()
            .meters()
            .memory_filter_caught_up,
        None,
        "saved at the store's state"
    );
    let x = export(&Fpdb::builder().read_only(true).open(&one).unwrap());
    let y = export(&Fpdb::builder().read_only(true).open(&two).unwrap());
    assert_eq!(x, y);
    // The copies joined their originals' clusters.
    let copies = y.iter().filter(|o| o.id.starts_with("copy-")).count();
    assert_eq!(copies, c.len());
    let joined = y
        .iter()
        .filter(|o| o.id.starts_with("copy-"))
        .filter(|o| o.duplicate_of.is_some())
        .count();
    assert!(
        joined * 10 >= c.len() * 9,
        "{joined} of {} copies joined",
        c.len()
    );
}

/// A store whose recorded settings name a rule this build does not know (a newer fpdb's) is
/// refused, naming the rule, by the library and by every command: never opened as if the rule
/// were absent, which would write to it without that rule.
#[test]
fn a_store_with_a_rule_this_build_does_not_know_is_refused_naming_it() {
    use fpdb::store::{Batch, Cf};
    use fpdb::Store;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.db");
    {
        let mut db = Fpdb::open(&p).unwrap();
        ingest_all(&mut db, &common::sample_docs()[..5]);
        assert_eq!(db.searcher().stats().rules_version, "0.1");
    }
    {
        let s = fpdb::RocksStore::open(&p, true).unwrap();
        let raw = s
            .get(Cf::Meta, b"options")
            .unwrap()
            .expect("options recorded");
        let mut opts: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        opts["a_future_rule"] = serde_json::Value::Bool(true);
        let mut b = Batch::new();
        b.put(
            Cf::Meta,
            b"options".to_vec(),
            serde_json::to_vec(&opts).unwrap(),
        );
        s.write(b).unwrap();
        s.sync().unwrap();
    }
    let e = Fpdb::open(&p).unwrap_err();
    assert!(
        matches!(&e, fpdb::Error::UnknownRules { names } if names == &["a_future_rule"]),
        "{e}"
    );
    for args in [&["stats"][..], &["export"], &["ingest", "-q", "-"]] {
        let mut all = vec!["--db", "s.db"];
        all.extend_from_slice(args);
        let o = common::run_stdin(dir.path(), &all, b"");
        assert_eq!(common::code(&o), 2, "{args:?}");
        let err = common::stderr(&o);
        assert!(
            err.contains("rules this fpdb does not know (a_future_rule)"),
            "{args:?}: {err}"
        );
    }
}
