//! Sentence splitting on normalized text, and the sentence key that nshash hashes.
//!
//! A sentence ends at `.`, `!`, `?`, `;` or a newline (after normalization `。！？；` are these
//! ASCII characters). A `.` between two digits (`4.3`) does not end a sentence. The key of a
//! sentence keeps only its letters and digits, so punctuation, spacing and width changes do not
//! change it.

/// Split normalized text into sentences (non-empty, trimmed).
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    split_ends(text).map(|(s, _)| s)
}

/// [`split`], each sentence with whether it ended at its line's end (a newline or the text's
/// end) rather than at a full stop, `!`, `?` or `;`: a headline, a byline, a line of a list.
pub fn split_ends(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let bytes = text.as_bytes();
    let mut start = 0usize;
    let mut i = 0usize;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            let end_here = match b {
                b'!' | b'?' | b';' | b'\n' => true,
                b'.' => {
                    let prev_digit = i > 0 && bytes[i - 1].is_ascii_digit();
                    let next_digit = i + 1 < bytes.len() && bytes[i + 1].is_ascii_digit();
                    !(prev_digit && next_digit)
                }
                _ => false,
            };
            i += 1;
            if end_here {
                let s = text[start..i - 1].trim();
                start = i;
                if !s.is_empty() {
                    return Some((s, b == b'\n'));
                }
            }
        }
        if start < bytes.len() {
            let s = text[start..].trim();
            start = bytes.len();
            if !s.is_empty() {
                return Some((s, true));
            }
        }
        None
    })
}

/// Where a text's heading lines end (the byte offset of the line after them; 0 when it has
/// none): its first lines holding text, at most `most` of them, when none of them holds a
/// sentence that ends at a full stop (`.`, `!`, `?`, `;`) and the line after them does.
pub fn heading_lines_end(text: &str, most: usize) -> usize {
    let (mut at, mut lines) = (0, 0);
    for line in text.split_inclusive('\n') {
        if split_ends(line.trim_end_matches('\n')).any(|(_, line_end)| !line_end) {
            return at;
        }
        if !line.trim().is_empty() {
            lines += 1;
            if lines > most {
                return 0;
            }
        }
        at += line.len();
    }
    0
}

/// Whether `c` is a letter or digit (`char::is_alphanumeric`), with fast paths for ASCII and
/// CJK ideographs, which are most of the text (the general lookup is a binary search).
#[inline]
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else if super::is_plain_ideograph(c) {
        true
    } else {
        c.is_alphanumeric()
    }
}

/// The key of a sentence: its letters and digits only, and how many there are.
pub fn key(sentence: &str) -> (String, usize) {
    let mut k = String::with_capacity(sentence.len());
    let mut n = 0;
    for c in sentence.chars().filter(|&c| is_word_char(c)) {
        k.push(c);
        n += 1;
    }
    (k, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_chinese_and_english_terminators() {
        let t = crate::text::normalize("第一句。第二句！Third one? Fourth; 5.3 percent.\nlast");
        let s: Vec<&str> = split(&t).collect();
        assert_eq!(
            s,
            [
                "第一句",
                "第二句",
                "third one",
                "fourth",
                "5.3 percent",
                "last"
            ]
        );
    }

    /// Oracle: equal to `char::is_alphanumeric` on every code point.
    #[test]
    fn word_char_fast_path_is_exact() {
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "{c:?}");
        }
    }

    #[test]
    fn heading_lines_end_before_the_first_line_with_a_full_stop() {
        let t = "headline of the day\nby a staff writer\n\nthe first sentence. the second\nmore";
        assert_eq!(heading_lines_end(t, 3), t.find("the first").unwrap());
        assert_eq!(
            heading_lines_end(t, 1),
            0,
            "more lines than allowed: a list"
        );
        assert_eq!(heading_lines_end("a sentence.\nline", 3), 0);
        assert_eq!(
            heading_lines_end("line one\nline two", 3),
            0,
            "no sentence after them"
        );
        assert_eq!(
            heading_lines_end("3.5 percent\nit rose.", 3),
            12,
            "a decimal point"
        );
    }

    #[test]
    fn key_drops_punctuation_and_spaces() {
        assert_eq!(key("a, b - c"), ("abc".to_string(), 3));
        assert_eq!(key("中华人民共和国,宪法").1, 9);
    }
}
