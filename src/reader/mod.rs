//! Input readers. Formats: JSONL (field names configurable), CSV/TSV with a header, plain-text
//! files and HTML pages (one document per file), WARC/WET (every record of a multi-member gzip),
//! and lists of input paths; from files, directories (walked recursively, sorted) or stdin; any
//! of them plain, gzip- or zstd-compressed. Streaming: one line, record or file in memory at a
//! time. Pages of unknown encoding are decoded by [`decode`] (GBK, GB18030, Big5, ...).
//!
//! Every problem becomes a [`Record`] carrying its location and a reason; the caller counts it
//! and goes on.

pub mod arc;
pub mod decode;
pub mod gzip;
pub mod html;
pub mod html_bound;
pub mod main_text;
pub mod warc;

mod counts;
mod delimited;
mod discovery;
mod format;
mod framing;
pub use format::Format;
mod http;
pub use counts::{Counter, Counts};
mod ids;
mod jsonl;
#[cfg_attr(not(feature = "parquet"), path = "parquet_off.rs")]
mod parquet;
#[cfg(feature = "parquet")]
mod parquet_pages;
mod sniff;
pub mod source;
mod tape;
mod text;
pub mod time;
pub use time::PublishedWindow;
mod warc_docs;
mod zstd_frames;

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::engine::Document;
pub use discovery::dir_entries;
pub use ids::{check_id, MAX_ID_BYTES};
pub use jsonl::document_from_json;

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
    /// Field holding the document's publication time (optional; see [`time::parse_time`]).
    pub time: String,
    /// Field holding who published the document on its host (optional; an account on a shared
    /// host: [`crate::text::sites`]). A page's own account comes first.
    pub publisher: String,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            text: "text".into(),
            title: "title".into(),
            url: "url".into(),
            html: "html".into(),
            time: "date".into(),
            publisher: "publisher".into(),
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
    /// Keep each JSONL line and CSV/TSV row as read ([`Record::raw`], with the CSV header in
    /// [`Record::header`]), to write records through unchanged (`fpdb dedup`).
    pub keep_raw: bool,
    /// The publication times a document may claim ([`PublishedWindow`]).
    pub published: PublishedWindow,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: Format::Auto,
            fields: Fields::default(),
            max_doc_bytes: 32 << 20,
            defer_pages: false,
            keep_raw: false,
            published: PublishedWindow::default(),
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
    /// The input records lost to damage that this error stands for (a corrupt archive record
    /// or damaged gzip member: 1; a damaged Parquet row group: its rows not read), counted
    /// apart from bad input; 0 for every other record.
    pub lost: u64,
    /// The record's bytes as read (after decompression), line terminator included: JSONL lines
    /// and CSV/TSV rows with [`ReadOptions::keep_raw`]; None for every other format.
    pub raw: Option<Vec<u8>>,
    /// The header line of the CSV/TSV file of a row kept raw.
    pub header: Option<std::sync::Arc<Vec<u8>>>,
    deferred: Option<Deferred>,
    /// A JSONL record's fields and its HTML, extracted by [`Record::finish`].
    pending: Option<(Document, jsonl::PendingPage)>,
    /// The publication times its document may claim, applied by [`Record::finish`].
    window: Option<PublishedWindow>,
    /// An archived page's fetch time when the page gave its own: counts if the window drops it.
    fetched: Option<i64>,
}

/// Raw page bytes whose decoding and extraction were deferred.
#[derive(Debug)]
struct Deferred {
    id: String,
    url: Option<String>,
    bytes: Vec<u8>,
    charset: Option<&'static encoding_rs::Encoding>,
    html: bool,
    /// The archive record's date (WARC-Date, an ARC record's date), as written.
    time: Option<String>,
    /// Its digest once computed ([`Deferred::digest`]): a re-run's check and the extraction
    /// share one pass over the bytes.
    digest: Option<u64>,
}

