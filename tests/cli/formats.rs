//! Every input format, built as small real files (compressed and not, GBK and UTF-8, a
//! multi-member WARC), read back through the reader: the documents and texts that come out.
//!
//! Over 600 lines: one case per format, each building its own small file.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use fpdb::reader::{Format, Inputs, ReadOptions, Record};

fn read(paths: &[PathBuf], format: Format) -> Vec<Record> {
    Inputs::new(
        paths,
        ReadOptions {
            format,
            ..Default::default()
        },
    )
    .collect()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn warc_record(kind: &str, uri: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Record-ID: <urn:uuid:{}>\r\n\
         WARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        uri.len(),
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn http(content_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut b = format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n\r\n").into_bytes();
    b.extend_from_slice(payload);
    b
}

const ZH: &str = "中华人民共和国宪法是国家的根本法，具有最高的法律效力。全国各族人民、一切国家机关和武装力量都必须以宪法为根本的活动准则。";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn multi_member_gzip_warc_with_gbk_html_and_wet_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let page = format!(
        "<html><head><title>宪法</title><meta name=\"description\" content=\"根本法\"></head><body><p>{ZH}</p></body></html>"
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&page);
    let mut file = Vec::new();
    file.extend(gz(&warc_record(
        "warcinfo",
        "",
        "application/warc-fields",
        b"software: test\r\n",
    )));
    file.extend(gz(&warc_record(
        "request",
        "http://a.cn/1",
        "application/http; msgtype=request",
        b"GET / HTTP/1.1\r\n\r\n",
    )));
    file.extend(gz(&warc_record(
        "response",
        "http://a.cn/1",
        "application/http; msgtype=response",
        &http("text/html; charset=gbk", &gbk),
    )));
    file.extend(gz(&warc_record(
        "response",
        "http://a.cn/logo.png",
        "application/http; msgtype=response",
        &http("image/png", b"\x89PNG\r\n\x1a\n\0\0"),
    )));
    file.extend(gz(&warc_record(
        "conversion",
        "http://b.cn/2",
        "text/plain",
        "第二篇文章的纯文本内容。".as_bytes(),
    )));
    let p = write(dir.path(), "crawl.warc.gz", &file);
    let recs = read(&[p], Format::Auto);
    let docs: Vec<_> = recs.iter().map(|r| r.doc.as_ref().unwrap()).collect();
    assert_eq!(
        docs.len(),
        2,
        "only the HTML response and the conversion are documents: {recs:?}"
    );
    assert_eq!(docs[0].id, "http://a.cn/1");
    assert_eq!(docs[0].url.as_deref(), Some("http://a.cn/1"));
    assert_eq!(docs[0].title.as_deref(), Some("宪法"));
    assert_eq!(docs[0].description.as_deref(), Some("根本法"));
    assert!(
        docs[0].text.contains(ZH),
        "GBK decoded from the HTTP charset: {}",
        docs[0].text
    );
    assert_eq!(docs[1].text, "第二篇文章的纯文本内容。");
    assert_eq!(
        (recs[0].line, recs[1].line),
        (3, 5),
        "record numbers locate documents"
    );
}

/// A raw HTTP response with extra headers.
fn http_with(headers: &str, payload: &[u8]) -> Vec<u8> {
    let mut b =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{headers}\r\n")
            .into_bytes();
    b.extend_from_slice(payload);
    b
}

/// Chunked transfer encoding of `data` in pieces of `n` bytes (with a chunk extension).
fn chunked(data: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in data.chunks(n) {
        out.extend(format!("{:x};ext=1\r\n", c.len()).into_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[test]
fn http_payloads_are_dechunked_and_decompressed_or_located() {
    let dir = tempfile::tempdir().unwrap();
    let page = format!("<html><body><p>{ZH}</p></body></html>");
    let bomb = gz(&vec![b'a'; 200_000]);
    let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    deflated.write_all(page.as_bytes()).unwrap();
    let deflated = deflated.finish().unwrap();
    let records = [
        (
            "http://a.cn/chunked-gzip",
            http_with(
                "Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n",
                &chunked(&gz(page.as_bytes()), 7),
            ),
        ),
        (
            "http://a.cn/gzip",
            http_with("Content-Encoding: gzip\r\n", &gz(page.as_bytes())),
        ),
        (
            "http://a.cn/chunked",
            http_with(
                "Transfer-Encoding: chunked\r\n",
                &chunked(page.as_bytes(), 10),
            ),
        ),
        (
            "http://a.cn/deflate",
            http_with("Content-Encoding: deflate\r\n", &deflated),
        ),
        // Archived decoded while the headers still say otherwise: taken as it is.
        (
            "http://a.cn/stored-decoded",
            http_with(
                "Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n",
                page.as_bytes(),
            ),
        ),
        (
            "http://a.cn/brotli",
            http_with("Content-Encoding: br\r\n", b"\x1b\x00"),
        ),
        (
            "http://a.cn/bomb",
            http_with("Content-Encoding: gzip\r\n", &bomb),
        ),
        (
            "http://a.cn/corrupt",
            http_with("Content-Encoding: gzip\r\n", b"\x1f\x8b\x08\x00garbage"),
        ),
    ];
    let mut file = Vec::new();
    for (uri, body) in &records {
        file.extend(warc_record(
            "response",
            uri,
            "application/http; msgtype=response",
            body,
        ));
    }
    let p = write(dir.path(), "crawl.warc", &file);
    let recs: Vec<Record> = Inputs::new(
        &[p],
        ReadOptions {
            max_doc_bytes: 100_000,
            ..Default::default()
        },
    )
    .map(|mut r| {
        r.finish();
        r
    })
    .collect();
    assert_eq!(recs.len(), records.len(), "{recs:?}");
    for r in &recs[..5] {
        let d = r
            .doc
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", r.location()));
        assert!(d.text.contains(ZH), "{}: {:?}", d.id, d.text);
    }
    let err = |i: usize| recs[i].doc.as_ref().unwrap_err().clone();
    assert!(
        err(5).contains("unsupported Content-Encoding `br`"),
        "{}",
        err(5)
    );
    assert!(err(6).contains("larger than 100000 bytes"), "{}", err(6));
    assert!(err(7).contains("corrupt gzip"), "{}", err(7));
    assert!(
        recs[7].location().ends_with("crawl.warc#8"),
        "{}",
        recs[7].location()
    );
}

#[test]
fn corrupt_warc_record_is_located_and_the_next_ones_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = warc_record(
        "conversion",
        "http://x/1",
        "text/plain",
        "第一篇。".as_bytes(),
    );
    // Content-Length larger than the body: the record overruns.
    file.extend_from_slice(
        b"WARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: 999999\r\n\r\nshort\r\n\r\n",
    );
    let p = write(dir.path(), "bad.warc", &file);
    let recs = read(&[p], Format::Auto);
    assert!(recs[0].doc.is_ok());
    let bad = recs
        .iter()
        .find(|r| r.doc.is_err())
        .expect("an error record");
    assert!(
        bad.location()
            .starts_with(&format!("{}#", dir.path().join("bad.warc").display())),
        "{}",
        bad.location()
    );
    assert!(bad
        .doc
        .as_ref()
        .unwrap_err()
        .contains("corrupt WARC record"));
}

#[test]
fn csv_tsv_with_headers_gbk_text_files_html_files_and_lists() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write(
        dir.path(),
        "a.csv",
        "id,title,text\nc1,标题,\"第一行, 有逗号\"\nc2,,\n".as_bytes(),
    );
    let tsv = write(
        dir.path(),
        "b.tsv.gz",
        &gz("text\tid\n制表符分隔\tt1\n".as_bytes()),
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(ZH);
    let txt = write(dir.path(), "gbk.txt", &gbk);
    let html = write(
        dir.path(),
        "page.htm",
        format!("<html><title>T</title><body><p>{ZH}</p></body></html>").as_bytes(),
    );
    let zst = write(
        dir.path(),
        "c.jsonl.zst",
        &zstd::encode_all(&b"{\"id\":\"z1\",\"text\":\"zstd text\"}\n"[..], 3).unwrap(),
    );
    let list = write(
        dir.path(),
        "inputs.lst",
        format!("{}\n# comment\n{}\n", txt.display(), zst.display()).as_bytes(),
    );
    let recs = read(&[csv, tsv, txt.clone(), html], Format::Auto);
    let got: Vec<(String, Result<String, String>)> = recs
        .iter()
        .map(|r| {
            (
                r.location(),
                r.doc
                    .as_ref()
                    .map(|d| format!("{}|{}", d.id, d.text))
                    .map_err(std::clone::Clone::clone),
            )
        })
        .collect();
    assert_eq!(got[0].1.as_deref(), Ok("c1|第一行, 有逗号"));
    assert!(
        got[1].1.as_ref().unwrap_err().contains("empty document"),
        "{got:?}"
    );
    assert!(got[1].0.ends_with("a.csv:3"), "{got:?}");
    assert_eq!(got[2].1.as_deref(), Ok("t1|制表符分隔"));
    assert_eq!(
        got[3].1.as_deref(),
        Ok(format!("{}|{ZH}", txt.display()).as_str()),
        "GBK text file detected"
    );
    assert!(got[4].1.as_ref().unwrap().ends_with(ZH), "{got:?}");
    assert_eq!(recs[0].doc.as_ref().unwrap().title.as_deref(), Some("标题"));
    let listed = read(&[list], Format::List);
    let ids: Vec<&str> = listed
        .iter()
        .map(|r| r.doc.as_ref().unwrap().id.as_str())
        .collect();
    assert_eq!(ids, [txt.to_str().unwrap(), "z1"]);
}

#[test]
fn binary_huge_and_truncated_inputs_are_located_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let bin = write(
        dir.path(),
        "img.dat",
        &[0x89, b'P', b'N', b'G', 0, 0, 0, 13, 0, 1, 2, 3],
    );
    let big = write(dir.path(), "big.txt", "大".repeat(2_000_000).as_bytes());
    let ok = write(dir.path(), "ok.txt", ZH.as_bytes());
    let recs: Vec<Record> = Inputs::new(
        &[bin, big, ok],
        ReadOptions {
            max_doc_bytes: 1 << 20,
            ..Default::default()
        },
    )
    .collect();
    assert_eq!(recs[0].doc.as_ref().unwrap_err(), "binary file");
    assert!(
        recs[1].doc.as_ref().unwrap_err().contains("larger than"),
        "{:?}",
        recs[1].doc
    );
    assert!(recs[2].doc.is_ok());
}

#[test]
fn cli_ingests_a_crawl_directory_and_a_50mb_document_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("crawl");
    std::fs::create_dir_all(&d).unwrap();
    let text = common::synthetic_doc(&mut common::Rng(21), 8);
    let page = format!(
        "<html><head><meta charset=gbk><title>一</title></head><body><p>{text}</p></body></html>"
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&page);
    std::fs::write(d.join("a.html"), &*gbk).unwrap();
    std::fs::write(
        d.join("b.html"),
        format!(
            "<html><head><title>二</title></head><body><p>【转载】</p><p>{text}</p></body></html>"
        ),
    )
    .unwrap();
    std::fs::write(d.join("huge.txt"), "很".repeat((50 << 20) / 3 + 1)).unwrap();
    let o = common::run(
        dir.path(),
        &["ingest", "crawl", "--max-doc-bytes", "10000000", "-o", "-"],
    );
    assert_eq!(common::code(&o), 3, "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("huge.txt:1: document larger than"),
        "{}",
        common::stderr(&o)
    );
    let out = common::json_lines(&common::stdout(&o));
    assert_eq!(out.len(), 3);
    assert_eq!(out[1]["duplicate_of"], "crawl/a.html", "{out:?}");
}

#[test]
fn deferred_pages_finish_to_the_same_documents() {
    let dir = tempfile::tempdir().unwrap();
    let (gbk, _, _) = encoding_rs::GBK.encode(ZH);
    let txt = write(dir.path(), "gbk.txt", &gbk);
    let page = write(
        dir.path(),
        "p.html",
        format!("<title>T</title><p>{ZH}</p>").as_bytes(),
    );
    let warc = write(
        dir.path(),
        "w.warc",
        &warc_record("conversion", "http://x/1", "text/plain", ZH.as_bytes()),
    );
    let paths = [txt, page, warc];
    let eager: Vec<_> = read(&paths, Format::Auto)
        .into_iter()
        .map(|r| r.doc)
        .collect();
    let opts = ReadOptions {
        defer_pages: true,
        ..Default::default()
    };
    let deferred: Vec<_> = Inputs::new(&paths, opts)
        .map(|mut r| {
            assert!(r.doc.is_err(), "not decoded before finish()");
            r.finish();
            r.doc
        })
        .collect();
    assert_eq!(eager, deferred);
    assert!(eager
        .iter()
        .all(|d| d.as_ref().unwrap().text.contains("宪法")));
}

#[test]
fn garbage_csv_lists_and_stdin_are_located_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    // A row with invalid UTF-8, then a good row; and a CSV without a text column.
    let bad = b"id,text\nr1,\"ok \xff\xfe\"\nr2,good row text\n".to_vec();
    let csv = write(dir.path(), "bad.csv", &bad);
    let nocol = write(dir.path(), "nocol.csv", b"id,body\nx,y\n");
    let list = write(dir.path(), "in.lst", b"does/not/exist.txt\n");
    let recs = read(&[csv, nocol], Format::Auto);
    let got: Vec<(String, bool)> = recs.iter().map(|r| (r.location(), r.doc.is_ok())).collect();
    assert!(
        recs[0].doc.as_ref().unwrap_err().contains("invalid UTF-8"),
        "{got:?}"
    );
    assert!(got[0].0.ends_with("bad.csv:2"), "{got:?}");
    assert_eq!(recs[1].doc.as_ref().unwrap().text, "good row text");
    assert!(
        recs[2].doc.as_ref().unwrap_err().contains("no `text`"),
        "{got:?}"
    );
    let listed = read(&[list], Format::List);
    assert!(
        listed[0].doc.as_ref().unwrap_err().contains("cannot open"),
        "{:?}",
        listed[0].doc
    );

    // Binary garbage on stdin: reported, counted, nothing stored; exit 2 (nothing could be
    // read: not a partial success).
    let o = common::run_stdin(
        dir.path(),
        &["ingest", "-", "-o", "-"],
        b"\x00\x01\x02{not json\n\xff\xfe\n",
    );
    assert_eq!(common::code(&o), 2, "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("-:1:"),
        "{}",
        common::stderr(&o)
    );
    let out = common::json_lines(&common::stdout(&o));
    assert!(out.iter().all(|l| l["status"] == "skipped"), "{out:?}");
}

