//! A page and a candidate as they are compared (pages only): the candidate without the
//! sentences of the lines the page left out as its site's furniture (`furniture.rs`), and,
//! for pages of two hosts, each without the sentences of its site's template that the other
//! lacks. A stored candidate that does not verify so is checked again with what its site
//! taught since it was stored (`rechecked.rs`).

use crate::fingerprint::{Fingerprints, Sketches};

/// A candidate's `sketches` as page `fps` compares them: without the sentences of the lines
/// `fps` left out as its site's furniture (a page of the site fingerprinted before they were
/// known holds them); `sketches` themselves for a page read whole. `kept` holds what is kept.
pub(super) fn without_furniture<'a>(
    fps: &Fingerprints,
    sketches: Sketches<'a>,
    kept: &'a mut (Vec<u32>, Vec<u8>),
) -> Sketches<'a> {
    if fps.furniture.is_empty() {
        return sketches;
    }
    let own = |i: &usize| fps.furniture.binary_search(&sketches.sketch[*i]).is_err();
    let at: Vec<usize> = (0..sketches.sketch.len()).filter(own).collect();
    only(sketches, &at, kept)
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
    let sketches = without_furniture(fps, sketches, furniture);
    let Some(mine) = fps.compared_host() else {
        return (fps.sketches(), sketches);
    };
    // The candidate's URL is read only for a page with a host.
    match url.and_then(crate::text::cites::host_key) {
        Some(host) if host != mine => {
            let sketches = if opts.site_templates {
                without_template(sketches, template, &fps.sketch, theirs)
            } else {
                sketches
            };
            (without_host_seen(fps, Some(sketches.sketch), own), sketches)
        }
        // A stored page of the same host keeps its sentences: its template lines the page
        // lacks are left out of neither (measured: no pair more on the pages set).
        Some(_) if opts.same_site_templates => {
            (without_host_seen(fps, Some(sketches.sketch), own), sketches)
        }
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
    only(sketches, &at, kept)
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
) -> Sketches<'a> {
    match (&fps.host_seen, other) {
        (Some((_, seen)), Some(other)) => without_template(fps.sketches(), seen, other, kept),
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

/// `sketches` with only the sentences at `at` (and their places, where kept); `sketches`
/// themselves when that is all of them. `kept` holds what is kept.
fn only<'a>(
    sketches: Sketches<'a>,
    at: &[usize],
    kept: &'a mut (Vec<u32>, Vec<u8>),
) -> Sketches<'a> {
    if at.len() == sketches.sketch.len() {
        return sketches;
    }
    kept.0 = at.iter().map(|&i| sketches.sketch[i]).collect();
    kept.1 = if sketches.order.len() == sketches.sketch.len() {
        at.iter().map(|&i| sketches.order[i]).collect()
    } else {
        sketches.order.to_vec()
    };
    let kept: &'a (Vec<u32>, Vec<u8>) = kept;
    Sketches {
        sketch: &kept.0,
        order: &kept.1,
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
) -> (Vec<u32>, Vec<u8>) {
    let at: Vec<usize> = (0..rec.sketch.len())
        .filter(|&i| left_out.binary_search(&rec.sketch[i]).is_err())
        .collect();
    let sketch = at.iter().map(|&i| rec.sketch[i]).collect();
    let order = if rec.order.len() == rec.sketch.len() {
        at.iter().map(|&i| rec.order[i]).collect()
    } else {
        rec.order.clone()
    };
    (sketch, order)
}
