//! Links through a host's own lines (`host_lines_join_one`): two short articles put in one
//! template share the template's lines, not an article. A page's link to a stored page of its
//! own host that shares only lines the host showed before, each of the two holding a sentence
//! of its own, never merges two clusters: the page joins the cluster of its article's copy
//! on another site, and a third short article in the template, meeting two clusters through
//! those lines only, joins neither. An article's own later version on its site still joins
//! it. Run one document at a time and as one batch; with the setting off the template merges
//! the two articles, so the test fails without the rule.

use crate::common;
use crate::site_knowledge::{ingest, page};

use common::Rng;
use fpdb::{Fpdb, Settings};

fn store(on: bool) -> Fpdb {
    Fpdb::builder()
        .settings(Settings {
            host_lines_join_one: Some(on),
            ..Default::default()
        })
        .open_in_memory()
        .unwrap()
}

/// `n` lines of one synthetic sentence each.
fn lines(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| common::synthetic_doc(rng, 1)).collect()
}

const HOST: &str = "https://news.example/";

#[test]
fn short_articles_in_one_template_are_not_joined_by_its_lines() {
    let mut rng = Rng(0x4057_11e5_0000_0019);
    for round in 0..4 {
        // A template's lines (what its page's extraction keeps of the site after a short
        // article: related headlines, captions), and three short articles of two lines each.
        let template = lines(&mut rng, 4);
        let (a1, a2, a3) = (lines(&mut rng, 2), lines(&mut rng, 2), lines(&mut rng, 2));
        let in_template = |id: &str, own: &[String]| {
            let text = [own, template.as_slice()].concat().join("\n");
            page(id, &format!("{HOST}{id}"), &text)
        };
        let p1 = in_template("p1", &a1);
        // A2's own page on another site, then A2 put in the template.
        let q = page("q", "https://other.example/q", &a2.join("\n"));
        let p2 = in_template("p2", &a2);
        let p3 = in_template("p3", &a3);
        let docs = [p1, q, p2, p3];
        for one_batch in [false, true] {
            let at = format!("round {round}, one batch: {one_batch}");
            let c = ingest(&mut store(true), &docs, one_batch);
            // P2 shares 4 of its 6 sentences with P1 (the template's: verified, not strong),
            // and Q is its excerpt (P2's first sentences in a run).
            assert_eq!(c["p2"], c["q"], "{at}");
            assert_ne!(c["p2"], c["p1"], "{at}");
            // P3 meets P1's cluster and Q's through the template's lines only.
            assert_ne!(c["p3"], c["p1"], "{at}");
            assert_ne!(c["p3"], c["q"], "{at}");
            // Without the rule the template's link holds whole and P2 merges the two
            // articles' clusters.
            let c = ingest(&mut store(false), &docs, one_batch);
            assert_eq!(c["p2"], c["p1"], "{at}");
            assert_eq!(c["q"], c["p1"], "{at}");
        }
    }
}

#[test]
fn an_articles_later_version_on_its_site_still_joins_it() {
    let mut rng = Rng(0x4057_11e5_0000_1a7e);
    for round in 0..4 {
        let body = lines(&mut rng, 6);
        // The later version: its fifth line rewritten and a line added (each page holds a
        // sentence the other lacks; 5 of 7 shared: verified, not strong).
        let mut later = body.clone();
        later[4] = common::synthetic_doc(&mut rng, 1);
        later.push(common::synthetic_doc(&mut rng, 1));
        let other = lines(&mut rng, 6);
        let docs = [
            page("x", &format!("{HOST}x"), &body.join("\n")),
            page("y", &format!("{HOST}y"), &other.join("\n")),
            page("x-later", &format!("{HOST}x?later"), &later.join("\n")),
        ];
        for one_batch in [false, true] {
            let c = ingest(&mut store(true), &docs, one_batch);
            assert_eq!(
                c["x-later"], c["x"],
                "round {round}, one batch: {one_batch}"
            );
            assert_ne!(c["y"], c["x"], "round {round}, one batch: {one_batch}");
        }
    }
}

/// `explain` says when a page's link to a stored page of its own host holds through the
/// host's lines only.
#[test]
fn explain_says_when_a_link_holds_through_the_hosts_lines_only() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x4057_11e5_0000_e4b1);
    let template = lines(&mut rng, 4);
    let (a1, a2) = (lines(&mut rng, 2), lines(&mut rng, 2));
    let doc = |id: &str, url: &str, own: &[String]| {
        let text = [own, template.as_slice()].concat().join("\n");
        serde_json::json!({"id": id, "url": url, "text": text})
    };
    let p1 = doc("p1", &format!("{HOST}p1"), &a1);
    let other =
        serde_json::json!({"id": "q", "url": "https://other.example/q", "text": a2.join("\n")});
    common::write_jsonl(&d.path().join("in.jsonl"), &[p1.clone(), other.clone()]);
    let p2 = doc("p2", &format!("{HOST}p2"), &a2);
    common::write_jsonl(&d.path().join("all.jsonl"), &[p1, other, p2]);
    let o = common::run(d.path(), &["--db", "s.db", "-q", "ingest", "in.jsonl"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let explain = |a: &str, b: &str, json: bool| {
        let mut args = vec!["--db", "s.db", "explain", "--corpus", "all.jsonl", a, b];
        if json {
            args.push("--json");
        }
        common::stdout(&common::run(d.path(), &args))
    };
    let json =
        |a: &str, b: &str| serde_json::from_str::<serde_json::Value>(&explain(a, b, true)).unwrap();
    let v = json("p1", "p2");
    assert_eq!(v["linked_only_through_host_lines"], true, "{v}");
    assert_eq!(v["strong"], false, "{v}");
    let v = json("q", "p2");
    assert_eq!(v["linked_only_through_host_lines"], false, "{v}");
    let text = explain("p1", "p2", false);
    assert!(
        text.contains("through lines B's site showed before"),
        "{text}"
    );
}
