//! A page's main text: the article, not the site around it. Two extractors of different
//! families read the page: readability (dom_smoothie: the best-scoring subtree, whole
//! paragraphs, generous with what sits inside the article's container) and trafilatura (rules
//! and link density per element, stricter). A readability paragraph is kept when trafilatura's
//! text confirms it (`AGREE` of its tokens), so the paragraphs that readability takes along
//! from inside the container (share bars, "most read", related headlines, paywall notices)
//! drop out, and what neither keeps is never fingerprinted.
//!
//! When trafilatura keeps under half of readability's tokens (`SHORT`) it has usually stopped
//! early inside a long article, and readability's text is kept whole, unless the paragraphs
//! trafilatura did not confirm repeat a line three times or more (a share bar between the items
//! of a listing: then trafilatura is right). When one extractor finds nothing the other's text
//! is used; when both find nothing the page has no main text (docs/decisions.md).
//! Lines of a figure caption (`<figcaption>`) are then left out (`without_captions`).
//!
//! Measured on the 181 real pages of `../shared/data/extraction` with the benchmark's own
//! scorer (docs/accuracy.md, "Main text of pages").

use std::collections::{HashMap, HashSet};

use super::html::trimmed_lines;

/// Share of a readability paragraph's tokens that trafilatura's text must hold for it to be
/// kept (tuned on one half of the extraction benchmark's pages, checked on the other).
const AGREE: f64 = 0.9;

/// Trafilatura's text under this share of readability's tokens counts as cut short.
const SHORT: f64 = 0.5;

/// Trafilatura's text with under this share of its tokens in readability's text, and
/// readability's with under this share of its tokens in trafilatura's, were read from two
/// blocks of the page: trafilatura's is kept, not readability's.
const APART: f64 = 0.5;

/// The main text of `html` (one paragraph per line), or empty when neither extractor finds
/// one. `dom` is `html` parsed (readability works on it and changes it: one parse less).
pub fn main_text(html: &str, dom: dom_query::Document) -> String {
    let captions = captions(&dom);
    let anchors = anchors(&dom);
    let marked = marked_body(&dom);
    let readable = readability(dom);
    let strict = trafilatura(html);
    let text = prose_span(
        without_repeats(without_captions(agree(&readable, &strict), &captions)),
        &anchors,
    );
    without_credit(or_marked_body(text, marked))
}

/// Letters and digits the text of a page's one element marked as its article's body needs.
const MARKED_MIN: usize = 80;

/// The text of the page's one element marked as its article's body (schema.org microdata,
/// `itemprop="articleBody"`), one paragraph per line, when it has [`MARKED_MIN`] letters and
/// digits or more; None when the page marks none, or more than one.
fn marked_body(dom: &dom_query::Document) -> Option<String> {
    let marked = dom.select("[itemprop=\"articleBody\" i]");
    if marked.length() != 1 {
        return None;
    }
    let text = trimmed_lines(&marked.formatted_text());
    let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
    (letters >= MARKED_MIN).then_some(text)
}

/// `text`, or the page's `marked` article body ([`marked_body`]) when `text` holds under
/// [`APART`] of its tokens: the extractors read another block of the page (a sidebar of
/// teasers with long descriptions, beside a short article), and the page says where its
/// article is.
fn or_marked_body(text: String, marked: Option<String>) -> String {
    let Some(body) = marked else {
        return text;
    };
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    tokens(&text, &mut mine);
    tokens(&body, &mut theirs);
    let mine: HashSet<u64> = mine.into_iter().collect();
    let held = theirs.iter().filter(|t| mine.contains(t)).count();
    if (held as f64) < APART * theirs.len() as f64 {
        body
    } else {
        text
    }
}

/// `text` without its last line when that is a Chinese news page's editor credit
/// (`（责任编辑：王晓明）`, `编辑：…`, `责编：…`): the page's, not the article's, and on a
/// short article a fifth of its text. Not when it is the only line.
fn without_credit(text: String) -> String {
    let Some((rest, last)) = text.trim_end().rsplit_once('\n') else {
        return text;
    };
    let bare = last.trim().trim_start_matches(['（', '(', '[', '【']);
    let credit = last.chars().count() <= 40
        && ["责任编辑", "编辑", "责编"].iter().any(|w| {
            bare.strip_prefix(w)
                .is_some_and(|r| r.starts_with(['：', ':']))
        });
    if credit {
        rest.to_string()
    } else {
        text
    }
}

