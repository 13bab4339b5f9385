//! Left-out figures (`left_out_figures`): a page compared without lines left out of it is not
//! judged by its figures. A short copy of an article in its site's template, stored before
//! the template was known, holds the template's figures in its record; once three other
//! pages of its site make the template furniture, it joins its article (which has figures of
//! its own beyond the copy's), whichever came first. Without the rule the figures of the
//! template's lines make the pair "two reports filled into one template". Two reports of one
//! template on two sites, compared whole, stay apart. And heading figures
//! (`heading_figures`): a page's dateline above its first sentence is not counted in its
//! figures.

use crate::common;
use crate::cut_excerpts::{article_orders, site_pages};
use crate::site_knowledge::page;

use common::Rng;
use fpdb::{Document, Settings};

/// A synthetic sentence (one line) ending in a figure of its own.
fn figured(rng: &mut Rng) -> String {
    let s = common::synthetic_doc(rng, 1);
    let s = s.trim_end_matches('。');
    format!("{s}共计{}件。", 1000 + rng.below(9000))
}

/// A report of one template's `wording` on `host`, under `heading` when given, with two
/// lines of figures of its own.
fn report(rng: &mut Rng, host: &str, heading: Option<String>, wording: &[String]) -> Document {
    let figures: Vec<String> = (0..2)
        .map(|_| format!("{}{}{}", figured(rng), figured(rng), figured(rng)))
        .collect();
    page(
        host,
        &format!("https://{host}.example/report"),
        &[heading.into_iter().collect(), wording.to_vec(), figures]
            .concat()
            .join("\n"),
    )
}

/// Whether `excerpt` and `article` end in one cluster when `batches` are ingested in batches
/// (`in_batches`) or one document at a time.
fn together(settings: &Settings, batches: &[Vec<Document>], in_batches: bool) -> bool {
    let c = common::clusters_after(settings.clone(), batches, in_batches);
    common::assert_site_pages_apart(&c, "article", "");
    c["excerpt"] == c["article"]
}

#[test]
fn a_short_copy_in_a_template_of_figures_joins_its_article_once_the_template_is_known() {
    let mut rng = Rng(0x1ef7_0f19_0000_0001);
    let off = Settings {
        left_out_figures: Some(false),
        ..Default::default()
    };
    for round in 0..6 {
        let body: Vec<String> = (0..6).map(|_| figured(&mut rng)).collect();
        // The site's template: lines with figures of their own (a date, prices, counts).
        let template: Vec<String> = (0..3)
            .map(|_| format!("{}{}", figured(&mut rng), figured(&mut rng)))
            .collect();
        let shown = [body[..3].to_vec(), template.clone()].concat();
        let excerpt = page("excerpt", "https://other.example/brief", &shown.join("\n"));
        let site = site_pages(&mut rng, &template, |rng| {
            (0..2).map(|_| common::synthetic_doc(rng, 4)).collect()
        });
        let article = page("article", "https://news.example/story", &body.join("\n"));
        for (article_first, batches) in article_orders(&article, &excerpt, &site) {
            for in_batches in [true, false] {
                let at = format!(
                    "round {round}, article first: {article_first}, in batches: {in_batches}"
                );
                assert!(together(&Settings::default(), &batches, in_batches), "{at}");
                // The rule is what joins them: the template's figures, in the excerpt's
                // record, make the two a template instance.
                assert!(
                    !together(&off, &batches, in_batches),
                    "{at}, without the rule"
                );
            }
        }
    }
}

/// Two reports filled into one template, on two sites, sharing most of their sentences (the
/// template's wording) and none of their figures: compared whole (no line left out of
/// either), the figures still keep them apart.
#[test]
fn two_reports_of_one_template_compared_whole_stay_apart() {
    let mut rng = Rng(0x1ef7_0f19_0000_0002);
    for round in 0..6 {
        let wording: Vec<String> = (0..4).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let a = report(&mut rng, "a", None, &wording);
        let b = report(&mut rng, "b", None, &wording);
        for docs in [[&a, &b], [&b, &a]] {
            let c = common::clusters_in_order(Settings::default(), &docs);
            assert_ne!(c["a"], c["b"], "round {round}");
        }
    }
}

