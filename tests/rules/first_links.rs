//! First links (`first_links`): under tight clusters, a document that verifies against a
//! member of a cluster (not as two overlapping windows) joins it when that member was linked
//! to the cluster's first document at its own ingest. In the other order the member comes
//! last, verifies against both first documents and merges the two clusters; with the rule the
//! three documents end in one cluster whichever order they came in. A window overlapping the
//! member stays apart, as it did.

use crate::common;

use std::collections::BTreeMap;

use common::Rng;
use fpdb::{Document, Settings};

use common::clusters_in_order as clusters;

/// The documents of `ids` as their clusters group them, in `docs`' order: `[[0, 1], [2]]`.
fn groups(settings: &Settings, docs: &[&Document]) -> Vec<Vec<String>> {
    let c = clusters(settings.clone(), docs);
    let mut by: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for d in docs {
        by.entry(c[&d.id]).or_default().push(d.id.clone());
    }
    let mut g: Vec<Vec<String>> = by
        .into_values()
        .map(|mut v| {
            v.sort();
            v
        })
        .collect();
    g.sort();
    g
}

/// Groups of ids as [`groups`] gives them (each sorted, in sorted order).
fn grouped(g: &[&[&str]]) -> Vec<Vec<String>> {
    g.iter()
        .map(|ids| ids.iter().map(ToString::to_string).collect())
        .collect()
}

#[test]
fn a_document_linked_through_a_member_of_the_first_joins_in_every_order() {
    let mut rng = Rng(0xf125_71e0_0000_0019);
    let off = Settings {
        first_links: Some(false),
        ..Default::default()
    };
    let on = Settings::default();
    for round in 0..6 {
        let s: Vec<String> = (0..10)
            .map(|_| common::synthetic_doc(&mut rng, 1))
            .collect();
        // Pages of three hosts: a sentence two clusters hold proposes a document of each
        // (`other_holders`), so the member meets both first documents whatever came first.
        let page = |id: &str, at: &[usize]| {
            let lines: Vec<&str> = at.iter().map(|&i| s[i].as_str()).collect();
            let mut d = Document::new(id, lines.join("\n"));
            d.url = Some(format!("https://{id}.example/story"));
            d
        };
        // first: a b c d e f; member: a b c d x y (4 of 6 shared with the first, verified);
        // late: a b c d x y z w (6 of 8 with the member, own sentences at its end only; 4 of
        // 8 with the first, not verified, and the first is no excerpt of it: two of its own).
        let first = page("first", &[0, 1, 2, 3, 4, 5]);
        let member = page("member", &[0, 1, 2, 3, 6, 7]);
        let late = page("late", &[0, 1, 2, 3, 6, 7, 8, 9]);
        let all = grouped(&[&["first", "late", "member"]]);
        // The member last: it verifies against both first documents and merges them.
        assert_eq!(groups(&on, &[&late, &first, &member]), all, "round {round}");
        assert_eq!(
            groups(&off, &[&late, &first, &member]),
            all,
            "round {round}"
        );
        // The late document last: with the rule, the same cluster.
        assert_eq!(groups(&on, &[&first, &member, &late]), all, "round {round}");
        assert_eq!(groups(&on, &[&member, &first, &late]), all, "round {round}");
        // Without it the first document keeps it out.
        assert_eq!(
            groups(&off, &[&first, &member, &late]),
            grouped(&[&["first", "member"], &["late"]]),
            "round {round}"
        );
        // A window overlapping the member (c d x y z w: the member's own sentences before the
        // shared run, its own after) does not join through it: chained windows stay apart.
        let window = page("window", &[2, 3, 6, 7, 8, 9]);
        assert_eq!(
            groups(&on, &[&first, &member, &window]),
            grouped(&[&["first", "member"], &["window"]]),
            "round {round}"
        );
    }
}

/// An excerpt's link to its article carries nothing: a page quoting the article's first two
/// sentences with one of its own verifies against the excerpt (two of its three sentences,
/// above the threshold) but is no copy of the article. The excerpt joined the article only as
/// an excerpt (at the threshold), so the quote does not join the article's cluster through
/// it. (In the orders where the excerpt or the quote arrives between the other two they are
/// still chained, with or without this rule: docs/accuracy.md, "First links".)
#[test]
fn a_quoted_opening_does_not_join_through_an_excerpt() {
    let mut rng = Rng(0xf125_71e0_0000_0e0c);
    let off = Settings {
        first_links: Some(false),
        ..Default::default()
    };
    for round in 0..6 {
        let body: Vec<String> = (0..8).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let page = |id: &str, lines: &[String]| {
            let mut d = Document::new(id, lines.join("\n"));
            d.url = Some(format!("https://{id}.example/story"));
            d
        };
        let article = page("article", &body);
        let third: String = body[2].chars().take(10).collect();
        let excerpt = page("excerpt", &[body[0].clone(), body[1].clone(), third]);
        let own = common::synthetic_doc(&mut rng, 1);
        let quote = page("quote", &[body[0].clone(), body[1].clone(), own]);
        for order in [
            [&article, &excerpt, &quote],
            [&excerpt, &quote, &article],
            [&quote, &excerpt, &article],
        ] {
            for settings in [&Settings::default(), &off] {
                let c = clusters(settings.clone(), &order);
                assert_ne!(c["quote"], c["article"], "round {round}");
                assert_eq!(c["excerpt"], c[&order[0].id], "round {round}");
            }
        }
    }
}
