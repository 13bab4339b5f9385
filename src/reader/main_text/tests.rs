//! Tests of the main text: each rule on small pages, and through both extractors.
use super::*;

proptest::proptest! {
    /// Cutting at readability's lines only adds line breaks: the text is trafilatura's,
    /// character for character, but for whitespace.
    #[test]
    fn cutting_at_lines_keeps_every_character(
        strict in "[a-c .\n]{0,60}",
        readable in proptest::collection::vec("[a-c .]{0,14}", 0..6),
    ) {
        let cut = split_at_lines(&strict, &readable.join("\n"));
        let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        proptest::prop_assert_eq!(bare(&cut), bare(&strict));
    }
}

proptest::proptest! {
    /// The ASCII fast path hashes the tokens the general case mapping does.
    #[test]
    fn tokens_equal_the_general_case_mapping(text in "[a-zA-Z0-9 ,.!中文国かナ한ÉéİẞΣσДд٣\u{301}ﬁ]{0,40}") {
        const SEED: u64 = 0xcbf2_9ce4_8422_2325;
        let mix = |h: u64, c: char| (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3);
        let (mut want, mut word, mut prev) = (Vec::new(), None::<u64>, None::<char>);
        for c in text.chars() {
            if is_cjk(c) {
                want.extend(word.take());
                if let Some(p) = prev {
                    want.push(mix(mix(SEED ^ 1, p), c));
                }
                prev = Some(c);
            } else if c.is_alphanumeric() {
                prev = None;
                word = Some(c.to_lowercase().fold(word.unwrap_or(SEED), mix));
            } else {
                prev = None;
                want.extend(word.take());
            }
        }
        want.extend(word);
        let mut got = Vec::new();
        tokens(&text, &mut got);
        proptest::prop_assert_eq!(got, want);
    }
}

fn count(s: &str) -> usize {
    let mut v = Vec::new();
    tokens(s, &mut v);
    v.len()
}

#[test]
fn tokens_are_words_and_han_pairs() {
    assert_eq!(count("Hello, World 2024"), 3);
    assert_eq!(count("国家统计局"), 4);
    assert_eq!(count("GDP增长7%"), 3, "GDP, 增长, 7");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    tokens("Hello", &mut a);
    tokens("hello", &mut b);
    assert_eq!(a, b, "case does not count");
}

#[test]
fn paragraphs_the_strict_text_lacks_are_dropped() {
    let readable = "The article's first paragraph tells what happened in the city.\n\
                    Most read: ten other headlines of this site\n\
                    The second paragraph quotes the mayor at some length today.";
    let strict = "The article's first paragraph tells what happened in the city.\n\
                  The second paragraph quotes the mayor at some length today.";
    assert_eq!(
        agree(readable, strict),
        "The article's first paragraph tells what happened in the city.\n\
         The second paragraph quotes the mayor at some length today."
    );
}

#[test]
fn a_strict_text_cut_short_keeps_the_whole_article() {
    let paras: Vec<String> = (0..6)
        .map(|i| format!("Paragraph {i} of the long article goes on with words number {i}."))
        .collect();
    let readable = paras.join("\n");
    let strict = paras[..2].join("\n");
    assert_eq!(agree(&readable, &strict), readable);
}

#[test]
fn a_listing_with_a_repeated_share_bar_keeps_the_strict_text() {
    let mut readable = vec!["The one quote this page is about, in a long sentence.".to_string()];
    for i in 0..4 {
        readable.push("Whatsapp Facebook Pint Baixar".into());
        readable.push(format!(
            "Another quote number {i} that the page lists below it."
        ));
    }
    let strict = readable[0].clone();
    assert_eq!(agree(&readable.join("\n"), &strict), strict);
}

