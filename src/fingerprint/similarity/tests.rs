//! Unit tests of sentence overlap, shapes and teasers (`fingerprint/similarity/mod.rs`).

use super::*;
use crate::fingerprint::minhash::{shingles, SHINGLES_K};
use crate::fingerprint::nshash::{nshash_and_sketch, sketch_of};
use crate::options::Options;
use crate::text::normalize;

/// The sentence sketch and order of a text given as sentence ids in text order (spread over
/// the hash space, so sketch order is not text order).
fn sketched(v: &[u64]) -> (Vec<u32>, Vec<u8>) {
    let hashes: Vec<u64> = v
        .iter()
        .map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    sketch_of(&hashes, 0, false, None)
}

/// `v` without repeated ids, in order (texts of distinct sentences for the oracles).
fn distinct(v: &[u64]) -> Vec<u64> {
    let mut seen = std::collections::BTreeSet::new();
    v.iter().copied().filter(|x| seen.insert(*x)).collect()
}

/// The shape of two texts given as sentence ids in text order.
fn shape_of(a: &[u64], b: &[u64]) -> Shape {
    let ((sa, oa), (sb, ob)) = (sketched(a), sketched(b));
    shape(&sa, &oa, &sb, &ob, false).expect("they share a sentence")
}

/// Whether two texts given as sentence ids in text order are a teaser and its article.
fn teaser_of(a: &[u64], b: &[u64]) -> bool {
    teaser_on(a, b, false)
}

/// [`teaser_of`], with `page` as in stores with `page_teasers`.
fn teaser_on(a: &[u64], b: &[u64], page: bool) -> bool {
    let ((sa, oa), (sb, ob)) = (sketched(a), sketched(b));
    teaser(&sa, &oa, &sb, &ob, page, false)
}

proptest::proptest! {
    /// `teaser` against its definition on the texts themselves: sentence ids in text
    /// order (distinct, fewer than a sketch holds, so every sentence is compared).
    #[test]
    fn teaser_is_its_definition(
        a in proptest::collection::vec(0u64..24, 0..16),
        b in proptest::collection::vec(0u64..24, 0..16),
        page: bool,
    ) {
        let (a, b) = (distinct(&a), distinct(&b));
        let shared = a.iter().filter(|x| b.contains(x)).count();
        let (small, large) = if a.len() >= b.len() { (&b, &a) } else { (&a, &b) };
        // Sentences of its own the smaller may have, and the larger before the first
        // shared one.
        let (own, head) = if page { (shared / 8, 2) } else { (0, 0) };
        let begins = |l: &[u64], s: &[u64]| {
            l.iter().position(|x| s.contains(x)).is_some_and(|p| p <= head)
        };
        let want = shared >= 3
            && small.len() - shared <= own
            && 3 * shared >= large.len()
            && begins(large, small)
            && (a.len() != b.len() || begins(small, large));
        proptest::prop_assert_eq!(teaser_on(&a, &b, page), want, "{:?} {:?}", a, b);
        proptest::prop_assert_eq!(teaser_on(&b, &a, page), want);
    }
}

#[test]
fn a_teaser_is_the_beginning_of_its_article_and_nothing_else() {
    let article: Vec<u64> = (1..=10).collect();
    // The first half, on the same page (furniture 100, 101 around both).
    let page = |body: &[u64]| [&[100][..], body, &[101][..]].concat();
    assert!(teaser_of(&page(&article[..5]), &page(&article)));
    assert!(teaser_of(&page(&article), &page(&article[..5])));
    // Alone: 4 of the article's 10 sentences, over a third.
    assert!(teaser_of(&article[..4], &article));
    // Under a third, or fewer than three shared: not a teaser.
    assert!(!teaser_of(&article[..3], &(1..=12).collect::<Vec<_>>()));
    assert!(!teaser_of(&article[..2], &article[..4]));
    // A sentence of its own (another article on the same page, a window's far end).
    assert!(!teaser_of(&[1, 2, 3, 4, 5, 50], &article));
    // Not the beginning: the article's second half (a window), or a quotation from it.
    assert!(!teaser_of(&article[5..], &article));
    assert!(!teaser_of(&article[3..8], &article));
    // Sentences of its own before the shared ones count as its own.
    assert!(!teaser_of(&[60, 1, 2, 3, 4, 5], &article));
}