/// The same short copy, after one other page of its site showed the template (its host's
/// lines, not yet furniture): compared with its article on another site, it is compared
/// without them, and not by its figures, which are the template's too.
#[test]
fn a_short_copy_compared_without_its_hosts_lines_is_not_judged_by_their_figures() {
    let mut rng = Rng(0x1ef7_0f19_0000_0003);
    let off = Settings {
        left_out_figures: Some(false),
        ..Default::default()
    };
    for round in 0..6 {
        let body: Vec<String> = (0..6).map(|_| figured(&mut rng)).collect();
        // Two lines of one sentence with two figures each: at most half of the copy's
        // sentences, so they are left out of it as compared.
        let template: Vec<String> = (0..2)
            .map(|_| {
                let s = figured(&mut rng);
                format!(
                    "{}和{}件。",
                    s.trim_end_matches("件。"),
                    1000 + rng.below(9000)
                )
            })
            .collect();
        let shown = [body[..3].to_vec(), template.clone()].concat();
        let excerpt = page("excerpt", "https://other.example/brief", &shown.join("\n"));
        let own: Vec<String> = (0..2).map(|_| common::synthetic_doc(&mut rng, 4)).collect();
        let before = page(
            "s0",
            "https://other.example/s0",
            &[own, template.clone()].concat().join("\n"),
        );
        let article = page("article", "https://news.example/story", &body.join("\n"));
        let docs = [&article, &before, &excerpt];
        let c = common::clusters_in_order(Settings::default(), &docs);
        assert_eq!(c["excerpt"], c["article"], "round {round}");
        assert_ne!(c["s0"], c["article"], "round {round}");
        let c = common::clusters_in_order(off.clone(), &docs);
        assert_ne!(
            c["excerpt"], c["article"],
            "round {round}, without the rule"
        );
    }
}

/// A dateline (`heading_figures`): a page's headings above its first sentence are not counted
/// in its figures.
fn dated(rng: &mut Rng) -> String {
    format!(
        "{}年{}月{}日 {}条评论 来源：综合报道",
        2000 + rng.below(25),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(100)
    )
}

/// A short copy of an article on another site, under a dateline of its own page (a date and a
/// count of comments), joins its article in either order: the dateline's figures are its
/// page's, not its text's. With the rule off they make the pair a template instance. Two
/// reports of one template, dated apart and with figures of their own below, stay apart.
#[test]
fn a_copys_dateline_is_not_counted_in_its_figures() {
    let mut rng = Rng(0x1ef7_0f19_0000_0004);
    let off = Settings {
        heading_figures: Some(false),
        ..Default::default()
    };
    for round in 0..6 {
        let body: Vec<String> = (0..6).map(|_| figured(&mut rng)).collect();
        let article = page("article", "https://news.example/story", &body.join("\n"));
        let shown = [vec![dated(&mut rng)], body[..3].to_vec()].concat();
        let copy = page("copy", "https://other.example/brief", &shown.join("\n"));
        for docs in [[&article, &copy], [&copy, &article]] {
            let c = common::clusters_in_order(Settings::default(), &docs);
            assert_eq!(c["copy"], c["article"], "round {round}");
            let c = common::clusters_in_order(off.clone(), &docs);
            assert_ne!(c["copy"], c["article"], "round {round}, without the rule");
        }
        let wording: Vec<String> = (0..4).map(|_| common::synthetic_doc(&mut rng, 1)).collect();
        let heading = dated(&mut rng);
        let a = report(&mut rng, "a", Some(heading), &wording);
        let heading = dated(&mut rng);
        let b = report(&mut rng, "b", Some(heading), &wording);
        for docs in [[&a, &b], [&b, &a]] {
            let c = common::clusters_in_order(Settings::default(), &docs);
            assert_ne!(c["a"], c["b"], "round {round}: two reports");
        }
    }
}
