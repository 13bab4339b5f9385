//! Late keys (`late_keys`): a page whose first lines and longest sentences are its site's
//! template, stored before the template was known, is posted under none of its article's
//! sentences. Once three other pages of its site make the template furniture, the late links
//! post it under its other sentences, so a copy of its article that comes later finds it;
//! an article stored before it is found by the late lookup, which reads them too. Removing
//! the page withdraws them, and the store verifies.

use crate::common;
use crate::site_knowledge::page;

use common::Rng;
use fpdb::{Document, Settings};

/// A sentence of 24 characters or more.
fn long(rng: &mut Rng) -> String {
    let a = common::synthetic_doc(rng, 1);
    format!(
        "{}{}",
        a.trim_end_matches('。'),
        common::synthetic_doc(rng, 1)
    )
}

/// A sentence of 14 characters.
fn short(rng: &mut Rng) -> String {
    let s: String = common::synthetic_doc(rng, 1).chars().take(14).collect();
    format!("{s}。")
}

/// The page (ten lines of three long sentences each, its template, then the first three of
/// the article's six short sentences), its site's other three pages, and the article
/// elsewhere.
fn pages(rng: &mut Rng) -> (Document, Vec<Document>, Document) {
    let template: Vec<String> = (0..10)
        .map(|_| (0..3).map(|_| long(rng)).collect::<String>())
        .collect();
    let body: Vec<String> = (0..6).map(|_| short(rng)).collect();
    let p = page(
        "p",
        "https://other.example/p",
        &[template.clone(), body[..3].to_vec()].concat().join("\n"),
    );
    let site = (0..3)
        .map(|i| {
            let own: Vec<String> = (0..8).map(|_| common::synthetic_doc(rng, 6)).collect();
            page(
                &format!("s{i}"),
                &format!("https://other.example/s{i}"),
                &[template.clone(), own].concat().join("\n"),
            )
        })
        .collect();
    let article = page("article", "https://news.example/story", &body.join("\n"));
    (p, site, article)
}

fn together(settings: &Settings, docs: &[&Document]) -> bool {
    let c = common::clusters_in_order(settings.clone(), docs);
    common::assert_site_pages_apart(&c, "article", "");
    c["p"] == c["article"]
}

#[test]
fn a_page_keyed_by_its_template_is_found_once_the_template_is_furniture() {
    let mut rng = Rng(0x1a7e_6e75_0000_0001);
    let off = Settings {
        late_keys: Some(false),
        ..Default::default()
    };
    let mut found_off = 0usize;
    for round in 0..6 {
        let (p, site, article) = pages(&mut rng);
        let later: Vec<&Document> = [&p].into_iter().chain(&site).chain([&article]).collect();
        let earlier: Vec<&Document> = [&article, &p].into_iter().chain(&site).collect();
        for docs in [&later, &earlier] {
            assert!(together(&Settings::default(), docs), "round {round}");
            found_off += usize::from(together(&off, docs));
        }
    }
    // Without the rule nothing finds it: its keys are all its template's.
    assert_eq!(found_off, 0, "found without the rule");
}

/// Removing the page withdraws the postings written late: the store verifies, and the
/// article's copy no longer finds it.
#[test]
fn a_page_posted_late_is_removed_whole() {
    let mut rng = Rng(0x1a7e_6e75_0000_0002);
    let (p, site, article) = pages(&mut rng);
    let mut db = fpdb::Fpdb::builder().open_in_memory().unwrap();
    for d in [&p].into_iter().chain(&site) {
        db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
    }
    assert!(db.maintenance().remove("p").unwrap());
    // Every posting is a stored record's (a posting left behind fails here).
    db.searcher().verify().unwrap();
    db.ingest_document(&article, fpdb::OnExisting::Skip)
        .unwrap();
    let c = common::clusters_by_id(&db);
    assert!(!c.contains_key("p"));
    assert!(["s0", "s1", "s2"].iter().all(|s| c[*s] != c["article"]));
}

/// A store on disk with its presence filter saved: writing a page's late keys removes the
/// saved filter at once (an open after a kill reads back into a saved filter only the
/// documents written after it, not an older page's new keys), a clean close saves it again,
/// and a later copy finds the page through the filter.
#[test]
fn late_keys_retire_the_saved_presence_filter_until_a_clean_close() {
    let mut rng = Rng(0x1a7e_6e75_0000_0003);
    let (p, site, article) = pages(&mut rng);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let saved = path.join(fpdb::store::PRESENCE_FILE);
    let open = || {
        fpdb::Fpdb::builder()
            .create(true)
            .presence_filters(true)
            .open(&path)
            .unwrap()
    };
    let mut db = open();
    db.ingest_document(&p, fpdb::OnExisting::Skip).unwrap();
    drop(db);
    assert!(saved.exists(), "a clean close saves the filter");
    let mut db = open();
    for d in &site {
        db.ingest_document(d, fpdb::OnExisting::Skip).unwrap();
    }
    assert!(
        !saved.exists(),
        "the page's late keys retired the saved filter"
    );
    drop(db);
    assert!(saved.exists(), "saved again at a clean close");
    let mut db = open();
    db.ingest_document(&article, fpdb::OnExisting::Skip)
        .unwrap();
    let c = common::clusters_by_id(&db);
    assert_eq!(c["p"], c["article"]);
}