#[test]
fn a_teaser_on_a_page_may_hold_a_few_lines_of_its_own() {
    let article: Vec<u64> = (1..=24).collect();
    let first = &article[..10];
    // A "read more" line after the first ten sentences, a video box before them.
    let read_more = [first, &[500][..]].concat();
    let boxed = [&[400][..], first].concat();
    for t in [&read_more, &boxed] {
        assert!(teaser_on(t, &article, true) && teaser_on(&article, t, true));
        assert!(!teaser_on(t, &article, false));
    }
    // One line of its own in eight shared, not two.
    assert!(!teaser_on(
        &[first, &[500, 501][..]].concat(),
        &article,
        true
    ));
    assert!(teaser_on(
        &[&article[..16], &[500, 501][..]].concat(),
        &article,
        true
    ));
    // The article's standfirst (two sentences) before what the teaser shows, not three.
    assert!(teaser_on(&article[2..12], &article, true));
    assert!(!teaser_on(&article[2..12], &article, false));
    assert!(!teaser_on(&article[3..13], &article, true));
    // A different article of the site, sharing the site's lines: two in seven of its own.
    let site = [900, 901, 902, 903, 904, 905, 906];
    let other = [&site[..], &[800, 801][..]].concat();
    assert!(!teaser_on(
        &other,
        &[&site[..], &article[..10]].concat(),
        true
    ));
}

