//! Figures: the numbers of a document, to tell a report filled into a template from a copy.
//!
//! Two reports built from one template (a daily slaughter estimate, a market close, a lottery
//! draw) share their wording and differ in their figures; a copy keeps the figures, even when
//! its wording is edited. Sentence overlap and 4-gram resemblance see the wording only, and a
//! short report's template is most of its 4-grams. So each document keeps a sketch of its
//! distinct figures, and a pair is a *template instance* when
//!
//! - the document with fewer figures has at least [`MIN_FIGURES`] of them,
//! - fewer than [`SHARED_SHARE`] (two thirds) of them are in the other document, and
//! - the figures that differ are dense: at least [`DIFFER_PER_1000`] per 1,000 characters of
//!   the shorter document.
//!
//! The last condition is the long story updated with new figures: its figures are a small part
//! of its content, and its sentences decide. A short report's figures are its content. One
//! changed figure never makes a template instance (with three figures two must differ), so a
//! repost with a corrected figure stays a copy. The margins measured on the dev sets are in
//! docs/decisions.md ("Template instances are not near-duplicates").
//!
//! A figure is a run of ASCII digits, with `.`, `,`, `:` or `/` between digits kept inside it
//! (`2,140` is `2140`, `1.52`, `6:15`, `3/17`) — in normalized text, where full-width digits
//! and Chinese commas are already ASCII. Figures are compared as a set, so paragraphs moved or
//! dropped do not change what is shared.

use crate::hash::fingerprint64;

/// Most figure hashes kept per document (the smallest, a consistent sample, when it has more).
pub const FIGURES_K: usize = 64;

/// Fewest figures (of the document with fewer) for the figures to say anything.
pub const MIN_FIGURES: usize = 3;

/// A pair sharing less than this share of the smaller figure set may be a template instance.
pub const SHARED_SHARE: f64 = 2.0 / 3.0;

/// Differing figures per 1,000 characters of the shorter document at which a pair whose
/// figures differ is a template instance.
pub const DIFFER_PER_1000: f64 = 2.5;

/// The sorted hashes of the distinct figures of `normalized` text (at most [`FIGURES_K`]: the
/// smallest).
pub fn figures(normalized: &str) -> Vec<u32> {
    let b = normalized.as_bytes();
    let mut out: Vec<u32> = Vec::new();
    let mut token: Vec<u8> = Vec::with_capacity(16);
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i = next_digit(b, i + 1);
            continue;
        }
        token.clear();
        loop {
            while i < b.len() && b[i].is_ascii_digit() {
                token.push(b[i]);
                i += 1;
            }
            let joins = i + 1 < b.len()
                && matches!(b[i], b'.' | b',' | b':' | b'/')
                && b[i + 1].is_ascii_digit();
            if !joins {
                break;
            }
            if b[i] != b',' {
                token.push(b[i]);
            }
            i += 1;
        }
        out.push(fingerprint64(&token) as u32);
    }
    out.sort_unstable();
    out.dedup();
    out.truncate(FIGURES_K);
    out
}

