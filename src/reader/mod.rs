//! Input readers. Formats: JSONL (field names configurable), CSV/TSV with a header, plain-text
//! files and HTML pages (one document per file), WARC/WET (every record of a multi-member gzip),
//! and lists of input paths; from files, directories (walked recursively, sorted) or stdin; any
//! of them plain, gzip- or zstd-compressed. Streaming: one line, record or file in memory at a
//! time. Pages of unknown encoding are decoded by [`decode`] (GBK, GB18030, Big5, ...).
//!
//! Every problem becomes a [`Record`] carrying its location and a reason; the caller counts it
//! and goes on.

pub mod decode;
pub mod html;
pub mod warc;

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::engine::Document;

/// Input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// From the extension (after `.gz`/`.zst`), else the first bytes: `WARC/` is WARC, `{` is
    /// JSONL, `<html`/`<!doctype html` is HTML, anything else one text document.
    #[default]
    Auto,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
    /// Tab-separated values with a header line.
    Tsv,
    /// WARC or WET: `response` (HTML or text), `resource` and `conversion` records.
    Warc,
    /// The whole file is one HTML page; its id is its path.
    Html,
    /// The whole file is one document; its id is its path.
    Text,
    /// A list of input paths, one per line.
    List,
}

/// Field names for JSONL and CSV/TSV.
#[derive(Debug, Clone)]
pub struct Fields {
    /// Id field; empty: the id is `source:line`.
    pub id: String,
    /// Text field (required, non-empty).
    pub text: String,
    /// Title field (optional).
    pub title: String,
    /// URL field (optional).
    pub url: String,
    /// Field holding HTML to extract the text from (optional; used when the text field is absent).
    pub html: String,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            text: "text".into(),
            title: "title".into(),
            url: "url".into(),
            html: "html".into(),
        }
    }
}

/// Reader settings.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Input format.
    pub format: Format,
    /// Field names.
    pub fields: Fields,
    /// Larger documents (or JSONL lines, or WARC records) are skipped with a message.
    pub max_doc_bytes: usize,
    /// Leave decoding and HTML extraction of whole-file pages and WARC records to
    /// [`Record::finish`], so a caller can run them on many threads (default: done while reading).
    pub defer_pages: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: Format::Auto,
            fields: Fields::default(),
            max_doc_bytes: 32 << 20,
            defer_pages: false,
        }
    }
}

/// How a location inside a source is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Line number (JSONL, CSV; 1 for whole-file documents; 0 when the file could not be read).
    Line,
    /// Record number (WARC).
    Record,
}

/// One input record: a document or the reason it could not be read, with its location.
#[derive(Debug)]
pub struct Record {
    /// File name (`-` for stdin).
    pub source: String,
    /// 1-based line or record number (see `unit`).
    pub line: u64,
    /// What `line` counts.
    pub unit: Unit,
    /// Size of the raw record in bytes.
    pub bytes: usize,
    /// The document, or why it was skipped (see [`Record::finish`] with `defer_pages`).
    pub doc: Result<Document, String>,
    deferred: Option<Deferred>,
}

/// Raw page bytes whose decoding and extraction were deferred.
#[derive(Debug)]
struct Deferred {
    id: String,
    url: Option<String>,
    bytes: Vec<u8>,
    charset: Option<&'static encoding_rs::Encoding>,
    html: bool,
}

impl Record {
    fn new(
        source: String,
        line: u64,
        unit: Unit,
        bytes: usize,
        doc: Result<Document, String>,
    ) -> Self {
        Record {
            source,
            line,
            unit,
            bytes,
            doc,
            deferred: None,
        }
    }

    fn page(source: String, line: u64, unit: Unit, page: Deferred) -> Self {
        let bytes = page.bytes.len();
        Record {
            source,
            line,
            unit,
            bytes,
            doc: Err("not decoded yet".into()),
            deferred: Some(page),
        }
    }

    /// Decode and extract a deferred page (CPU-heavy; safe to run on any thread). A no-op for
    /// every other record.
    pub fn finish(&mut self) {
        if let Some(p) = self.deferred.take() {
            let (text, _) = decode::decode(&p.bytes, p.charset, p.html);
            self.doc = page_document(p.id, p.url, &text, p.html);
        }
    }

    /// `file:line` or `file#record`.
    pub fn location(&self) -> String {
        match self.unit {
            Unit::Line => format!("{}:{}", self.source, self.line),
            Unit::Record => format!("{}#{}", self.source, self.line),
        }
    }
}

