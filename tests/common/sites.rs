//! Pages of sites with furniture (`tests/rules/furniture.rs`, `tests/store/redis.rs`): synthetic articles
//! between the lines every page of their site repeats, with URLs of the site.

use fpdb::Document;

use super::Rng;

/// A page of `host`: its furniture (a header line before the body, the others after it)
/// around `body`.
pub fn page(id: &str, host: &str, furniture: &[String], body: &[String]) -> Document {
    let mut lines = vec![furniture[0].clone()];
    lines.extend(body.iter().cloned());
    lines.extend(furniture[1..].iter().cloned());
    let mut d = Document::new(id, lines.join("\n"));
    d.url = Some(format!("https://{host}/{id}"));
    d
}

/// The furniture of a site: 10 lines of one sentence, the first 4 longer than any sentence
/// of an article (so that most sentences a page is posted under are furniture).
pub fn furniture(rng: &mut Rng) -> Vec<String> {
    (0..10)
        .map(|i| {
            if i < 4 {
                let s = super::synthetic_doc(rng, 3);
                s.replacen('。', "，", 2)
            } else {
                super::synthetic_doc(rng, 1)
            }
        })
        .collect()
}

/// The pages of one round: two sites, each with its furniture; on each, `long` long
/// articles (whose clusters make the furniture known), then short articles; the first short
/// article of site A also on site B, and a repost on site A of a short article A showed
/// before its furniture was known.
pub fn round(rng: &mut Rng, long: usize) -> Vec<Document> {
    let fa = furniture(rng);
    let fb = furniture(rng);
    let early = super::paragraphs(rng, 2);
    let mut docs = vec![page("early", "a.example", &fa, &early)];
    for i in 0..long {
        docs.push(page(
            &format!("a-long{i}"),
            "a.example",
            &fa,
            &super::paragraphs(rng, 10),
        ));
        docs.push(page(
            &format!("b-long{i}"),
            "b.example",
            &fb,
            &super::paragraphs(rng, 10),
        ));
    }
    let short1 = super::paragraphs(rng, 2);
    docs.push(page("a-short1", "a.example", &fa, &short1));
    docs.push(page(
        "a-short2",
        "a.example",
        &fa,
        &super::paragraphs(rng, 2),
    ));
    docs.push(page("b-short1", "b.example", &fb, &short1));
    docs.push(page("early-repost", "a.example", &fa, &early));
    docs
}
