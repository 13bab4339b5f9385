//! A page and a candidate as they are compared (pages only): the candidate without the
//! sentences of the lines the page left out as its site's furniture (`furniture.rs`), and,
//! for pages of two hosts, each without the sentences of its site's template that the other
//! lacks. A stored candidate that does not verify so is checked again with what its site
//! taught since it was stored (`rechecked.rs`).

use crate::fingerprint::{Fingerprints, Sketches};

/// What a page keeps of its sketches when lines are left out of it, by the store's rules: its
/// last sentence kept before them placed as cut short (`cut_excerpts`: [`cut_before_left_out`]),
/// and no figures (`left_out_figures`: its figures are its whole text's, those lines' included,
/// and its sketch does not say which line held which; the pair is judged by its sentences).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LeftOut {
    /// `cut_excerpts`.
    pub(super) cut: bool,
    /// `left_out_figures`.
    pub(super) figures: bool,
}

impl LeftOut {
    /// The store's rules.
    pub(super) fn of(opts: &crate::options::Options) -> LeftOut {
        LeftOut {
            cut: opts.cut_excerpts,
            figures: opts.left_out_figures,
        }
    }
}

/// A candidate's `sketches` as page `fps` compares them: without the sentences of the lines
/// `fps` left out as its site's furniture (a page of the site fingerprinted before they were
/// known holds them); `sketches` themselves for a page read whole. `kept` holds what is kept.
pub(super) fn without_furniture<'a>(
    fps: &Fingerprints,
    sketches: Sketches<'a>,
    kept: &'a mut (Vec<u32>, Vec<u8>),
    left: LeftOut,
) -> Sketches<'a> {
    if fps.furniture.is_empty() {
        return sketches;
    }
    let own = |i: &usize| fps.furniture.binary_search(&sketches.sketch[*i]).is_err();
    let at: Vec<usize> = (0..sketches.sketch.len()).filter(own).collect();
    only(sketches, &at, kept, left)
}

/// Room for the sentences [`as_compared`] keeps of a page and of a candidate.
#[derive(Default)]
pub(super) struct Kept {
    furniture: (Vec<u32>, Vec<u8>),
    template: (Vec<u32>, Vec<u8>),
    own: (Vec<u32>, Vec<u8>),
}

/// Page `fps` and a candidate's `sketches` (the stored page of `url`, whose site's template is
/// `template`: [`crate::store::schema::DocRecord::template`]) as they are compared: the
/// candidate without the page's furniture ([`without_furniture`]); for pages of two hosts,
/// the candidate without its template's sentences the page lacks (stores with
/// `site_templates`) and the page without the sentences its host showed before that the
/// candidate lacks ([`without_host_seen`]); for two pages of one host, the page without those
/// (stores with `same_site_templates`).
pub(super) fn as_compared<'a>(
    opts: &crate::options::Options,
    fps: &'a Fingerprints,
    sketches: Sketches<'a>,
    (url, template): (Option<&str>, &'a [u32]),
    kept: &'a mut Kept,
) -> (Sketches<'a>, Sketches<'a>) {
    let Kept {
        furniture,
        template: theirs,
        own,
    } = kept;
    let left = LeftOut::of(opts);
    let sketches = without_furniture(fps, sketches, furniture, left);
    let Some(mine) = fps.compared_host() else {
        return (fps.sketches(), sketches);
    };
    // The candidate's URL is read only for a page with a host.
    match url.and_then(crate::text::cites::host_key) {
        Some(host) if host != mine => {
            let sketches = if opts.site_templates {
                without_template(sketches, template, &fps.sketch, theirs, left)
            } else {
                sketches
            };
            (
                without_host_seen(fps, Some(sketches.sketch), own, left),
                sketches,
            )
        }
        // A stored page of the same host keeps its sentences: its template lines the page
        // lacks are left out of neither (measured: no pair more on the pages set).
        Some(_) if opts.same_site_templates => (
            without_host_seen(fps, Some(sketches.sketch), own, left),
            sketches,
        ),
        _ => (fps.sketches(), sketches),
    }
}