type Input = Box<dyn BufRead + Send>;

enum Current {
    Jsonl {
        source: String,
        reader: Input,
        line: u64,
    },
    Csv {
        source: String,
        reader: csv::Reader<Input>,
        cols: Columns,
    },
    Warc {
        source: String,
        records: warc::Records<Input>,
        n: u64,
        errors: u32,
    },
}

#[derive(Default)]
struct Columns {
    id: Option<usize>,
    text: Option<usize>,
    title: Option<usize>,
    url: Option<usize>,
    html: Option<usize>,
}

/// An input still to open.
struct Pending {
    path: PathBuf,
    /// The format to read it as.
    format: Format,
    /// Found by walking a directory (not named by the user): only regular files and real
    /// directories are read, symbolic links to directories are not followed.
    walked: bool,
}

/// Iterator over the records of many inputs.
pub struct Inputs {
    /// Inputs still to open, last first.
    pending: Vec<Pending>,
    /// Files never read (by device and inode): the run's own output file.
    excluded: Vec<(u64, u64)>,
    opts: ReadOptions,
    current: Option<Current>,
    buf: Vec<u8>,
}

impl Inputs {
    /// Records of `paths` in order (`-` = stdin).
    pub fn new(paths: &[PathBuf], opts: ReadOptions) -> Self {
        let mut pending: Vec<Pending> = paths
            .iter()
            .map(|p| Pending {
                path: p.clone(),
                format: opts.format,
                walked: false,
            })
            .collect();
        pending.reverse();
        Inputs {
            pending,
            excluded: Vec::new(),
            opts,
            current: None,
            buf: Vec::new(),
        }
    }
}

impl Inputs {
    /// Never read `path` (e.g. the file this run writes its results to), wherever a directory
    /// walk or list finds it. A path that does not exist yet is ignored.
    pub fn exclude(mut self, path: &Path) -> Self {
        if let Some(id) = file_id(path) {
            self.excluded.push(id);
        }
        self
    }
}

/// (device, inode) of a file, following symbolic links.
#[cfg(unix)]
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// (device, inode) of a file: not available on this platform.
#[cfg(not(unix))]
pub fn file_id(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Why an entry found by a directory walk is not read, if it is not.
fn skip_in_walk(path: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot open: {e}")),
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        return match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Some(
                "symbolic link to a directory, not followed in a directory walk (name it to read it)"
                    .into(),
            ),
            Ok(m) if m.is_file() => None,
            Ok(_) => Some(
                "not a regular file (FIFO, socket or device), skipped in a directory walk".into(),
            ),
            Err(e) => Some(format!("cannot open: {e}")),
        };
    }
    if ft.is_file() || ft.is_dir() {
        None
    } else {
        Some("not a regular file (FIFO, socket or device), skipped in a directory walk".into())
    }
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

fn open_decoded(path: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    let f = File::open(path)?;
    let name = path.to_string_lossy().to_ascii_lowercase();
    Ok(if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(f))
    } else if name.ends_with(".zst") || name.ends_with(".zstd") {
        Box::new(zstd::stream::read::Decoder::new(f)?)
    } else {
        Box::new(f)
    })
}

fn format_by_name(path: &Path) -> Format {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name
        .trim_end_matches(".gz")
        .trim_end_matches(".zst")
        .trim_end_matches(".zstd");
    let ext = name.rsplit('.').next().unwrap_or("");
    match ext {
        "jsonl" | "ndjson" | "json" => Format::Jsonl,
        "csv" => Format::Csv,
        "tsv" => Format::Tsv,
        "warc" | "wet" => Format::Warc,
        "html" | "htm" | "xhtml" | "shtml" => Format::Html,
        _ => Format::Auto,
    }
}

fn format_by_content(head: &[u8]) -> Format {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(head.len());
    let head = &head[start..];
    if head.starts_with(b"WARC/") {
        return Format::Warc;
    }
    if head.first() == Some(&b'{') {
        return Format::Jsonl;
    }
    let lower = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<html")
    {
        return Format::Html;
    }
    Format::Text
}

fn error(source: String, line: u64, unit: Unit, reason: String) -> Record {
    Record::new(source, line, unit, 0, Err(reason))
}

