//! Reordered lines (`reordered_lines`, format 12): a long text hard-wrapped at a fixed width
//! whose lines were put in another order has every sentence cut at a seam, so its sentences
//! do not verify it and its length would ask 90% of its 4-grams; the same length and 80% of
//! the 4-grams verify it. Another length does not.

use crate::common;

use common::Rng;
use fpdb::fingerprint::{verified_as_reordered, Fingerprinter};
use fpdb::{Document, Fpdb, OnExisting, Options, Settings};

/// A long synthetic text (over 4,000 characters) with figures, hard-wrapped at `width`
/// characters a line, no blank line.
fn wrapped_text(rng: &mut Rng, width: usize) -> Vec<String> {
    let mut text = String::new();
    for i in 0..170 {
        text.push_str(&common::synthetic_doc(rng, 1));
        if i % 17 == 0 {
            text.push_str(&format!(
                "第{}条规定于{}年{}月施行。",
                3 + i,
                2001 + i,
                1 + i % 12
            ));
        }
    }
    fpdb::eval::edits::hard_wrap(&text, || width)
}

/// `lines` in groups of one or two (the paragraphs), the groups put in another order.
fn reorder(lines: &[String], rng: &mut Rng) -> Vec<String> {
    let mut groups: Vec<&[String]> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let len = (1 + rng.index(2)).min(lines.len() - at);
        groups.push(&lines[at..at + len]);
        at += len;
    }
    for j in (1..groups.len()).rev() {
        groups.swap(j, rng.index(j + 1));
    }
    groups.concat()
}

#[test]
fn a_wrapped_text_with_its_lines_in_another_order_is_found_and_only_it() {
    let mut rng = Rng(0x0e0d_e4ed_0000_0021);
    let rounds = 12;
    let (mut found, mut found_without, mut needed) = (0, 0, 0);
    let fp = Fingerprinter::new(Options::default(), None).unwrap();
    for round in 0..rounds {
        let width = 30 + rng.index(11);
        let lines = wrapped_text(&mut rng, width);
        let moved = reorder(&lines, &mut rng);
        let (orig, copy) = (lines.join("\n"), moved.join("\n"));
        assert!(orig.chars().count() > 4_000);
        let (a, b) = (fp.fingerprint(&orig), fp.fingerprint(&copy));
        let opts = Options::default();
        let (sim, overlap, resemblance) =
            fpdb::fingerprint::similarity_parts(&opts, a.sketches(), b.sketches());
        assert!(sim >= 0.6, "round {round}: {sim} {overlap} {resemblance}");
        let by_rule = verified_as_reordered(&opts, a.sketches(), b.sketches());
        // The rule verifies exactly the pairs that neither their sentences nor their
        // resemblance at this length (90%) verify.
        assert_eq!(by_rule, overlap < 0.6 && resemblance < 0.9, "round {round}");
        needed += usize::from(by_rule);
        // Another length (a paragraph of 2% more): not the same characters.
        let longer = format!("{copy}\n{}", common::synthetic_doc(&mut rng, 4));
        let l = fp.fingerprint(&longer);
        assert!(
            !verified_as_reordered(&opts, a.sketches(), l.sketches()),
            "round {round}"
        );
        let off = Options {
            reordered_lines: false,
            ..Options::default()
        };
        assert!(!verified_as_reordered(&off, a.sketches(), b.sketches()));
        // In a store.
        let docs = [Document::new("orig", orig), Document::new("copy", copy)];
        let joined = |settings: Settings| {
            let mut db = Fpdb::builder().settings(settings).open_in_memory().unwrap();
            for d in &docs {
                db.ingest_document(d, OnExisting::Skip).unwrap();
            }
            let o = common::export_outcomes(&db);
            o[0].similar_id == o[1].similar_id
        };
        found += usize::from(joined(Settings::default()));
        found_without += usize::from(joined(Settings {
            reordered_lines: Some(false),
            ..Default::default()
        }));
    }
    assert_eq!(found, rounds);
    // The case is real: the rule is what finds a third of them or more.
    assert!(
        needed >= rounds / 3,
        "the rule was needed {needed} times of {rounds}"
    );
    assert_eq!(found_without, rounds - needed);
}

/// Two reports of one template whose every sentence holds a changed figure are the same length
/// and share most 4-grams but no sentence: the template rule keeps them apart, also from the
/// reordered-lines exception (which, without the template rule, would verify them).
#[test]
fn template_reports_of_one_length_are_not_reordered_copies() {
    let mut rng = Rng(0x0e0d_e4ed_0000_0022);
    let (mut a, mut b) = (String::new(), String::new());
    for _ in 0..100 {
        let words: String = common::synthetic_doc(&mut rng, 2)
            .chars()
            .filter(|c| !c.is_ascii_punctuation() && !"。！？，".contains(*c))
            .take(46)
            .collect();
        let (x, y) = (10 + rng.index(45), 55 + rng.index(45));
        a.push_str(&format!("{words}{x}。"));
        b.push_str(&format!("{words}{y}。"));
    }
    let fp = Fingerprinter::new(Options::default(), None).unwrap();
    let (fa, fb) = (fp.fingerprint(&a), fp.fingerprint(&b));
    assert_eq!(fa.chars, fb.chars);
    let opts = Options::default();
    let (sim, overlap, resemblance) =
        fpdb::fingerprint::similarity_parts(&opts, fa.sketches(), fb.sketches());
    assert!(
        (0.8..0.9).contains(&resemblance) && overlap == 0.0,
        "{overlap} {resemblance}"
    );
    assert!(sim < 0.6, "{sim}");
    assert!(!verified_as_reordered(&opts, fa.sketches(), fb.sketches()));
    let no_figures = Options {
        template_figures: false,
        ..Options::default()
    };
    assert!(verified_as_reordered(
        &no_figures,
        fa.sketches(),
        fb.sketches()
    ));
}
