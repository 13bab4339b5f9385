//! A bound on the work of HTML extraction, found by one linear pass over the page before it
//! is parsed.
//!
//! Why: the HTML parser (html5ever) takes time quadratic in the nesting depth (its scope
//! checks walk the stack of open elements), and the readability scoring (dom_smoothie) more
//! than cubic (figures: docs/performance.md, "Other figures behind the code"). Real pages nest
//! a few dozen levels. So [`shape`] measures a page's nesting as the parser will see it, and a
//! page nested deeper than [`MAX_DEPTH`] (or whose elements sum more than [`MAX_WORK`] levels)
//! is [`flattened`]: tags deeper than the bound are left out (a block element's become line
//! breaks), so the parser sees at most [`MAX_DEPTH`] levels, and only the visible text is
//! extracted (no readability). Every other page is extracted exactly as before.
//!
//! The pass knows the parser's main rules: void elements (`<br>`, `<img>` ...) open nothing;
//! the elements whose end tags may be left out (`<p>`, `<li>`, `<td>` ...) are not counted (the
//! parser closes them when the next one starts), `/>` closes only inside SVG and MathML, an end
//! tag closes up to the nearest open element of its name (searched among the top
//! `END_TAG_REACH` open elements), and script, style and other raw-text elements hold no
//! tags. An error of this estimate only moves a page between the two ways of extraction.

/// Deepest nesting extracted in full; deeper tags are left out.
pub const MAX_DEPTH: usize = 128;

/// Most element levels summed over a page's elements (each element counts the depth it opens
/// at) that is extracted in full: wide pages of many deep branches cost readability as much as
/// one very deep page.
pub const MAX_WORK: u64 = 2_000_000;

/// Open elements an end tag is matched against, from the innermost.
const END_TAG_REACH: usize = 64;

/// What the pass found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shape {
    /// Deepest nesting of counted elements.
    pub depth: usize,
    /// Depths summed over the counted elements.
    pub work: u64,
}

impl Shape {
    /// Whether the page is extracted in full.
    pub fn within_bounds(&self) -> bool {
        self.depth <= MAX_DEPTH && self.work <= MAX_WORK
    }
}

/// Elements that never hold content (no end tag).
const VOID: &[&str] = &[
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
    "keygen", "link", "meta", "param", "source", "track", "wbr", "image",
];

/// Elements whose end tag may be left out: the parser closes them when a sibling starts, so
/// they do not pile up; not counted.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "rb",
    "rt", "rp", "rtc", "colgroup", "caption", "html", "head", "body",
];

/// Elements whose content is text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
];

/// Block elements: a left-out tag of one becomes a line break, so lines stay apart.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// A tag found by [`scan`].
struct Tag<'a> {
    /// Lower-cased name (ASCII), borrowed when already lower case.
    name: std::borrow::Cow<'a, str>,
    end: bool,
    self_closing: bool,
    /// Byte range of the whole tag in the page.
    range: std::ops::Range<usize>,
}

/// Calls `f` with each tag of `html` in order (comments, doctypes and raw text skipped).
fn scan<'a>(html: &'a str, mut f: impl FnMut(Tag<'a>)) {
    let b = html.as_bytes();
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        let start = i + off;
        i = start + 1;
        if b[i..].starts_with(b"!--") {
            i = find(b, i + 3, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        if matches!(b.get(i), Some(b'!' | b'?')) {
            i = memchr::memchr(b'>', &b[i..]).map_or(b.len(), |e| i + e + 1);
            continue;
        }
        let end = b.get(i) == Some(&b'/');
        let name_at = i + usize::from(end);
        if !b.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
            continue; // a `<` of text
        }
        let mut j = name_at;
        while j < b.len() && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>') {
            j += 1;
        }
        let raw_name = &html[name_at..j];
        let close = tag_end(b, j);
        let self_closing = close > j && b[close - 1] == b'/';
        i = (close + 1).min(b.len());
        let name = if raw_name.bytes().any(|c| c.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(raw_name.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(raw_name)
        };
        let raw = !end && RAW_TEXT.contains(&name.as_ref());
        let raw_name_owned = if raw { Some(name.to_string()) } else { None };
        f(Tag {
            name,
            end,
            self_closing,
            range: start..i,
        });
        if let Some(n) = raw_name_owned {
            i = find_end_tag(b, i, n.as_bytes()).unwrap_or(b.len());
        }
    }
}

