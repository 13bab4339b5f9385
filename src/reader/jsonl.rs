//! JSONL: one JSON object per line, field names configurable; long lines skipped whole.

use std::io::{BufRead, Read};

use super::{check_id, error, Fields, Input, Reading, Record, Shared, Unit};
use crate::engine::Document;

/// A JSONL input being read.
pub(super) struct Jsonl {
    pub(super) source: String,
    pub(super) reader: Input,
    /// The line last read (from 1).
    pub(super) line: u64,
}

impl Reading for Jsonl {
    /// Next line of the input, or None at its end.
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record> {
        let max = shared.opts.max_doc_bytes;
        let Jsonl {
            source,
            reader,
            line,
        } = self;
        loop {
            shared.buf.clear();
            *line += 1;
            let n = match reader
                .by_ref()
                .take(max as u64 + 1)
                .read_until(b'\n', &mut shared.buf)
            {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) if super::gzip::is_damage(&e) => {
                    // A damaged gzip member: its lines are lost, reading goes on with the next
                    // member (line numbers after it count the lines read, not the lost ones).
                    let mut r = error(source.clone(), *line, Unit::Line, e.to_string());
                    r.lost = 1;
                    shared.after_damage = true;
                    return Some(r);
                }
                Err(e) => {
                    let r = error(
                        source.clone(),
                        *line,
                        Unit::Line,
                        format!("read error: {e}"),
                    );
                    // Nothing more can be read from a broken stream.
                    *reader = Box::new(std::io::empty());
                    return Some(r);
                }
            };
            if n > max && shared.buf.last() != Some(&b'\n') {
                let mut sink = Vec::new();
                loop {
                    sink.clear();
                    match reader.by_ref().take(1 << 20).read_until(b'\n', &mut sink) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if sink.last() == Some(&b'\n') => break,
                        Ok(_) => {}
                    }
                }
                return Some(error(
                    source.clone(),
                    *line,
                    Unit::Line,
                    format!("line longer than {max} bytes"),
                ));
            }
            if shared.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let doc = parse_json_line(&shared.buf, &shared.opts.fields, source, *line);
            let cut = std::mem::take(&mut shared.after_damage)
                && doc.as_ref().is_err_and(|e| {
                    e.starts_with("invalid UTF-8") || e.starts_with("malformed JSON")
                });
            if cut {
                // The rest of a line whose start was in the damaged member: lost with it, not
                // bad input.
                let mut r = error(
                    source.clone(),
                    *line,
                    Unit::Line,
                    "the rest of a line that began in the damaged part before it".into(),
                );
                r.lost = 1;
                return Some(r);
            }
            let mut r = match doc {
                Ok((fields, Some(mut page))) => {
                    if shared.opts.keep_raw {
                        page.leave_in_line(&shared.opts.fields.html);
                    }
                    Record::pending(source.clone(), *line, n, fields, page)
                }
                Ok((doc, None)) => Record::new(source.clone(), *line, Unit::Line, n, Ok(doc)),
                Err(e) => Record::new(source.clone(), *line, Unit::Line, n, Err(e)),
            };
            if shared.opts.keep_raw {
                let bom = std::mem::take(&mut shared.bom) && *line == 1;
                let mut raw = if bom {
                    super::sniff::BOM.to_vec()
                } else {
                    Vec::new()
                };
                raw.extend_from_slice(&shared.buf);
                r.raw = Some(raw);
            }
            return Some(r);
        }
    }
}

/// Field `name` of `obj`: a key of that name, else, when the name holds dots, the path
/// through nested objects (`content.body` is `{"content": {"body": ...}}`).
fn field<'a>(
    obj: &'a serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Option<&'a serde_json::Value> {
    if let Some(v) = obj.get(name) {
        return Some(v);
    }
    let (first, rest) = name.split_once('.')?;
    match obj.get(first)? {
        serde_json::Value::Object(inner) => field(inner, rest),
        _ => None,
    }
}

/// The keys a record has, for an error naming a missing field: "keys: a, b, c" (the first 12).
fn keys_of(obj: &serde_json::Map<String, serde_json::Value>) -> String {
    if obj.is_empty() {
        return "the record has no keys".into();
    }
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).take(12).collect();
    keys.sort_unstable();
    let more = obj.len().saturating_sub(keys.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("keys: {}{more}", keys.join(", "))
}

