//! Frozen stores must keep opening with every later version, answer the same similar_ids, and
//! pass verify; fingerprints made by this version must equal the stored ones.
//!
//! - `tests/fixtures/store-v2`: format 2 with the first stores' rules (no `reflow`).
//! - `tests/fixtures/store-v2-reflow`: format 2 with the defaults since: `reflow`, `t2s`.
//!
//! - `tests/fixtures/store-v3` … `store-v20`: one store of every format this version writes
//!   (the first 20 sample documents, each with the settings whose oldest format it is), made
//!   by `scripts/freeze_stores.sh`.
//!
//! Over 600 lines: one case per store format (19 of them), each with the settings that keep a
//! store at that format, read top to bottom.
//!
//! The format-2 ones hold the first 30 sample documents. When the format changes on purpose,
//! bump `FormatVersion::CURRENT` and run `scripts/freeze_stores.sh` (it adds the new format's store and
//! leaves the frozen ones as they are); the test below fails until it is there.

use crate::common;

use std::collections::HashSet;
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Open a copy of fixture `name`, check it, and return it with its stored export.
fn check_fixture(name: &str, dir: &Path) -> (fpdb::Fpdb, Vec<serde_json::Value>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let db_path = dir.join(name);
    copy_dir(&root.join(name), &db_path);
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .open(&db_path)
        .unwrap();
    db.searcher().verify().unwrap();
    let mut got = Vec::new();
    db.searcher()
        .export(&mut |o| {
            got.push(serde_json::to_value(&o).unwrap());
            Ok(())
        })
        .unwrap();
    let want = common::json_lines(
        &std::fs::read_to_string(root.join(format!("{name}.export.jsonl"))).unwrap(),
    );
    assert_eq!(got, want, "{name}");
    // A stored text is still found, through the stored fingerprints.
    let first = common::sample_docs()
        .into_iter()
        .find(|d| d.id == want[0]["id"])
        .unwrap();
    let q = db.searcher().query_text(&first.text).unwrap();
    assert_eq!(q.similar_id, want[0]["similar_id"].as_u64(), "{name}");
    // Fingerprint rules are frozen too: every stored document's text, fingerprinted by this
    // version, gives the simhash the store holds for it (distance 0 to its own id); in a
    // store without simhash, postings that find it with a score of 1.
    let stored: HashSet<String> = want
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    let mut checked = 0;
    for d in common::sample_docs() {
        if !stored.contains(&d.id) {
            continue;
        }
        if !db.options().simhash {
            // A store without simhash: its stored texts are found by their own postings.
            let q = db.searcher().query_text(&d.text).unwrap();
            assert!(
                q.matches.iter().any(|m| m.id == d.id && m.score > 0.99),
                "{name}: {}: not found by its own postings: {q:?}",
                d.id
            );
            checked += 1;
            continue;
        }
        let Some(sh) = db.fingerprint(&d.text).simhash else {
            continue;
        };
        let near = db.searcher().simhash_neighbors(sh).unwrap();
        assert!(
            near.iter().any(|(id, dist)| *id == d.id && *dist == 0),
            "{name}: {}: simhash {sh:016x} not stored for it: {near:?}",
            d.id
        );
        checked += 1;
    }
    assert!(
        checked * 5 >= want.len() * 4,
        "{name}: only {checked} of {} documents checked",
        want.len()
    );
    (db, want)
}

#[test]
fn format_2_fixture_opens_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = check_fixture("store-v2", dir.path());
    assert!(
        !db.options().reflow,
        "stores made before `reflow` keep its absence"
    );
}

#[test]
fn format_2_reflow_fixture_opens_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (db, want) = check_fixture("store-v2-reflow", dir.path());
    assert!(db.options().reflow && db.options().t2s);
    // Re-wrapped copies of stored long documents are verified on the stored shingle
    // sketches, so those (and the 4-gram hash) are frozen too.
    let sid: std::collections::HashMap<String, u64> = want
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap().to_string(),
                o["similar_id"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut found = 0;
    let mut tried = 0;
    for d in common::sample_docs() {
        let Some(s) = sid.get(&d.id) else { continue };
        if d.id.contains('#') || d.text.chars().count() < 300 {
            continue;
        }
        let copy = fpdb::eval::edits::rewrap_default(&d.text);
        tried += 1;
        found += usize::from(db.searcher().query_text(&copy).unwrap().similar_id == Some(*s));
    }
    assert!(tried >= 10, "{tried}");
    assert_eq!(found, tried);
}