impl Inputs {
    /// Start reading `path`; returns a record for whole-file documents and for failures.
    fn start(&mut self, next: Pending) -> Option<Record> {
        let Pending {
            path,
            format,
            walked,
        } = next;
        let source = path.to_string_lossy().into_owned();
        if walked {
            if let Some(reason) = skip_in_walk(&path) {
                return Some(error(source, 0, Unit::Line, reason));
            }
        }
        if source != "-" && !self.excluded.is_empty() {
            if let Some(id) = file_id(&path) {
                if self.excluded.contains(&id) {
                    return None;
                }
            }
        }
        let reader: Box<dyn Read + Send> = if source == "-" {
            Box::new(std::io::stdin())
        } else if path.is_dir() {
            return match std::fs::read_dir(&path) {
                Ok(rd) => {
                    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
                    entries.retain(|p| {
                        !p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                    });
                    entries.sort();
                    // A directory's files are read as the directory was (a list's entries: auto).
                    let inner = if format == Format::List {
                        Format::Auto
                    } else {
                        format
                    };
                    self.pending
                        .extend(entries.into_iter().rev().map(|path| Pending {
                            path,
                            format: inner,
                            walked: true,
                        }));
                    None
                }
                Err(e) => Some(error(
                    source,
                    0,
                    Unit::Line,
                    format!("cannot read directory: {e}"),
                )),
            };
        } else {
            match open_decoded(&path) {
                Ok(r) => r,
                Err(e) => return Some(error(source, 0, Unit::Line, format!("cannot open: {e}"))),
            }
        };
        let mut reader: Input = Box::new(BufReader::with_capacity(1 << 16, reader));
        let mut format = format;
        if format == Format::Auto {
            format = format_by_name(&path);
        }
        if format == Format::Auto {
            format = match reader.fill_buf() {
                Ok(head)
                    if source == "-"
                        && head.first() != Some(&b'<')
                        && !head.starts_with(b"WARC/") =>
                {
                    Format::Jsonl
                }
                Ok(head) => format_by_content(head),
                Err(e) => return Some(error(source, 0, Unit::Line, format!("read error: {e}"))),
            };
        }
        // A UTF-8 byte order mark is not part of the first line or header; whole-file
        // documents keep it (the decoder reads it as a charset signal).
        if !matches!(format, Format::Html | Format::Text)
            && reader.fill_buf().is_ok_and(|h| h.starts_with(BOM))
        {
            reader.consume(BOM.len());
        }
        match format {
            Format::Jsonl | Format::Auto => {
                self.current = Some(Current::Jsonl {
                    source,
                    reader,
                    line: 0,
                });
                None
            }
            Format::Csv | Format::Tsv => self.start_csv(
                source,
                reader,
                if format == Format::Tsv { b'\t' } else { b',' },
            ),
            Format::Warc => {
                self.current = Some(Current::Warc {
                    source,
                    records: warc::Records::new(reader),
                    n: 0,
                    errors: 0,
                });
                None
            }
            Format::Html | Format::Text => {
                Some(self.whole_file(source, reader, format == Format::Html))
            }
            Format::List => {
                let mut list = Vec::new();
                for (i, line) in reader.lines().enumerate() {
                    match line {
                        Ok(l) if l.trim().is_empty() || l.trim_start().starts_with('#') => {}
                        Ok(l) => list.push(PathBuf::from(l.trim())),
                        Err(e) => {
                            return Some(error(
                                source,
                                i as u64 + 1,
                                Unit::Line,
                                format!("read error: {e}"),
                            ))
                        }
                    }
                }
                self.pending
                    .extend(list.into_iter().rev().map(|path| Pending {
                        path,
                        format: Format::Auto,
                        walked: false,
                    }));
                None
            }
        }
    }