const ZH2: &str =
    "第二篇文章讲的是另一件事情，它和第一篇没有任何关系。记者从现场发回了详细的报道内容。";

/// ARC files (version 1, one gzip member per record as Heritrix and wget write them): every
/// HTTP text record is a document with its URL as id; the file description, DNS records and
/// images are not; a truncated last record is located. Named without any extension, the same
/// bytes are recognized as gzip and ARC by their first bytes.
#[test]
fn arc_records_become_documents_and_a_truncated_last_one_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let page = format!("<html><head><title>宪法</title></head><body><p>{ZH}</p></body></html>");
    let (gbk, _, _) = encoding_rs::GBK.encode(&page);
    let mut file = Vec::new();
    file.extend(gz(&common::arc_record(
        "filedesc://crawl.arc",
        "text/plain",
        b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n",
    )));
    file.extend(gz(&common::arc_record(
        "dns:a.cn",
        "text/dns",
        b"20010915120000\na.cn. 600 IN A 192.0.2.1\n",
    )));
    file.extend(gz(&common::arc_record(
        "http://a.cn/1",
        "text/html",
        &http("text/html; charset=gbk", &gbk),
    )));
    file.extend(gz(&common::arc_record(
        "http://a.cn/logo.png",
        "image/png",
        &http("image/png", b"\x89PNG\r\n\x1a\n\0\0"),
    )));
    // Version 2 header fields (result code, checksum, location, offset, file name).
    let v2 = http("text/plain; charset=utf-8", ZH2.as_bytes());
    file.extend(gz(format!(
        "http://b.cn/2 192.0.2.2 20010915120001 text/plain 200 ABCDEF - 0 crawl.arc {}\n",
        v2.len()
    )
    .as_bytes()
    .iter()
    .chain(&v2)
    .chain(b"\n")
    .copied()
    .collect::<Vec<u8>>()
    .as_slice()));
    let last = common::arc_record(
        "http://c.cn/3",
        "text/html",
        &http("text/html", b"<p>cut short</p>"),
    );
    let mut truncated = file.clone();
    truncated.extend(gz(&last[..last.len() - 8]));

    for name in ["crawl.arc.gz", "crawl-without-extension"] {
        let p = write(dir.path(), name, &truncated);
        let recs = read(&[p], Format::Auto);
        let docs: Vec<_> = recs.iter().filter_map(|r| r.doc.as_ref().ok()).collect();
        assert_eq!(docs.len(), 2, "{name}: {recs:?}");
        assert_eq!(docs[0].id, "http://a.cn/1");
        assert_eq!(docs[0].url.as_deref(), Some("http://a.cn/1"));
        assert_eq!(docs[0].title.as_deref(), Some("宪法"));
        assert!(
            docs[0].text.contains(ZH),
            "GBK from the HTTP charset: {}",
            docs[0].text
        );
        assert_eq!(docs[1].id, "http://b.cn/2");
        assert_eq!(docs[1].text, ZH2);
        let errs: Vec<_> = recs.iter().filter(|r| r.doc.is_err()).collect();
        assert_eq!(errs.len(), 1, "{recs:?}");
        assert!(
            errs[0].location().ends_with(&format!("{name}#6")),
            "{}",
            errs[0].location()
        );
        assert!(
            errs[0]
                .doc
                .as_ref()
                .unwrap_err()
                .contains("truncated record `http://c.cn/3`"),
            "{:?}",
            errs[0].doc
        );
    }

    // Through the CLI: two documents stored, the truncated record reported, exit 3.
    let p = write(dir.path(), "cli.arc.gz", &truncated);
    let o = common::run(
        dir.path(),
        &["ingest", "--db", "db", "-o", "-", p.to_str().unwrap()],
    );
    assert_eq!(common::code(&o), 3, "{}", common::stderr(&o));
    let out = common::json_lines(&common::stdout(&o));
    let added: Vec<_> = out.iter().filter(|l| l["status"] == "added").collect();
    assert_eq!(added.len(), 2, "{out:?}");
    assert_eq!(added[0]["id"], "http://a.cn/1");
    assert!(
        common::stderr(&o).contains("cli.arc.gz#6"),
        "{}",
        common::stderr(&o)
    );
}

