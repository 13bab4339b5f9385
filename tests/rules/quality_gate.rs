//! The quality gate: `fpdb eval` on the labeled fixture of `tests/fixtures/quality/` (a few
//! pairs of every kind of every dev set, robustness set and hard set, chosen by
//! `scripts/quality_fixture.sh`, and the whole sites set) must judge at least as many pairs of
//! each kind right as the floor recorded in `floors.tsv`, and, on a set whose pages name their
//! article, put no more pairs of different articles in one cluster than `clusters.tsv` says. A change to a default that costs one class fails here; and
//! switching off any one of the default rules must fail the gate, so that the fixture keeps
//! holding the pairs each rule decides.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The rules the fixture must notice when switched off: `rules.txt`, written from
/// `scripts/quality_fixture.py`'s list when it chose the pairs each rule decides.
fn rules() -> Vec<String> {
    std::fs::read_to_string(fixture().join("rules.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quality")
}

/// (set, kind) -> (label, pairs, floor).
fn floors() -> BTreeMap<(String, String), (u8, u64, u64)> {
    let text = std::fs::read_to_string(fixture().join("floors.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                (f[0].to_string(), f[1].to_string()),
                (
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                    f[4].parse().unwrap(),
                ),
            )
        })
        .collect()
}

/// set -> (pairs of pages in one cluster showing different articles, at most; showing one
/// article, at least), for the sets with an `articles.tsv` (`clusters.tsv`).
fn cluster_bounds() -> BTreeMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(fixture().join("clusters.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_string(),
                (f[1].parse().unwrap(), f[2].parse().unwrap()),
            )
        })
        .collect()
}

/// Every kind of every set below its floor under the defaults with `flags`, as
/// "set/kind right/floor" (and, for a set with articles, "set/different …" or "set/same …"
/// past their bounds); and the (set, kind) pairs that were scored.
fn below_floors(flags: &str) -> (Vec<String>, Vec<(String, String)>) {
    let floors = floors();
    let bounds = cluster_bounds();
    let dir = tempfile::tempdir().unwrap();
    let sets: std::collections::BTreeSet<&String> = floors.keys().map(|(s, _)| s).collect();
    let (mut below, mut scored) = (Vec::new(), Vec::new());
    for set in sets {
        // The pages and sites sets' corpora are kept compressed.
        let corpus = ["corpus.jsonl.gz", "corpus.jsonl.zst", "corpus.jsonl"]
            .iter()
            .map(|f| fixture().join(set).join(f))
            .find(|p| p.exists())
            .unwrap();
        let pairs = fixture().join(set).join("pairs.tsv");
        let articles = fixture().join(set).join("articles.tsv");
        let mut args = vec![
            "eval",
            "--corpus",
            corpus.to_str().unwrap(),
            "--pairs",
            pairs.to_str().unwrap(),
            "--json",
            "-q",
            "--algo",
            "default",
        ];
        if articles.exists() {
            args.extend(["--articles", articles.to_str().unwrap()]);
        }
        args.extend(flags.split_whitespace());
        let o = common::run(dir.path(), &args);
        assert_eq!(common::code(&o), 0, "{set} {flags}: {}", common::stderr(&o));
        let reports: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for (kind, k) in reports[0]["kinds"].as_object().unwrap() {
            let (label, pairs, floor) = floors[&(set.clone(), kind.clone())];
            assert_eq!(k["pairs"].as_u64(), Some(pairs), "{set}/{kind}");
            let said = k["predicted_duplicate"].as_u64().unwrap();
            let right = if label == 1 { said } else { pairs - said };
            if right < floor {
                below.push(format!("{set}/{kind} {right}/{floor}"));
            }
            scored.push((set.clone(), kind.clone()));
        }
        if let Some(&(most, least)) = bounds.get(set.as_str()) {
            let c = &reports[0]["cluster_pairs"];
            let (different, same) = (
                c["different"].as_u64().unwrap(),
                c["same"].as_u64().unwrap(),
            );
            if different > most {
                below.push(format!(
                    "{set}/different articles in one cluster {different} > {most}"
                ));
            }
            if same < least {
                below.push(format!("{set}/one article in one cluster {same} < {least}"));
            }
        }
    }
    (below, scored)
}

#[test]
fn the_defaults_judge_every_kind_of_the_fixture_at_least_as_well_as_its_floor() {
    let (below, scored) = below_floors("");
    assert!(below.is_empty(), "below their floors: {below:?}");
    // Every kind of floors.tsv was scored (none lost from the fixture's pairs).
    let mut want: Vec<(String, String)> = floors().into_keys().collect();
    let mut got = scored;
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // Every set with articles is judged on its clusters too.
    assert!(cluster_bounds().contains_key("sites"));
    // The fixture covers every dev set, robustness set and hard set, and the templated kinds.
    for kind in [
        "template_sibling",
        "template_copy_chars",
        "real_near_dup",
        "edit_traditional_tw",
        "chained_window",
        "short_other_article_same_site",
        "short_copy_other_site",
        "excerpt",
    ] {
        assert!(got.iter().any(|(_, k)| k == kind), "no {kind} pairs");
    }
}

#[test]
fn switching_off_any_default_rule_fails_the_gate() {
    let rules = rules();
    assert!(rules.len() >= 9, "{rules:?}");
    assert!(rules.iter().any(|r| r == "--furniture false"), "{rules:?}");
    assert!(
        rules.iter().any(|r| r == "--template-figures false"),
        "{rules:?}"
    );
    for rule in &rules {
        let (below, _) = below_floors(rule);
        assert!(
            !below.is_empty(),
            "with {rule} every kind stays at its floor: the fixture no longer holds the pairs this rule decides"
        );
        if rule == "--template-figures false" {
            assert!(
                below
                    .iter()
                    .any(|b| b.starts_with("templated/template_sibling")),
                "{below:?}"
            );
        }
    }
}

#[test]
fn explain_names_a_template_instance_and_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = std::fs::read_to_string(fixture().join("templated/corpus.jsonl")).unwrap();
    let pairs = std::fs::read_to_string(fixture().join("templated/pairs.tsv")).unwrap();
    let texts: BTreeMap<String, String> = corpus
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().into(),
                v["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut seen = (false, false);
    for line in pairs.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let sibling = f[3] == "template_sibling";
        if (sibling && seen.0) || (!sibling && seen.1) {
            continue;
        }
        std::fs::write(dir.path().join("a.txt"), &texts[f[0]]).unwrap();
        std::fs::write(dir.path().join("b.txt"), &texts[f[1]]).unwrap();
        let o = common::run(dir.path(), &["explain", "--json", "a.txt", "b.txt"]);
        // The JSON form exits as the text form does: 1 for a pair that is not linked.
        assert_eq!(common::code(&o), if sibling { 1 } else { 0 }, "{line}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["figures"]["template_instance"], sibling, "{line}: {v}");
        assert_eq!(v["verified"], !sibling, "{line}");
        let o = common::run(dir.path(), &["explain", "a.txt", "b.txt"]);
        let text = common::stdout(&o);
        if sibling {
            assert_eq!(common::code(&o), 1, "{text}");
            assert!(text.contains("-> template instance"), "{text}");
            seen.0 = true;
        } else {
            assert_eq!(common::code(&o), 0, "{text}");
            assert!(text.contains("a copy's figures"), "{text}");
            seen.1 = true;
        }
    }
    assert_eq!(seen, (true, true));
}
