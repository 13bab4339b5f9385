//! Finding inputs and opening them: paths, directory walks (regular files and real
//! directories only), lists of paths, stdin; decompression and format detection.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::arc::ArcInput;
use super::jsonl::Jsonl;
use super::sniff::{container_by_content, format_by_content, format_by_name, BOM};
use super::source::Source;
use super::warc_docs::Warc;
use super::{arc, error, file_id, warc, Format, Inputs, Pending, Record, Unit};

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

/// Whether `path` is a Parquet file: its first bytes, else its name. Only a regular file is
/// opened to look: the bytes read from a pipe (a FIFO, `<(…)`) would be gone for the reader.
fn is_parquet(path: &Path) -> bool {
    let mut head = [0u8; 4];
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let read = if regular {
        File::open(path).and_then(|mut f| f.read_exact(&mut head))
    } else {
        Err(std::io::ErrorKind::Unsupported.into())
    };
    match read {
        Ok(()) if head == *super::parquet::MAGIC => true,
        Ok(()) => false,
        Err(_) => path
            .to_string_lossy()
            .to_ascii_lowercase()
            .ends_with(".parquet"),
    }
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
                if self.excluded.iter().any(|e| file_id(e) == Some(id)) {
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
            match Source::stream_counted(
                Box::new(std::io::stdin()),
                &self.shared.counts.unchecked_frames,
            ) {
                Ok(r) => r,
                Err(e) => return Some(error(source, 0, Unit::Line, format!("read error: {e}"))),
            }
        } else if path.is_dir() {
            return self.start_dir(source, &path, format);
        } else if format == Format::Parquet || (format == Format::Auto && is_parquet(&path)) {
            return self.start_parquet(source, &path);
        } else {
            match Source::file_counted(&path, &self.shared.counts.unchecked_frames) {
                Ok(r) => r,
                Err(e) => return Some(error(source, 0, Unit::Line, format!("cannot open: {e}"))),
            }
        };
        let mut reader = reader;
        let fields = [
            self.shared.opts.fields.text.as_str(),
            self.shared.opts.fields.html.as_str(),
        ];
        let format = match resolved_format(&mut reader, format, &path, &source, &fields) {
            Ok(f) => f,
            Err(e) => return Some(error(source, 0, Unit::Line, format!("read error: {e}"))),
        };
        // A UTF-8 byte order mark is not part of the first line or header; whole-file
        // documents keep it (the decoder reads it as a charset signal).
        self.shared.bom = !matches!(format, Format::Html | Format::Text)
            && reader.sniff_head().is_ok_and(|h| h.starts_with(BOM));
        if self.shared.bom {
            reader.consume(BOM.len());
        }
        match format {
            Format::Jsonl | Format::Auto => {
                self.current = Some(Box::new(Jsonl {
                    source,
                    reader: Box::new(reader),
                    line: 0,
                }));
                None
            }
            Format::Csv | Format::Tsv => self.start_csv(
                source,
                Box::new(reader),
                if format == Format::Tsv { b'\t' } else { b',' },
            ),
            Format::Warc => {
                let records = warc::Records::new(reader);
                self.current = Some(Box::new(Warc::new(source, records)));
                None
            }
            Format::Arc => {
                let records = arc::Records::new(reader);
                self.current = Some(Box::new(ArcInput::new(source, records)));
                None
            }
            Format::Parquet => self.start_parquet(source, &path),
            Format::Html | Format::Text => {
                Some(self.whole_file(source, Box::new(reader), format == Format::Html))
            }
            Format::List => self.start_list(source, reader),
        }
    }

    /// A directory: its entries (hidden ones aside) queued in name order, read as the
    /// directory was (a list's entries: auto).
    fn start_dir(&mut self, source: String, path: &Path, format: Format) -> Option<Record> {
        match dir_entries(path) {
            Ok(entries) => {
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
        }
    }

    /// A list of inputs, one per line (`#` comments and blank lines aside), queued in order.
    fn start_list(&mut self, source: String, reader: Source) -> Option<Record> {
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

/// The entries of directory `path` an input walk reads, in the order it reads them: by name,
/// hidden ones (a leading `.`) aside.
pub fn dir_entries(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    Ok(entries)
}

/// The format of an input opened as `reader`: `format` unless auto; then a container its
/// first bytes name (WARC, ARC), else the extension, else a header line naming one of
/// `fields` (CSV, TSV), else a guess from the first bytes (JSONL for stdin unless it starts
/// like a page).
fn resolved_format(
    reader: &mut Source,
    format: Format,
    path: &Path,
    source: &str,
    fields: &[&str],
) -> std::io::Result<Format> {
    if format != Format::Auto {
        return Ok(format);
    }
    let by_content = container_by_content(reader.sniff_head()?).unwrap_or(Format::Auto);
    if by_content != Format::Auto {
        return Ok(by_content);
    }
    let by_name = format_by_name(path);
    if by_name != Format::Auto {
        return Ok(by_name);
    }
    let head = reader.sniff_head()?;
    if let Some(f) = super::sniff::delimited_by_header(head, fields) {
        return Ok(f);
    }
    Ok(match format_by_content(head) {
        // Stdin is JSONL unless it starts like something else (markup: a page).
        Format::Text if source == "-" && head.trim_ascii_start().first() != Some(&b'<') => {
            Format::Jsonl
        }
        f => f,
    })
}
