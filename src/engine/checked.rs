//! Checking one candidate against the document looked up: its similarity under the store's
//! rules (the site's template lines left out where they can be, the page compared whole where
//! its furniture is most of it), whether the link is strong, whether it holds only with lines
//! left out or only as an excerpt, and where the candidate stands for its cluster's original.

use crate::fingerprint::{keys, similarity, Fingerprints};
use crate::store::schema;

/// With tight clusters, a candidate this similar joins its cluster even when the cluster's
/// first document does not verify: it is a copy of a member (an edited repost of an article
/// that had itself joined another's cluster), not a window overlapping a third document (their
/// links are weaker). Part of the rule of format 4 stores: a new value needs a new setting.
pub(super) const STRONG_LINK: f64 = 0.85;

/// What checking a candidate against the document looked up gives.
#[derive(Debug, Clone)]
pub(super) struct Checked {
    /// The candidate's id.
    pub(super) id: String,
    /// Its cluster at ingest.
    pub(super) similar_id: u64,
    /// Its similarity with the document (what verification compares).
    pub(super) overlap: f64,
    /// The keyword weight check's distance ([`keys::weight_distance`]).
    pub(super) weight_distance: f64,
    /// Whether it is a strong link under the store's rules ([`is_strong`]).
    pub(super) strong: bool,
    /// Stores with `site_knowledge`: it verified only after the lines of a site's template
    /// were left out of the two (`compared.rs`: the page's lines its host showed before, the
    /// candidate's stored template); compared with those lines it does not. Such a link never
    /// merges the clusters of two articles ([`Lookup::left_out_joins_one`](super::lookup::Lookup::left_out_joins_one)).
    pub(super) left_out_only: bool,
    /// Stores with `host_lines_join_one`: a verified candidate of the page's own host that
    /// shares with it only lines its host showed before, the page holding sentences of its
    /// own beside them that are new to its host ([`through_host_lines`]). Such a link never
    /// merges the clusters of two articles, as a link through left-out lines never does.
    pub(super) host_lines_only: bool,
    /// Stores with `site_knowledge`, a verified candidate compared where a site's template can
    /// be left out (a page whose host showed lines before, or a stored page with a template):
    /// the sentences it shares with the document, whole (sorted), which tell whether two of
    /// its clusters are one article's. Empty otherwise (no link there holds only so).
    pub(super) shared: Vec<u32>,
    /// Stores with `link_shape`: a verified link whose shape is known (both documents keep
    /// their sentences' order) and is not that of two overlapping windows
    /// ([`similarity::Shape::window`]).
    pub(super) not_window: bool,
    /// Every sentence of the document (as compared) is the candidate's too, a page's last
    /// sentence cut short aside ([`similarity::CUT_PLACE`]): the document holds nothing of
    /// its own beside it.
    pub(super) within: bool,
    /// Stores with `excerpts`: it verified only as an excerpt of the document (it holds the
    /// document's first sentences). Such a link joins the candidate's cluster only while the
    /// excerpt is alone in it: an excerpt of two sentences is the opening of its article and
    /// of a page quoting that opening alike, and must not chain the two.
    pub(super) excerpt_of_doc: bool,
    /// Stores with `excerpts`: the document verified against it only as its excerpt (named
    /// in the document's matches and `excerpt_of`).
    pub(super) doc_is_excerpt: bool,
    /// For a candidate that did not verify but whose sentences are at least half in the
    /// document (two or more): the sentences they share (a source of a composite).
    pub(super) contained: Option<Vec<u32>>,
    /// Where it stands for a cluster's original, and the citations between it and the
    /// document (stores with `originals`).
    pub(super) standing: Standing,
}

/// A candidate's standing for its cluster's original, and the citations between it and the
/// document looked up.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Standing {
    /// Its time ([`schema::DocRecord::dated`]).
    pub(super) dated: i64,
    /// Whether a document that verified against it cited it before.
    pub(super) cited: bool,
    /// The document cites it (names its URL, whose key this is).
    pub(super) cited_now: Option<u64>,
    /// It cites the document.
    pub(super) cites_doc: bool,
}