/// Where the tag whose attributes start at `from` ends: its `>` outside quoted values, or
/// `b.len()` when there is none. memchr's searches jump from quote to quote.
fn tag_end(b: &[u8], from: usize) -> usize {
    let mut k = from;
    while let Some(at) = memchr::memchr3(b'>', b'"', b'\'', &b[k..]) {
        k += at;
        let quote = b[k];
        if quote == b'>' {
            return k;
        }
        // Past the quoted value, to its closing quote.
        k = memchr::memchr(quote, &b[k + 1..]).map_or(b.len(), |e| k + 1 + e + 1);
    }
    b.len()
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    memchr::memmem::find(b.get(from..)?, pat).map(|p| from + p)
}

/// Where `</name` (the name in any case) first starts at or after `from`: each `</` found by
/// memchr's search, then the name compared (raw text, a page's scripts and styles, is most of
/// what this passes over).
fn find_end_tag(b: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let hay = b.get(from..)?;
    memchr::memmem::find_iter(hay, b"</")
        .find(|&p| {
            hay.get(p + 2..p + 2 + name.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(name))
        })
        .map(|p| from + p)
}

/// The stack of counted open elements, as the parser would keep it.
#[derive(Default)]
struct Stack {
    open: Vec<String>,
    /// Open `svg` / `math` elements: inside them `/>` closes.
    foreign: usize,
}

/// What one tag does to the stack.
enum Step {
    /// Opened an element at this depth (1 = outermost counted element).
    Opened(usize),
    /// Closed elements, down to this depth.
    Closed,
    /// Nothing counted.
    Nothing,
}

impl Stack {
    fn apply(&mut self, t: &Tag<'_>) -> Step {
        let name = t.name.as_ref();
        if t.end {
            let reach = self.open.len().saturating_sub(END_TAG_REACH);
            if let Some(p) = self.open[reach..].iter().rposition(|n| n == name) {
                for n in self.open.drain(reach + p..) {
                    if n == "svg" || n == "math" {
                        self.foreign -= 1;
                    }
                }
                return Step::Closed;
            }
            return Step::Nothing;
        }
        if VOID.contains(&name) || OPTIONAL_END.contains(&name) {
            return Step::Nothing;
        }
        if t.self_closing && (self.foreign > 0 || name == "svg" || name == "math") {
            return Step::Nothing;
        }
        if name == "svg" || name == "math" {
            self.foreign += 1;
        }
        self.open.push(name.to_string());
        Step::Opened(self.open.len())
    }
}

/// The nesting of `html` as the parser will build it (see the module documentation).
pub fn shape(html: &str) -> Shape {
    let mut stack = Stack::default();
    let mut s = Shape::default();
    scan(html, |t| {
        if let Step::Opened(d) = stack.apply(&t) {
            s.depth = s.depth.max(d);
            s.work += d as u64;
        }
    });
    s
}