    fn start_csv(&mut self, source: String, reader: Input, delimiter: u8) -> Option<Record> {
        let mut r = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_reader(reader);
        let headers = match r.byte_headers() {
            Ok(h) => h.clone(),
            Err(e) => return Some(error(source, 1, Unit::Line, format!("bad header: {e}"))),
        };
        let f = &self.opts.fields;
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
        };
        if cols.text.is_none() && cols.html.is_none() {
            return Some(error(
                source,
                1,
                Unit::Line,
                format!("no `{}` (or `{}`) column in the header", f.text, f.html),
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
        self.current = Some(Current::Csv {
            source,
            reader: r,
            cols,
        });
        None
    }

    fn whole_file(&self, source: String, reader: Input, html: bool) -> Record {
        let max = self.opts.max_doc_bytes;
        let mut bytes = Vec::new();
        if let Err(e) = reader.take(max as u64 + 1).read_to_end(&mut bytes) {
            return error(source, 1, Unit::Line, format!("read error: {e}"));
        }
        let n = bytes.len();
        if n > max {
            return Record::new(
                source,
                1,
                Unit::Line,
                n,
                Err(format!(
                    "document larger than {max} bytes (--max-doc-bytes)"
                )),
            );
        }
        if decode::looks_binary(&bytes) {
            return Record::new(source, 1, Unit::Line, n, Err("binary file".to_string()));
        }
        let html = html || format_by_content(&bytes[..n.min(1024)]) == Format::Html;
        Record::page(
            source.clone(),
            1,
            Unit::Line,
            Deferred {
                id: source,
                url: None,
                bytes,
                charset: None,
                html,
            },
        )
    }

    /// Next line of the current JSONL input, or None at its end.
    fn next_jsonl(&mut self) -> Option<Record> {
        let max = self.opts.max_doc_bytes;
        let Some(Current::Jsonl {
            source,
            reader,
            line,
        }) = self.current.as_mut()
        else {
            return None;
        };
        loop {
            self.buf.clear();
            *line += 1;
            let n = match reader
                .by_ref()
                .take(max as u64 + 1)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(0) => return None,
                Ok(n) => n,
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
            if n > max && self.buf.last() != Some(&b'\n') {
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
            if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let doc = parse_json_line(&self.buf, &self.opts.fields, source, *line);
            return Some(Record::new(source.clone(), *line, Unit::Line, n, doc));
        }
    }

    fn next_csv(&mut self) -> Option<Record> {
        let fields = &self.opts.fields;
        let max = self.opts.max_doc_bytes;
        let Some(Current::Csv {
            source,
            reader,
            cols,
        }) = self.current.as_mut()
        else {
            return None;
        };
        let mut rec = csv::ByteRecord::new();
        match reader.read_byte_record(&mut rec) {
            Ok(false) => None,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                let r = error(source.clone(), line, Unit::Line, format!("bad CSV: {e}"));
                if !matches!(
                    e.kind(),
                    csv::ErrorKind::Utf8 { .. } | csv::ErrorKind::UnequalLengths { .. }
                ) {
                    // I/O errors end the file.
                    self.current = None;
                }
                Some(r)
            }
            Ok(true) => {
                let line = rec.position().map_or(0, |p| p.line());
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
                    Ok(doc)
                })();
                Some(Record::new(source.clone(), line, Unit::Line, bytes, doc))
            }
        }
    }

