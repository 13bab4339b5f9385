//! ARC files (the Internet Archive's format before WARC; Heritrix and wget still write them),
//! one record at a time in bounded memory, and their HTTP records as documents.
//!
//! A record is one header line, `URL IP-address Archive-date Content-type Archive-length` in
//! version 1 (version 2 adds result code, checksum, location, offset and file name before the
//! length: the length is always the last field), then `Archive-length` bytes of content and a
//! newline. The first record (`filedesc://...`) describes the file and is not a document. An
//! `.arc.gz` file is one gzip member per record, read as one stream. A record whose header does
//! not parse is reported and reading resumes at the next line that parses as a header; so does a
//! record whose content does not end where its Archive-length says (too short: the content's
//! rest follows; too long: the input ends inside it, and a file is read again from the record's
//! content to find the records after it). A damaged gzip member costs its record only.

use super::gzip::is_damage;
use super::source::Rewind;
use std::borrow::Cow;

use super::framing::{
    next_nonblank_line, read_body, trim_eol, Archive, Body, BodyError, Framed, Framing,
};
use super::http::{http_head, may_be_text, split_http};
use super::warc_docs::archived_page;
use super::{check_id, corrupt_record, Reading, Record, Shared, Unit};

/// A record's header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The record's URL (`filedesc://...` for the file description).
    pub url: String,
    /// The Content-type field (the archived response's type, as the crawler saw it).
    pub content_type: String,
    /// Archive-date (`YYYYMMDDhhmmss`), as written.
    pub date: String,
    /// Archive-length: the bytes of content that follow the header line.
    pub length: u64,
}

/// `line` (without its end) as a record header: at least 5 space-separated fields, the first a
/// URL (`scheme:`), the last a length.
pub fn parse_header(line: &[u8]) -> Option<Header> {
    let text = std::str::from_utf8(line).ok()?;
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    if fields.len() < 5 {
        return None;
    }
    let url = fields[0];
    let scheme = url.split_once(':')?.0;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return None;
    }
    let length = fields[fields.len() - 1].parse().ok()?;
    Some(Header {
        url: url.to_string(),
        content_type: fields[3].to_string(),
        date: fields[2].to_string(),
        length,
    })
}

/// Whether a record's `content`, followed by a line that is not a header, shows that its
/// Archive-length was wrong: it holds a header line (it ran into the next record), or it is an
/// HTTP response whose header block does not end in it (it was cut short).
fn misframed(content: &[u8]) -> bool {
    let holds_header = content
        .split(|&b| b == b'\n')
        .skip(1)
        .any(|l| parse_header(trim_eol(l)).is_some());
    let cut_http = content.starts_with(b"HTTP/")
        && !content.windows(4).any(|w| w == b"\r\n\r\n")
        && !content.windows(2).any(|w| w == b"\n\n");
    holds_header || cut_http
}

/// Streaming reader of ARC records.
pub struct Records<R> {
    f: Framed<R, Arc>,
}

/// ARC's start line: a record's header line.
struct Arc;

impl Framing for Arc {
    type Start = Header;

    fn start(line: &[u8]) -> Option<Header> {
        parse_header(line)
    }
}

impl<R: Rewind> Records<R> {
    /// Records of `reader` (already decompressed).
    pub fn new(reader: R) -> Self {
        Records {
            f: Framed::new(reader),
        }
    }

    /// Read no more of this input.
    pub fn stop(&mut self) {
        self.f.stop();
    }