/// `html` with every tag that opens deeper than [`MAX_DEPTH`] (or closes such an element)
/// left out: a block element's tags become `<br>`, others a space. The text stays; the
/// parser then sees at most [`MAX_DEPTH`] counted levels.
pub fn flattened(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut stack = Stack::default();
    let mut copied = 0;
    // What the last left-out tag became.
    let mut last: Option<&str> = None;
    scan(html, |t| {
        let before = stack.open.len();
        let deep = match stack.apply(&t) {
            Step::Opened(d) => d > MAX_DEPTH,
            // Closing elements that were all left out: leave the end tag out too.
            Step::Closed => before > MAX_DEPTH && stack.open.len() >= MAX_DEPTH,
            Step::Nothing => before >= MAX_DEPTH,
        };
        if deep {
            let between = &html[copied..t.range.start];
            let block = BLOCK.contains(&t.name.as_ref());
            if between.is_empty() && copied > 0 {
                // A run of left-out tags is one break (or one space): a break wins.
                if block && last == Some(" ") {
                    out.pop();
                    out.push_str("<br>");
                    last = Some("<br>");
                }
            } else {
                out.push_str(between);
                let r = if block { "<br>" } else { " " };
                out.push_str(r);
                last = Some(r);
            }
            copied = t.range.end;
        }
    });
    out.push_str(&html[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_as_the_parser_builds_it() {
        assert_eq!(shape("<div><div><p>x</div></div>").depth, 2);
        // Void elements, optional end tags, comments, scripts open nothing.
        let page = "<html><body><br><img src='a>b'><p>one<p>two<li>x<!-- <div><div> -->\
                    <script>if (a<b) '<div>'</script><div>y</div></body></html>";
        assert_eq!(shape(page).depth, 1);
        // `/>` closes inside SVG only.
        assert_eq!(shape("<svg><g/><g/><path/></svg>").depth, 1);
        assert_eq!(shape("<div/><div/>").depth, 2);
        // An end tag closes up to its element.
        assert_eq!(shape("<div><span><b>x</div><div>y</div>").depth, 3);
        assert_eq!(shape(&"<div>".repeat(500)).depth, 500);
    }

    proptest::proptest! {
        /// The end tag search finds what a case-blind comparison at every position finds.
        #[test]
        fn end_tags_are_found_as_a_case_blind_scan_finds_them(
            page in "[<>/ sScRiPtx]{0,40}",
            from in 0usize..45,
        ) {
            let b = page.as_bytes();
            let naive = b.get(from..).and_then(|h| {
                h.windows(b"</script".len())
                    .position(|w| w.eq_ignore_ascii_case(b"</script"))
                    .map(|p| from + p)
            });
            proptest::prop_assert_eq!(find_end_tag(b, from, b"script"), naive);
        }

        /// A tag ends where a byte-by-byte walk that tracks quotes finds its `>`.
        #[test]
        fn tags_end_where_a_walk_through_their_quotes_ends(page in "[<>'\" a=]{0,40}", from in 0usize..41) {
            let b = page.as_bytes();
            let from = from.min(b.len());
            let mut quote = 0u8;
            let mut k = from;
            while k < b.len() {
                let c = b[k];
                if quote != 0 {
                    if c == quote {
                        quote = 0;
                    }
                } else if c == b'"' || c == b'\'' {
                    quote = c;
                } else if c == b'>' {
                    break;
                }
                k += 1;
            }
            proptest::prop_assert_eq!(tag_end(b, from), k);
        }
    }

    #[test]
    fn flattening_keeps_the_text_and_bounds_the_depth() {
        let n = 1000;
        let mut page = "<div>".repeat(n);
        page.push_str("<p>deep text</p>");
        page.push_str(&"</div>".repeat(n));
        page.push_str("<div>after</div>");
        let flat = flattened(&page);
        let s = shape(&flat);
        assert!(s.depth <= MAX_DEPTH, "{s:?}");
        assert!(flat.contains("deep text") && flat.contains("<div>after</div>"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any text, tag soup included: no panic, and a flattened page is within the depth
        /// bound and keeps every character outside tags.
        #[test]
        fn garbage_is_measured_and_flattened_within_the_bound(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("<div>".to_string()),
                    proptest::strategy::Just("</div>".to_string()),
                    proptest::strategy::Just("<b>".to_string()),
                    proptest::strategy::Just("<svg><g/>".to_string()),
                    proptest::strategy::Just("<script>".to_string()),
                    proptest::strategy::Just("<!--".to_string()),
                    proptest::strategy::Just("<p a='>'".to_string()),
                    "[a-z<>/!\"' =-]{0,8}",
                    "\\PC{0,4}",
                ],
                0..400,
            ),
        ) {
            let page: String = parts.concat();
            let s = shape(&page);
            let flat = flattened(&page);
            proptest::prop_assert!(shape(&flat).depth <= MAX_DEPTH);
            if s.depth <= MAX_DEPTH {
                proptest::prop_assert_eq!(&flat, &page);
            }
        }
    }

    #[test]
    fn pages_within_bounds_are_not_changed_by_flattening() {
        let page =
            "<html><body><div><p>a</p><table><tr><td>b</td></tr></table></div></body></html>";
        assert!(shape(page).within_bounds());
        assert_eq!(flattened(page), page);
    }
}
