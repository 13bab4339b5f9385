//! How two documents' sketches compare: the sentence [`overlap`], the shingle
//! [`resemblance`], the [`similarity`] a candidate is verified on, and the [`Shape`] of what
//! they share (a copy or two overlapping windows).

use super::minhash::SHORT_SENTENCES;
use super::nshash::SKETCH_MAX;
/// The resemblance floor of stores made before the setting (see [`similarity`]).
pub use crate::options::LONG_RESEMBLANCE;

/// The similarity a candidate is verified on: the sentence [`overlap`]; for short documents
/// the better of it and the shingle [`resemblance`]; for longer ones the resemblance too when
/// it reaches `long` (a store's [`crate::Options::resemblance_floor`]: [`LONG_RESEMBLANCE`] in
/// stores made before the setting).
pub fn similarity(
    a_sketch: &[u32],
    a_shingles: &[u32],
    b_sketch: &[u32],
    b_shingles: &[u32],
    long: f64,
) -> f64 {
    similarity_parts(a_sketch, a_shingles, b_sketch, b_shingles, long).0
}

/// [`similarity`], with the sentence overlap and the shingle resemblance it was made of (the
/// resemblance 0 when either has no shingle sketch).
pub fn similarity_parts(
    a_sketch: &[u32],
    a_shingles: &[u32],
    b_sketch: &[u32],
    b_shingles: &[u32],
    long: f64,
) -> (f64, f64, f64) {
    let overlap = overlap(a_sketch, b_sketch);
    if a_shingles.is_empty() || b_shingles.is_empty() {
        return (overlap, overlap, 0.0);
    }
    let r = resemblance(a_shingles, b_shingles);
    let short = a_sketch.len().max(b_sketch.len()) <= SHORT_SENTENCES;
    let s = if short || r >= long {
        overlap.max(r)
    } else {
        overlap
    };
    (s, overlap, r)
}

/// Jaccard resemblance estimated from two bottom-k sketches: the share of the union's k
/// smallest hashes found in both. 0 when either is empty.
pub fn resemblance(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    // Both sketches come from one store, so have one size; a shorter one is a short text.
    let k = a.len().max(b.len());
    let (mut i, mut j, mut seen, mut both) = (0, 0, 0, 0);
    while seen < k && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), Some(_)) | (None, Some(_)) => j += 1,
            (Some(_), None) => i += 1,
            (None, None) => break,
        }
        seen += 1;
    }
    f64::from(both) / seen.max(1) as f64
}

/// Sentence overlap of two documents from their sketches: shared sentences over the sentences
/// of the larger one (so a short text quoted inside a long reply is not a near-duplicate of it,
/// while a copy with a paragraph added, dropped or cut keeps most of its sentences). Sketches
/// are bottom-k samples: both are cut at the smaller of their largest values when either is
/// full, which keeps the estimate fair for documents over [`SKETCH_MAX`] sentences. 0 when
/// either is empty.
pub fn overlap(a: &[u32], b: &[u32]) -> f64 {
    let c = counts(a, b);
    let large = c.a.max(c.b);
    if large == 0 {
        0.0
    } else {
        c.shared as f64 / large as f64
    }
}

/// How many sentences of two sketches are compared, on each side, and how many of them both
/// hold, as [`overlap`] counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// A's sentences compared.
    pub a: usize,
    /// B's sentences compared.
    pub b: usize,
    /// Sentences in both.
    pub shared: usize,
}

/// The [`Counts`] of two sketches.
pub fn counts(a: &[u32], b: &[u32]) -> Counts {
    let mut c = Counts::default();
    compared(a, b, |step| match step {
        Step::Both(..) => {
            c.shared += 1;
            c.a += 1;
            c.b += 1;
        }
        Step::OnlyA(_) => c.a += 1,
        Step::OnlyB(_) => c.b += 1,
    });
    c
}

/// One entry of two sketches walked in hash order by [`compared`], by index.
enum Step {
    /// In both (index in A, index in B).
    Both(usize, usize),
    /// In A only.
    OnlyA(usize),
    /// In B only.
    OnlyB(usize),
}

