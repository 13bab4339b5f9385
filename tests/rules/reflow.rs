//! Copies whose line breaks moved (paragraphs joined, text re-wrapped) are near-duplicates:
//! found by a default store, mostly missed by one created with `--reflow false` (the rules of
//! the first stores), which is what makes this test able to fail.

use crate::common;

use fpdb::eval::edits;
use fpdb::{Fpdb, OnExisting, Settings};

/// Copies found of the sample's longer documents (Chinese ones only, and no simhash, with
/// `nshash_only`).
fn found(reflow: bool, nshash_only: bool) -> (usize, usize) {
    let docs: Vec<_> = common::sample_docs()
        .into_iter()
        .filter(|d| !d.id.contains('#') && d.text.chars().count() > 300)
        .filter(|d| !nshash_only || edits::has_chinese(&d.text))
        .collect();
    let mut db = Fpdb::builder()
        .settings(Settings {
            reflow: Some(reflow),
            simhash: Some(!nshash_only),
            ..Settings::default()
        })
        .open_in_memory()
        .unwrap();
    let mut ids = Vec::new();
    for d in &docs {
        match db.ingest_document(d, OnExisting::Skip).unwrap() {
            fpdb::IngestResult::Added { outcome, .. } => ids.push(outcome.similar_id),
            other => panic!("{other:?}"),
        }
    }
    let (mut hits, mut total) = (0, 0);
    for (d, sid) in docs.iter().zip(&ids) {
        for copy in [edits::join_lines(&d.text), edits::rewrap_default(&d.text)] {
            total += 1;
            // Clusters may have merged since: compare current cluster ids.
            let want = sid.map(|s| db.searcher().resolve(s).unwrap());
            if db.searcher().query_text(&copy).unwrap().similar_id == want {
                hits += 1;
            }
        }
    }
    (hits, total)
}

#[test]
fn re_wrapped_copies_are_found() {
    let (hits, total) = found(true, false);
    assert!(total >= 80, "{total} copies");
    assert!(hits * 100 >= total * 95, "{hits} of {total} found");
    let (old, _) = found(false, false);
    eprintln!("reflow: {hits} of {total} found; without: {old}");
    assert!(old * 2 < total, "without reflow {old} of {total} found");
}

/// In Chinese text a line break between two characters is a soft wrap: with `reflow`, nshash
/// alone (no simhash candidates) still finds re-wrapped copies.
#[test]
fn nshash_alone_finds_re_wrapped_chinese() {
    let (hits, total) = found(true, true);
    assert!(total >= 40, "{total} copies");
    assert!(hits * 100 >= total * 95, "{hits} of {total} found");
    let (old, _) = found(false, true);
    eprintln!("nshash alone: {hits} of {total} found; without reflow: {old}");
    assert!(
        old * 10 < total * 7,
        "without reflow {old} of {total} found"
    );
}