impl Checked {
    /// A candidate (`id`, cluster `similar_id` at ingest, `sketches`, keyword `weights`, the
    /// page it was: its `url` and `template`) checked against `fps`.
    pub(super) fn new(
        opts: &crate::options::Options,
        fps: &Fingerprints,
        id: String,
        similar_id: u64,
        sketches: crate::fingerprint::Sketches<'_>,
        weights: &[f32],
        (url, template): (Option<&str>, &[u32]),
    ) -> Checked {
        let mut bufs = super::compared::Kept::default();
        let whole = sketches;
        let (doc, sketches) =
            super::compared::as_compared(opts, fps, sketches, (url, template), &mut bufs);
        let (mut overlap, mut sentences, mut resemblance) =
            crate::fingerprint::similarity_parts(opts, doc, sketches);
        let (mut doc, mut sketches, mut compared_whole) = (doc, sketches, false);
        if overlap < opts.verify_threshold() {
            if let Some(w) = super::compared::whole_elsewhere(fps, url) {
                // A page whose furniture is most of its main text, compared whole with a page
                // of another host: an article its host's other pages made furniture (stores
                // with `site_knowledge`) is still the article of a copy elsewhere.
                (overlap, sentences, resemblance) =
                    crate::fingerprint::similarity_parts(opts, w, whole);
                (doc, sketches, compared_whole) = (w, whole, true);
            }
        }
        // The shape is read only for a verified link (no other can join).
        let verified = overlap >= opts.verify_threshold();
        let left_out_only = verified
            && !compared_whole
            && opts.site_knowledge
            && super::compared::template_left_out(fps, doc, whole, sketches)
            && {
                let mut kept = (Vec::new(), Vec::new());
                let theirs = super::compared::without_furniture(
                    fps,
                    whole,
                    &mut kept,
                    super::compared::LeftOut::of(opts),
                );
                crate::fingerprint::similarity_parts(opts, fps.sketches(), theirs).0
                    < opts.verify_threshold()
            };
        let shape = (opts.link_shape && verified)
            .then(|| {
                let (a, b) = (doc, sketches);
                similarity::shape(a.sketch, a.order, b.sketch, b.order, opts.headings)
            })
            .flatten();
        let strong = is_strong(opts, overlap, sentences, resemblance, shape);
        let not_window = shape.is_some_and(|s| !s.window());
        // A strong link shares most of both: an article's versions, not a template's lines.
        let host_lines_only = verified
            && !strong
            && !compared_whole
            && opts.site_knowledge
            && opts.host_lines_join_one
            && same_host(fps, url)
            && fps
                .host_seen
                .as_ref()
                .is_some_and(|(_, seen)| through_host_lines(doc, seen, sketches));
        let within = verified && within(doc, sketches);
        // Verified only as an excerpt (an exception verifies at the threshold exactly): which
        // of the two is the excerpt, the smaller.
        let excerpt = (verified && opts.excerpts && overlap == opts.verify_threshold())
            .then(|| crate::fingerprint::verified_as_excerpt(opts, doc, sketches))
            .flatten()
            .is_some_and(|r| r.is_ok());
        let excerpt_of_doc = excerpt && sketches.sketch.len() < doc.sketch.len();
        let doc_is_excerpt = excerpt && doc.sketch.len() < sketches.sketch.len();
        let contained = (!verified && sentences > 0.0)
            .then(|| sorted_intersection(&fps.sketch, sketches.sketch))
            .filter(|s| s.len() >= 2 && 2 * s.len() >= sketches.sketch.len());
        // Only where a site's template can be left out (pages of a host with a template seen).
        let templated = fps.host_seen.is_some() || !template.is_empty();
        let shared = if verified && opts.site_knowledge && templated {
            sorted_intersection(&fps.sketch, whole.sketch)
        } else {
            Vec::new()
        };
        Checked {
            id,
            similar_id,
            overlap,
            weight_distance: keys::weight_distance(&fps.key_weights, weights),
            strong,
            left_out_only,
            host_lines_only,
            shared,
            not_window,
            within,
            excerpt_of_doc,
            doc_is_excerpt,
            contained,
            standing: Standing::default(),
        }
    }