/// Walk the entries two sketches are compared on, in hash order: all of both, or, when
/// either is full ([`SKETCH_MAX`]), those up to the smaller of their largest values (which
/// keeps the comparison fair for documents with more sentences than a sketch holds). Nothing
/// when either is empty.
fn compared(a: &[u32], b: &[u32], mut f: impl FnMut(Step)) {
    let (Some(&ma), Some(&mb)) = (a.last(), b.last()) else {
        return;
    };
    let cut = if a.len() < SKETCH_MAX && b.len() < SKETCH_MAX {
        u32::MAX
    } else {
        ma.min(mb)
    };
    let (mut i, mut j) = (0, 0);
    loop {
        let x = a.get(i).copied().filter(|&v| v <= cut);
        let y = b.get(j).copied().filter(|&v| v <= cut);
        match (x, y) {
            (Some(x), Some(y)) if x == y => {
                f(Step::Both(i, j));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                f(Step::OnlyA(i));
                i += 1;
            }
            (Some(_), None) => {
                f(Step::OnlyA(i));
                i += 1;
            }
            (_, Some(_)) => {
                f(Step::OnlyB(j));
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// The place in a sketch's order ([`super::nshash::sketch_of`]) of a page's heading, in a
/// store with `headings`: no other sentence of such a store sits there, and a [`Shape`]
/// leaves headings out, so that a headline or a byline above an article is not a sentence
/// of its own before the article's first one.
pub const HEADING_PLACE: u8 = u8::MAX;

/// The place in a sketch's order of a page's last sentence when it ends at its line's end, not
/// at a sentence end (cut short, or a "Read more" line), in a store with `cut_excerpts`: no
/// other sentence of such a store sits there ([`super::nshash::sketch_of`]), and [`excerpt`]
/// does not count it as the excerpt's own sentence.
pub const CUT_PLACE: u8 = HEADING_PLACE - 1;

/// Where the sentences two documents share sit in each of them, from their sentence sketches
/// and orders ([`super::nshash::sketch_of`]): what tells a copy of a document from a window overlapping it.
/// Two windows of one longer text each have their own sentences at one end, at opposite ends:
/// one before the shared run, the other after it. A copy has own sentences where it was
/// edited or added to (inside), and at its ends only at the same end as the original's (a
/// new title for the first paragraph) or on one side only (a title or an ad added).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// A's own sentences (of those compared, as [`overlap`] compares them).
    pub a: Ends,
    /// B's own sentences.
    pub b: Ends,
    /// Sentences in both.
    pub shared: usize,
}

/// Where one document's own sentences (those the other lacks) sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ends {
    /// Before its first shared sentence.
    pub head: usize,
    /// Between its first and last shared sentences.
    pub inner: usize,
    /// After its last shared sentence.
    pub tail: usize,
}

impl Ends {
    /// All its own sentences.
    pub fn total(&self) -> usize {
        self.head + self.inner + self.tail
    }
}

impl Shape {
    /// Two overlapping windows: one document has own sentences before the shared ones and
    /// the other after them.
    pub fn window(&self) -> bool {
        let (a, b) = (&self.a, &self.b);
        (a.head > 0 && b.tail > 0) || (a.tail > 0 && b.head > 0)
    }

    /// Shaped as a copy: not two windows, and different inside the shared run (a sentence
    /// edited, a paragraph inserted), which windows of one text are not. Documents that
    /// differ only at their ends are not taken as copies: a copy with a part cut and a
    /// window whose far end holds no sentence long enough to count look alike.
    pub fn copy(&self) -> bool {
        !self.window() && self.a.inner + self.b.inner > 0
    }

    /// `copy`, `window` or `ends only` (neither: they differ only at their ends).
    pub fn name(&self) -> &'static str {
        if self.copy() {
            "copy"
        } else if self.window() {
            "window"
        } else {
            "ends only"
        }
    }
}

/// A teaser shares at least this many sentences with its article.
pub const TEASER_MIN_SHARED: usize = 3;

/// A teaser holds at least one in this many of its article's sentences (a third).
pub const TEASER_PARTS: usize = 3;

/// A teaser on a page (`page_teasers`) may hold sentences of its own, up to one in this many
/// of those it shares with its article: its page's video box, a pull-quote, a "read more"
/// line. A different article of the same site, and either of two overlapping windows, has at
/// least two in seven of its own (docs/accuracy.md, "Teasers on pages").
pub const TEASER_OWN_PARTS: usize = 8;

/// Under `page_teasers`, the article may have up to this many sentences of its own before
/// the first one the teaser shows: a standfirst or a subtitle the teaser page leaves out.
pub const TEASER_HEAD_MOST: usize = 2;

/// Whether one of two documents is a teaser of the other: every sentence of the smaller is
/// in the larger, they share at least [`TEASER_MIN_SHARED`] and at least one in
/// [`TEASER_PARTS`] of the larger's, and the larger has no sentence of its own before the first shared one
/// (the teaser shows its article's beginning, with the same page around it or none). A
/// page showing the first half of an article and a "read more" link is one; a quotation, a
/// digest of several articles or one of two overlapping windows is not (the margins of each
/// labeled set: docs/accuracy.md, "Teasers"). With `page` (stores with `page_teasers`), the
/// smaller may hold sentences of its own, one in [`TEASER_OWN_PARTS`] of those shared, and the
/// larger up to [`TEASER_HEAD_MOST`] before the first shared one. False when either lacks an
/// order. `headings`: the store's, as [`shape`] takes it.
pub fn teaser(
    a: &[u32],
    a_order: &[u8],
    b: &[u32],
    b_order: &[u8],
    page: bool,
    headings: bool,
) -> bool {
    let c = counts(a, b);
    let (small, large) = (c.a.min(c.b), c.a.max(c.b));
    let own = small - c.shared;
    let (own_most, head_most) = if page {
        (c.shared / TEASER_OWN_PARTS, TEASER_HEAD_MOST)
    } else {
        (0, 0)
    };
    if c.shared < TEASER_MIN_SHARED || own > own_most || c.shared * TEASER_PARTS < large {
        return false;
    }
    // The larger's beginning; for two of one size (never under the verification threshold
    // in a lookup), both beginnings, so that the order of the two does not matter.
    shape(a, a_order, b, b_order, headings).is_some_and(|s| {
        (c.a < c.b || s.a.head <= head_most) && (c.b < c.a || s.b.head <= head_most)
    })
}

/// An excerpt shares at least this many sentences with its article: its opening.
pub const EXCERPT_MIN_SHARED: usize = 2;

/// An excerpt may hold at most this many sentences of its own (a "Read more" line long
/// enough to be a sentence, a line of the page around it), and only when it shares three or
/// more: two sentences of an article and one of its own are as much a quotation with a
/// comment as an excerpt (the short-page set's `lede_quoted`).
pub const EXCERPT_OWN_MOST: usize = 1;

/// Why two documents are not an excerpt and its article ([`excerpt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotExcerpt {
    /// Their sentences cannot be placed (a record of an older store).
    NoOrder,
    /// The two hold as many sentences: neither is an excerpt of the other.
    SameSize,
    /// They share fewer than [`EXCERPT_MIN_SHARED`] sentences.
    TooFewShared,
    /// The smaller holds more than [`EXCERPT_OWN_MOST`] sentences of its own.
    OwnSentences,
    /// The larger has sentences of its own before the first shared one: not its opening.
    NotTheOpening,
    /// The larger has sentences of its own between the shared ones: not its first
    /// sentences in a run.
    NotInARun,
}