#[test]
fn a_short_article_beside_a_listing_of_teasers_keeps_the_strict_text() {
    // Readability's best block is the site's "Deals" listing; trafilatura read the short
    // article beside it. Cut short by the rule above, readability's text would be kept.
    let readable: Vec<String> = (0..8)
        .map(|i| format!("Deal alert {i}: a discount on laptops, headphones and tablets today"))
        .collect();
    let readable = readable.join("\n");
    let strict = "A video shows the moment a kidnapped girl was rescued by police on Monday.";
    assert_eq!(agree(&readable, strict), strict);
    // Half of it in readability's text: the rule for a cut-short text still holds.
    let both = format!("{readable}\n{strict}");
    let strict_and_deal =
        format!("{strict}\nDeal alert 1: a discount on laptops, headphones and tablets today");
    assert_eq!(agree(&both, &strict_and_deal), both);
}

#[test]
fn figure_captions_are_not_the_articles_text() {
    let html = "<html><body><article><h1>Title</h1>\
        <figure><img src=a.jpg><figcaption>A module for a crewed Mars mission. \
        Credit: ESA</figcaption></figure>\
        <p>The article's first paragraph tells what happened in the city today.</p>\
        <p>The second paragraph quotes the mayor at some length, as papers do.</p>\
        </article></body></html>";
    let captions = captions(&dom_query::Document::from(html));
    assert_eq!(captions, vec!["amoduleforacrewedmarsmissioncreditesa"]);
    let text = "A module for a crewed Mars mission.\n\
                The article's first paragraph tells what happened in the city today.\n\
                Credit: ESA";
    assert_eq!(
        without_captions(text.to_string(), &captions),
        "The article's first paragraph tells what happened in the city today."
    );
    // Through both extractors: the caption is gone, the paragraphs stay.
    let main = main_text(html, dom_query::Document::from(html));
    assert!(!main.contains("Mars"), "{main}");
    assert!(main.contains("mayor"), "{main}");
    // A page of captions only keeps them: something must be compared.
    let only = "A module for a crewed Mars mission.";
    assert_eq!(without_captions(only.to_string(), &captions), only);
}

#[test]
fn trafilaturas_paragraphs_are_lines_in_minified_html() {
    let html = "<html><body><div class=menu><a href=/a>Home</a></div><article>\
        <h1>Title of it</h1><div class=entry-content><p>Sweden has dropped its \
        investigation into an allegation after a review of the evidence.</p><p>After a \
        comprehensive assessment, the prosecutor said the evidence is not strong \
        enough.</p><p>Persson explained that the evidence had initially been deemed \
        credible and reliable.</p></div></article></body></html>";
    let text = trafilatura(html);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("Sweden") && lines[0].ends_with("evidence."));
    assert!(lines[2].starts_with("Persson"));
}

#[test]
fn a_line_repeated_further_down_is_kept_where_the_article_has_it() {
    let text = "She added that an appeal could be made to the attorney general.\n\
                Sweden has dropped its investigation, prosecutors said on Tuesday.\n\
                Read more\n\
                She added that an appeal could be made to the attorney general.\n\
                Read more";
    assert_eq!(
        without_repeats(text.to_string()),
        "Sweden has dropped its investigation, prosecutors said on Tuesday.\n\
         Read more\n\
         She added that an appeal could be made to the attorney general.\n\
         Read more"
    );
    // A pull quote: one sentence of a later paragraph.
    let quote = "The mayor spoke for an hour.\n\
                 “We will rebuild the bridge before winter”\n\
                 In the end she said: “We will rebuild the bridge before winter”, and left.";
    assert_eq!(
        without_repeats(quote.to_string()),
        "The mayor spoke for an hour.\n\
         In the end she said: “We will rebuild the bridge before winter”, and left."
    );
    // A question asked of every guest is the article's, each time.
    let asked = "What do you cook at home on a Sunday evening?\nSoup.\n\
                 What do you cook at home on a Sunday evening?\nFish.\n\
                 What do you cook at home on a Sunday evening?\nRice.";
    assert_eq!(without_repeats(asked.to_string()), asked);
    // Short lines are left alone, and so is a text without repeats.
    let plain = "Share\nThe article's only paragraph.\nShare";
    assert_eq!(without_repeats(plain.to_string()), plain);
    // Through both extractors: the highlight box above the article is gone.
    let html = "<html><body><article><h1>Sweden drops its investigation</h1>\
        <div class=highlights><div>Highlights</div><div>She added that an appeal \
        against the decision could be made to the office of the attorney general.</div></div>\
        <p>Sweden has dropped its investigation into an allegation after a review of the \
        evidence, its deputy director of public prosecutions said on Tuesday.</p>\
        <p>Persson explained that the evidence had initially been deemed credible, but had \
        weakened since, because a long time had passed.</p>\
        <p>She added that an appeal against the decision could be made to the office of the \
        attorney general.</p></article></body></html>";
    let main = main_text(html, dom_query::Document::from(html));
    assert_eq!(main.matches("She added").count(), 1, "{main}");
    assert!(main.ends_with("attorney general."), "{main}");
}

