//! WARC/WET records as documents: `response` pages (HTTP headers parsed, charset honoured),
//! `resource` and `conversion` records; corrupt records located and skipped.

use std::borrow::Cow;
use std::sync::atomic::Ordering::Relaxed;

use super::framing::Archive;
use super::http::{http_head, may_be_text, split_http};
use super::sniff::format_by_content;
use super::source::Source;
use super::{
    check_id, corrupt_record, decode, warc, Deferred, Format, Reading, Record, Shared, Unit,
};

/// A WARC (or WET) input being read.
pub(super) type Warc = Archive<warc::Records<Source>>;

impl Reading for Warc {
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record> {
        let max = shared.opts.max_doc_bytes;
        let not_documents = shared.counts.not_documents.clone();
        let Archive {
            source,
            records,
            n,
            errors,
        } = self;
        loop {
            // Bodies are read only for record types that can be documents.
            let item = records.next_record(max, |h| {
                let kind = h.get("warc-type").unwrap_or_default().to_ascii_lowercase();
                matches!(kind.as_str(), "response" | "conversion" | "resource")
            })?;
            *n += 1;
            let (headers, body) = match item {
                Ok(x) => x,
                Err(e) => {
                    let (r, stop) = corrupt_record(source, *n, errors, "WARC", e);
                    if stop {
                        records.stop();
                    }
                    return Some(r);
                }
            };
            let h = |k: &str| headers.get(k).map(str::to_string);
            let kind = h("warc-type").unwrap_or_default().to_ascii_lowercase();
            let body = match body {
                warc::Body::Read(b) => b,
                warc::Body::Skipped => {
                    // request, metadata, warcinfo, revisit
                    not_documents.fetch_add(1, Relaxed);
                    continue;
                }
                warc::Body::TooLarge(head) => {
                    // Report it only when it would have been a document (text or HTML).
                    let ct = if kind == "response" {
                        http_head(&head).map_or(String::new(), |(h, _)| h.ct.to_ascii_lowercase())
                    } else {
                        h("content-type").unwrap_or_default().to_ascii_lowercase()
                    };
                    if !may_be_text(&ct) {
                        not_documents.fetch_add(1, Relaxed);
                        continue;
                    }
                    return Some(Record::new(
                        source.clone(),
                        *n,
                        Unit::Record,
                        headers.content_length as usize,
                        Err(format!("record larger than {max} bytes")),
                    ));
                }
            };
            let uri = h("warc-target-uri").map(|u| {
                // WARC 1.0 writers put the URI in angle brackets.
                u.trim_start_matches('<').trim_end_matches('>').to_string()
            });
            let id = match record_id(uri.clone(), h("warc-record-id"), source, *n) {
                Ok(id) => id,
                Err(reason) => {
                    let length = headers.content_length as usize;
                    return Some(Record::new(
                        source.clone(),
                        *n,
                        Unit::Record,
                        length,
                        Err(reason),
                    ));
                }
            };
            let bytes = body.len();
            let (payload, content_type): (Cow<[u8]>, String) = match kind.as_str() {
                "response" => match split_http(&body, max) {
                    Some(Ok((ct, payload))) => (payload, ct),
                    Some(Err(reason)) => {
                        return Some(Record::new(
                            source.clone(),
                            *n,
                            Unit::Record,
                            body.len(),
                            Err(reason),
                        ))
                    }
                    None => (Cow::Borrowed(&body[..]), String::new()),
                },
                _ => (
                    Cow::Borrowed(&body[..]),
                    h("content-type").unwrap_or_default(),
                ),
            };
            let ct = content_type.to_ascii_lowercase();
            let page = (id, uri, h("warc-date"));
            match archived_page(source, *n, bytes, page, payload, &ct) {
                Some(r) => return Some(r),
                None => {
                    not_documents.fetch_add(1, Relaxed); // images, PDFs, scripts
                    continue;
                }
            }
        }
    }
}

/// A WARC record's id: its target URI, else its record id, else `source#n`. Ids from archives
/// follow the rules of every other input (no control characters, bounded length).
fn record_id(
    uri: Option<String>,
    record_id: Option<String>,
    source: &str,
    n: u64,
) -> Result<String, String> {
    let (id, field) = match (uri, record_id) {
        (Some(id), _) => (id, "WARC-Target-URI"),
        (None, Some(id)) => (id, "WARC-Record-ID"),
        (None, None) => return Ok(format!("{source}#{n}")),
    };
    check_id(&id, field)?;
    Ok(id)
}

/// An archived payload (a WARC or ARC record's: its id, URL and date) as a record: a page to
/// decode later, or a
/// located error for a binary payload; `None` when its (lower-case) content type `ct` cannot
/// be text, and the record is not a document.
pub(super) fn archived_page(
    source: &str,
    n: u64,
    bytes: usize,
    (id, url, time): (String, Option<String>, Option<String>),
    payload: Cow<[u8]>,
    ct: &str,
) -> Option<Record> {
    if !may_be_text(ct) {
        return None;
    }
    let is_html = ct.contains("html")
        || (ct.is_empty()
            && format_by_content(&payload[..payload.len().min(1024)]) == Format::Html);
    if decode::looks_binary(&payload) {
        return Some(Record::new(
            source.to_string(),
            n,
            Unit::Record,
            bytes,
            Err("binary payload".to_string()),
        ));
    }
    let page = Deferred {
        id,
        url,
        bytes: payload.into_owned(),
        charset: decode::charset_of_content_type(ct),
        html: is_html,
        time,
        digest: None,
    };
    Some(Record::page(source.to_string(), n, Unit::Record, page))
}