    fn next_warc(&mut self) -> Option<Record> {
        let max = self.opts.max_doc_bytes;
        let Some(Current::Warc {
            source,
            records,
            n,
            errors,
        }) = self.current.as_mut()
        else {
            return None;
        };
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
                    *errors += 1;
                    let r = error(
                        source.clone(),
                        *n,
                        Unit::Record,
                        format!("corrupt WARC record: {e}"),
                    );
                    if *errors > 100 {
                        // Not a WARC stream any more: stop this file.
                        *records = warc::Records::new(Box::new(std::io::empty()) as Input);
                    }
                    return Some(r);
                }
            };
            let h = |k: &str| headers.get(k).map(str::to_string);
            let kind = h("warc-type").unwrap_or_default().to_ascii_lowercase();
            let body = match body {
                warc::Body::Read(b) => b,
                warc::Body::Skipped => continue, // request, metadata, warcinfo, revisit
                warc::Body::TooLarge(head) => {
                    // Report it only when it would have been a document (text or HTML).
                    let ct = if kind == "response" {
                        http_head(&head).map_or(String::new(), |(h, _)| h.ct.to_ascii_lowercase())
                    } else {
                        h("content-type").unwrap_or_default().to_ascii_lowercase()
                    };
                    if !may_be_text(&ct) {
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
            let id = match uri.clone().or_else(|| h("warc-record-id")) {
                Some(id) => id,
                None => format!("{source}#{n}"),
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
            let is_html = ct.contains("html")
                || (ct.is_empty()
                    && format_by_content(&payload[..payload.len().min(1024)]) == Format::Html);
            if !may_be_text(&ct) {
                continue; // images, PDFs, scripts: not text documents
            }
            if decode::looks_binary(&payload) {
                return Some(Record::new(
                    source.clone(),
                    *n,
                    Unit::Record,
                    bytes,
                    Err("binary payload".to_string()),
                ));
            }
            let page = Deferred {
                id,
                url: uri,
                bytes: payload.into_owned(),
                charset: decode::charset_of_content_type(&ct),
                html: is_html,
            };
            return Some(Record::page(source.clone(), *n, Unit::Record, page));
        }
    }
}

/// An HTTP response's Content-Type and payload, with `Transfer-Encoding: chunked` and
/// `Content-Encoding: gzip` / `deflate` undone (the payload is decompressed up to `max` bytes).
/// Archives differ in whether they store payloads decoded while keeping the headers, so a
/// payload that does not parse as chunks or compressed data is taken as it is. `Err` for an
/// encoding that cannot be undone (`br`, `zstd`, ...) or a payload over `max` once expanded.
fn split_http(body: &[u8], max: usize) -> Option<Result<(String, Cow<'_, [u8]>), String>> {
    let (
        HttpHead {
            ct,
            chunked,
            encoding,
        },
        start,
    ) = http_head(body)?;
    let mut payload = Cow::Borrowed(&body[start..]);
    if chunked {
        if let Some(p) = dechunk(&payload) {
            payload = Cow::Owned(p);
        }
    }
    match encoding.as_str() {
        "" | "identity" => {}
        "gzip" | "x-gzip" | "deflate" => {
            let gzip = payload.starts_with(&[0x1f, 0x8b]);
            let mut out = Vec::new();
            let read = if gzip {
                flate2::read::MultiGzDecoder::new(&payload[..])
                    .take(max as u64 + 1)
                    .read_to_end(&mut out)
            } else if encoding == "deflate" {
                // "deflate" is zlib-wrapped by the standard, raw in some servers.
                let zlib = flate2::read::ZlibDecoder::new(&payload[..])
                    .take(max as u64 + 1)
                    .read_to_end(&mut out);
                if zlib.is_err() {
                    out.clear();
                    flate2::read::DeflateDecoder::new(&payload[..])
                        .take(max as u64 + 1)
                        .read_to_end(&mut out)
                } else {
                    zlib
                }
            } else {
                Err(std::io::ErrorKind::InvalidData.into()) // stored decoded already
            };
            match read {
                Ok(_) if out.len() > max => {
                    return Some(Err(format!(
                        "{encoding} payload larger than {max} bytes once decompressed"
                    )))
                }
                Ok(_) => payload = Cow::Owned(out),
                Err(_) if gzip => return Some(Err(format!("corrupt {encoding} payload"))),
                Err(_) => {}
            }
        }
        other => return Some(Err(format!("unsupported Content-Encoding `{other}`"))),
    }
    Some(Ok((ct, payload)))
}

/// Whether a payload of this (lower-case) Content-Type can be a document: HTML, `text/*`, or
/// undeclared.
fn may_be_text(ct: &str) -> bool {
    ct.is_empty() || ct.contains("html") || ct.starts_with("text/")
}

/// The headers of an HTTP response that decide how its payload is read.
struct HttpHead {
    /// Content-Type.
    ct: String,
    /// Transfer-Encoding: chunked.
    chunked: bool,
    /// Content-Encoding, lower case.
    encoding: String,
}

/// Parse the head of an HTTP response: its headers and where the payload starts.
fn http_head(body: &[u8]) -> Option<(HttpHead, usize)> {
    let end = body.windows(4).position(|w| w == b"\r\n\r\n")?;
    let mut h = HttpHead {
        ct: String::new(),
        chunked: false,
        encoding: String::new(),
    };
    for l in String::from_utf8_lossy(&body[..end]).lines().skip(1) {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim(), v.trim());
            if k.eq_ignore_ascii_case("content-type") {
                h.ct = v.to_string();
            } else if k.eq_ignore_ascii_case("transfer-encoding") {
                h.chunked = v.to_ascii_lowercase().contains("chunked");
            } else if k.eq_ignore_ascii_case("content-encoding") {
                h.encoding = v.to_ascii_lowercase();
            }
        }
    }
    Some((h, end + 4))
}

/// The body of a `Transfer-Encoding: chunked` payload, or `None` when it is not one.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&data[..eol]).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        data = &data[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size..)?;
        data = data.strip_prefix(b"\r\n").unwrap_or(data);
    }
}

