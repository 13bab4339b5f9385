//! Layout edits for robustness sets (`tools/src/bin/robustness_set.rs`, tests): the words stay,
//! the line breaks move, as when a page is copied into a forum or an e-mail is re-wrapped.

/// Whether `text` holds a Chinese character.
pub fn has_chinese(text: &str) -> bool {
    text.chars().any(crate::text::is_plain_ideograph)
}

/// [`rewrap`] at the width of the robustness sets: 40 characters in Chinese text, 50
/// columns otherwise.
pub fn rewrap_default(text: &str) -> String {
    rewrap(text, if has_chinese(text) { 40 } else { 50 })
}

/// Paragraphs (separated by blank lines; a tab counts as a line break).
fn paragraphs(text: &str) -> Vec<Vec<&str>> {
    let mut out = vec![Vec::new()];
    for line in text.split(['\n', '\t']) {
        let line = line.trim();
        if line.is_empty() {
            if !out.last().is_some_and(Vec::is_empty) {
                out.push(Vec::new());
            }
        } else {
            out.last_mut().expect("one paragraph").push(line);
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// `text` without whitespace, cut into lines whose lengths `width` gives in turn (journal
/// text hard-wrapped mid-sentence; the hard sets use 30–70 characters).
pub fn hard_wrap(text: &str, mut width: impl FnMut() -> usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut lines = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let w = width().max(1);
        lines.push(chars[i..(i + w).min(chars.len())].iter().collect());
        i += w;
    }
    lines
}

/// Each paragraph's lines joined into one line (by a space, or directly in Chinese text).
pub fn join_lines(text: &str) -> String {
    let sep = if has_chinese(text) { "" } else { " " };
    paragraphs(text)
        .iter()
        .map(|p| p.join(sep))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Each paragraph re-wrapped at `width` columns: between words, or every `width`
/// characters in Chinese text.
pub fn rewrap(text: &str, width: usize) -> String {
    let width = width.max(1);
    let chinese = has_chinese(text);
    paragraphs(text)
        .iter()
        .map(|p| {
            let mut lines: Vec<String> = Vec::new();
            if chinese {
                let chars: Vec<char> = p.concat().chars().collect();
                lines.extend(chars.chunks(width).map(|c| c.iter().collect()));
            } else {
                let mut cur = String::new();
                for w in p.iter().flat_map(|l| l.split_whitespace()) {
                    if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
                        lines.push(std::mem::take(&mut cur));
                    }
                    if !cur.is_empty() {
                        cur.push(' ');
                    }
                    cur.push_str(w);
                }
                if !cur.is_empty() {
                    lines.push(cur);
                }
            }
            lines.join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_edits_keep_every_word() {
        let en = "one two three\nfour five\n\nsix seven eight nine ten";
        assert_eq!(
            join_lines(en),
            "one two three four five\n\nsix seven eight nine ten"
        );
        assert_eq!(
            rewrap(en, 10),
            "one two\nthree four\nfive\n\nsix seven\neight nine\nten"
        );
        let zh = "第一条为了规范\n管理。\n\n第二条本办法";
        assert_eq!(join_lines(zh), "第一条为了规范管理。\n\n第二条本办法");
        assert_eq!(rewrap(zh, 4), "第一条为\n了规范管\n理。\n\n第二条本\n办法");
    }
}
