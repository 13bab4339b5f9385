//! A long text in pieces for the segmenters: jieba's routes, word list and character classes
//! of a whole text cost about 30 times its size, so a text is segmented a piece at a time,
//! each piece ending where a segmenter would end a word anyway.

/// The most bytes of text segmented at once ([`pieces`]).
pub(crate) const PIECE_BYTES: usize = 64 << 10;

/// `text` in pieces of at most about `max` bytes, each ending where a segmenter would end a
/// word anyway: after a line break, else after the last character that is neither a letter
/// nor a digit (punctuation, a space), else (a run of `max` bytes of letters) at a character
/// boundary. A text of lines or sentences shorter than `max` is cut into the same words.
pub(crate) fn pieces(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= max {
            return Some(std::mem::take(&mut rest));
        }
        let mut end = max;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            // A character longer than `max`.
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let window = &rest[..end];
        let at = window
            .rfind('\n')
            .map(|i| i + 1)
            .or_else(|| {
                window
                    .char_indices()
                    .rev()
                    .find(|(_, c)| !c.is_alphanumeric())
                    .map(|(i, c)| i + c.len_utf8())
            })
            .filter(|&i| i > 0)
            .unwrap_or(end);
        let (piece, next) = rest.split_at(at);
        rest = next;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn pieces_end_at_lines_then_punctuation_and_cover_the_text() {
        let text = "第一行文字\n第二行，还有一句。最后一段没有标点的长长的文字";
        for max in [1, 4, 8, 16, 40, 1000] {
            let ps: Vec<&str> = super::pieces(text, max).collect();
            assert_eq!(ps.concat(), text, "{max}");
            assert!(ps.iter().all(|p| !p.is_empty()), "{max}");
        }
        let ps: Vec<&str> = super::pieces(text, 40).collect();
        assert_eq!(ps[0], "第一行文字\n");
        let ps: Vec<&str> = super::pieces("第二行，还有一句。最后", 30).collect();
        assert_eq!(ps[0], "第二行，还有一句。");
    }
}
