//! Input readers: JSONL (field names configurable) and plain-text files (one document per
//! file), from files, directories (walked recursively, sorted) or stdin, plain or
//! gzip/zstd-compressed. Streaming: one line or one file in memory at a time.
//!
//! Every problem becomes a [`Record`] carrying the source name and line number and a reason;
//! the caller counts it and goes on.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::db::Document;

/// Input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// From the extension (`.jsonl`, `.ndjson`, `.json`, then `.gz`/`.zst` stripped) or the first
    /// byte (`{` means JSONL); stdin is JSONL.
    #[default]
    Auto,
    /// One JSON object per line.
    Jsonl,
    /// The whole file is one document; its id is its path.
    Text,
}

/// JSON field names.
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
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            text: "text".into(),
            title: "title".into(),
            url: "url".into(),
        }
    }
}

/// Reader settings.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Input format.
    pub format: Format,
    /// JSON field names.
    pub fields: Fields,
    /// Larger documents (or JSONL lines) are skipped with a message.
    pub max_doc_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: Format::Auto,
            fields: Fields::default(),
            max_doc_bytes: 32 << 20,
        }
    }
}

/// One input record: a document or the reason it could not be read, with its location.
#[derive(Debug)]
pub struct Record {
    /// File name (`-` for stdin).
    pub source: String,
    /// 1-based line (JSONL) or 1 (text files); 0 when the file could not be opened.
    pub line: u64,
    /// Size of the raw record in bytes.
    pub bytes: usize,
    /// The document, or why it was skipped.
    pub doc: Result<Document, String>,
}

/// Iterator over the records of many inputs.
pub struct Inputs {
    pending: Vec<PathBuf>,
    opts: ReadOptions,
    current: Option<(String, Box<dyn BufRead + Send>, u64)>,
    buf: Vec<u8>,
}

impl Inputs {
    /// Records of `paths` in order (`-` = stdin).
    pub fn new(paths: &[PathBuf], opts: ReadOptions) -> Self {
        let mut pending: Vec<PathBuf> = paths.to_vec();
        pending.reverse();
        Inputs {
            pending,
            opts,
            current: None,
            buf: Vec::new(),
        }
    }
}

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

fn jsonl_by_name(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name
        .trim_end_matches(".gz")
        .trim_end_matches(".zst")
        .trim_end_matches(".zstd");
    name.ends_with(".jsonl") || name.ends_with(".ndjson") || name.ends_with(".json")
}

impl Inputs {
    fn error(source: String, line: u64, reason: String) -> Record {
        Record {
            source,
            line,
            bytes: 0,
            doc: Err(reason),
        }
    }

    /// Start reading `path`; returns a record for text files and for failures.
    fn start(&mut self, path: PathBuf) -> Option<Record> {
        let source = path.to_string_lossy().into_owned();
        if source == "-" {
            let stdin: Box<dyn BufRead + Send> = Box::new(BufReader::new(std::io::stdin()));
            if self.opts.format == Format::Text {
                return Some(self.text_doc(source, stdin));
            }
            self.current = Some((source, stdin, 0));
            return None;
        }
        if path.is_dir() {
            match std::fs::read_dir(&path) {
                Ok(rd) => {
                    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
                    entries.retain(|p| {
                        !p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                    });
                    entries.sort();
                    self.pending.extend(entries.into_iter().rev());
                    return None;
                }
                Err(e) => {
                    return Some(Self::error(
                        source,
                        0,
                        format!("cannot read directory: {e}"),
                    ))
                }
            }
        }
        let reader = match open_decoded(&path) {
            Ok(r) => r,
            Err(e) => return Some(Self::error(source, 0, format!("cannot open: {e}"))),
        };
        let mut reader: Box<dyn BufRead + Send> =
            Box::new(BufReader::with_capacity(1 << 16, reader));
        let jsonl = match self.opts.format {
            Format::Jsonl => true,
            Format::Text => false,
            Format::Auto => {
                jsonl_by_name(&path)
                    || match reader.fill_buf() {
                        Ok(b) => b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{'),
                        Err(e) => return Some(Self::error(source, 0, format!("read error: {e}"))),
                    }
            }
        };
        if jsonl {
            self.current = Some((source, reader, 0));
            None
        } else {
            Some(self.text_doc(source, reader))
        }
    }

    fn text_doc(&self, source: String, reader: Box<dyn BufRead + Send>) -> Record {
        let max = self.opts.max_doc_bytes;
        let mut bytes = Vec::new();
        if let Err(e) = reader.take(max as u64 + 1).read_to_end(&mut bytes) {
            return Self::error(source, 1, format!("read error: {e}"));
        }
        let n = bytes.len();
        let doc = if n > max {
            Err(format!("document larger than {max} bytes"))
        } else {
            match String::from_utf8(bytes) {
                Err(e) => Err(format!(
                    "invalid UTF-8 at byte {}",
                    e.utf8_error().valid_up_to()
                )),
                Ok(t) if t.trim().is_empty() => Err("empty document".into()),
                Ok(t) => Ok(Document {
                    id: source.clone(),
                    text: t,
                    title: None,
                    url: None,
                }),
            }
        };
        Record {
            source,
            line: 1,
            bytes: n,
            doc,
        }
    }

    /// Next line of the current JSONL input, or None at its end.
    fn next_line(&mut self) -> Option<Record> {
        let max = self.opts.max_doc_bytes;
        let (source, reader, line) = self.current.as_mut()?;
        self.buf.clear();
        *line += 1;
        let n = match reader
            .by_ref()
            .take(max as u64 + 1)
            .read_until(b'\n', &mut self.buf)
        {
            Ok(0) => {
                self.current = None;
                return None;
            }
            Ok(n) => n,
            Err(e) => {
                let r = Self::error(source.clone(), *line, format!("read error: {e}"));
                self.current = None;
                return Some(r);
            }
        };
        let (source, line) = (source.clone(), *line);
        if n > max && self.buf.last() != Some(&b'\n') {
            // Skip the rest of the over-long line.
            let (_, reader, _) = self.current.as_mut()?;
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match reader.by_ref().take(1 << 20).read_until(b'\n', &mut sink) {
                    Ok(0) => break,
                    Ok(_) if sink.last() == Some(&b'\n') => break,
                    Ok(_) => continue,
                    Err(_) => break,
                }
            }
            return Some(Self::error(
                source,
                line,
                format!("line longer than {max} bytes"),
            ));
        }
        if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
            return self.next_line();
        }
        let doc = parse_json_line(&self.buf, &self.opts.fields, &source, line);
        Some(Record {
            source,
            line,
            bytes: n,
            doc,
        })
    }
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
            Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(format!("field `{name}` is not a string")),
        }
    };
    let id = if fields.id.is_empty() {
        format!("{source}:{line}")
    } else {
        get_str(&fields.id)?.ok_or_else(|| format!("missing id field `{}`", fields.id))?
    };
    if id.is_empty() {
        return Err(format!("empty id field `{}`", fields.id));
    }
    let body =
        get_str(&fields.text)?.ok_or_else(|| format!("missing text field `{}`", fields.text))?;
    if body.trim().is_empty() {
        return Err(format!("empty document `{id}`"));
    }
    Ok(Document {
        id,
        text: body,
        title: get_str(&fields.title)?,
        url: get_str(&fields.url)?,
    })
}

impl Iterator for Inputs {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        loop {
            if self.current.is_some() {
                if let Some(r) = self.next_line() {
                    return Some(r);
                }
                continue;
            }
            let path = self.pending.pop()?;
            if let Some(r) = self.start(path) {
                return Some(r);
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
    }
}