impl NotExcerpt {
    /// The condition that failed, in words.
    pub fn reason(self) -> &'static str {
        match self {
            NotExcerpt::NoOrder => "the sentences' places are not stored",
            NotExcerpt::SameSize => "the two hold as many sentences",
            NotExcerpt::TooFewShared => "they share fewer than 2 sentences",
            NotExcerpt::OwnSentences => {
                "the smaller has sentences of its own (at most 1, and none beside 2 shared)"
            }
            NotExcerpt::NotTheOpening => {
                "the larger has sentences of its own before the first shared one"
            }
            NotExcerpt::NotInARun => "the larger has sentences of its own between the shared ones",
        }
    }
}

/// Whether the smaller of two documents is an excerpt of the larger: the larger's first
/// sentences, at least [`EXCERPT_MIN_SHARED`] of them, in a run (no sentence of the larger
/// before or between them), with at most [`EXCERPT_OWN_MOST`] of its own (none when it
/// shares only two), whatever its share of the larger. A teaser of a tenth of its article is one; a quotation of an article's
/// opening followed by an article of its own, the later of two overlapping windows, and
/// another article of the same template are not (docs/accuracy.md, "Excerpts"). `Err` names
/// the condition that failed. `headings`: the store's, as [`shape`] takes it (a page's
/// headings are neither its own sentences nor its article's first). `cuts`: the store's
/// `cut_excerpts`: the smaller's last sentence, cut short ([`CUT_PLACE`]) and not shared, is
/// not its own.
pub fn excerpt(
    a: &[u32],
    a_order: &[u8],
    b: &[u32],
    b_order: &[u8],
    (headings, cuts): (bool, bool),
) -> Result<(), NotExcerpt> {
    if a.len() == b.len() {
        return Err(NotExcerpt::SameSize);
    }
    let s = shape(a, a_order, b, b_order, headings).ok_or(
        if a.len() != a_order.len() || b.len() != b_order.len() {
            NotExcerpt::NoOrder
        } else {
            NotExcerpt::TooFewShared
        },
    )?;
    let (small, large, (cut_sketch, cut_order, other)) = if a.len() < b.len() {
        (s.a, s.b, (a, a_order, b))
    } else {
        (s.b, s.a, (b, b_order, a))
    };
    // The smaller's last sentence cut short, not shared: where the excerpt was cut, not a
    // sentence of its own (it is the last, so it is counted in the tail).
    let cut = cuts
        && small.tail > 0
        && cut_order
            .iter()
            .position(|&p| p == CUT_PLACE)
            .is_some_and(|i| other.binary_search(&cut_sketch[i]).is_err());
    if s.shared < EXCERPT_MIN_SHARED {
        Err(NotExcerpt::TooFewShared)
    } else if small.total() - usize::from(cut) > EXCERPT_OWN_MOST.min(s.shared / 3) {
        Err(NotExcerpt::OwnSentences)
    } else if large.head > 0 {
        Err(NotExcerpt::NotTheOpening)
    } else if large.inner > 0 {
        Err(NotExcerpt::NotInARun)
    } else {
        Ok(())
    }
}