#[test]
fn a_strict_text_of_one_line_is_cut_at_the_readable_lines() {
    // Trafilatura's fallback: the article and the page around it (related posts) as one
    // line. Most of its tokens are outside readability's text, so it is kept, but cut at
    // readability's lines: the site's related posts stand apart from the article.
    let readable = "Binge eating disorder is considered the most common eating disorder.\n\
                    That means people with the disorder will likely need a treatment plan.";
    let related: Vec<String> = (0..12)
        .map(|i| format!("Related post {i} about portable software and its shortcuts"))
        .collect();
    let strict = format!(
        "2018-08-16 {} {}",
        readable.replace('\n', " "),
        related.join(" ")
    );
    assert_eq!(
        agree(readable, &strict),
        format!("2018-08-16\n{readable}\n{}", related.join(" "))
    );
}

/// A short article `<br>`-separated in a `<td>` between navigation tables: both
/// extractors took the page (as they do on the short-page set's table layouts), and the
/// article is the prose in it, with its last short lines.
#[test]
fn a_short_article_in_a_legacy_table_layout_is_its_prose() {
    let nav = [
        "Home", "News", "World", "Business", "Sports", "Health", "Science",
    ];
    let heads: Vec<String> = (0..8)
        .map(|i| format!("Headline number {i} of another story here"))
        .collect();
    let anchors: HashSet<String> = nav
        .iter()
        .map(ToString::to_string)
        .chain(heads.iter().cloned())
        .chain(["Email this story".into(), "Printer friendly".into()])
        .map(|s| key(&s))
        .collect();
    let article = [
        "The council voted on Tuesday to extend the library's opening hours through the \
         winter, after a petition signed by more than two thousand residents.",
        "The new hours start on Monday. Is it enough for students?",
        "Library staff welcomed the vote and the extra shifts it brings this season",
    ];
    let page = format!(
        "{}\nWeather\nToday: Partly cloudy, high 64\n\
         March 2, 2024 | By The Valley Herald staff\n{}\n\
         Email this story | Printer friendly\nRelated headlines\n{}\nMost read\n{}\n\
         Get home delivery for as little as $2.50 a week.",
        nav.join("\n"),
        article.join("\n"),
        heads[..4]
            .iter()
            .map(|h| format!("• {h}"))
            .collect::<Vec<_>>()
            .join("\n"),
        heads[4..].join("\n"),
    );
    assert_eq!(prose_span(page, &anchors), article.join("\n"));
    // Links under a quarter of the tokens: an article with a list, kept whole.
    let list = "Home\nThe calendar of the season, as the organizer published it in January.\n\
                1st round: 10 March, Interlagos\n2nd round: 8 April, Curitiba";
    assert_eq!(prose_span(list.to_string(), &anchors), list);
    // No prose line: unchanged.
    let links = heads.join("\n");
    assert_eq!(prose_span(links.clone(), &anchors), links);
}

#[test]
fn a_sentence_end_inside_a_line_is_a_word_ending_with_a_mark() {
    assert!(sentence(
        "He must be kind to everyone. Those who oppose him IITimothy 2:24"
    ));
    assert!(sentence("Ends with a period."));
    assert!(sentence("北京市今天发布通知。明天起"));
    assert!(!sentence(
        "Rates of cannabis use disorder have risen in U.S. States"
    ));
    assert!(!sentence("Headline of another story here"));
}

