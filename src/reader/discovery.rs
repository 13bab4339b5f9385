//! Finding inputs and opening them: paths, directory walks (regular files and real
//! directories only), lists of paths, stdin; decompression and format detection.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::source::Source;
use super::{arc, error, file_id, warc, Current, Format, Inputs, Pending, Record, Unit};

/// Why an entry found by a directory walk is not read, if it is not.
pub(super) fn skip_in_walk(path: &Path) -> Option<String> {
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
pub(super) const BOM: &[u8] = b"\xef\xbb\xbf";

/// Gzip's first two bytes.
const GZIP_MAGIC: &[u8] = b"\x1f\x8b";
/// Zstandard's frame magic number.
pub(super) const ZSTD_MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";

/// `raw` decompressed as its first bytes say (gzip, any number of members, a damaged one
/// reported and passed over: [`super::source::Members`]; zstd), else as is.
/// The file name is not asked: a gzip file without `.gz` is read, a `.gz` file that is not
/// gzip is read as it is.
pub(super) fn decoded(mut raw: Box<dyn Read + Send>) -> std::io::Result<Box<dyn Read + Send>> {
    // The first bytes, read until there are enough or the input ends (a pipe may deliver
    // them in pieces), then put back in front of the rest.
    let mut head = Vec::with_capacity(ZSTD_MAGIC.len());
    while head.len() < ZSTD_MAGIC.len() {
        let mut byte = [0u8; 4];
        let want = ZSTD_MAGIC.len() - head.len();
        match raw.read(&mut byte[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&byte[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let gzip = head.starts_with(GZIP_MAGIC);
    let zstd = head.starts_with(ZSTD_MAGIC);
    let whole = std::io::Cursor::new(head).chain(raw);
    Ok(if gzip {
        Box::new(super::source::Members::new(BufReader::new(whole)))
    } else if zstd {
        Box::new(zstd::stream::read::Decoder::new(whole)?)
    } else {
        Box::new(whole)
    })
}

/// Whether `path` is a Parquet file: its first bytes, else its name.
fn is_parquet(path: &Path) -> bool {
    let mut head = [0u8; 4];
    match File::open(path).and_then(|mut f| f.read_exact(&mut head)) {
        Ok(()) if head == *super::parquet::MAGIC => true,
        Ok(()) => false,
        Err(_) => path
            .to_string_lossy()
            .to_ascii_lowercase()
            .ends_with(".parquet"),
    }
}

pub(super) fn format_by_name(path: &Path) -> Format {
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
        "arc" => Format::Arc,
        "html" | "htm" | "xhtml" | "shtml" => Format::Html,
        _ => Format::Auto,
    }
}

/// The containers whose first bytes name them: a WARC version line, an ARC file's
/// `filedesc://` record. They win over the file name.
pub(super) fn container_by_content(head: &[u8]) -> Option<Format> {
    let head = content_start(head);
    if head.starts_with(b"WARC/") {
        Some(Format::Warc)
    } else if head.starts_with(b"filedesc://") {
        Some(Format::Arc)
    } else {
        None
    }
}

/// `head` without a byte order mark and leading white space.
fn content_start(head: &[u8]) -> &[u8] {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(head.len());
    &head[start..]
}

pub(super) fn format_by_content(head: &[u8]) -> Format {
    let head = content_start(head);
    if let Some(f) = container_by_content(head) {
        return f;
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

impl Inputs {
    /// Start reading `path`; returns a record for whole-file documents and for failures.
    pub(super) fn start(&mut self, next: Pending) -> Option<Record> {
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
        let reader: Source = if source == "-" {
            if format == Format::Parquet {
                return Some(error(
                    source,
                    0,
                    Unit::Line,
                    "Parquet cannot be read from stdin (its index is at the end of the file): name the file".into(),
                ));
            }
            match Source::stream(Box::new(std::io::stdin())) {
                Ok(r) => r,
                Err(e) => return Some(error(source, 0, Unit::Line, format!("read error: {e}"))),
            }
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
        } else if format == Format::Parquet || (format == Format::Auto && is_parquet(&path)) {
            return self.start_parquet(source, &path);
        } else {
            match Source::file(&path) {
                Ok(r) => r,
                Err(e) => return Some(error(source, 0, Unit::Line, format!("cannot open: {e}"))),
            }
        };
        let mut reader = reader;
        let mut format = format;
        if format == Format::Auto {
            // A container its first bytes name (WARC, ARC), else the extension, else a guess
            // from the first bytes.
            format = match reader.fill_buf() {
                Ok(head) => container_by_content(head).unwrap_or(Format::Auto),
                Err(e) => return Some(error(source, 0, Unit::Line, format!("read error: {e}"))),
            };
        }
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
                    reader: Box::new(reader),
                    line: 0,
                });
                None
            }
            Format::Csv | Format::Tsv => self.start_csv(
                source,
                Box::new(reader),
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
            Format::Arc => {
                self.current = Some(Current::Arc {
                    source,
                    records: arc::Records::new(reader),
                    n: 0,
                    errors: 0,
                });
                None
            }
            Format::Parquet => self.start_parquet(source, &path),
            Format::Html | Format::Text => {
                Some(self.whole_file(source, Box::new(reader), format == Format::Html))
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
}