/// A document from text or HTML (title, description and keywords kept for HTML).
fn page_document(
    id: String,
    url: Option<String>,
    text: &str,
    html: bool,
) -> Result<Document, String> {
    let mut doc = Document {
        id,
        url,
        ..Default::default()
    };
    if html {
        let page = html::extract(text);
        doc.text = page.text;
        doc.title = page.title;
        doc.description = page.description;
        doc.keywords = page.keywords;
    } else {
        doc.text = text.to_string();
    }
    if doc.text.trim().is_empty() {
        return Err("empty document".into());
    }
    Ok(doc)
}

/// Ids are single-line names: not empty or blank, no control characters (a newline in an id
/// would forge lines in text outputs).
fn check_id(id: &str, field: &str) -> Result<(), String> {
    if id.trim().is_empty() {
        return Err(format!("empty id field `{field}`"));
    }
    if let Some(c) = id.chars().find(|c| c.is_control()) {
        return Err(format!(
            "id field `{field}` holds a control character ({:?})",
            c
        ));
    }
    Ok(())
}

fn parse_json_line(
    raw: &[u8],
    fields: &Fields,
    source: &str,
    line: u64,
) -> Result<Document, String> {
    let text = std::str::from_utf8(raw)
        .map_err(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    let obj: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))?;
    let get_str = |name: &str| -> Result<Option<String>, String> {
        if name.is_empty() {
            return Ok(None);
        }
        match obj.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("field `{name}` is not a string")),
        }
    };
    let id = if fields.id.is_empty() {
        format!("{source}:{line}")
    } else {
        // Ids may also be integers (as written); a float would be reformatted, so it is not
        // taken as an id.
        let id = match obj.get(&fields.id) {
            Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.to_string()),
            Some(serde_json::Value::Number(_)) => {
                return Err(format!(
                    "field `{}` is not a string or an integer",
                    fields.id
                ))
            }
            _ => get_str(&fields.id)?,
        };
        id.ok_or_else(|| format!("missing id field `{}`", fields.id))?
    };
    check_id(&id, &fields.id)?;
    let mut doc = match (get_str(&fields.text)?, get_str(&fields.html)?) {
        (Some(body), _) => {
            if body.trim().is_empty() {
                return Err(format!("empty document `{id}`"));
            }
            Document::new(id, body)
        }
        (None, Some(h)) => page_document(id, None, &h, true)?,
        (None, None) => return Err(format!("missing text field `{}`", fields.text)),
    };
    doc.title = doc.title.or(get_str(&fields.title)?);
    doc.url = get_str(&fields.url)?;
    Ok(doc)
}

impl Inputs {
    fn finished(&self, mut r: Record) -> Record {
        if !self.opts.defer_pages {
            r.finish();
        }
        r
    }
}

impl Iterator for Inputs {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        loop {
            let next = match &self.current {
                Some(Current::Jsonl { .. }) => self.next_jsonl(),
                Some(Current::Csv { .. }) => self.next_csv(),
                Some(Current::Warc { .. }) => self.next_warc(),
                None => {
                    let next = self.pending.pop()?;
                    if let Some(r) = self.start(next) {
                        return Some(self.finished(r));
                    }
                    continue;
                }
            };
            match next {
                Some(r) => return Some(self.finished(r)),
                None => self.current = None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        Fields::default()
    }

    #[test]
    fn json_lines_parse_with_numeric_ids_and_report_problems() {
        let d = parse_json_line(
            br#"{"id": 7, "text": "hello", "title": "t"}"#,
            &fields(),
            "f",
            1,
        )
        .unwrap();
        assert_eq!((d.id.as_str(), d.title.as_deref()), ("7", Some("t")));
        let e = parse_json_line(br#"{"id": "a"}"#, &fields(), "f", 1).unwrap_err();
        assert!(e.contains("missing text field `text`"), "{e}");
        let e = parse_json_line(b"{\"id\": \"a\", \"text\": \"x\xff\"}", &fields(), "f", 1)
            .unwrap_err();
        assert!(e.contains("invalid UTF-8"), "{e}");
        let e = parse_json_line(br#"{"id": "a", "text": "  "}"#, &fields(), "f", 1).unwrap_err();
        assert!(e.contains("empty document"), "{e}");
        let e = parse_json_line(br#"{"id": "a", "text": "#, &fields(), "f", 1).unwrap_err();
        assert!(e.contains("malformed JSON"), "{e}");
        let d = parse_json_line(
            br#"{"id": "h", "html": "<title>T</title><p>body text</p>"}"#,
            &fields(),
            "f",
            1,
        )
        .unwrap();
        assert_eq!(
            (d.title.as_deref(), d.text.as_str()),
            (Some("T"), "body text")
        );
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
}