    /// The next record. `want` sees the header and says whether the content is needed; wanted
    /// content over `max` bytes is not read ([`Body::TooLarge`], its first [`super::warc::HEAD`] bytes
    /// kept). `None` at the end of input.
    pub fn next_record(
        &mut self,
        max: usize,
        want: impl FnOnce(&Header) -> bool,
    ) -> Option<Result<(Header, Body), String>> {
        if let Some(damage) = self.f.damage.take() {
            return self.f.corrupt(damage);
        }
        if self.f.done {
            return None;
        }
        let mut line = Vec::new();
        let h = match self.f.pending.take() {
            Some(h) => h,
            None => match next_nonblank_line(&mut self.f.reader, &mut line) {
                Err(e) => return self.f.read_failed(e),
                Ok(None) => {
                    self.f.done = true;
                    return None;
                }
                Ok(Some(cut)) => match parse_header(trim_eol(&line)) {
                    Some(h) if !cut => h,
                    _ => {
                        let shown: String = String::from_utf8_lossy(trim_eol(&line))
                            .chars()
                            .take(80)
                            .collect();
                        let reason = format!("bad ARC header line `{shown}`");
                        if let Err(e) = self.f.resync() {
                            return self.f.fail(format!("{reason}; then: {e}"));
                        }
                        return Some(Err(reason));
                    }
                },
            },
        };
        let len = h.length;
        let body_at = self.f.reader.position();
        let body = match read_body(&mut self.f.reader, len, want(&h), max) {
            Ok(body) => body,
            Err(BodyError::Io(e)) => return self.f.read_failed(e),
            Err(BodyError::Truncated { after }) => {
                let reason = format!(
                    "truncated record `{}`: Archive-length {len}, input ends after {after} bytes",
                    h.url
                );
                return match self.f.reader.rewind_to(body_at) {
                    // A length that lies: the records after this one are still there.
                    Ok(true) => {
                        self.f.done = false;
                        self.f.corrupt(reason)
                    }
                    _ => self.f.fail(reason),
                };
            }
        };
        // The content ends with a newline, and the next non-blank line is the next record's
        // header (or the input ends). When it is not, Archive-length may be wrong: too long
        // (the content read holds the next record's header line) or too short (an HTTP
        // response whose header block does not end in it). Then the record is not what it
        // claims: it is read again from the content's start, when the input can, to find the
        // next header. Otherwise the record stands and the line is reported as garbage.
        let mut next = Vec::new();
        match next_nonblank_line(&mut self.f.reader, &mut next) {
            Ok(None) => {}
            Ok(Some(false)) if parse_header(trim_eol(&next)).is_some() => {
                self.f.pending = parse_header(trim_eol(&next));
            }
            Ok(Some(_)) => {
                if let Body::Read(content) = &body {
                    if misframed(content) {
                        let reason = format!(
                            "record `{}` does not end where its Archive-length ({len}) says",
                            h.url
                        );
                        return match self.f.reader.rewind_to(body_at) {
                            Ok(_) => self.f.corrupt(reason),
                            Err(e) => self.f.fail(format!("{reason}; then: {e}")),
                        };
                    }
                }
                let shown: String = String::from_utf8_lossy(trim_eol(&next))
                    .chars()
                    .take(80)
                    .collect();
                self.f.damage = Some(format!("bad ARC header line `{shown}`"));
            }
            // Damage past this record's content: the next record's loss.
            Err(e) if is_damage(&e) => self.f.damage = Some(e.to_string()),
            Err(e) => return self.f.read_failed(e),
        }
        Some(Ok((h, body)))
    }
}

/// An ARC input being read.
pub(super) type ArcInput = Archive<Records<super::source::Source>>;

impl Reading for ArcInput {
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record> {
        let max = shared.opts.max_doc_bytes;
        let not_documents = shared.counts.not_documents.clone();
        let pass_over = || {
            not_documents.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let Archive {
            source,
            records,
            n,
            errors,
        } = self;
        loop {
            // Only HTTP records can be documents (not the file description, `dns:` lookups,
            // `ftp:` listings...).
            let item = records.next_record(max, |h| is_http(&h.url))?;
            *n += 1;
            let (h, body) = match item {
                Ok(x) => x,
                Err(e) => {
                    let (r, stop) = corrupt_record(source, *n, errors, "ARC", e);
                    if stop {
                        records.stop();
                    }
                    return Some(r);
                }
            };
            let body = match body {
                Body::Read(b) => b,
                Body::Skipped => {
                    pass_over();
                    continue;
                }
                Body::TooLarge(head) => {
                    let ct =
                        http_head(&head).map_or(h.content_type.clone(), |(hh, _)| hh.ct.clone());
                    if !may_be_text(&ct.to_ascii_lowercase()) {
                        pass_over();
                        continue;
                    }
                    return Some(Record::new(
                        source.clone(),
                        *n,
                        Unit::Record,
                        h.length as usize,
                        Err(format!("record larger than {max} bytes")),
                    ));
                }
            };
            let bytes = body.len();
            // The content is the HTTP response as received (status line, headers, payload);
            // some writers stored the payload alone.
            let (payload, content_type): (Cow<[u8]>, String) = match split_http(&body, max) {
                Some(Ok((ct, payload))) => (payload, ct),
                Some(Err(reason)) => {
                    return Some(Record::new(
                        source.clone(),
                        *n,
                        Unit::Record,
                        bytes,
                        Err(reason),
                    ))
                }
                None => (Cow::Borrowed(&body[..]), h.content_type.clone()),
            };
            let mut ct = content_type.to_ascii_lowercase();
            if ct == "no-type" || ct == "unk" {
                ct.clear();
            }
            if payload.iter().all(u8::is_ascii_whitespace) {
                pass_over(); // redirects, 304s: no text
                continue;
            }
            let url = h.url;
            if let Err(reason) = check_id(&url, "URL") {
                return Some(Record::new(
                    source.clone(),
                    *n,
                    Unit::Record,
                    bytes,
                    Err(reason),
                ));
            }
            let page = (url.clone(), Some(url), Some(h.date));
            match archived_page(source, *n, bytes, page, payload, &ct) {
                Some(r) => return Some(r),
                None => {
                    pass_over(); // images, PDFs, scripts: not text documents
                    continue;
                }
            }
        }
    }
}

fn is_http(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::warc::HEAD;

    fn record(url: &str, content: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "{url} 127.0.0.1 20010101000000 text/html {}\n",
            content.len()
        )
        .into_bytes();
        r.extend_from_slice(content);
        r.push(b'\n');
        r
    }