impl Deferred {
    /// The page's digest as read: its bytes, whether it is HTML and its archive date (the id
    /// and URL are the stored document's own, compared by the lookup of its id).
    fn digest(&mut self) -> u64 {
        *self.digest.get_or_insert_with(|| {
            let body = crate::hash::fingerprint64(&self.bytes);
            let time = self.time.as_deref().unwrap_or("");
            crate::hash::fingerprint64(format!("page {} {body:016x} {time}", self.html).as_bytes())
        })
    }
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
            lost: 0,
            raw: None,
            header: None,
            deferred: None,
            pending: None,
            window: None,
            fetched: None,
        }
    }

    /// A document a caller holds already (a Python program's, a request's), placed at item
    /// `line` of `source`: what [`crate::pipeline::Pipeline::run`] reads.
    pub fn of_document(source: &str, line: u64, doc: Document) -> Self {
        let bytes = doc.text.len();
        Record::new(source.to_string(), line, Unit::Line, bytes, Ok(doc))
    }

    fn page(source: String, line: u64, unit: Unit, page: Deferred) -> Self {
        let bytes = page.bytes.len();
        Record {
            source,
            line,
            unit,
            bytes,
            doc: Err("not decoded yet".into()),
            lost: 0,
            raw: None,
            header: None,
            deferred: Some(page),
            pending: None,
            window: None,
            fetched: None,
        }
    }

    /// A JSONL record holding HTML (`bytes` long): its `fields` read, its `page` extracted by
    /// [`Record::finish`].
    fn pending(
        source: String,
        line: u64,
        bytes: usize,
        fields: Document,
        page: jsonl::PendingPage,
    ) -> Self {
        Record {
            source,
            line,
            unit: Unit::Line,
            bytes,
            doc: Err("not decoded yet".into()),
            lost: 0,
            raw: None,
            header: None,
            deferred: None,
            pending: Some((fields, page)),
            window: None,
            fetched: None,
        }
    }

    /// Decode and extract a deferred page (CPU-heavy; safe to run on any thread), and drop a
    /// publication time outside [`ReadOptions::published`]. Done once; a no-op after.
    pub fn finish(&mut self) {
        self.finish_page();
        if let (Some(w), Ok(doc)) = (self.window.take(), self.doc.as_mut()) {
            w.apply(doc);
            if let Some(fetched) = self.fetched.take().filter(|_| doc.published.is_none()) {
                // The page's own time was dropped: the archive's date counts, if it may (the
                // drop's warning, "the ingest time counts", would not be true).
                doc.published = Some(fetched);
                doc.time_unread = None;
                w.apply(doc);
            }
        }
    }

    /// The digest of a page not yet extracted (a WARC, ARC or whole-file page): its bytes,
    /// kind and archive date ([`Document::raw_digest`]), computed once; None for every other
    /// record.
    pub fn raw_digest(&mut self) -> Option<u64> {
        self.deferred.as_mut().map(Deferred::digest)
    }

    /// A page stored already with its [`Record::raw_digest`]: not extracted, its id and URL.
    pub fn known_stored(&mut self) {
        if let Some(mut p) = self.deferred.take() {
            let raw_digest = Some(p.digest());
            self.doc = Ok(Document {
                id: p.id,
                url: p.url,
                raw_digest,
                ..Default::default()
            });
        }
    }

    fn finish_page(&mut self) {
        if let Some((fields, page)) = self.pending.take() {
            self.doc = page.extract(fields, self.raw.as_deref());
        }
        if let Some(mut p) = self.deferred.take() {
            let raw_digest = p.digest();
            let (text, _) = decode::decode(&p.bytes, p.charset, p.html);
            self.doc = page_document(p.id, p.url, &text, p.html).map(|mut doc| {
                if let Some(t) = &p.time {
                    // The archive's date is when the crawler fetched the page: it counts
                    // only when the page says nothing readable of when it was published
                    // (or says a time outside the window, see `Record::finish`).
                    let mut fetched = Document {
                        text: std::mem::take(&mut doc.text),
                        ..Default::default()
                    };
                    set_time(&mut fetched, t, "the record's date");
                    doc.text = fetched.text;
                    if doc.published.is_none() {
                        doc.published = fetched.published;
                        doc.time_unread = fetched.time_unread;
                    } else {
                        self.fetched = fetched.published;
                    }
                }
                doc.raw_digest = Some(raw_digest);
                doc
            });
        }
    }

    /// Its document's id, known before [`Record::finish`] (None for a record that could not
    /// be read).
    pub fn id(&self) -> Option<&str> {
        match (&self.doc, &self.deferred, &self.pending) {
            (Ok(doc), _, _) => Some(&doc.id),
            (Err(_), Some(d), _) => Some(&d.id),
            (Err(_), None, Some((fields, _))) => Some(&fields.id),
            (Err(_), None, None) => None,
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

/// What every format's reader shares with the others while it reads: the options, a line
/// buffer, what the last read met, the counts.
pub(super) struct Shared {
    opts: ReadOptions,
    buf: Vec<u8>,
    /// The last JSONL read met a damaged member or frame: the next line may be the rest of a
    /// line that began in it.
    after_damage: bool,
    /// The current file began with a UTF-8 byte order mark, passed over before its first
    /// line: a kept raw first line or header (`keep_raw`) gets it back, so that a record
    /// written as read is the file's bytes.
    bom: bool,
    /// What the inputs count while they are read ([`Inputs::counts`]).
    counts: Counts,
}

/// An open input of one format (`jsonl.rs`, `delimited.rs`, `warc_docs.rs`, `arc.rs`,
/// `parquet.rs`), read a record at a time.
pub(super) trait Reading: Send {
    /// The input's next record, or None at its end.
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record>;
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
    /// Paths never read (by device and inode, once they exist): the run's outputs, the store.
    excluded: Vec<PathBuf>,
    /// The input being read.
    current: Option<Box<dyn Reading>>,
    shared: Shared,
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
            current: None,
            shared: Shared {
                opts,
                buf: Vec::new(),
                after_damage: false,
                bom: false,
                counts: Counts::default(),
            },
        }
    }
}