/// A page's `sketches` as a page of another host, whose sentence sketch is `other`, compares
/// them: without the sentences of its site's `template` (the lines its host showed before it,
/// not yet furniture then) that `other` lacks, unless that leaves out more than half of them.
/// For a stored page, from what its record keeps; for the page being compared, from its
/// [`Fingerprints::host_seen`] ([`without_host_seen`]). `kept` holds what is kept.
fn without_template<'a>(
    sketches: Sketches<'a>,
    template: &[u32],
    other: &[u32],
    kept: &'a mut (Vec<u32>, Vec<u8>),
    left: LeftOut,
) -> Sketches<'a> {
    if template.is_empty() {
        return sketches;
    }
    let own = |i: &usize| {
        let h = sketches.sketch[*i];
        template.binary_search(&h).is_err() || other.binary_search(&h).is_ok()
    };
    let at: Vec<usize> = (0..sketches.sketch.len()).filter(own).collect();
    if 2 * at.len() < sketches.sketch.len() {
        return sketches;
    }
    only(sketches, &at, kept, left)
}

/// Page `fps`'s sketches as a page of another host, whose sentence sketch is `other`,
/// compares them (None: a page of the same host, which compares them whole): without the
/// sentences of the lines its host showed before ([`Fingerprints::host_seen`]: its site's
/// template, not yet seen in enough clusters to be its furniture) that `other` lacks, unless
/// that leaves out more than half of them. A line of its site's template can only make a
/// copy on another site look less like it; the sentences the two share count whatever the
/// host showed. `kept` holds what is kept.
pub(super) fn without_host_seen<'a>(
    fps: &'a Fingerprints,
    other: Option<&[u32]>,
    kept: &'a mut (Vec<u32>, Vec<u8>),
    left: LeftOut,
) -> Sketches<'a> {
    match (&fps.host_seen, other) {
        (Some((_, seen)), Some(other)) => without_template(fps.sketches(), seen, other, kept, left),
        _ => fps.sketches(),
    }
}

/// Whether [`as_compared`] left a site's template lines out of page `fps` (`doc` is what it
/// kept of it) or of the candidate (`theirs` of `whole`, beyond the page's furniture).
pub(super) fn template_left_out(
    fps: &Fingerprints,
    doc: Sketches<'_>,
    whole: Sketches<'_>,
    theirs: Sketches<'_>,
) -> bool {
    if doc.sketch.len() != fps.sketch.len() {
        return true;
    }
    if theirs.sketch.len() == whole.sketch.len() {
        return false;
    }
    let furniture = |h: &u32| fps.furniture.binary_search(h).is_ok();
    whole.sketch.iter().filter(|h| !furniture(h)).count() != theirs.sketch.len()
}

/// `sketches` with only the sentences at `at` (and their places, where kept; without figures
/// under `left_out_figures`, [`LeftOut`]); `sketches` themselves when that is all of them.
/// `kept` holds what is kept.
fn only<'a>(
    sketches: Sketches<'a>,
    at: &[usize],
    kept: &'a mut (Vec<u32>, Vec<u8>),
    left: LeftOut,
) -> Sketches<'a> {
    if at.len() == sketches.sketch.len() {
        return sketches;
    }
    *kept = kept_at(sketches.sketch, sketches.order, at, left.cut);
    let kept: &'a (Vec<u32>, Vec<u8>) = kept;
    Sketches {
        sketch: &kept.0,
        order: &kept.1,
        figures: if left.figures { &[] } else { sketches.figures },
        ..sketches
    }
}

/// The whole sketches of page `fps` when its furniture is most of its main text (kept in
/// [`Fingerprints::whole`] in stores with `site_knowledge`) and the candidate's `url` is of
/// another host.
pub(super) fn whole_elsewhere<'a>(
    fps: &'a Fingerprints,
    url: Option<&str>,
) -> Option<crate::fingerprint::Sketches<'a>> {
    let w = fps.whole.as_deref().filter(|w| !w.sketch.is_empty())?;
    let theirs = url.and_then(crate::text::cites::host_key)?;
    (fps.host_key.is_some_and(|h| h != theirs)).then(|| w.sketches())
}