/// Compression and containers come from the first bytes; the name is only a hint.
#[test]
fn compression_and_containers_are_recognized_by_their_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let line = |id: &str, text: &str| format!("{{\"id\":\"{id}\",\"text\":\"{text}\"}}\n");
    // gzip WARC with a misleading name.
    let warc = gz(&warc_record(
        "conversion",
        "http://w.cn/1",
        "text/plain",
        ZH.as_bytes(),
    ));
    let a = write(dir.path(), "x.warc.gz.bad", &warc);
    // gzip JSONL without an extension; zstd JSONL named .txt; plain JSONL named .gz.
    let b = write(dir.path(), "dump", &gz(line("b", ZH).as_bytes()));
    let c = write(
        dir.path(),
        "data.txt",
        &zstd::encode_all(line("c", ZH2).as_bytes(), 0).unwrap(),
    );
    let d = write(
        dir.path(),
        "plain.jsonl.gz",
        line("d", "不是压缩文件的内容").as_bytes(),
    );
    let recs = read(&[a, b, c, d], Format::Auto);
    let ids: Vec<_> = recs
        .iter()
        .map(|r| {
            r.doc
                .as_ref()
                .map(|d| d.id.clone())
                .unwrap_or_else(std::clone::Clone::clone)
        })
        .collect();
    assert_eq!(ids, ["http://w.cn/1", "b", "c", "d"]);
    assert_eq!(recs[0].doc.as_ref().unwrap().text, ZH);

    // gzip on stdin.
    let o = common::run_stdin(
        dir.path(),
        &["ingest", "--db", "db", "-", "-o", "-"],
        &gz((line("s1", ZH) + &line("s2", ZH2)).as_bytes()),
    );
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let out = common::json_lines(&common::stdout(&o));
    let ids: Vec<_> = out.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["s1", "s2"]);

    // A damaged gzip stream is a located error, counted as lost to damage, not a panic; what
    // came before is kept.
    let mut broken = gz((line("g1", ZH) + &line("g2", ZH2)).repeat(50).as_bytes());
    let n = broken.len();
    broken[n / 2..].iter_mut().for_each(|b| *b ^= 0x5a);
    let e = write(dir.path(), "broken.jsonl.gz", &broken);
    let recs = read(&[e], Format::Auto);
    let last = recs.last().unwrap();
    assert!(
        last.doc
            .as_ref()
            .is_err_and(|e| e.contains("damaged gzip member")),
        "{last:?}"
    );
    assert_eq!(last.lost, 1);
}