impl Inputs {
    /// The counts the inputs keep while they are read ([`Counts`]).
    pub fn counts(&self) -> Counts {
        self.shared.counts.clone()
    }

    /// Never read `path` (e.g. the file this run writes its results to, or the store's
    /// directory), wherever a directory walk or list finds it: known by device and inode once
    /// it exists, so a store or output created after this call is passed over too.
    pub fn exclude(mut self, path: &Path) -> Self {
        self.excluded.push(path.to_path_buf());
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

fn error(source: String, line: u64, unit: Unit, reason: String) -> Record {
    Record::new(source, line, unit, 0, Err(reason))
}

/// Corrupt records a WARC or ARC file may have before it is taken for something else.
const MAX_CORRUPT_RECORDS: u32 = 100;

/// The error for corrupt record `n` of a `format` (WARC, ARC) file, counted in `errors`, and
/// whether to stop reading the file (over [`MAX_CORRUPT_RECORDS`]: not such a stream any more).
fn corrupt_record(
    source: &str,
    n: u64,
    errors: &mut u32,
    format: &str,
    e: String,
) -> (Record, bool) {
    *errors += 1;
    let mut r = error(
        source.to_string(),
        n,
        Unit::Record,
        format!("corrupt {format} record: {e}"),
    );
    r.lost = 1;
    (r, *errors > MAX_CORRUPT_RECORDS)
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
        if let Some(t) = &page.published {
            set_time(&mut doc, t, "the page's publication time");
        }
        doc.cites = page.cites;
        doc.around = page.around;
        doc.publisher = page.publisher;
    } else {
        doc.text = text.to_string();
    }
    if doc.text.trim().is_empty() {
        return Err("empty document".into());
    }
    Ok(doc)
}

/// `doc`'s publication time from `written` (what the input says, from `what`), or, when it is
/// not a time, a warning saying so ([`Document::time_unread`]).
pub(crate) fn set_time(doc: &mut Document, written: &str, what: &str) {
    // The text is read for its language only when the zone name needs it.
    let chinese = written.trim_end().ends_with("CST") && time::mostly_han(&doc.text);
    match time::parse_time_for(written, chinese) {
        Some(t) => doc.published = Some(t),
        None => {
            let shown: String = written.chars().take(60).collect();
            doc.time_unread = Some(format!(
                "{what} `{shown}` is not a time fpdb reads (RFC 3339, RFC 2822, 2024-05-26, \
                 2024年5月26日 10:30, Unix seconds); the ingest time counts for it"
            ));
        }
    }
}

impl Inputs {
    fn finished(&self, mut r: Record) -> Record {
        r.window = Some(self.shared.opts.published);
        if !self.shared.opts.defer_pages {
            r.finish();
        }
        r
    }
}

impl Iterator for Inputs {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        loop {
            let next = match self.current.as_mut() {
                Some(reading) => reading.next_record(&mut self.shared),
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
mod tests;
