//! A sentence held by two clusters (`other_holders`): an article's opening is the first
//! sentence of a page quoting it with text of its own (the older holder, which does not
//! verify against the article) and of an excerpt of the article (the later holder, which
//! does). The article joins the excerpt whatever the order the three came in, one at a time
//! and in one batch; without the rule, an article that comes after both meets only the older
//! holder and stays apart.

use crate::common;

use std::collections::BTreeMap;

use common::Rng;
use fpdb::{Document, Fpdb, OnExisting, Settings};

/// Ingest `docs` in order into a fresh in-memory store, one at a time or as one batch; their
/// clusters by id.
fn clusters(settings: Settings, docs: &[&Document], batch: bool) -> BTreeMap<String, u64> {
    let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
    if batch {
        let with: Vec<_> = docs
            .iter()
            .map(|&d| (d, db.fingerprint_document(d)))
            .collect();
        let out = db.ingest_batch(with, OnExisting::Skip);
        assert!(out.error.is_none(), "{:?}", out.error);
    } else {
        for d in docs {
            db.ingest_document(d, OnExisting::Skip).unwrap();
        }
    }
    common::export_outcomes(&db)
        .into_iter()
        .map(|o| (o.id, o.similar_id.unwrap()))
        .collect()
}

/// The six orders of three documents.
const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

#[test]
fn an_article_meets_every_cluster_holding_its_opening() {
    let mut rng = Rng(0x401d_e125_0000_0001);
    let mut apart_without = 0;
    for round in 0..6 {
        // One sentence a line, the article's second and third sentences its shortest (so
        // that only its opening is among the sentences it is keyed by that the excerpt holds).
        let mut body: Vec<String> = (0..12)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        body[1..].sort_by_key(|s| s.chars().count());
        let article = Document::new("article", body.join("\n"));
        let excerpt = Document::new("excerpt", body[..3].join("\n"));
        let mut quoting = vec![body[0].clone()];
        quoting.extend((0..6).map(|_| common::synthetic_doc(&mut rng, 1)));
        let quoting = Document::new("quoting", quoting.join("\n"));
        let three = [&quoting, &excerpt, &article];
        for order in ORDERS {
            let docs: Vec<&Document> = order.iter().map(|&i| three[i]).collect();
            for batch in [false, true] {
                let c = clusters(Settings::default(), &docs, batch);
                assert_eq!(
                    c["article"], c["excerpt"],
                    "round {round}, order {order:?}, batch {batch}: {c:?}"
                );
                assert_ne!(
                    c["article"], c["quoting"],
                    "round {round}, order {order:?}, batch {batch}: {c:?}"
                );
                let without = Settings {
                    other_holders: Some(false),
                    ..Default::default()
                };
                let c = clusters(without, &docs, batch);
                apart_without += usize::from(c["article"] != c["excerpt"]);
            }
        }
    }
    assert!(apart_without > 0, "the rule changed nothing here");
}
