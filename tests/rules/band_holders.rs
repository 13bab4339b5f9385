//! Band keys propose every holder they read (`band_holders`): three copies of one law of the
//! hard sets' wrapped class (`tools/src/bin/hard_sets.rs`), kept in
//! `tests/fixtures/band_holders.jsonl`. The first (`#boiler40`) is the oldest holder of the
//! bands the third (`#moved`: its lines re-wrapped and moved) shares with both others, and
//! the third does not verify against it; the second (`#wrap30`) joined the first, and the third
//! verifies against it. The third joins their cluster one at a time, in one batch and after a
//! store holding the first, and a query finds it. Without the rule it meets only the oldest
//! holder and stays apart (as it did when simhash was a default: simhash proposed every
//! neighbour within three bits).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use fpdb::{Document, Fpdb, OnExisting, Settings};

/// The three copies, in the hard set's order.
fn copies() -> Vec<Document> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/band_holders.jsonl");
    common::json_lines(&std::fs::read_to_string(path).unwrap())
        .into_iter()
        .map(|v| Document::new(v["id"].as_str().unwrap(), v["text"].as_str().unwrap()))
        .collect()
}

/// A fresh in-memory store holding `docs`: the first `alone` one at a time, the rest in one
/// batch.
fn ingest(settings: Settings, docs: &[Document], alone: usize) -> Fpdb {
    let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
    for d in &docs[..alone] {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    if alone < docs.len() {
        let with: Vec<_> = docs[alone..]
            .iter()
            .map(|d| (d, db.fingerprint_document(d)))
            .collect();
        let out = db.ingest_batch(with, OnExisting::Skip);
        assert!(out.error.is_none(), "{:?}", out.error);
    }
    db
}

/// The cluster of each copy, by the end of its id (`boiler40`, `wrap30`, `moved`).
fn by_name(db: &Fpdb) -> BTreeMap<String, u64> {
    common::clusters_by_id(db)
        .into_iter()
        .map(|(id, c)| (id.rsplit('#').next().unwrap().to_string(), c))
        .collect()
}

#[test]
fn a_rewrapped_copy_meets_a_later_holder_of_its_bands() {
    let docs = copies();
    assert_eq!(docs.len(), 3);
    let without = Settings {
        band_holders: Some(false),
        ..Default::default()
    };
    // One at a time, the first alone then a batch, one batch.
    for alone in [3, 1, 0] {
        let c = by_name(&ingest(Settings::default(), &docs, alone));
        assert_eq!(c["boiler40"], c["wrap30"], "{alone} alone: {c:?}");
        assert_eq!(c["moved"], c["wrap30"], "{alone} alone: {c:?}");
        let off = by_name(&ingest(without.clone(), &docs, alone));
        assert_eq!(off["boiler40"], off["wrap30"], "{alone} alone: {off:?}");
        assert_ne!(
            off["moved"], off["wrap30"],
            "{alone} alone, without: {off:?}"
        );
    }
    // A query of the third against a store of the first two.
    for (settings, found) in [(Settings::default(), true), (without, false)] {
        let db = ingest(settings, &docs[..2], 2);
        let fps = db.fingerprint_document(&Document::new("q", docs[2].text.clone()));
        let q = db.searcher().query("q", &fps).unwrap();
        assert_eq!(q.duplicate_of.is_some(), found, "{q:?}");
    }
}
