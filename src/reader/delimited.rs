//! CSV and TSV with a header line naming the id, text, title, url and html columns.

use super::{check_id, error, page_document, Input, Inputs, Reading, Record, Shared, Unit};
use crate::engine::Document;

/// The input of a CSV reader, counting the quote characters read: valid CSV has an even number
/// of them (an escaped quote is two), so an odd count at the end of the file means a quoted
/// field that never closes. The csv crate then reads every later row into that field, silently.
/// With `keep_raw` it also keeps the bytes read since the last record taken ([`Quotes::take`]),
/// so that each row can be written through as it was read.
pub(super) struct Quotes<R> {
    inner: R,
    odd: bool,
    /// Bytes read, and whether the input ended.
    read: u64,
    ended: bool,
    /// The bytes read from offset `tape_at` on (with `keep_raw`; else None).
    tape: Option<Vec<u8>>,
    tape_at: u64,
    /// With a tape: the byte read ahead, and whether the input has ended.
    ahead: Option<u8>,
    inner_done: bool,
}

impl<R: std::io::Read> std::io::Read for Quotes<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.tape.as_mut() {
            None => self.inner.read(buf)?,
            // With a tape, one byte is read ahead of what the csv reader is given, so that when
            // a CR ends a record the byte after it (the LF of a CRLF) is on the tape.
            Some(tape) if !buf.is_empty() => {
                let mut n = 0;
                if let Some(b) = self.ahead.take() {
                    buf[0] = b;
                    n = 1;
                }
                if !self.inner_done && n < buf.len() {
                    let m = self.inner.read(&mut buf[n..])?;
                    tape.extend_from_slice(&buf[n..n + m]);
                    self.inner_done = m == 0;
                    n += m;
                    if !self.inner_done && n > 1 {
                        n -= 1;
                        self.ahead = Some(buf[n]);
                    }
                }
                n
            }
            Some(_) => 0,
        };
        let quotes = buf[..n].iter().filter(|&&b| b == b'"').count();
        self.odd ^= quotes % 2 == 1;
        self.read += n as u64;
        self.ended |= n == 0 && !buf.is_empty();
        Ok(n)
    }
}

impl<R> Quotes<R> {
    /// Whether a record that ends at byte `end` of the input is the last one and leaves a
    /// quote open.
    fn open_at_end(&self, end: u64) -> bool {
        self.odd && self.ended && end >= self.read
    }

    /// The bytes from offset `start` to `end` of the input (a record the csv reader has
    /// parsed), and forget every byte before `end`. Empty without `keep_raw`.
    fn take(&mut self, start: u64, end: u64) -> Vec<u8> {
        let Some(t) = self.tape.as_mut() else {
            return Vec::new();
        };
        let from = (start.saturating_sub(self.tape_at) as usize).min(t.len());
        let mut to = (end.saturating_sub(self.tape_at) as usize).clamp(from, t.len());
        // The csv reader ends a CRLF record after its CR: the LF belongs to it, not to the
        // next one (it is on the tape: see `read`).
        if to > from && t[to - 1] == b'\r' && t.get(to) == Some(&b'\n') {
            to += 1;
        }
        let out = t[from..to].to_vec();
        t.drain(..to);
        self.tape_at += to as u64;
        out
    }
}

#[derive(Default)]
pub(super) struct Columns {
    id: Option<usize>,
    text: Option<usize>,
    title: Option<usize>,
    url: Option<usize>,
    html: Option<usize>,
    time: Option<usize>,
    publisher: Option<usize>,
}

impl Inputs {
    pub(super) fn start_csv(
        &mut self,
        source: String,
        reader: Input,
        delimiter: u8,
    ) -> Option<Record> {
        let mut r = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_reader(Quotes {
                inner: reader,
                odd: false,
                read: 0,
                ended: false,
                tape: self.shared.opts.keep_raw.then(Vec::new),
                tape_at: 0,
                ahead: None,
                inner_done: false,
            });
        let headers = match r.byte_headers() {
            Ok(h) => h.clone(),
            Err(e) => return Some(error(source, 1, Unit::Line, format!("bad header: {e}"))),
        };
        let header_end = r.position().byte();
        let bom = std::mem::take(&mut self.shared.bom);
        let header = self.shared.opts.keep_raw.then(|| {
            let mut h = if bom {
                super::sniff::BOM.to_vec()
            } else {
                Vec::new()
            };
            h.extend(r.get_mut().take(0, header_end));
            std::sync::Arc::new(h)
        });
        let f = &self.shared.opts.fields;
        let col = |name: &str| {
            if name.is_empty() {
                return None;
            }
            headers.iter().position(|h| h == name.as_bytes())
        };
        let cols = Columns {
            id: col(&f.id),
            text: col(&f.text),
            title: col(&f.title),
            url: col(&f.url),
            html: col(&f.html),
            time: col(&f.time),
            publisher: col(&f.publisher),
        };
        if cols.text.is_none() && cols.html.is_none() {
            let found: Vec<String> = headers
                .iter()
                .take(12)
                .map(|h| format!("`{}`", String::from_utf8_lossy(h)))
                .collect();
            return Some(error(
                source,
                1,
                Unit::Line,
                format!(
                    "no `{}` (or `{}`) column in the header line; its columns are {} (a CSV or \
                     TSV input starts with a header line naming its columns, e.g. `id,text`; \
                     --text-field NAME names the text column)",
                    f.text,
                    f.html,
                    found.join(", ")
                ),
            ));
        }
        if cols.id.is_none() && !f.id.is_empty() {
            return Some(error(
                source,
                1,
                Unit::Line,
                format!(
                    "no `{}` column in the header (use --id-field '' to number rows)",
                    f.id
                ),
            ));
        }
        self.current = Some(Box::new(Csv {
            source,
            reader: r,
            cols,
            header,
            ended: false,
        }));
        None
    }
}