/// A writable open upgrades a format 2 store in place: same export, verify passes, lookups
/// answer the same, and new documents (and replaces) work on it.
#[test]
fn format_2_fixtures_upgrade_on_a_writable_open() {
    for name in ["store-v2", "store-v2-reflow"] {
        let dir = tempfile::tempdir().unwrap();
        let (ro, want) = check_fixture(name, dir.path());
        drop(ro);
        let path = dir.path().join(name);
        let mut db = fpdb::Fpdb::open(&path).unwrap();
        db.searcher().verify().unwrap();
        let mut got = Vec::new();
        db.searcher()
            .export(&mut |o| {
                got.push(serde_json::to_value(&o).unwrap());
                Ok(())
            })
            .unwrap();
        assert_eq!(got, want, "{name} after the upgrade");
        let docs = common::sample_docs();
        let stored: HashSet<&str> = want.iter().map(|o| o["id"].as_str().unwrap()).collect();
        let first = docs.iter().find(|d| d.id == want[0]["id"]).unwrap();
        let q = db.searcher().query_text(&first.text).unwrap();
        assert_eq!(q.similar_id, want[0]["similar_id"].as_u64(), "{name}");
        // Replace the first document with its own text, and add the rest of the sample.
        db.ingest_document(first, fpdb::OnExisting::Replace)
            .unwrap();
        for d in docs.iter().filter(|d| !stored.contains(d.id.as_str())) {
            db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
        }
        db.sync().unwrap();
        db.searcher().verify().unwrap();
        drop(db);
        let db = fpdb::Fpdb::builder().read_only(true).open(&path).unwrap();
        db.searcher().verify().unwrap();
        assert_eq!(db.searcher().stats().documents as usize, docs.len());
    }
}

fn format_of(path: &Path) -> Vec<u8> {
    use fpdb::Store;
    let s = fpdb::RocksStore::open_read_only(path).unwrap();
    s.get(fpdb::store::Cf::Meta, fpdb::store::schema::meta::FORMAT)
        .unwrap()
        .unwrap()
}

/// Create the store at `path` with `settings` and ingest `docs` into it.
fn create_with(path: &Path, settings: fpdb::Settings, docs: &[fpdb::Document]) {
    let mut db = fpdb::Fpdb::builder()
        .settings(settings)
        .create(true)
        .open(path)
        .unwrap();
    for doc in docs {
        db.ingest_document(doc, fpdb::OnExisting::Skip).unwrap();
    }
}

/// A store created at `path` with `settings` is marked `format`, keeps it through a write by
/// this version, and passes `check` after that write.
fn stays(
    path: &std::path::Path,
    settings: fpdb::Settings,
    docs: &[fpdb::Document],
    format: fpdb::FormatVersion,
    check: impl Fn(&fpdb::Fpdb),
) {
    use fpdb::store::schema::format_value_of;
    create_with(path, settings, &docs[..1]);
    assert_eq!(format_of(path), format_value_of(format));
    let mut db = fpdb::Fpdb::open(path).unwrap();
    db.ingest_document(&docs[1], fpdb::OnExisting::Skip)
        .unwrap();
    check(&db);
    drop(db);
    assert_eq!(format_of(path), format_value_of(format));
}