/// `--text-field content.body` and `--id-field meta.id` reach into nested objects; a key with
/// a dot in its name is still found as it is.
#[test]
fn nested_jsonl_fields_are_addressed_by_dotted_names() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "nested.jsonl",
        format!(
            "{{\"meta\":{{\"id\":7,\"url\":\"http://n.cn/7\"}},\"content\":{{\"body\":\"{ZH}\"}}}}\n\
             {{\"meta\":{{\"id\":\"8\"}},\"content.body\":\"{ZH2}\"}}\n\
             {{\"meta\":{{\"id\":\"9\"}},\"content\":\"not an object\"}}\n"
        )
        .as_bytes(),
    );
    let recs = Inputs::new(
        &[p],
        ReadOptions {
            fields: fpdb::reader::Fields {
                id: "meta.id".into(),
                text: "content.body".into(),
                url: "meta.url".into(),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .collect::<Vec<_>>();
    let d0 = recs[0].doc.as_ref().unwrap();
    assert_eq!((d0.id.as_str(), d0.text.as_str()), ("7", ZH));
    assert_eq!(d0.url.as_deref(), Some("http://n.cn/7"));
    assert_eq!(recs[1].doc.as_ref().unwrap().text, ZH2);
    assert!(
        recs[2]
            .doc
            .as_ref()
            .unwrap_err()
            .contains("missing text field `content.body`"),
        "{:?}",
        recs[2].doc
    );
    assert_eq!(
        recs[2].location(),
        format!("{}:3", dir.path().join("nested.jsonl").display())
    );
}