/// The key whose value is the longest string: the likely text field.
fn longest_string_key(obj: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    obj.iter()
        .filter_map(|(k, v)| v.as_str().map(|s| (k, s.len())))
        .max_by_key(|&(_, n)| n)
        .map(|(k, _)| k.as_str())
}

/// The JSON object of line `raw`, or why it is none (invalid UTF-8 located, malformed JSON).
fn json_object(raw: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let text = simdutf8::compat::from_utf8(raw)
        .map_err(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))
}

/// A JSONL line's document, its page (if it holds HTML) still to extract.
pub(super) fn parse_json_line(
    raw: &[u8],
    fields: &Fields,
    source: &str,
    line: u64,
) -> Result<(Document, Option<PendingPage>), String> {
    let mut obj = json_object(raw)?;
    // The text (or HTML) is moved out of the parsed line, not copied: it is most of the line.
    let taken = Taken {
        text: take_str(&mut obj, &fields.text, fields),
        html: take_str(&mut obj, &fields.html, fields),
    };
    record_fields(&obj, fields, || format!("{source}:{line}"), taken)
}

/// The text and HTML fields' strings, moved out of a record's object before it is read
/// ([`take_str`]); `None`: read (and copied) from the object.
#[derive(Default)]
pub(super) struct Taken {
    text: Option<String>,
    html: Option<String>,
}

/// The string of top-level key `name`, moved out of `obj` (an empty string left in its place,
/// so the record's keys stay as they were for its error messages), when no other field of
/// `fields` reads the same key; `None` otherwise.
fn take_str(
    obj: &mut serde_json::Map<String, serde_json::Value>,
    name: &str,
    fields: &Fields,
) -> Option<String> {
    let names = [
        &fields.id,
        &fields.text,
        &fields.title,
        &fields.url,
        &fields.html,
        &fields.time,
        &fields.publisher,
    ];
    if name.is_empty() || names.iter().filter(|n| n.as_str() == name).count() > 1 {
        return None;
    }
    match obj.get_mut(name)? {
        serde_json::Value::String(s) => Some(std::mem::take(s)),
        _ => None,
    }
}

/// A document from one JSON object, read as a JSONL line is (`fields` names the fields; with
/// an empty id field the id is `default_id()`): the id a string or an integer without control
/// characters, the text (or HTML, extracted) not blank, title and url strings when present.
/// The error names the field.
pub fn document_from_json(
    obj: &serde_json::Map<String, serde_json::Value>,
    fields: &Fields,
    default_id: impl FnOnce() -> String,
) -> Result<Document, String> {
    let (doc, page) = record_fields(obj, fields, default_id, Taken::default())?;
    match page {
        Some(page) => page.extract(doc, None),
        None => Ok(doc),
    }
}

/// The string of field `name` in JSON line `line` (a byte-order mark before it passed over):
/// the HTML of a page left in its line ([`PageHtml::InLine`]). The line was read as a record
/// once already, so an error here means it changed.
fn html_in_line(line: &[u8], name: &str) -> Result<String, String> {
    let obj = json_object(line.strip_prefix(super::sniff::BOM).unwrap_or(line))?;
    match field(&obj, name) {
        // Copied out of the parsed line: a copy costs a small part of the parse.
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        _ => Err(format!("field `{name}` is not a string")),
    }
}

/// A record's HTML whose extraction waits (CPU-heavy: done on the fingerprinting threads),
/// with what the record's time field says, which is read once the page's text is known (its
/// language decides what `CST` means).
#[derive(Debug)]
pub(super) struct PendingPage {
    pub(super) html: PageHtml,
    time: Option<(Option<String>, String)>,
}

/// Where a pending page's HTML is.
#[derive(Debug)]
pub(super) enum PageHtml {
    /// Read from the line, unescaped.
    Read(String),
    /// Left in the record's line as read (kept by [`super::ReadOptions::keep_raw`]), under
    /// this field name, and read from it again at extraction: a page waiting to be extracted
    /// then holds its bytes once, not twice, at the cost of parsing its line a second time.
    InLine(String),
}

impl PendingPage {
    /// Leave the HTML in the record's line kept as read (`field` names it): see
    /// [`PageHtml::InLine`].
    pub(super) fn leave_in_line(&mut self, field: &str) {
        self.html = PageHtml::InLine(field.to_string());
    }

