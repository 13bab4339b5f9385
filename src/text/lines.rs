//! The lines of a page as a site repeats them: what a store with `furniture` counts across the
//! pages of one host (`engine/furniture.rs`), and the text of a page without the lines found
//! to be its site's furniture.
//!
//! A line is a line of the text as given (an HTML page's text is one line per block). It is
//! keyed by its letters and digits, lower-cased: spacing, punctuation and case do not make
//! two lines differ, a changed figure does (two reports of one template with other figures
//! are other lines, so the template rule still tells them apart).

use super::is_plain_ideograph;
use super::sentences::is_word_char;

/// The fewest letters and digits a line must have to be counted: shorter lines ("Share",
/// "Read more", a date) carry too little to tell one site's line from another's, and leaving
/// them in costs little (the sentence sketch skips most of them too).
pub const MIN_LINE_CHARS: usize = 10;

/// The fewest letters and digits a page must keep without its furniture lines: a page that
/// is (nearly) all furniture is fingerprinted whole, as it was before its site's lines were
/// known, rather than as the few characters left.
pub const MIN_KEPT_CHARS: usize = 50;

/// The key of one line: its letters and digits, lower-cased, hashed (None under
/// [`MIN_LINE_CHARS`]).
pub fn line_key(line: &str) -> Option<u64> {
    sized_line_key(line).map(|(k, _)| k)
}

/// [`line_key`] and how many letters and digits the line holds.
fn sized_line_key(line: &str) -> Option<(u64, u32)> {
    let mut s = String::with_capacity(line.len());
    let n = push_lower_word_chars(line, &mut s);
    (n as usize >= MIN_LINE_CHARS).then(|| (crate::hash::fingerprint64(s.as_bytes()), n))
}

/// Appends the letters and digits of `line` ([`is_word_char`]) to `out` in lower case
/// (`char::to_lowercase`) and says how many there were. ASCII and ideographs, most of a page,
/// skip the general case mapping.
pub fn push_lower_word_chars(line: &str, out: &mut String) -> u32 {
    let mut n = 0u32;
    for c in line.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                n += 1;
                out.push(c.to_ascii_lowercase());
            }
        } else if is_plain_ideograph(c) {
            n += 1;
            out.push(c);
        } else if is_word_char(c) {
            n += 1;
            out.extend(c.to_lowercase());
        }
    }
    n
}

/// The distinct keys of the lines of `text` ([`line_key`]), sorted, each with its line's
/// letters and digits (the first line of a key's).
pub fn line_keys(text: &str) -> Vec<(u64, u32)> {
    let mut keys: Vec<(u64, u32)> = text.lines().filter_map(sized_line_key).collect();
    keys.sort_by_key(|&(k, _)| k);
    keys.dedup_by_key(|&mut (k, _)| k);
    keys
}

/// `text` without the lines whose key `is_furniture` says is furniture: None when no line is
/// left out, or when what is left has fewer than [`MIN_KEPT_CHARS`] letters and digits (the
/// page is then read whole).
pub fn without_lines(text: &str, is_furniture: &dyn Fn(u64) -> bool) -> Option<String> {
    let mut kept = String::with_capacity(text.len());
    let (mut dropped, mut chars) = (false, 0);
    for line in text.lines() {
        if line_key(line).is_some_and(is_furniture) {
            dropped = true;
            continue;
        }
        chars += line.chars().filter(|&c| is_word_char(c)).count();
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(line);
    }
    (dropped && chars >= MIN_KEPT_CHARS).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_keyed_by_its_letters_and_digits_in_any_case() {
        let a = line_key("Most Read: The 10 best stories of the week!");
        assert!(a.is_some());
        assert_eq!(a, line_key("most read — the 10 best   STORIES of the week"));
        assert_ne!(a, line_key("Most Read: The 11 best stories of the week!"));
        assert_eq!(line_key("Read more »"), None);
        assert!(line_key("北京时间十一月十九日消息").is_some());
        assert_eq!(line_key("北京时间十一月"), None);
    }

    proptest::proptest! {
        /// The fast paths key a line as every character's `is_word_char` and
        /// `to_lowercase` do, on lines of ASCII, ideographs, accented and cased letters of
        /// other scripts, digits of other scripts and marks.
        #[test]
        fn keys_equal_the_general_case_mapping(line in "[a-zA-Z0-9 ,.!中文国ÉéÇİẞΣσДд٣\u{301}ﬁ]{0,40}") {
            let mut s = String::new();
            let mut n = 0u32;
            for c in line.chars().filter(|&c| is_word_char(c)) {
                n += 1;
                s.extend(c.to_lowercase());
            }
            let want = (n as usize >= MIN_LINE_CHARS)
                .then(|| (crate::hash::fingerprint64(s.as_bytes()), n));
            proptest::prop_assert_eq!(sized_line_key(&line), want);
        }
    }

    #[test]
    fn keys_are_distinct_and_sorted() {
        let keys = line_keys("Subscribe to our newsletter\nSubscribe to our NEWSLETTER\nshort\n");
        assert_eq!(keys.len(), 1);
        let keys = line_keys("first line of the page\nsecond line of the page\n");
        assert_eq!(keys.len(), 2);
        assert!(keys[0].0 < keys[1].0);
        let mut sizes: Vec<u32> = keys.iter().map(|&(_, n)| n).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [18, 19]);
    }

    #[test]
    fn furniture_lines_are_left_out_unless_too_little_is_left() {
        let furniture = line_key("Subscribe to our newsletter today").unwrap();
        let article = "The council voted on Tuesday to close the old bridge for repairs.\n\
                       Subscribe to our newsletter today\n\
                       Work will begin in March and last about six months, officials said.";
        let kept = without_lines(article, &|k| k == furniture).unwrap();
        assert!(!kept.contains("Subscribe"));
        assert!(kept.starts_with("The council") && kept.ends_with("officials said."));
        assert_eq!(without_lines(article, &|_| false), None);
        let short = "A short line of text.\nSubscribe to our newsletter today";
        assert_eq!(without_lines(short, &|k| k == furniture), None);
    }
}