/// The [`Shape`] of two documents' shared sentences; `None` when either lacks an order (a
/// record of an older store) or they share no sentence. With `headings` (stores with
/// `headings`), sentences at [`HEADING_PLACE`] in either document are left out, shared or not.
pub fn shape(
    a: &[u32],
    a_order: &[u8],
    b: &[u32],
    b_order: &[u8],
    headings: bool,
) -> Option<Shape> {
    if a.len() != a_order.len() || b.len() != b_order.len() {
        return None;
    }
    let heading = |place: u8| headings && place == HEADING_PLACE;
    // (place, shared) of each compared sentence.
    let (mut pa, mut pb) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
    let mut shared = 0;
    compared(a, b, |step| match step {
        Step::Both(i, j) if !heading(a_order[i]) && !heading(b_order[j]) => {
            pa.push((a_order[i], true));
            pb.push((b_order[j], true));
            shared += 1;
        }
        Step::OnlyA(i) if !heading(a_order[i]) => pa.push((a_order[i], false)),
        Step::OnlyB(j) if !heading(b_order[j]) => pb.push((b_order[j], false)),
        Step::Both(..) | Step::OnlyA(_) | Step::OnlyB(_) => {}
    });
    (shared > 0).then(|| Shape {
        a: ends(&mut pa),
        b: ends(&mut pb),
        shared,
    })
}

/// [`Ends`] of one document's (place, shared) sentences.
fn ends(v: &mut [(u8, bool)]) -> Ends {
    // At one place (over 256 sentences), own sentences count as before the shared ones.
    v.sort_unstable();
    let first = v.iter().position(|p| p.1).unwrap_or(v.len());
    let last = v.iter().rposition(|p| p.1).map_or(0, |l| l + 1);
    let own = |s: &[(u8, bool)]| s.iter().filter(|p| !p.1).count();
    Ends {
        head: first,
        inner: own(&v[first..last.max(first)]),
        tail: v.len() - last.max(first),
    }
}

#[cfg(test)]
mod tests;