    /// The page extracted into `fields` (the record's id, title, url): the page's own title
    /// comes first, the record's time field before the page's own time. `line` is the record's
    /// line as read, for HTML left in it.
    pub(super) fn extract(self, fields: Document, line: Option<&[u8]>) -> Result<Document, String> {
        let html = match self.html {
            PageHtml::Read(html) => html,
            PageHtml::InLine(name) => html_in_line(line.unwrap_or_default(), &name)?,
        };
        let mut doc = super::page_document(fields.id, None, &html, true)?;
        doc.title = doc.title.or(fields.title);
        doc.url = fields.url;
        doc.publisher = doc.publisher.or(fields.publisher);
        if let Some((written, what)) = self.time {
            apply_time(&mut doc, written.as_deref(), &what);
        }
        Ok(doc)
    }
}

/// The time field's value as written (`None`: not a string or a number), read into `doc`.
fn apply_time(doc: &mut Document, written: Option<&str>, what: &str) {
    match written {
        Some(s) => super::set_time(doc, s, what),
        None => {
            doc.time_unread = Some(format!(
                "{what} is not a string or a number; the ingest time counts for it"
            ));
        }
    }
}

/// [`document_from_json`] up to the page's extraction: the document (its text empty when the
/// record holds HTML) and the page still to extract. `taken` holds the text and HTML fields'
/// strings when they were moved out of `obj`.
pub(super) fn record_fields(
    obj: &serde_json::Map<String, serde_json::Value>,
    fields: &Fields,
    default_id: impl FnOnce() -> String,
    taken: Taken,
) -> Result<(Document, Option<PendingPage>), String> {
    let get_str = |name: &str| -> Result<Option<String>, String> {
        if name.is_empty() {
            return Ok(None);
        }
        match field(obj, name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("field `{name}` is not a string")),
        }
    };
    let id = if fields.id.is_empty() {
        default_id()
    } else {
        // Ids may also be integers (as written); a float would be reformatted, so it is not
        // taken as an id.
        let id = match field(obj, &fields.id) {
            Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.to_string()),
            Some(serde_json::Value::Number(_)) => {
                return Err(format!(
                    "field `{}` is not a string or an integer",
                    fields.id
                ))
            }
            _ => get_str(&fields.id)?,
        };
        id.ok_or_else(|| {
            format!(
                "missing id field `{}` ({}; --id-field NAME, or --id-field '' to number the lines)",
                fields.id,
                keys_of(obj)
            )
        })?
    };
    check_id(&id, &fields.id)?;
    let mut html = None;
    let text = match taken.text {
        Some(s) => Some(s),
        None => get_str(&fields.text)?,
    };
    let page = match taken.html {
        Some(s) => Some(s),
        None => get_str(&fields.html)?,
    };
    let mut doc = match (text, page) {
        (Some(body), _) => {
            if body.trim().is_empty() {
                return Err(format!("empty document `{id}`"));
            }
            Document::new(id, body)
        }
        (None, Some(h)) => {
            html = Some(h);
            Document::new(id, String::new())
        }
        (None, None) => {
            let hint =
                longest_string_key(obj).map_or(String::new(), |k| format!("; --text-field {k}?"));
            return Err(format!(
                "missing text field `{}` ({}{hint})",
                fields.text,
                keys_of(obj)
            ));
        }
    };
    doc.title = get_str(&fields.title)?;
    doc.url = get_str(&fields.url)?;
    // Read when it is a string, passed over otherwise (a field added after data was
    // written: an object or a number there is no error of the record).
    doc.publisher = (!fields.publisher.is_empty())
        .then(|| field(obj, &fields.publisher))
        .flatten()
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    let time = if fields.time.is_empty() {
        None
    } else {
        let what = format!("field `{}`", fields.time);
        match field(obj, &fields.time) {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some((Some(s.clone()), what)),
            Some(serde_json::Value::Number(n)) => Some((Some(n.to_string()), what)),
            Some(_) => Some((None, what)),
        }
    };
    match html {
        Some(html) => Ok((
            doc,
            Some(PendingPage {
                html: PageHtml::Read(html),
                time,
            }),
        )),
        None => {
            if let Some((written, what)) = time {
                apply_time(&mut doc, written.as_deref(), &what);
            }
            Ok((doc, None))
        }
    }
}