/// The texts of the page's links, as [`key`]s.
fn anchors(dom: &dom_query::Document) -> HashSet<String> {
    keys_of(dom, "a").into_iter().collect()
}

/// The texts of the elements `selector` selects, as [`key`]s, those with a letter or digit.
fn keys_of(dom: &dom_query::Document, selector: &str) -> Vec<String> {
    dom.select(selector)
        .iter()
        .map(|n| key(&n.text()))
        .filter(|k| !k.is_empty())
        .collect()
}

/// Whether `line` is one link or a row of them (`Email | Print | Reprints`, `• headline`).
fn link_line(line: &str, anchors: &HashSet<String>) -> bool {
    let mut any = false;
    for piece in line.split(['|', '•', '·']) {
        let k = key(piece);
        if k.is_empty() {
            continue;
        }
        if !anchors.contains(&k) {
            return false;
        }
        any = true;
    }
    any
}

/// Share of a main text's tokens in lines that are links over which it is the page around a
/// short article, not an article ([`prose_span`]): measured on the 181 real pages, at most
/// 0.200 of an article's tokens are in link lines; on the short-page set's legacy table
/// layouts 0.316 or more (docs/accuracy.md, "Short pages").
const LINKS: f64 = 0.25;

/// `text` from its first prose line to its last, when over [`LINKS`] of its tokens are in
/// lines that are links (navigation, headlines, share links): both extractors took the page
/// around a short article whose text has no container of its own (a legacy table layout, the
/// article `<br>`-separated in a `<td>` between navigation tables), and the article is the
/// prose in it. A prose line here also has a sentence end ([`sentence`]), as a headline seldom
/// has. The span then takes the sentences next to it, and after it the lines of 40 characters
/// or more (a short article's last lines: a question, a signature), up to a link or a label;
/// not the lines before it, where a byline and a date are. Unchanged when no line is prose, or
/// when links hold fewer tokens (a list of items in an article is seldom a list of links).
fn prose_span(text: String, anchors: &HashSet<String>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let links: Vec<bool> = lines.iter().map(|l| link_line(l, anchors)).collect();
    let mut v = Vec::new();
    let (mut all, mut in_links) = (0usize, 0usize);
    let (mut first, mut last) = (None, 0);
    for (i, line) in lines.iter().enumerate() {
        v.clear();
        tokens(line, &mut v);
        all += v.len();
        if links[i] {
            in_links += v.len();
        } else if prose(line) && sentence(line) {
            first.get_or_insert(i);
            last = i;
        }
    }
    let Some(mut first) = first else {
        return text;
    };
    if in_links as f64 <= LINKS * all as f64 {
        return text;
    }
    let ends = |l: &str| {
        l.trim_end()
            .ends_with(['.', '!', '?', '。', '！', '？', '"', '”'])
    };
    while first > 0 && !links[first - 1] && ends(lines[first - 1]) {
        first -= 1;
    }
    while last + 1 < lines.len()
        && !links[last + 1]
        && (ends(lines[last + 1]) || lines[last + 1].chars().count() >= 40)
    {
        last += 1;
    }
    lines[first..=last].join("\n")
}

/// Whether `line` has a sentence end: it ends with one, or a word ends with one inside it
/// (a lower-case letter, the mark, a space and a capital: not "U.S. "), or it has a Chinese one.
fn sentence(line: &str) -> bool {
    let t = line.trim_end();
    if t.ends_with(['.', '!', '?', '。', '！', '？', '"', '”']) || t.contains(['。', '！', '？'])
    {
        return true;
    }
    let c: Vec<char> = t.chars().collect();
    c.windows(4).any(|w| {
        w[0].is_lowercase() && matches!(w[1], '.' | '!' | '?') && w[2] == ' ' && w[3].is_uppercase()
    })
}

/// The page's figure captions, as [`key`]s.
fn captions(dom: &dom_query::Document) -> Vec<String> {
    keys_of(dom, "figcaption")
}