/// The position of the first ASCII digit of `b` from `i` on (`b.len()` when none): eight bytes
/// at a time, since most of a text (all of a Chinese one) holds none.
fn next_digit(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // A byte in '0'..='9' (0x30..=0x39), ASCII only (the high bit clear): its low seven
        // bits plus 0x50 reach 0x80, and plus 0x46 do not.
        let low = x & !HIGH;
        let digit = (low + ONES * 0x50) & !(low + ONES * 0x46) & !x & HIGH;
        if digit != 0 {
            return i + (digit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// Two documents' figures compared ([`compare`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FigureCheck {
    /// Figures of the document with fewer (in the compared part of the sketches).
    pub compared: usize,
    /// Of those, the ones the other document has too.
    pub shared: usize,
    /// Characters of the shorter document.
    pub chars: u64,
}

impl FigureCheck {
    /// Figures of the document with fewer that the other lacks.
    pub fn differ(&self) -> usize {
        self.compared - self.shared
    }

    /// Whether the pair is two reports filled into one template (see the module docs).
    pub fn template(&self) -> bool {
        self.compared >= MIN_FIGURES
            && (self.shared as f64) < SHARED_SHARE * self.compared as f64
            && self.differ() as f64 * 1000.0 >= DIFFER_PER_1000 * self.chars.max(1) as f64
    }
}

/// Compare two figure sketches of documents of `a_chars` and `b_chars` characters. When
/// either sketch is full, only the hashes up to the smaller of their largest values are
/// compared (both samples are complete there). None when either document has no figure.
pub fn compare(a: &[u32], a_chars: u64, b: &[u32], b_chars: u64) -> Option<FigureCheck> {
    let (&ma, &mb) = (a.last()?, b.last()?);
    let cut = if a.len() < FIGURES_K && b.len() < FIGURES_K {
        u32::MAX
    } else {
        ma.min(mb)
    };
    // Both are sorted: the compared parts are prefixes, and the shared hashes one merge walk
    // (no allocation: this runs for every verified candidate).
    let a = &a[..a.partition_point(|&h| h <= cut)];
    let b = &b[..b.partition_point(|&h| h <= cut)];
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    Some(FigureCheck {
        compared: a.len().min(b.len()),
        shared,
        chars: a_chars.min(b_chars),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &str, b: &str) -> FigureCheck {
        let n = |t: &str| crate::text::normalize(t);
        let (x, y) = (n(a), n(b));
        compare(
            &figures(&x),
            x.chars().count() as u64,
            &figures(&y),
            y.chars().count() as u64,
        )
        .expect("both have figures")
    }

    #[test]
    fn figures_keep_their_separators_but_not_thousands_commas() {
        let f = figures("2,140 and 2140, 1.52% at 6:15 on 3/17. end 7.");
        // 2140 (twice), 1.52, 6:15, 3/17, 7: the trailing "." is not inside a figure.
        assert_eq!(f.len(), 5);
        assert_eq!(figures("2,140"), figures("2140"));
        assert_ne!(figures("1.52"), figures("152"));
        assert!(figures("no numbers here").is_empty());
    }

    proptest::proptest! {
        /// The chunked search finds the first digit a byte-by-byte scan finds.
        #[test]
        fn next_digit_equals_a_byte_scan(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            from in 0usize..70,
        ) {
            let from = from.min(bytes.len());
            let slow = (from..bytes.len()).find(|&i| bytes[i].is_ascii_digit()).unwrap_or(bytes.len());
            proptest::prop_assert_eq!(next_digit(&bytes, from), slow);
        }
    }

    #[test]
    fn full_width_digits_and_chinese_commas_are_the_same_figures() {
        let a = crate::text::normalize("净投放２，１４０亿元");
        assert_eq!(figures(&a), figures("2140"));
    }

    #[test]
    fn a_sibling_report_is_a_template_instance_and_its_copy_is_not() {
        let a = "Hog slaughter at about 294k to 304k head versus 296k a week ago and 282k a \
                 year ago. Receipts at Denver were 3,777 head.";
        let sibling = "Hog slaughter at about 279k to 308k head versus 263k a week ago and 297k \
                       a year ago. Receipts at Chicago were 2,942 head.";
        let copy = format!("REPOST: {a}\n(Reporting by the wire desk)");
        let s = check(a, sibling);
        assert_eq!((s.compared, s.shared), (5, 0));
        assert!(s.template());
        assert!(!check(a, &copy).template());
    }

    #[test]
    fn consecutive_daily_reports_that_carry_figures_over_are_template_instances() {
        // Day 2 quotes day 1's closing figures as its "from" figures: 2 of 6 shared.
        let day1 = "Treasury balances at the Federal Reserve fell on March 3 to 2.512 billion \
                    dlrs from 3.107 billion dlrs on the prior business day, the Treasury said. \
                    Balances in tax and loan note accounts fell to 21.475 billion dlrs from \
                    21.863 billion dlrs on the same respective days. The operating cash balance \
                    totaled 23.987 billion dlrs.";
        let day2 = "Treasury balances at the Federal Reserve fell on March 4 to 2.190 billion \
                    dlrs from 2.512 billion dlrs on the prior business day, the Treasury said. \
                    Balances in tax and loan note accounts fell to 20.911 billion dlrs from \
                    21.475 billion dlrs on the same respective days. The operating cash balance \
                    totaled 23.101 billion dlrs.";
        let c = check(day1, day2);
        assert_eq!((c.compared, c.shared), (6, 2));
        assert!(c.template());
    }

    #[test]
    fn one_changed_figure_is_never_a_template_instance() {
        let a = "Rates 1.1, 2.2 and 3.3 today.";
        let b = "Rates 1.1, 2.2 and 3.4 today.";
        let c = check(a, b);
        assert_eq!((c.compared, c.shared, c.differ()), (3, 2, 1));
        assert!(!c.template());
    }

    #[test]
    fn figures_sparse_in_a_long_text_do_not_make_a_template_instance() {
        let body = "A long story whose sentences carry it, whatever its numbers say. ".repeat(40);
        let a = format!("{body} Figures 11, 22, 33, 44.");
        let b = format!("{body} Figures 55, 66, 77, 88.");
        let c = check(&a, &b);
        assert_eq!((c.compared, c.shared), (4, 0));
        assert!(
            !c.template(),
            "4 differing figures in {} characters",
            c.chars
        );
    }

    #[test]
    fn full_sketches_are_compared_below_the_smaller_largest_hash() {
        let many = |from: u32| -> String {
            (from..from + 200)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (a, b) = (figures(&many(1000)), figures(&many(1100)));
        assert_eq!((a.len(), b.len()), (FIGURES_K, FIGURES_K));
        let c = compare(&a, 1000, &b, 1000).unwrap();
        // Half of each set is shared; the estimate from the samples is near one half.
        let share = c.shared as f64 / c.compared as f64;
        assert!((0.25..=0.75).contains(&share), "{c:?}");
        assert_eq!(compare(&a, 10, &[], 10), None);
    }
}
