//! Unit tests of the readers' shared parts (`reader/mod.rs`).

use super::jsonl::parse_json_line;
use super::sniff::*;
use super::*;

fn fields() -> Fields {
    Fields::default()
}

#[test]
fn json_lines_parse_with_numeric_ids_and_report_problems() {
    let (d, _) = parse_json_line(
        br#"{"id": 7, "text": "hello", "title": "t"}"#,
        &fields(),
        "f",
        1,
    )
    .unwrap();
    assert_eq!((d.id.as_str(), d.title.as_deref()), ("7", Some("t")));
    let e = parse_json_line(br#"{"id": "a"}"#, &fields(), "f", 1).unwrap_err();
    assert!(e.contains("missing text field `text`"), "{e}");
    let e =
        parse_json_line(b"{\"id\": \"a\", \"text\": \"x\xff\"}", &fields(), "f", 1).unwrap_err();
    assert!(e.contains("invalid UTF-8"), "{e}");
    let e = parse_json_line(br#"{"id": "a", "text": "  "}"#, &fields(), "f", 1).unwrap_err();
    assert!(e.contains("empty document"), "{e}");
    let e = parse_json_line(br#"{"id": "a", "text": "#, &fields(), "f", 1).unwrap_err();
    assert!(e.contains("malformed JSON"), "{e}");
    let (d, page) = parse_json_line(
        br#"{"id": "h", "html": "<title>T</title><p>body text</p>"}"#,
        &fields(),
        "f",
        1,
    )
    .unwrap();
    let d = page
        .expect("html waits for extraction")
        .extract(d, None)
        .unwrap();
    assert_eq!(
        (d.title.as_deref(), d.text.as_str()),
        (Some("T"), "body text")
    );
    // Extracted later, merged as before: the page's title first, the record's url and its
    // date field before the page's own time; an unreadable date field keeps the page's.
    let page_html = r#"<title>Page</title><meta property=\"article:published_time\" content=\"2024-05-01\"><p>正文内容。</p>"#;
    let line = |date: &str| {
        format!(
            r#"{{"id": "h", "title": "Rec", "url": "https://a.example/1", "date": {date}, "html": "{page_html}"}}"#
        )
    };
    let f = Fields {
        time: "date".into(),
        ..fields()
    };
    let (d, page) =
        parse_json_line(line("\"2024-06-01 10:00 CST\"").as_bytes(), &f, "f", 1).unwrap();
    let d = page.unwrap().extract(d, None).unwrap();
    assert_eq!(d.title.as_deref(), Some("Page"));
    assert_eq!(d.url.as_deref(), Some("https://a.example/1"));
    assert_eq!(
        d.published,
        time::parse_time("2024-06-01 02:00"),
        "CST in a Chinese page"
    );
    let (d, page) = parse_json_line(line("\"soon\"").as_bytes(), &f, "f", 1).unwrap();
    let d = page.unwrap().extract(d, None).unwrap();
    assert_eq!(d.published, time::parse_time("2024-05-01"));
    assert!(d.time_unread.is_some());
    let (d, page) = parse_json_line(line("[1]").as_bytes(), &f, "f", 1).unwrap();
    let d = page.unwrap().extract(d, None).unwrap();
    assert!(d.time_unread.unwrap().contains("not a string or a number"));
}

/// Garbage bytes in a JSONL line (truncated, stray, overlong and surrogate sequences, in
/// Chinese and ASCII text) are reported at the byte where the valid UTF-8 ends, the offset
/// `std::str::from_utf8` gives (the reader validates with simdutf8).
#[test]
fn invalid_utf8_is_located_at_the_byte_std_names() {
    let zh = "第一条 为了加强和规范政府督查工作".as_bytes();
    let bad: [&[u8]; 6] = [
        &[0xe4, 0xbd],       // a character cut short
        &[0x80],             // a lone continuation byte
        &[0xc0, 0xaf],       // overlong '/'
        &[0xed, 0xa0, 0x80], // a UTF-16 surrogate
        &[0xf8, 0x88, 0x80], // no such lead byte
        &[0xff],
    ];
    for b in bad {
        for (before, after) in [(zh, zh), (&b"x"[..], &b""[..]), (&b""[..], zh)] {
            let mut line = br#"{"id": "a", "text": ""#.to_vec();
            line.extend_from_slice(before);
            line.extend_from_slice(b);
            line.extend_from_slice(after);
            line.extend_from_slice(b"\"}");
            let at = std::str::from_utf8(&line).unwrap_err().valid_up_to();
            let e = parse_json_line(&line, &fields(), "f", 1).unwrap_err();
            assert_eq!(e, format!("invalid UTF-8 at byte {at}"), "{line:?}");
        }
    }
}

#[test]
fn formats_are_sniffed() {
    assert_eq!(format_by_content(b"WARC/1.0\r\n"), Format::Warc);
    assert_eq!(format_by_content(b"  {\"id\":1}"), Format::Jsonl);
    assert_eq!(format_by_content(b"<!DOCTYPE html><html>"), Format::Html);
    assert_eq!(format_by_content("纯文本".as_bytes()), Format::Text);
    assert_eq!(format_by_name(Path::new("a/CC-1.warc.gz")), Format::Warc);
    assert_eq!(format_by_name(Path::new("x.wet.zst")), Format::Warc);
    assert_eq!(format_by_name(Path::new("x.tsv")), Format::Tsv);
}

#[test]
fn a_publisher_field_is_read_when_it_is_a_string_and_a_pages_account_comes_first() {
    let parse = |line: &str, f: &Fields| {
        let (d, page) = parse_json_line(line.as_bytes(), f, "f", 1).unwrap();
        match page {
            Some(p) => p.extract(d, None).unwrap().publisher,
            None => d.publisher,
        }
    };
    let f = fields();
    let text = r#"{"id": "a", "text": "正文。", "publisher": "账号A"}"#;
    assert_eq!(parse(text, &f).as_deref(), Some("账号A"));
    // Not a string: passed over, the record still read.
    let object = r#"{"id": "a", "text": "正文。", "publisher": {"name": "x"}}"#;
    assert_eq!(parse(object, &f), None);
    let none = Fields {
        publisher: String::new(),
        ..fields()
    };
    assert_eq!(parse(text, &none), None);
    // A page that shows its account: that one first; else the field's.
    let page = |body: &str| {
        format!(
            r#"{{"id": "p", "publisher": "字段", "html": "<html><body>{body}<p>第一段正文。</p><p>第二段正文。</p></body></html>"}}"#
        )
    };
    let shown = page(r#"<a id='js_name'>页面账号</a>"#);
    assert_eq!(parse(&shown, &f).as_deref(), Some("页面账号"));
    assert_eq!(parse(&page(""), &f).as_deref(), Some("字段"));
}

/// A JSONL line's text and HTML are moved out of the parsed line, not copied: the document is
/// the one read from the object as it was (`document_from_json`, which copies), whichever
/// fields share a key, and errors still name every key of the record.
#[test]
fn json_lines_read_as_their_objects_whichever_fields_share_a_key() {
    let lines = [
        r#"{"id": "a", "text": "正文。", "title": "t", "url": "u"}"#,
        r#"{"id": "a", "text": "正文。", "content": {"body": "嵌套的正文。"}}"#,
        r#"{"id": "a", "html": "<title>T</title><p>网页的正文。</p>"}"#,
        r#"{"id": "a", "text": 7}"#,
        r#"{"id": "a", "text": "  "}"#,
        r#"{"text": "没有编号。", "other": 1}"#,
    ];
    let configs = [
        fields(),
        Fields {
            title: "text".into(),
            ..fields()
        },
        Fields {
            url: "html".into(),
            ..fields()
        },
        Fields {
            text: "content.body".into(),
            ..fields()
        },
        Fields {
            id: "text".into(),
            ..fields()
        },
    ];
    for line in lines {
        let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        for f in &configs {
            let read =
                parse_json_line(line.as_bytes(), f, "f", 1).and_then(|(d, page)| match page {
                    Some(p) => p.extract(d, None),
                    None => Ok(d),
                });
            let oracle = document_from_json(&obj, f, || "f:1".to_string());
            assert_eq!(
                format!("{read:?}"),
                format!("{oracle:?}"),
                "{line} with {f:?}"
            );
        }
    }
    let e = parse_json_line(br#"{"text": "x", "b": 1}"#, &fields(), "f", 1).unwrap_err();
    assert!(e.contains("keys: b, text"), "{e}");
}

/// A JSONL page whose line is kept as read (`keep_raw`, for `dedup`) leaves its HTML in that
/// line until it is extracted: the documents are the ones read without the line (a byte-order
/// mark on line 1, escapes, CRLF, a nested HTML field, the HTML field also the title's),
/// and each line comes back byte for byte.
#[test]
fn pages_kept_in_their_lines_extract_as_pages_read_apart() {
    let page = |n: u32| {
        format!(
            r#"<html><head><title>标题 {n}</title></head><body><div><p>第{n}篇正文，\"引号\"与\\反斜线\u3002</p><p>second paragraph of page {n} with enough words to be kept</p></div></body></html>"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Fields, String); 3] = [
        (
            "flat.jsonl",
            fields(),
            format!(
                "\u{feff}{{\"id\": \"a\", \"html\": \"{}\"}}\r\n{{\"id\": 2, \"url\": \"https://x.example/2\", \"html\": \"{}\"}}\n{{\"id\": \"c\", \"html\": 5}}\n{{\"id\": \"d\", \"html\": \"{}\"}}",
                page(1),
                page(2),
                page(4)
            ),
        ),
        (
            "nested.jsonl",
            Fields {
                html: "content.body".into(),
                ..fields()
            },
            format!(
                "{{\"id\": \"n\", \"content\": {{\"body\": \"{}\"}}}}\n",
                page(5)
            ),
        ),
        (
            "shared.jsonl",
            Fields {
                title: "html".into(),
                ..fields()
            },
            format!("{{\"id\": \"s\", \"html\": \"{}\"}}\n", page(6)),
        ),
    ];
    for (name, f, file) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &file).unwrap();
        let read = |keep_raw: bool| -> Vec<Record> {
            let opts = ReadOptions {
                format: Format::Jsonl,
                fields: f.clone(),
                keep_raw,
                defer_pages: true,
                ..Default::default()
            };
            Inputs::new(std::slice::from_ref(&path), opts)
                .map(|mut r| {
                    if let Some((_, page)) = &r.pending {
                        // Until extracted, a page kept in its line holds no copy of its HTML.
                        let in_line = matches!(page.html, jsonl::PageHtml::InLine(_));
                        assert_eq!(in_line, keep_raw, "{name}:{}", r.line);
                    }
                    r.finish();
                    r
                })
                .collect()
        };
        let (apart, kept) = (read(false), read(true));
        assert!(apart.iter().any(|r| r.doc.is_ok()), "{name}: {apart:?}");
        assert_eq!(apart.len(), kept.len(), "{name}");
        let mut back = Vec::new();
        for (a, k) in apart.iter().zip(&kept) {
            assert_eq!(a.doc, k.doc, "{name}:{}", a.line);
            back.extend_from_slice(k.raw.as_deref().unwrap());
        }
        assert_eq!(String::from_utf8(back).unwrap(), file, "{name}");
    }
}
