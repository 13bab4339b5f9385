//! Verification under a store's settings: the similarity a candidate is verified on
//! ([`similarity`](fn@similarity)), with the exceptions that raise it to the threshold
//! (teasers, excerpts, the same characters in another order) and the template rule that
//! sets it to 0, from what each document keeps ([`Sketches`]).

use super::figures;
use super::similarity as sentences;
use crate::options::Options;

/// What verification compares of a document: its sentence sketch, shingle sketch, figures and
/// length.
#[derive(Debug, Clone, Copy)]
pub struct Sketches<'a> {
    /// Sentence sketch.
    pub sketch: &'a [u32],
    /// Where its sentences sit (empty when not kept).
    pub order: &'a [u8],
    /// Shingle sketch.
    pub shingles: &'a [u32],
    /// Figure sketch (empty when not kept).
    pub figures: &'a [u32],
    /// Characters of normalized text.
    pub chars: u64,
}

/// The similarity candidates are verified on, under a store's settings:
/// [`super::similarity::similarity`] with the resemblance floor of the larger document's length; 0 for a
/// template instance ([`figures::FigureCheck::template`]) in stores with `template_figures`;
/// the verification threshold for a teaser under it ([`super::similarity::teaser`]) in stores with
/// `teasers`; the shingle resemblance for the same characters in another order in stores with
/// `reordered_lines`.
pub fn similarity(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> f64 {
    similarity_parts(opts, a, b).0
}

/// [`similarity`](fn@similarity) with its parts: (similarity, sentence overlap, shingle resemblance).
pub fn similarity_parts(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> (f64, f64, f64) {
    let (s, overlap, resemblance) = before_exceptions(opts, a, b);
    let reordered = reordered(opts, a, b, s, resemblance);
    // Two reports of one template whose every sentence holds a changed figure share no
    // sentence: the template rule holds for the reordered-lines exception as well.
    if (s > 0.0 || reordered) && figure_check(opts, a, b).is_some_and(|f| f.template()) {
        return (0.0, overlap, resemblance);
    }
    if reordered {
        return (resemblance, overlap, resemblance);
    }
    if teaser(opts, a, b, s, overlap) || excerpt(opts, a, b, s) {
        // Verified, as weakly as a verified link can be: never a strong one.
        return (opts.verify_threshold(), overlap, resemblance);
    }
    (s, overlap, resemblance)
}

/// Whether a pair of similarity `s` (under the verification threshold, over 0: they share a
/// sentence) is verified as an excerpt and its article ([`super::similarity::excerpt`]), in stores
/// with `excerpts`.
fn excerpt(opts: &Options, a: Sketches<'_>, b: Sketches<'_>, s: f64) -> bool {
    opts.excerpts
        && s > 0.0
        && s < opts.verify_threshold()
        && sentences::excerpt(
            a.sketch,
            a.order,
            b.sketch,
            b.order,
            (opts.headings, opts.cut_excerpts),
        )
        .is_ok()
}

/// Whether two documents are verified only as an excerpt and its article (what
/// [`similarity`](fn@similarity) gives them is the verification threshold, raised from under it), and if
/// not, why not ([`super::similarity::NotExcerpt`]); `None` when they verify without the rule or
/// the store has no `excerpts`.
pub fn verified_as_excerpt(
    opts: &Options,
    a: Sketches<'_>,
    b: Sketches<'_>,
) -> Option<Result<(), sentences::NotExcerpt>> {
    let (s, overlap, _) = before_exceptions(opts, a, b);
    if !opts.excerpts
        || s >= opts.verify_threshold()
        || figure_check(opts, a, b).is_some_and(|f| f.template())
        || teaser(opts, a, b, s, overlap)
    {
        return None;
    }
    Some(
        sentences::excerpt(
            a.sketch,
            a.order,
            b.sketch,
            b.order,
            (opts.headings, opts.cut_excerpts),
        )
        .map_err(|e| {
            if s > 0.0 {
                e
            } else {
                sentences::NotExcerpt::TooFewShared
            }
        }),
    )
}

/// Whether two documents verified only as an excerpt and its article do so because the
/// smaller's last sentence, cut short, is not counted as its own (`cut_excerpts`): without
/// that, they would not.
pub fn excerpt_by_cut(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> bool {
    opts.cut_excerpts
        && verified_as_excerpt(opts, a, b).is_some_and(|r| r.is_ok())
        && sentences::excerpt(a.sketch, a.order, b.sketch, b.order, (opts.headings, false)).is_err()
}

/// Whether a pair of similarity `s` is verified on its shingle `resemblance` as the same
/// characters in another order (`reordered_lines`): the resemblance did not count at its
/// length, reaches [`crate::options::REORDERED_RESEMBLANCE`], and the two are the same length
/// (within [`crate::options::REORDERED_CHARS_PER_MILLE`]). Their figures are not compared
/// beyond the template rule, which comes first: a figure cut at a line end reads as two in
/// the reordered copy.
fn reordered(opts: &Options, a: Sketches<'_>, b: Sketches<'_>, s: f64, resemblance: f64) -> bool {
    use crate::options::{REORDERED_CHARS_PER_MILLE, REORDERED_RESEMBLANCE};
    let longer = a.chars.max(b.chars);
    opts.reordered_lines
        && s < resemblance
        && resemblance >= REORDERED_RESEMBLANCE
        && a.chars.abs_diff(b.chars) * 1000 <= REORDERED_CHARS_PER_MILLE * longer
}

/// Whether two documents are verified only as the same characters in another order
/// ([`Options::reordered_lines`]): what [`similarity`](fn@similarity) gives them is their resemblance, which
/// their length would not count otherwise.
pub fn verified_as_reordered(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> bool {
    let (s, _, r) = before_exceptions(opts, a, b);
    !figure_check(opts, a, b).is_some_and(|f| f.template()) && reordered(opts, a, b, s, r)
}

/// [`super::similarity::similarity_parts`] with the resemblance floor of the pair's length: the
/// similarity before the template rule and the teaser and reordered-lines exceptions.
fn before_exceptions(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> (f64, f64, f64) {
    sentences::similarity_parts(
        a.sketch,
        a.shingles,
        b.sketch,
        b.shingles,
        opts.resemblance_floor(a.chars.max(b.chars)),
    )
}

/// Whether a pair of similarity `s` and sentence `overlap` (under the verification threshold)
/// is verified as a teaser and its article ([`super::similarity::teaser`]), in stores with
/// `teasers`. A teaser shares at least a third of the larger's sentences, which is what the
/// overlap counts: a pair under it is not walked again.
fn teaser(opts: &Options, a: Sketches<'_>, b: Sketches<'_>, s: f64, overlap: f64) -> bool {
    const SLACK: f64 = 1e-9;
    opts.teasers
        && s < opts.verify_threshold()
        && overlap * sentences::TEASER_PARTS as f64 >= 1.0 - SLACK
        && sentences::teaser(
            a.sketch,
            a.order,
            b.sketch,
            b.order,
            opts.page_teasers,
            opts.headings,
        )
}

/// Whether two documents are verified only as a teaser and its article: what
/// [`similarity`](fn@similarity) gives them is the verification threshold, raised from under it.
pub fn verified_as_teaser(opts: &Options, a: Sketches<'_>, b: Sketches<'_>) -> bool {
    let (s, overlap, _) = before_exceptions(opts, a, b);
    s > 0.0
        && !figure_check(opts, a, b).is_some_and(|f| f.template())
        && teaser(opts, a, b, s, overlap)
}

/// The figures of two documents compared, in stores with `template_figures` (None otherwise, or
/// when either has no figure).
pub fn figure_check(
    opts: &Options,
    a: Sketches<'_>,
    b: Sketches<'_>,
) -> Option<figures::FigureCheck> {
    if !opts.template_figures {
        return None;
    }
    figures::compare(a.figures, a.chars, b.figures, b.chars)
}