#[test]
fn a_chinese_editor_credit_at_the_end_is_left_out() {
    let body = "第一段正文，说明了事情的经过。\n第二段正文。";
    assert_eq!(
        without_credit(format!("{body}\n（责任编辑：王晓明）")),
        body
    );
    assert_eq!(without_credit(format!("{body}\n编辑: 李华")), body);
    // Not a credit: a sentence that mentions an editor; not the only line.
    let mention = format!("{body}\n编辑部表示，将继续跟进此事并及时报道最新进展。");
    assert_eq!(without_credit(mention.clone()), mention);
    assert_eq!(
        without_credit("（责任编辑：王晓明）".into()),
        "（责任编辑：王晓明）"
    );
}

#[test]
fn one_extractor_empty_gives_the_other() {
    assert_eq!(agree("only readability", ""), "only readability");
    assert_eq!(agree("", "only trafilatura"), "only trafilatura");
    assert_eq!(agree("", ""), "");
}

#[test]
fn the_marked_article_body_is_read_when_the_extractors_read_elsewhere() {
    let body = "Two hostages held since 2016 were released on Tuesday in a prisoner swap for \
                three insurgents.\nThe two men were flown out the same day.";
    let teasers = "Teaser one: a description of another column about the week's hearings.\n\
                   Teaser two: a description of a third column about the committee's vote.";
    assert_eq!(or_marked_body(teasers.into(), Some(body.into())), body);
    // The extractors hold most of it (with a headline, a byline): theirs is kept.
    let found = format!("A short story\n{body}\nBy the site's staff");
    assert_eq!(or_marked_body(found.clone(), Some(body.into())), found);
    assert_eq!(or_marked_body(teasers.into(), None), teasers);
}

#[test]
fn only_a_pages_one_marked_body_of_80_letters_counts() {
    let page = |bodies: &[&str]| {
        let marked: String = bodies
            .iter()
            .map(|b| format!("<div itemprop=\"articleBody\"><p>{b}</p></div>"))
            .collect();
        dom_query::Document::from(format!("<html><body><div>Home</div>{marked}</body></html>"))
    };
    let long = "Two hostages held since 2016 were released in Afghanistan on Tuesday in a \
                prisoner swap for three insurgents.";
    assert_eq!(marked_body(&page(&[long])).as_deref(), Some(long));
    assert_eq!(marked_body(&page(&[long, long])), None, "two marked");
    assert_eq!(
        marked_body(&page(&["Released on Tuesday."])),
        None,
        "too short"
    );
    assert_eq!(marked_body(&page(&[])), None);
}

#[test]
fn damaged_pages_with_a_marked_body_read_without_a_panic() {
    let body = "Two hostages held since 2016 were released in Afghanistan on Tuesday in a \
                prisoner swap for three insurgents.";
    // Unclosed: the element runs to the end of the page.
    let unclosed = format!("<html><body><div itemprop=\"articleBody\"><p>{body}");
    let text = main_text(&unclosed, dom_query::Document::from(unclosed.as_str()));
    assert!(text.contains("Two hostages"), "{text}");
    // Nested in itself: two elements marked, neither read; other garbage around it.
    let pages = [
        format!("<div itemprop=\"articleBody\"><div itemprop=articleBody>{body}</div></div>"),
        format!("<div itemprop=\"articleBody\"\u{0}>{body}<</<>>>&#xFFFFFF;&amp</p></div>"),
        format!(
            "<div itemprop=\"ARTICLEBODY\">{}</div>",
            "<b>".repeat(2_000)
        ),
        String::from_utf8_lossy(&[0xff, 0xfe, b'<', b'd', b'i', b'v', 0x80, b'>']).into_owned(),
        String::new(),
    ];
    for html in &pages {
        let dom = dom_query::Document::from(html.as_str());
        let _ = marked_body(&dom);
        let _ = main_text(html, dom_query::Document::from(html.as_str()));
    }
    let nested = dom_query::Document::from(pages[0].as_str());
    assert_eq!(marked_body(&nested), None, "two marked");
}