/// A line's letters and digits in lower case: what decides whether it is part of a caption.
fn key(line: &str) -> String {
    let mut k = String::with_capacity(line.len());
    crate::text::lines::push_lower_word_chars(line, &mut k);
    k
}

/// `text` without the lines that are (part of) a figure caption, unless that leaves nothing.
/// A caption describes a picture, and the picture a copy shows, if any, is often another one:
/// its lines would count as the article's sentences, and a template's leftover captions beside
/// another article as that article's.
fn without_captions(text: String, captions: &[String]) -> String {
    if captions.is_empty() {
        return text;
    }
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let k = key(l);
            k.is_empty() || !captions.iter().any(|c| c.contains(&k))
        })
        .collect();
    if kept.is_empty() {
        return text;
    }
    kept.join("\n")
}

/// Letters and digits a line needs before a later line holding it counts as its repeat.
const REPEAT_MIN: usize = 24;

/// `text` without a sentence that one later line holds again, and no other line (its [`key`],
/// of at least [`REPEAT_MIN`] letters and digits): a "highlights" box or a pull quote repeats a
/// sentence of the article above it, and a copy of the article without that box would then
/// miss the page's first sentence, and an excerpt of it would seem to begin elsewhere. The
/// later line is where the article has it. A line held by more lines than that is the page's
/// own pattern (an interview asking each guest the same question) and stays.
fn without_repeats(text: String) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let keys: Vec<String> = lines.iter().map(|l| key(l)).collect();
    let repeated = |i: usize| {
        keys[i].chars().count() >= REPEAT_MIN
            && sentence(lines[i])
            && keys[i + 1..]
                .iter()
                .filter(|k| k.contains(&keys[i]))
                .count()
                == 1
            && !keys[..i].iter().any(|k| k.contains(&keys[i]))
    };
    if !(0..keys.len()).any(repeated) {
        return text;
    }
    (0..lines.len())
        .filter(|&i| !repeated(i))
        .map(|i| lines[i])
        .collect::<Vec<_>>()
        .join("\n")
}

/// Readability's text: trimmed, non-empty lines.
fn readability(dom: dom_query::Document) -> String {
    let cfg = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        max_elements_to_parse: 50_000,
        ..Default::default()
    };
    dom_smoothie::Readability::with_document(dom, None, Some(cfg))
        .ok()
        .and_then(|mut r| r.parse().ok())
        .map(|a| trimmed_lines(&a.text_content))
        .unwrap_or_default()
}

/// Trafilatura's text (favouring recall: its precision is [`agree`]'s job), one line per
/// paragraph of the HTML it keeps: its plain text runs the paragraphs into one line, and a
/// site's lines must stand alone to be known (furniture, a template), as an article's first
/// sentences must to be its opening.
///
/// Its date search is left off: the metadata trafilatura extracts is not read here (the
/// page's date is fpdb's own, `reader/html.rs`), and only the text is kept. The rest of its
/// metadata and its language guess it runs whatever the options.
fn trafilatura(html: &str) -> String {
    let opts = trafilatura::Options::default()
        .with_focus(trafilatura::ExtractionFocus::FavorRecall)
        .with_html_date_mode(trafilatura::HtmlDateMode::Disabled);
    trafilatura::extract(html, &opts)
        .map(|r| {
            trimmed_lines(&dom_query::Document::from(r.content_html.as_str()).formatted_text())
        })
        .unwrap_or_default()
}