/// New stores are format 20; a store asked for the format 3 rules stays format 3 through
/// writes (older binaries keep opening it) and keeps those rules; likewise format 4 (the
/// format 4 defaults: tight clusters without the strong link by resemblance), format 5 (the
/// format 5 defaults: no Taiwan-vocabulary fold), format 6 (no link shape: version 3
/// document records, without the sentences' order), format 7 (no template figures:
/// version 4 document records, without figures), format 8 (no originals), format 9 (no
/// digests), format 10 (no teasers), format 11 (no reordered lines), format 12 (no
/// furniture), format 13 (no teasers on pages, no sites' templates), format 14 (no
/// furniture learned from a batch's pages together), format 15 (pages of one host
/// compared whole), format 16 (a simhash for every document with a term), format 17 (no site
/// knowledge), format 18 (no excerpts, no headings, no excerpt copies, no later templates)
/// format 19 (no late keys: no version 10 document records). A rule that changes no layout
/// (`band_holders`) leaves the format as it is.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one case per format, in order: a table read top to bottom"
)]
fn stores_are_marked_with_the_oldest_format_that_holds_their_settings() {
    use fpdb::store::schema::{format_value, format_value_of, FormatVersion};
    let d = tempfile::tempdir().unwrap();
    let docs = common::sample_docs();
    let new = d.path().join("new");
    let mut db = fpdb::Fpdb::open(&new).unwrap();
    db.ingest_document(&docs[0], fpdb::OnExisting::Skip)
        .unwrap();
    drop(db);
    assert_eq!(format_of(&new), format_value());
    let old = d.path().join("old");
    let legacy = fpdb::Settings {
        minhash_bands: Some(0),
        verify_resemblance_pct: Some(90),
        tight_clusters: Some(false),
        tw_phrases: Some(false),
        template_figures: Some(false),
        originals: Some(false),
        digests: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    create_with(&old, legacy, &docs[..20]);
    assert_eq!(format_of(&old), format_value_of(FormatVersion::PLAIN));
    // Reopened with no settings: its own rules, still format 3.
    let mut db = fpdb::Fpdb::open(&old).unwrap();
    assert_eq!(db.options().minhash_bands, 0);
    assert!(!db.options().tight_clusters);
    db.ingest_document(&docs[20], fpdb::OnExisting::Skip)
        .unwrap();
    drop(db);
    assert_eq!(format_of(&old), format_value_of(FormatVersion::PLAIN));
    let four = d.path().join("four");
    let rules4 = fpdb::Settings {
        strong_resemblance_pct: Some(0),
        tw_phrases: Some(false),
        link_shape: Some(false),
        template_figures: Some(false),
        originals: Some(false),
        digests: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    create_with(&four, rules4, &docs[..1]);
    assert_eq!(format_of(&four), format_value_of(FormatVersion(4)));
    let db = fpdb::Fpdb::open(&four).unwrap();
    assert_eq!(db.options().strong_resemblance_pct, 0);
    assert!(db.options().tight_clusters);
    drop(db);
    assert_eq!(format_of(&four), format_value_of(FormatVersion(4)));
    type Check<'a> = Box<dyn Fn(&fpdb::Fpdb) + 'a>;
    let later: [(&str, Option<bool>, FormatVersion, Check); 2] = [
        (
            "five",
            Some(false),
            FormatVersion(5),
            Box::new(|db| {
                assert!(!db.options().tw_phrases);
                assert_eq!(db.options().strong_resemblance_pct, 78);
            }),
        ),
        (
            "six",
            None,
            FormatVersion(6),
            Box::new(|db| {
                assert!(db.options().tw_phrases);
                // No sentence order kept (version 3 records, as format 6 binaries write).
                let rec = db.searcher().stored_document(&docs[1].id).unwrap().unwrap();
                assert!(rec.fingerprints.order.is_empty());
            }),
        ),
    ];
    for (name, tw_phrases, format, check) in later {
        let settings = fpdb::Settings {
            tw_phrases,
            link_shape: Some(false),
            template_figures: Some(false),
            originals: Some(false),
            digests: Some(false),
            teasers: Some(false),
            reordered_lines: Some(false),
            furniture: Some(false),
            page_teasers: Some(false),
            site_templates: Some(false),
            batch_furniture: Some(false),
            same_site_templates: Some(false),
            simhash_min_terms: Some(1),
            site_knowledge: Some(false),
            excerpts: Some(false),
            headings: Some(false),
            excerpt_copies: Some(false),
            later_templates: Some(false),
            other_holders: Some(false),
            cut_excerpts: Some(false),
            first_links: Some(false),
            host_lines_join_one: Some(false),
            late_links: Some(false),
            left_out_figures: Some(false),
            heading_figures: Some(false),
            late_keys: Some(false),
            band_holders: Some(false),
            ..Default::default()
        };
        stays(&d.path().join(name), settings, &docs, format, |db| {
            assert!(!db.options().link_shape);
            check(db);
        });
    }
    let settings = fpdb::Settings {
        template_figures: Some(false),
        originals: Some(false),
        digests: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("seven"),
        settings,
        &docs,
        FormatVersion(7),
        |db| {
            assert!(db.options().link_shape && !db.options().template_figures);
            // No figures kept (version 4 records, as format 7 binaries write).
            let rec = db.searcher().stored_document(&docs[1].id).unwrap().unwrap();
            assert!(!rec.fingerprints.order.is_empty());
            assert!(rec.fingerprints.figures.is_empty());
        },
    );
    let settings = fpdb::Settings {
        originals: Some(false),
        digests: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("eight"),
        settings,
        &docs,
        FormatVersion(8),
        |db| {
            assert!(db.options().template_figures && !db.options().originals);
        },
    );
    let settings = fpdb::Settings {
        digests: Some(false),
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("nine"),
        settings,
        &docs,
        FormatVersion(9),
        |db| {
            assert!(db.options().originals && !db.options().digests);
        },
    );
    let settings = fpdb::Settings {
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("twenty"),
        settings,
        &docs,
        FormatVersion(20),
        |db| {
            assert!(db.options().late_keys && !db.options().band_holders);
        },
    );
    let settings = fpdb::Settings {
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("nineteen"),
        settings,
        &docs,
        FormatVersion(19),
        |db| {
            assert!(db.options().excerpts && db.options().late_links && !db.options().late_keys);
        },
    );
    let settings = fpdb::Settings {
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("eighteen"),
        settings,
        &docs,
        FormatVersion(18),
        |db| {
            assert!(
                !db.options().excerpts
                    && !db.options().headings
                    && !db.options().excerpt_copies
                    && !db.options().later_templates
                    && db.options().site_knowledge
            );
        },
    );
    let settings = fpdb::Settings {
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        // The floor of terms is simhash's: a store without simhash reads it as 1.
        simhash: Some(true),
        ..Default::default()
    };
    stays(
        &d.path().join("seventeen"),
        settings,
        &docs,
        FormatVersion(17),
        |db| {
            assert!(!db.options().site_knowledge);
            assert_eq!(db.options().simhash_min_terms, 8);
        },
    );
    let settings = fpdb::Settings {
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("sixteen"),
        settings,
        &docs,
        FormatVersion(16),
        |db| {
            assert!(db.options().same_site_templates);
            assert_eq!(db.options().simhash_min_terms, 1);
        },
    );
    let settings = fpdb::Settings {
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("fifteen"),
        settings,
        &docs,
        FormatVersion(15),
        |db| {
            assert!(db.options().batch_furniture && !db.options().same_site_templates);
        },
    );
    let settings = fpdb::Settings {
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("fourteen"),
        settings,
        &docs,
        FormatVersion(14),
        |db| {
            assert!(db.options().site_templates && !db.options().batch_furniture);
        },
    );
    let settings = fpdb::Settings {
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("thirteen"),
        settings,
        &docs,
        FormatVersion(13),
        |db| {
            assert!(db.options().furniture && !db.options().page_teasers);
            assert!(!db.options().site_templates);
        },
    );
    let settings = fpdb::Settings {
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("twelve"),
        settings,
        &docs,
        FormatVersion(12),
        |db| {
            assert!(db.options().reordered_lines && !db.options().furniture);
        },
    );
    let settings = fpdb::Settings {
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("eleven"),
        settings,
        &docs,
        FormatVersion(11),
        |db| {
            assert!(db.options().teasers && !db.options().reordered_lines);
        },
    );
    let settings = fpdb::Settings {
        teasers: Some(false),
        reordered_lines: Some(false),
        furniture: Some(false),
        page_teasers: Some(false),
        site_templates: Some(false),
        batch_furniture: Some(false),
        same_site_templates: Some(false),
        simhash_min_terms: Some(1),
        site_knowledge: Some(false),
        excerpts: Some(false),
        headings: Some(false),
        excerpt_copies: Some(false),
        later_templates: Some(false),
        other_holders: Some(false),
        cut_excerpts: Some(false),
        first_links: Some(false),
        host_lines_join_one: Some(false),
        late_links: Some(false),
        left_out_figures: Some(false),
        heading_figures: Some(false),
        late_keys: Some(false),
        band_holders: Some(false),
        ..Default::default()
    };
    stays(
        &d.path().join("ten"),
        settings,
        &docs,
        FormatVersion(10),
        |db| {
            assert!(db.options().digests && !db.options().teasers);
        },
    );
    let mut db = fpdb::Fpdb::open(&new).unwrap();
    assert!(db.options().originals && db.options().digests && db.options().teasers);
    assert!(db.options().reordered_lines && db.options().furniture && db.options().page_teasers);
    assert!(db.options().site_templates && db.options().batch_furniture);
    assert!(db.options().same_site_templates);
    // No simhash in new stores, so no floor of its terms (read as 1).
    assert!(!db.options().simhash && db.options().band_holders);
    assert_eq!(db.options().simhash_min_terms, 1);
    assert!(db.options().site_knowledge);
    let rec = db.searcher().stored_document(&docs[0].id).unwrap().unwrap();
    assert_eq!(rec.fingerprints.order.len(), rec.fingerprints.sketch.len());
    assert!(!rec.fingerprints.order.is_empty());
    // A document with figures keeps them (version 5 records).
    let report = fpdb::Document::new("report", "Rates rose to 1.52% on March 17 from 1.48%.");
    db.ingest_document(&report, fpdb::OnExisting::Skip).unwrap();
    let rec = db.searcher().stored_document("report").unwrap().unwrap();
    assert_eq!(rec.fingerprints.figures.len(), 3);
}

/// A store written by a newer binary (a format this one does not know) is refused with both
/// formats named, by the library and by every command (exit 2), and left as it was.
#[test]
fn a_store_from_a_newer_format_is_refused_untouched() {
    use fpdb::store::schema::{format_value_of, meta};
    use fpdb::Store;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("fpdb.db");
    drop(fpdb::Fpdb::open(&p).unwrap());
    {
        let s = fpdb::RocksStore::open(&p, false).unwrap();
        let mut b = fpdb::store::Batch::new();
        b.put(
            fpdb::store::Cf::Meta,
            meta::FORMAT,
            format_value_of(fpdb::FormatVersion(99)),
        );
        s.write(b).unwrap();
        s.sync().unwrap();
    }
    match fpdb::Fpdb::open(&p) {
        Err(fpdb::Error::IncompatibleFormat { found, expected }) => {
            assert!(found.contains("format 99"), "{found}");
            assert!(expected.contains("format 20"), "{expected}");
        }
        other => panic!("{other:?}"),
    }
    for args in [&["stats"][..], &["ingest", "in.jsonl"][..], &["verify"][..]] {
        std::fs::write(
            d.path().join("in.jsonl"),
            "{\"id\":\"a\",\"text\":\"hello there\"}\n",
        )
        .unwrap();
        let o = common::run(d.path(), args);
        assert_eq!(common::code(&o), 2, "{args:?}");
        assert!(
            common::stderr(&o).contains("format 99"),
            "{}",
            common::stderr(&o)
        );
    }
    assert_eq!(format_of(&p), format_value_of(fpdb::FormatVersion(99)));
}

/// Every format from the oldest this version opens to the current has a frozen store: each
/// opens read-only with its own marker, verifies, exports as frozen and finds its stored texts
/// (`check_fixture`); written to by this version, it keeps its format and verifies.
#[test]
fn a_frozen_store_of_every_format_opens_verifies_and_exports_the_same() {
    use fpdb::store::schema::{format_value_of, FormatVersion};
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let docs = common::sample_docs();
    for v in (FormatVersion::PLAIN.0..=FormatVersion::CURRENT.0).map(FormatVersion) {
        let name = format!("store-v{v}");
        assert!(
            root.join(&name).is_dir(),
            "no frozen store of format {v}: run scripts/freeze_stores.sh"
        );
        let (db, want) = check_fixture(&name, dir.path());
        assert_eq!(want.len(), 20, "{name}");
        drop(db);
        let path = dir.path().join(&name);
        assert_eq!(format_of(&path), format_value_of(v), "{name}");
        let mut db = fpdb::Fpdb::open(&path).unwrap();
        db.ingest_document(&docs[25], fpdb::OnExisting::Skip)
            .unwrap();
        db.searcher().verify().unwrap();
        drop(db);
        assert_eq!(format_of(&path), format_value_of(v), "{name} after a write");
    }
}