#[test]
fn windows_and_copies_have_their_shapes() {
    let e = |head, inner, tail| Ends { head, inner, tail };
    let a: Vec<u64> = (1..=10).collect();
    let later: Vec<u64> = (4..=13).collect();
    // Two windows of one text: a's own sentences before the shared run, b's after it.
    let w = shape_of(&a, &later);
    assert_eq!((w.a, w.b, w.shared), (e(3, 0, 0), e(0, 0, 3), 7));
    assert!(w.window() && !w.copy());
    assert!(shape_of(&later, &a).window());
    // Edited inside the shared run on top of that (windows of edited copies): still
    // windows.
    let edited = shape_of(&a, &[4, 5, 66, 7, 8, 9, 10, 11, 12, 13]);
    assert_eq!((edited.a, edited.b), (e(3, 1, 0), e(0, 1, 3)));
    assert!(edited.window());
    // A window whose far end is a new title (a copy of the later window, retitled).
    assert!(shape_of(&a, &[100, 4, 5, 6, 7, 8, 9, 10, 11, 12]).window());
    // A copy with a new title, an ad and one sentence edited.
    let c = shape_of(&a, &[100, 1, 2, 3, 200, 4, 5, 6, 77, 8, 9, 10]);
    assert_eq!((c.a, c.b, c.shared), (e(0, 1, 0), e(1, 2, 0), 9));
    assert!(c.copy() && !c.window());
    // A title and an ad on one side only: the original is contained, and still a copy.
    let c = shape_of(&a, &[100, 1, 2, 3, 4, 200, 5, 6, 7, 8, 9, 10]);
    assert_eq!((c.a, c.b), (e(0, 0, 0), e(1, 1, 0)));
    assert!(c.copy());
    // The first paragraph (two sentences) replaced by a title, the last sentence edited
    // with an ad after it, one sentence edited inside: own sentences at both ends of
    // both, which two windows of one text can have too (a window's first sentence cut
    // at the window's edge): taken as windows, the safe side.
    let c = shape_of(&a, &[100, 3, 4, 55, 6, 7, 8, 9, 1000, 200]);
    assert_eq!((c.a, c.b), (e(2, 1, 1), e(1, 1, 2)));
    assert!(c.window() && !c.copy());
    // Differences at the ends only (a cut copy, or a window whose far end has no
    // sentence long enough to count): not taken as a copy.
    let cut = shape_of(&a, &(3..=10).collect::<Vec<_>>());
    assert_eq!((cut.a, cut.b), (e(2, 0, 0), e(0, 0, 0)));
    assert!(!cut.window() && !cut.copy());
    let retitled_cut = shape_of(&a, &[100, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert!(!retitled_cut.window() && !retitled_cut.copy());
    // Nothing shared, or no order (an older record): no shape.
    let ((sa, oa), (sb, ob)) = (
        sketch_of(&[1, 2], 0, false, None),
        sketch_of(&[3, 4], 0, false, None),
    );
    assert!(shape(&sa, &oa, &sb, &ob, false).is_none());
    assert!(shape(&sa, &[], &sa, &oa, false).is_none());
}

proptest::proptest! {
    /// The shape of two documents does not depend on which is looked up or on the hash
    /// values, and counts what `overlap` counts.
    #[test]
    fn shape_is_symmetric_and_counts_what_overlap_counts(
        a in proptest::collection::hash_set(0u64..40, 1..30),
        b in proptest::collection::hash_set(0u64..40, 1..30),
        salt in proptest::num::u64::ANY,
    ) {
        // Text order: the sets' iteration order, shuffled by the salt.
        let order = |s: &std::collections::HashSet<u64>| {
            let mut v: Vec<u64> = s.iter().copied().collect();
            v.sort_by_key(|x| (x ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            v
        };
        let (ta, tb) = (order(&a), order(&b));
        let hash = |v: &[u64], k: u64| -> Vec<u64> {
            v.iter().map(|x| (x ^ k).wrapping_mul(0xD6E8_FEB8_6659_FD93)).collect()
        };
        for k in [1, salt | 1] {
            let ((sa, oa), (sb, ob)) = (
                sketch_of(&hash(&ta, k), 0, false, None),
                sketch_of(&hash(&tb, k), 0, false, None),
            );
            let (ab, ba) = (shape(&sa, &oa, &sb, &ob, false), shape(&sb, &ob, &sa, &oa, false));
            let both = a.intersection(&b).count();
            proptest::prop_assert_eq!(ab.is_none(), both == 0);
            if let (Some(ab), Some(ba)) = (ab, ba) {
                proptest::prop_assert_eq!(ab.shared, both);
                proptest::prop_assert_eq!(ab.a.total(), a.len() - both);
                proptest::prop_assert_eq!(ab.b.total(), b.len() - both);
                proptest::prop_assert_eq!((ab.a, ab.b), (ba.b, ba.a));
                proptest::prop_assert_eq!(ab.window(), ba.window());
                proptest::prop_assert_eq!(ab.copy(), ba.copy());
                proptest::prop_assert!(!(ab.window() && ab.copy()));
                let o = overlap(&sa, &sb);
                proptest::prop_assert!((o - both as f64 / a.len().max(b.len()) as f64).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn overlap_is_shared_over_the_larger_set() {
    assert_eq!(overlap(&[1, 2, 3, 4], &[2, 3]), 0.5);
    assert_eq!(overlap(&[1, 2, 3, 4], &[3, 4, 5, 6]), 0.5);
    assert_eq!(overlap(&[1, 2, 3], &[1, 2, 3]), 1.0);
    assert_eq!(overlap(&[], &[1]), 0.0);
    // Large sketches are compared below the smaller maximum only.
    let a: Vec<u32> = (0..SKETCH_MAX as u32).map(|x| x * 2).collect();
    let b: Vec<u32> = (0..SKETCH_MAX as u32).collect();
    assert!((overlap(&a, &b) - 0.5).abs() < 0.01, "{}", overlap(&a, &b));
}

/// Re-wrapped lines change every sentence of a long document but not its shingles; a
/// revised text shares sentences and shingles only in part.
#[test]
fn long_documents_are_verified_on_shingles_only_when_nearly_equal() {
    let opts = Options::default();
    let para = "In article 1993 a friend writes that the radar detector works fine on the highway \
                and the police never noticed it at all. He also says that the battery lasts for \
                months and that the unit was cheap. Nobody else in the group has tried one yet, \
                so we will see how it goes next week. The weather was good and the roads were \
                empty, which helped a lot with the test drive. ";
    let text = para.repeat(3);
    let wrap = |w: usize| {
        let words: Vec<&str> = text.split(' ').collect();
        words
            .chunks(w)
            .map(|c| c.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (a, b) = (normalize(&wrap(7)), normalize(&wrap(11)));
    let sig = |t: &str| {
        let (_, sk) = nshash_and_sketch(t, &opts);
        let sh = shingles(t, sk.len(), true);
        (sk, sh)
    };
    let ((ka, ha), (kb, hb)) = (sig(&a), sig(&b));
    assert!(ka.len() > SHORT_SENTENCES);
    assert!(overlap(&ka, &kb) < 0.5, "{}", overlap(&ka, &kb));
    assert!(similarity(&ka, &ha, &kb, &hb, LONG_RESEMBLANCE) >= LONG_RESEMBLANCE);
    assert!(
        similarity(&ka, &[], &kb, &[], LONG_RESEMBLANCE) < 0.5,
        "without shingles: sentences only"
    );
    // A revision: two of the five sentences rewritten.
    let other = normalize(
        &text
            .replace(
                "He also says that the battery lasts for months and that the unit was cheap.",
                "Later on the thread moved to a long argument about speed limits in Ohio.",
            )
            .replace(
                "Nobody else in the group has tried one yet, so we will see how it goes next week.",
                "Two readers replied with their own stories of tickets they got last spring.",
            ),
    );
    let (ko, ho) = sig(&other);
    let r = resemblance(&ha, &ho);
    assert!(r < LONG_RESEMBLANCE, "{r}");
    assert_eq!(
        similarity(&ka, &ha, &ko, &ho, LONG_RESEMBLANCE),
        overlap(&ka, &ko)
    );
}

#[test]
fn shingle_resemblance_survives_one_edited_character() {
    let a =
        normalize("国务院办公厅关于加强政府网站信息内容建设的意见。各省人民政府都要认真贯彻执行。");
    let b =
        normalize("国务院办公厅关于加强政府网站信息内容建没的意见。各省人民政府都要认真贯彻执行。");
    let c = normalize("今天纽约的天气真好啊京华大酒店的张尧经理吃了一只北京烤鸭。后天的天气不好。");
    let (sa, sb, sc) = (
        shingles(&a, 2, false),
        shingles(&b, 2, false),
        shingles(&c, 2, false),
    );
    assert!(resemblance(&sa, &sb) > 0.7, "{}", resemblance(&sa, &sb));
    assert!(resemblance(&sa, &sc) < 0.1, "{}", resemblance(&sa, &sc));
    assert_eq!(resemblance(&sa, &sa), 1.0);
    assert!(
        shingles(&a, 4, false).is_empty(),
        "long documents get no shingles"
    );
    let (la, lb) = (shingles(&a, 4, true), shingles(&b, 4, true));
    assert!(la.len() > SHINGLES_K, "unless every document gets them");
    assert!(resemblance(&la, &lb) > 0.7, "{}", resemblance(&la, &lb));
}

/// Whether two texts given as sentence ids in text order are an excerpt and its article.
fn excerpt_of(a: &[u64], b: &[u64]) -> Result<(), NotExcerpt> {
    let ((sa, oa), (sb, ob)) = (sketched(a), sketched(b));
    excerpt(&sa, &oa, &sb, &ob, (false, false))
}

proptest::proptest! {
    /// `excerpt` against its definition on the texts themselves (sentence ids in text order,
    /// distinct): of two of different sizes, the smaller shares two or more sentences with
    /// the larger, has at most one of its own, and the shared ones are the larger's first.
    #[test]
    fn excerpt_is_its_definition(
        a in proptest::collection::vec(0u64..24, 0..16),
        b in proptest::collection::vec(0u64..24, 0..16),
    ) {
        let (a, b) = (distinct(&a), distinct(&b));
        let shared = a.iter().filter(|x| b.contains(x)).count();
        let (small, large) = if a.len() >= b.len() { (&b, &a) } else { (&a, &b) };
        let want = a.len() != b.len()
            && shared >= 2
            && small.len() - shared <= (shared / 3).min(1)
            && large[..shared].iter().all(|x| small.contains(x));
        proptest::prop_assert_eq!(excerpt_of(&a, &b).is_ok(), want, "{:?} {:?}", a, b);
        proptest::prop_assert_eq!(excerpt_of(&b, &a).is_ok(), want);
    }
}

#[test]
fn an_excerpt_is_an_articles_opening_whatever_its_share() {
    let article: Vec<u64> = (1..=40).collect();
    // Two sentences of forty; three and a "Read more" line of its own.
    assert_eq!(excerpt_of(&article[..2], &article), Ok(()));
    assert_eq!(excerpt_of(&article, &[1, 2, 3, 900]), Ok(()));
    // Two and a line of its own: a quotation with a comment as much as an excerpt.
    assert_eq!(
        excerpt_of(&[1, 2, 900], &article),
        Err(NotExcerpt::OwnSentences)
    );
    // One sentence is not enough; two of its own are too many (a quoted lede, then an
    // article of its own).
    assert_eq!(
        excerpt_of(&[1, 900], &article),
        Err(NotExcerpt::TooFewShared)
    );
    assert_eq!(
        excerpt_of(&[1, 2, 900, 901], &article),
        Err(NotExcerpt::OwnSentences)
    );
    // Not the opening (a quotation from the middle, the later of two windows), not a run.
    assert_eq!(
        excerpt_of(&article[10..13], &article),
        Err(NotExcerpt::NotTheOpening)
    );
    assert_eq!(excerpt_of(&[1, 2, 5], &article), Err(NotExcerpt::NotInARun));
    // Two of one size: a copy or two articles, never an excerpt.
    assert_eq!(excerpt_of(&article, &article), Err(NotExcerpt::SameSize));
}