/// `readable`'s lines that `strict` confirms (see the module documentation).
fn agree(readable: &str, strict: &str) -> String {
    let mut strict_tokens = Vec::new();
    tokens(strict, &mut strict_tokens);
    if strict_tokens.is_empty() {
        return readable.to_string();
    }
    let known: HashSet<u64> = strict_tokens.iter().copied().collect();
    let mut kept = Vec::new();
    let mut unconfirmed: HashMap<&str, usize> = HashMap::new();
    let mut line_tokens = Vec::new();
    // No token spans a line break, so the lines' tokens are the whole text's.
    let mut readable_tokens = 0usize;
    let mut in_readable: HashSet<u64> = HashSet::new();
    for line in readable.lines() {
        line_tokens.clear();
        tokens(line, &mut line_tokens);
        readable_tokens += line_tokens.len();
        in_readable.extend(line_tokens.iter().copied());
        let held = line_tokens.iter().filter(|t| known.contains(t)).count();
        if !line_tokens.is_empty() && held as f64 >= AGREE * line_tokens.len() as f64 {
            kept.push(line);
        } else {
            *unconfirmed.entry(line).or_default() += 1;
        }
    }
    if readable_tokens == 0 {
        return strict.to_string();
    }
    // Trafilatura's text mostly outside readability's: they read different blocks, and
    // readability's is a listing (teasers of other articles) trafilatura's rules rejected, or
    // trafilatura fell back to the text of the article's container (as one line, with the
    // posts listed after the article): that text, cut at readability's lines.
    let shared = strict_tokens
        .iter()
        .filter(|t| in_readable.contains(t))
        .count();
    if (shared as f64) < APART * strict_tokens.len() as f64 {
        return split_at_lines(strict, readable);
    }
    let listing = unconfirmed.values().any(|&n| n >= 3);
    if (strict_tokens.len() as f64) < SHORT * readable_tokens as f64 && !listing {
        return readable.to_string();
    }
    if kept.is_empty() {
        return strict.to_string();
    }
    kept.join("\n")
}

/// Whether a line reads as prose, not as a link, a headline or a label: 80 characters or more
/// (40 in Han, kana or Hangul, which say more in fewer).
fn prose(line: &str) -> bool {
    let (mut chars, mut cjk) = (0usize, 0usize);
    for c in line.chars() {
        chars += 1;
        cjk += usize::from(is_cjk(c));
    }
    chars + cjk >= 80
}

/// `strict` with a line break before and after each place where it holds a whole line of
/// `readable`: trafilatura's fallback gives the container's text as one line, and a line a
/// site repeats (its furniture) must stand alone to be known as one.
fn split_at_lines(strict: &str, readable: &str) -> String {
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    // A line of fewer letters and digits ("Email", "Updated") could cut inside another.
    let long = |l: &&str| l.chars().filter(|c| c.is_alphanumeric()).count() >= 10;
    for line in readable.lines().filter(long) {
        let mut from = 0;
        while let Some(at) = strict[from..].find(line) {
            let start = from + at;
            cuts.push((start, start + line.len()));
            from = start + line.len();
        }
    }
    if cuts.is_empty() {
        return strict.to_string();
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(strict.len() + 2 * cuts.len());
    let mut at = 0;
    for (start, end) in cuts {
        if start < at {
            continue;
        }
        out.push_str(strict[at..start].trim());
        out.push('\n');
        out.push_str(&strict[start..end]);
        out.push('\n');
        at = end;
    }
    out.push_str(strict[at..].trim());
    trimmed_lines(&out)
}

/// The tokens texts are compared by, hashed into `out`: words of letters and digits in lower
/// case, and each pair of neighbouring characters in a run of Han, kana or Hangul (Chinese has
/// no spaces; a single character says little).
fn tokens(text: &str, out: &mut Vec<u64>) {
    const SEED: u64 = 0xcbf2_9ce4_8422_2325;
    let mix = |h: u64, c: char| (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3);
    let mut word: Option<u64> = None;
    let mut prev_cjk: Option<char> = None;
    for c in text.chars() {
        if is_cjk(c) {
            if let Some(w) = word.take() {
                out.push(w);
            }
            if let Some(p) = prev_cjk {
                out.push(mix(mix(SEED ^ 1, p), c));
            }
            prev_cjk = Some(c);
        } else if c.is_ascii_alphanumeric() {
            // ASCII (most words of a page) without the general case mapping.
            prev_cjk = None;
            word = Some(mix(word.unwrap_or(SEED), c.to_ascii_lowercase()));
        } else if c.is_alphanumeric() {
            prev_cjk = None;
            let h = c.to_lowercase().fold(word.unwrap_or(SEED), mix);
            word = Some(h);
        } else {
            prev_cjk = None;
            if let Some(w) = word.take() {
                out.push(w);
            }
        }
    }
    if let Some(w) = word {
        out.push(w);
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7af}'
        | '\u{f900}'..='\u{faff}')
}

#[cfg(test)]
mod tests;