/// A CSV or TSV input being read.
pub(super) struct Csv {
    source: String,
    reader: csv::Reader<Quotes<Input>>,
    cols: Columns,
    /// The header line as read (with `keep_raw`).
    header: Option<std::sync::Arc<Vec<u8>>>,
    /// An I/O error ended the input.
    ended: bool,
}

impl Reading for Csv {
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record> {
        let fields = &shared.opts.fields;
        let max = shared.opts.max_doc_bytes;
        let keep_raw = shared.opts.keep_raw;
        let Csv {
            source,
            reader,
            cols,
            header,
            ended,
        } = self;
        if *ended {
            return None;
        }
        let mut rec = csv::ByteRecord::new();
        match reader.read_byte_record(&mut rec) {
            Ok(false) => None,
            Err(e) => {
                let line = e.position().map_or(0, csv::Position::line);
                let r = error(source.clone(), line, Unit::Line, format!("bad CSV: {e}"));
                if !matches!(
                    e.kind(),
                    csv::ErrorKind::Utf8 { .. } | csv::ErrorKind::UnequalLengths { .. }
                ) {
                    // I/O errors end the file.
                    *ended = true;
                }
                Some(r)
            }
            Ok(true) if reader.get_ref().open_at_end(reader.position().byte()) => {
                // The last record, and a quote is still open: it was opened in this record and
                // took every line after it.
                let line = rec.position().map_or(0, csv::Position::line);
                let lines = reader.position().line().saturating_sub(line);
                Some(error(
                    source.clone(),
                    line,
                    Unit::Line,
                    format!(
                        "bad CSV: a quoted field opened in this row is never closed; the {} \
                         line(s) after it up to the end of the file were read into it and not \
                         ingested (close the quote, or escape it as \"\")",
                        lines
                    ),
                ))
            }
            Ok(true) => {
                let line = rec.position().map_or(0, csv::Position::line);
                let bytes = rec.as_slice().len();
                let get = |c: Option<usize>| -> Result<Option<String>, String> {
                    match c.and_then(|i| rec.get(i)) {
                        None => Ok(None),
                        Some(b) => std::str::from_utf8(b)
                            .map(|s| (!s.is_empty()).then(|| s.to_string()))
                            .map_err(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to())),
                    }
                };
                let doc = (|| {
                    if bytes > max {
                        return Err(format!("row larger than {max} bytes"));
                    }
                    let id = match cols.id {
                        None => format!("{source}:{line}"),
                        Some(_) => get(cols.id)?
                            .ok_or_else(|| format!("empty id field `{}`", fields.id))?,
                    };
                    if cols.id.is_some() {
                        check_id(&id, &fields.id)?;
                    }
                    let mut doc = match (get(cols.text)?, get(cols.html)?) {
                        (Some(t), _) if !t.trim().is_empty() => Document::new(id, t),
                        (_, Some(h)) => page_document(id, None, &h, true)?,
                        _ => return Err(format!("empty document (no `{}`)", fields.text)),
                    };
                    doc.title = doc.title.or(get(cols.title)?);
                    doc.url = get(cols.url)?;
                    doc.publisher = doc.publisher.or(get(cols.publisher)?);
                    if let Some(t) = get(cols.time)? {
                        super::set_time(&mut doc, &t, &format!("column `{}`", fields.time));
                    }
                    Ok(doc)
                })();
                let mut r = Record::new(source.clone(), line, Unit::Line, bytes, doc);
                if keep_raw {
                    let start = rec.position().map_or(0, csv::Position::byte);
                    let end = reader.position().byte();
                    r.raw = Some(reader.get_mut().take(start, end));
                    r.header = header.clone();
                }
                Some(r)
            }
        }
    }
}