/// Stored record `rec`'s sentence sketch and their places without the sentences of
/// `left_out` (sorted): a stored page as it would have been stored had those lines been left
/// out (`rechecked.rs`, late links). Places that do not run parallel to the sketch are kept
/// as they are.
pub(super) fn sketch_without(
    rec: &crate::store::schema::DocRecord,
    left_out: &[u32],
    cut: bool,
) -> (Vec<u32>, Vec<u8>) {
    let at: Vec<usize> = (0..rec.sketch.len())
        .filter(|&i| left_out.binary_search(&rec.sketch[i]).is_err())
        .collect();
    kept_at(&rec.sketch, &rec.order, &at, cut)
}

/// The sentences at `at` of `sketch` and their places in `order`, where it runs parallel to
/// the sketch (else `order` as it is); with `cut` ([`cut_before_left_out`]), the last kept
/// before a sentence left out placed as cut short.
fn kept_at(sketch: &[u32], order: &[u8], at: &[usize], cut: bool) -> (Vec<u32>, Vec<u8>) {
    let kept = at.iter().map(|&i| sketch[i]).collect();
    if order.len() != sketch.len() {
        return (kept, order.to_vec());
    }
    let mut places: Vec<u8> = at.iter().map(|&i| order[i]).collect();
    if cut {
        cut_before_left_out(order, at, &mut places);
    }
    (kept, places)
}

/// Stores with `cut_excerpts`: of a page's sentences kept (`kept`, the places of those at `at`
/// of `all`), the last one, when a sentence left out comes after it, sits at
/// [`CUT_PLACE`](crate::fingerprint::similarity::CUT_PLACE), where a page's last sentence cut
/// short does: an excerpt cut short where its site's template begins has the template's lines
/// after its cut, so its ingest did not mark it, and its record does not say whether the
/// sentence ended at its line's end. The excerpt rule reads the place (such a sentence the
/// larger lacks is not the excerpt's own), as does [`Checked::within`](super::checked::Checked).
/// Nothing is moved when a kept sentence already sits there.
fn cut_before_left_out(all: &[u8], at: &[usize], kept: &mut [u8]) {
    use crate::fingerprint::similarity::CUT_PLACE;
    if kept.contains(&CUT_PLACE) {
        return;
    }
    let Some(j) = (0..kept.len())
        .filter(|&j| kept[j] < CUT_PLACE)
        .max_by_key(|&j| kept[j])
    else {
        return;
    };
    let later = (0..all.len())
        .filter(|i| at.binary_search(i).is_err())
        .any(|i| all[i] < CUT_PLACE && all[i] > kept[j]);
    if later {
        kept[j] = CUT_PLACE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::similarity::CUT_PLACE;
    use crate::store::schema::DocRecord;

    fn record(sketch: &[u32], order: &[u8]) -> DocRecord {
        DocRecord {
            sketch: sketch.to_vec(),
            order: order.to_vec(),
            ..DocRecord::default()
        }
    }

    #[test]
    fn the_last_sentence_kept_before_lines_left_out_sits_where_a_cut_one_does() {
        // Sentences 1, 2, 3 in that order in the text, then the template's 4 and 5.
        let rec = record(&[10, 20, 30, 40, 50], &[0, 51, 102, 153, 204]);
        let (sketch, order) = sketch_without(&rec, &[40, 50], true);
        assert_eq!(sketch, [10, 20, 30]);
        assert_eq!(order, [0, 51, CUT_PLACE]);
        // Without `cut_excerpts` the places are kept.
        assert_eq!(sketch_without(&rec, &[40, 50], false).1, [0, 51, 102]);
        // Lines left out before the text (a header) cut nothing.
        assert_eq!(sketch_without(&rec, &[10], true).1, [51, 102, 153, 204]);
        // A sentence already cut short stays the only one there.
        let cut = record(&[10, 20, 30, 40], &[0, 64, CUT_PLACE, 128]);
        assert_eq!(sketch_without(&cut, &[40], true).1, [0, 64, CUT_PLACE]);
        // The sketch is sorted by hash, not by place: the last by place is marked.
        let rec = record(&[10, 20, 30, 40], &[153, 0, 204, 51]);
        assert_eq!(sketch_without(&rec, &[30], true).1, [CUT_PLACE, 0, 51]);
    }
}