    /// `fps` checked against a stored record.
    pub(super) fn of(
        opts: &crate::options::Options,
        fps: &Fingerprints,
        rec: &schema::DocRecord,
    ) -> Checked {
        let mut c = Checked::new(
            opts,
            fps,
            rec.id.clone(),
            rec.similar_id,
            super::record_sketches(rec),
            &rec.key_weights,
            (rec.url.as_deref(), &rec.template),
        );
        if opts.originals {
            // A citation counts between two sites only: a copier's own pages (a re-crawl of
            // its URL, another page of its site) do not make it the source.
            let elsewhere = || match (fps.host_key, rec.url.as_deref()) {
                (Some(mine), Some(url)) => crate::text::cites::host_key(url) != Some(mine),
                _ => true,
            };
            let cited_now = rec
                .url
                .as_deref()
                .filter(|_| !fps.cites.is_empty())
                .map(crate::text::cites::url_key)
                .filter(|k| fps.cites.binary_search(k).is_ok())
                .filter(|_| elsewhere());
            c.standing = Standing {
                dated: rec.dated(),
                cited: rec.cited,
                cited_now,
                cites_doc: fps.url_key.is_some_and(|k| rec.cites.contains(&k)) && elsewhere(),
            };
        }
        c
    }
}

/// Whether stored page `url` is of page `fps`'s own host.
fn same_host(fps: &Fingerprints, url: Option<&str>) -> bool {
    let mine = fps.compared_host();
    mine.is_some() && url.and_then(crate::text::cites::host_key) == mine
}

/// Whether a page (as compared: `doc`) shares with `theirs` only sentences of lines its host
/// showed before (`seen`, sorted: [`Fingerprints::host_seen`]), each of the two holding a
/// sentence of its own beside them: the page one new to its host, the candidate one the page
/// lacks (a last one cut short aside).
pub(crate) fn through_host_lines(
    doc: crate::fingerprint::Sketches<'_>,
    seen: &[u32],
    theirs: crate::fingerprint::Sketches<'_>,
) -> bool {
    let mut own = false;
    for h in doc.sketch {
        let shared = theirs.sketch.binary_search(h).is_ok();
        let shown = seen.binary_search(h).is_ok();
        if shared && !shown {
            return false;
        }
        own |= !shared && !shown;
    }
    own && (0..theirs.sketch.len())
        .any(|i| !cut_at(theirs, i) && doc.sketch.binary_search(&theirs.sketch[i]).is_err())
}

/// Whether every sentence of `doc` is in `theirs` (sorted sketches), a sentence placed at
/// [`similarity::CUT_PLACE`] aside.
fn within(doc: crate::fingerprint::Sketches<'_>, theirs: crate::fingerprint::Sketches<'_>) -> bool {
    (0..doc.sketch.len())
        .all(|i| cut_at(doc, i) || theirs.sketch.binary_search(&doc.sketch[i]).is_ok())
}

/// Whether sentence `i` of `s` is a last one cut short ([`similarity::CUT_PLACE`]).
fn cut_at(s: crate::fingerprint::Sketches<'_>, i: usize) -> bool {
    s.order.len() == s.sketch.len() && s.order[i] == similarity::CUT_PLACE
}

/// Whether a verified candidate is a strong link, which joins its cluster under tight clusters
/// even when the cluster's first document does not verify: similarity ≥ [`STRONG_LINK`], or
/// (stores with `strong_resemblance_pct`) a 4-gram resemblance that reaches it and exceeds
/// the sentence overlap by [`crate::options::STRONG_GAP`]: a copy edited inside its
/// sentences, where a window overlapping a third document shares whole sentences. In those
/// stores a link by similarity whose sentence overlap exceeds its resemblance by more than
/// [`crate::options::WINDOW_GAP`] is such a window, not strong. In stores with `link_shape`
/// (`shape` given), a link whose shared sentences sit as a copy's do is strong
/// ([`similarity::Shape::copy`]), and one that sits as two windows' do is not strong by
/// similarity ([`similarity::Shape::window`]).
pub(crate) fn is_strong(
    opts: &crate::options::Options,
    similarity: f64,
    sentences: f64,
    resemblance: f64,
    shape: Option<similarity::Shape>,
) -> bool {
    let by_resemblance = opts.strong_resemblance_pct > 0;
    let window =
        by_resemblance && resemblance > 0.0 && sentences - resemblance > crate::options::WINDOW_GAP
            || shape.is_some_and(|s| s.window());
    (similarity >= STRONG_LINK && !window)
        || (by_resemblance
            && resemblance >= f64::from(opts.strong_resemblance_pct) / 100.0
            && resemblance - sentences >= crate::options::STRONG_GAP)
        || shape.is_some_and(|s| s.copy())
}

/// The values in both of two sorted lists.
pub(super) fn sorted_intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}