    /// (URL, content if read) of each record, or its error.
    type Got = Result<(String, Option<Vec<u8>>), String>;

    fn all(data: &[u8], max: usize) -> Vec<Got> {
        let mut r = Records::new(data);
        let mut out = Vec::new();
        while let Some(x) = r.next_record(max, |h| is_http(&h.url)) {
            out.push(x.map(|(h, b)| {
                (
                    h.url,
                    match b {
                        Body::Read(b) => Some(b),
                        _ => None,
                    },
                )
            }));
        }
        out
    }

    #[test]
    fn headers_of_both_versions_parse() {
        let v1 = parse_header(b"http://a.example/x 1.2.3.4 19961104142103 text/html 202").unwrap();
        assert_eq!((v1.url.as_str(), v1.length), ("http://a.example/x", 202));
        assert_eq!(v1.content_type, "text/html");
        let v2 = parse_header(
            b"http://b.example/ 1.2.3.4 20080430204825 text/html 200 ABCDEF - 0 f.arc 1500",
        )
        .unwrap();
        assert_eq!(v2.length, 1500);
        for bad in [
            &b"<html><body>"[..],
            b"http://a 1 2 text/html",
            b"http://a 1 2 text/html x",
            b"no scheme 1 2 3",
        ] {
            assert_eq!(
                parse_header(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn records_are_read_and_the_file_description_skipped() {
        let mut data = record(
            "filedesc://x.arc",
            b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n",
        );
        data.extend(record(
            "http://a.example/",
            b"HTTP/1.0 200 OK\r\n\r\n<p>a</p>",
        ));
        data.extend(record("dns:a.example", b"20010101 a.example 1.2.3.4"));
        let got = all(&data, 1 << 20);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Ok(("filedesc://x.arc".into(), None)));
        assert_eq!(
            got[1],
            Ok((
                "http://a.example/".into(),
                Some(b"HTTP/1.0 200 OK\r\n\r\n<p>a</p>".to_vec())
            ))
        );
        assert_eq!(got[2], Ok(("dns:a.example".into(), None)));
    }

    #[test]
    fn garbage_is_reported_and_the_next_record_read() {
        let mut data = record("http://a.example/", b"HTTP/1.0 200 OK\r\n\r\none");
        data.extend(b"garbage line\nmore garbage\n");
        data.extend(record("http://b.example/", b"HTTP/1.0 200 OK\r\n\r\ntwo"));
        let got = all(&data, 1 << 20);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[1]
            .as_ref()
            .unwrap_err()
            .contains("bad ARC header line `garbage line`"));
        assert_eq!(got[2].as_ref().unwrap().0, "http://b.example/");
    }

    #[test]
    fn a_truncated_last_record_is_an_error_and_the_end() {
        let mut data = record("http://a.example/", b"HTTP/1.0 200 OK\r\n\r\none");
        let last = record("http://b.example/", b"HTTP/1.0 200 OK\r\n\r\ntwo two two");
        data.extend(&last[..last.len() - 6]);
        let got = all(&data, 1 << 20);
        assert_eq!(got.len(), 2);
        assert!(got[1]
            .as_ref()
            .unwrap_err()
            .contains("truncated record `http://b.example/`"));
    }

    #[test]
    fn content_over_the_limit_is_not_read() {
        let data = record("http://a.example/", &[b'x'; 5000]);
        let mut r = Records::new(&data[..]);
        let (_, body) = r.next_record(1000, |_| true).unwrap().unwrap();
        assert!(matches!(body, Body::TooLarge(ref h) if h.len() == 5000.min(HEAD)));
        assert!(r.next_record(1000, |_| true).is_none());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic_and_end(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
            let mut r = Records::new(&data[..]);
            let mut n = 0;
            while r.next_record(100, |_| true).is_some() {
                n += 1;
                proptest::prop_assert!(n <= data.len() + 1);
            }
        }
    }
}
