//! A sentence held by two clusters (`other_holders`): an article's opening is the first
//! sentence of a page quoting it with text of its own (the older holder, which does not
//! verify against the article) and of an excerpt of the article (the later holder, which
//! does). The article's page joins the excerpt whatever the order the three came in, one at
//! a time, in one batch and after a store holding the first; without the rule, an article that
//! comes after both meets only the
//! older holder and stays apart. Texts without URLs keep the oldest holder only.

use crate::common;

use std::collections::BTreeMap;

use common::{Rng, ORDERS};
use fpdb::{Document, Fpdb, OnExisting, Settings};

/// How a test's documents are ingested: one at a time, in one batch, or the first alone and
/// the rest in one batch (the store's holders, then the batch's).
#[derive(Debug, Clone, Copy)]
enum Mode {
    OneAtATime,
    OneBatch,
    FirstThenBatch,
}

/// Ingest `docs` in order into a fresh in-memory store as `mode` says; their clusters by id.
fn clusters(settings: Settings, docs: &[&Document], mode: Mode) -> BTreeMap<String, u64> {
    let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
    let alone = match mode {
        Mode::OneAtATime => docs.len(),
        Mode::OneBatch => 0,
        Mode::FirstThenBatch => 1,
    };
    for d in &docs[..alone] {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    if alone < docs.len() {
        let with: Vec<_> = docs[alone..]
            .iter()
            .map(|&d| (d, db.fingerprint_document(d)))
            .collect();
        let out = db.ingest_batch(with, OnExisting::Skip);
        assert!(out.error.is_none(), "{:?}", out.error);
    }
    common::clusters_by_id(&db)
}

/// The clusters of `pages` with the rule on and off (`mode`; `with` and `without`: the
/// settings it is on and off in), after asserting that the same texts without URLs (`plain`)
/// cluster alike either way: texts read the oldest holder only.
fn on_and_off(
    plain: &[&Document],
    pages: &[&Document],
    (mode, with, without): (Mode, &Settings, &Settings),
    at: &str,
) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    assert_eq!(
        clusters(with.clone(), plain, mode),
        clusters(without.clone(), plain, mode),
        "texts: {at}"
    );
    (
        clusters(with.clone(), pages, mode),
        clusters(without.clone(), pages, mode),
    )
}

/// `texts` as pages of one site each (its id's), in round `round`.
fn as_pages<const N: usize>(texts: &[Document; N], round: usize) -> [Document; N] {
    texts.clone().map(|d| Document {
        url: Some(format!("https://{}.example/{round}", d.id)),
        ..d
    })
}

#[test]
fn an_article_meets_every_cluster_holding_its_opening() {
    let mut rng = Rng(0x401d_e125_0000_0001);
    let mut apart_without = 0;
    for round in 0..6 {
        // The article's second and third sentences its shortest, on its second line with a
        // longer one: of the sentences it is keyed by (its longest, its opening, the longest
        // of each of a page's first lines), the excerpt holds only its opening.
        let mut body: Vec<String> = (0..12)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        body[1..].sort_by_key(|s| s.chars().count());
        let mut lines = vec![body[0].clone(), body[1..4].concat()];
        lines.extend(body[4..].iter().cloned());
        let mut quoting = vec![body[0].clone()];
        quoting.extend((0..6).map(|_| common::synthetic_doc(&mut rng, 1)));
        let texts = [
            Document::new("quoting", quoting.join("\n")),
            Document::new("excerpt", body[..3].join("\n")),
            Document::new("article", lines.join("\n")),
        ];
        // The same texts as pages of three sites.
        let pages = as_pages(&texts, round);
        for order in ORDERS {
            let docs: Vec<&Document> = order.iter().map(|&i| &pages[i]).collect();
            let plain: Vec<&Document> = order.iter().map(|&i| &texts[i]).collect();
            for mode in [Mode::OneAtATime, Mode::OneBatch, Mode::FirstThenBatch] {
                let at = format!("round {round}, order {order:?}, mode {mode:?}");
                let without = Settings {
                    other_holders: Some(false),
                    ..Default::default()
                };
                let with = Settings::default();
                let (c, off) = on_and_off(&plain, &docs, (mode, &with, &without), &at);
                assert_eq!(c["article"], c["excerpt"], "{at}: {c:?}");
                assert_ne!(c["article"], c["quoting"], "{at}: {c:?}");
                apart_without += usize::from(off["article"] != off["excerpt"]);
            }
        }
    }
    assert!(apart_without > 0, "the rule changed nothing here");
}

/// A sentence's later holder in its oldest holder's own cluster (`other_holders`): the
/// cluster of a page holding the article's five longest sentences beside lines of its own
/// (the older holder, which does not verify against the article's copy) and of a later page
/// holding them as well with one more sentence of the article (which does). Every sentence the
/// copy is keyed by is held by both: the copy is compared with the later one too, and joins
/// the cluster in every mode. Without the rule it meets only the older one and stays apart.
/// Texts without URLs keep the oldest holder only. (Both with `band_holders` off: through
/// the copy's MinHash bands, which texts read past the oldest too, it meets the later one
/// either way.)
#[test]
fn a_copy_meets_a_later_holder_in_the_cluster_of_the_oldest() {
    let mut rng = Rng(0x401d_e125_0000_0002);
    let mut apart_without = 0;
    for round in 0..6 {
        let mut s: Vec<String> = (0..10)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        s.sort_by_key(|x| std::cmp::Reverse(x.chars().count()));
        // The five longest: what each of the three is keyed by; the rest shorter.
        let (keys, own, more, copy_own) = (
            &s[..5],
            &s[5..8],
            &s[8..9],
            [
                common::synthetic_doc(&mut rng, 1),
                common::synthetic_doc(&mut rng, 1),
                common::synthetic_doc(&mut rng, 1),
            ],
        );
        let copy_own: Vec<String> = copy_own
            .into_iter()
            .map(|x| x.chars().take(12).collect::<String>() + "。")
            .collect();
        let older = [keys, own].concat();
        let later = [keys, own, more].concat();
        let copy = [keys, more, &copy_own[..]].concat();
        let texts = [
            Document::new("older", older.join("\n")),
            Document::new("later", later.join("\n")),
            Document::new("copy", copy.join("\n")),
        ];
        let pages = as_pages(&texts, round);
        let docs: Vec<&Document> = pages.iter().collect();
        let plain: Vec<&Document> = texts.iter().collect();
        for mode in [Mode::OneAtATime, Mode::OneBatch, Mode::FirstThenBatch] {
            let at = format!("round {round}, mode {mode:?}");
            let with = Settings {
                band_holders: Some(false),
                ..Default::default()
            };
            let without = Settings {
                other_holders: Some(false),
                ..with.clone()
            };
            let (c, off) = on_and_off(&plain, &docs, (mode, &with, &without), &at);
            assert_eq!(c["older"], c["later"], "{at}: {c:?}");
            assert_eq!(c["copy"], c["later"], "{at}: {c:?}");
            apart_without += usize::from(off["copy"] != off["later"]);
        }
    }
    assert!(apart_without > 0, "the rule changed nothing here");
}
