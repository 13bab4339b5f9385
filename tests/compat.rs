//! A store written by format 2 (tests/fixtures/store-v2: the first 30 sample documents) must
//! keep opening with every later version, answer the same similar_ids, and pass verify. When
//! the format changes on purpose, bump FORMAT_VERSION and add a new fixture next to this one.

mod common;

use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn format_2_fixture_opens_and_answers_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("store");
    copy_dir(&root.join("store-v2"), &db_path);
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .open(&db_path)
        .unwrap();
    db.verify().unwrap();
    let mut got = Vec::new();
    db.export(&mut |o| {
        got.push(serde_json::to_value(&o).unwrap());
        Ok(())
    })
    .unwrap();
    let want =
        common::json_lines(&std::fs::read_to_string(root.join("store-v2.export.jsonl")).unwrap());
    assert_eq!(got, want);
    // A stored text is still found, through the stored fingerprints.
    let first = common::sample_docs()
        .into_iter()
        .find(|d| d.id == want[0]["id"])
        .unwrap();
    let q = db.query_text(&first.text).unwrap();
    assert_eq!(q.similar_id, want[0]["similar_id"].as_u64());
    // Fingerprint rules are frozen too: every stored document's text, fingerprinted by this
    // version, gives the simhash the store holds for it (distance 0 to its own id).
    let stored: std::collections::HashSet<String> = want
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    let mut checked = 0;
    for d in common::sample_docs() {
        if !stored.contains(&d.id) {
            continue;
        }
        let Some(sh) = db.fingerprint(&d.text).simhash else {
            continue;
        };
        let near = db.simhash_neighbors(sh).unwrap();
        assert!(
            near.iter().any(|(id, dist)| *id == d.id && *dist == 0),
            "{}: simhash {sh:016x} not stored for it: {near:?}",
            d.id
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} documents checked");
}
